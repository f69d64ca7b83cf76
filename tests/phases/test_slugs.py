"""Slugs are readable, ASCII, unique, and the same subject gets the same slug every run."""

from compendium.storage.slugs import slugify, unique_slug


def test_slugify_folds_accents_and_punctuation():
    assert slugify("Café Müller (band)") == "cafe-muller-band"
    assert slugify("C++ / Rust") == "c-rust"
    assert slugify("!!!") == "page"
    assert len(slugify("word " * 60)) <= 80


def test_collisions_get_the_type_then_a_stable_hash():
    taken: set[str] = {"existing"}
    assert unique_slug("Mercury", "planet", taken, key="e1") == "mercury"
    assert unique_slug("Mercury", "element", taken, key="e2") == "mercury-element"
    third = unique_slug("Mercury", "element", taken, key="e3")
    assert third.startswith("mercury-") and third not in {"mercury", "mercury-element"}
    # The hash comes from the subject id, so a rerun in a fresh slug space agrees.
    again = {"mercury", "mercury-element", "existing"}
    assert unique_slug("Mercury", "element", again, key="e3") == third
    assert unique_slug("Existing", "", taken, key="x") != "existing"
