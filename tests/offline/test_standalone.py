"""A sentence lifted from its passage is published only where it reads alone, or after the
sentence it leans on."""

from __future__ import annotations

from compendium.engines.offline import OfflineEngine
from compendium.engines.offline.standalone import points_back
from compendium.engines.offline.writer import _leans_back
from compendium.engines.tasks import EvidenceItem, PageRequest
from compendium.templates.schema import Template

LEANING = [
    "You can pass `--keep` to turn this off.",  # "this" stands for what came before
    "The cost of this freedom is a longer configuration file.",
    "A full account of these settings is outside the scope of this guide.",
    "The packer docs mentioned in the previous step cover the details.",
    "Our earlier crate used a single compartment.",
    "In that last case, the depot rebuilds the path itself.",
    "Well, because crates can be nested, the count may double.",
    "Defaults to the depot named in the configuration.",
    "By default, returns `False` for empty crates.",
    "Add the following to your configuration file:",
]
ALONE = [
    "The depot is the store where crates wait for shipping.",
    "`purge`: Removes every crate from the depot.",
    "`--keep`: This option keeps the crate after shipping.",  # an entry's "this" is its term
    "Returns: the number of crates in the depot.",  # a field's label, not a subjectless verb
    "Crate files are read from the depot folder at startup.",
]


def test_sentences_that_lean_on_the_one_before_are_told_from_those_that_stand_alone():
    assert [s for s in LEANING if not (points_back(s) or _leans_back(s))] == []
    assert [s for s in ALONE if points_back(s) or _leans_back(s)] == []


LEAD = "The depot is the store where crates wait for shipping."
PURGE = "The purge command removes every crate from the depot at once."
NOTE = "Note that those crates cannot be recovered from the depot afterwards."


def _claim(ref: int, text: str, position: int) -> EvidenceItem:
    return EvidenceItem(ref=ref, text=text, chunk_id="c1", document="Depot", heading_path=["Depot", "Commands"],
                        about=["depot"], kind="claim", position=position)


async def _page(items: list[EvidenceItem]) -> str:
    request = PageRequest(slug="depot", title="Depot", kind="entity", description="", aliases=[], evidence=items, links=[])
    return await OfflineEngine().write_page(request, Template(name="docs"))


async def test_a_claim_that_leans_back_is_published_right_after_its_antecedent_and_never_without_it():
    # Positions in the chunk's single-spaced words: NOTE starts right where PURGE ends.
    lead = _claim(1, LEAD, 0)
    purge = _claim(2, PURGE, 500)
    note = _claim(3, NOTE, 500 + len(PURGE) + 1)
    both = await _page([lead, purge, note])
    assert PURGE in both and NOTE in both
    alone = await _page([lead, _claim(3, NOTE, 500 + len(PURGE) + 1)])
    assert LEAD in alone and NOTE not in alone
    elsewhere = await _page([lead, purge, _claim(3, NOTE, 900)])  # not after PURGE in its chunk
    assert NOTE not in elsewhere


async def test_a_sentence_that_leans_back_never_leads_a_page():
    answer = _claim(1, "The Depot provides a way to do just that.", 0)
    naming = _claim(2, "Crates wait in the Depot until a truck collects them.", 900)
    page = await _page([answer, naming])
    assert page.split("\n")[2].startswith("Crates wait in the Depot")
