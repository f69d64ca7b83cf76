"""A capitalised word the corpus writes in lowercase is a common word, not a name."""

from __future__ import annotations

from compendium.phases.common_words import corpus_spellings
from tests.reduce.test_resolution import ent, extract, resolve


def test_a_capitalised_word_the_corpus_writes_in_lowercase_takes_the_lowercase_spelling():
    texts = ["Exception handling is described here.", "An exception is raised at the point of error.",
             "Every exception has a type.", "Python raises exceptions.", "Python is a language."]
    spelled = corpus_spellings(["Exception", "Python", "os.path", "Platform-dependent"], texts)
    assert spelled == {0: "exception"}


def test_reduce_names_the_entity_as_the_corpus_writes_it_and_keeps_the_capitalised_alias():
    claims = [{"text": "An exception is raised where the error is detected.", "entities": ["Exception"]},
              {"text": "Every exception is an instance of a class.", "entities": ["Exception"]},
              {"text": "Python handles the exception in an except clause.", "entities": ["Exception", "Python"]}]
    out, _, _ = resolve([
        extract("k1", entities=[ent("Exception", description="Exception is the base class.")], claims=claims),
        extract("k2", entities=[ent("Python", description="A language.")], claims=claims[2:]),
    ])
    names = {e.name: e for e in out.entities}
    assert "Exception" not in names and names["exception"].aliases[0] == "Exception"
    assert "Python" in names  # written capitalised: a name


def test_a_defined_terms_other_spelling_finds_its_claims_in_the_prose():
    claims = [{"text": "Every database has a default tablespace for its tables.", "entities": []},
              {"text": "Tablespaces let an administrator place data on other disks.", "entities": []},
              {"text": "The tablespace of a table can be changed later.", "entities": []}]
    first = extract("k1", entities=[ent("TABLESPACE", description="A clause naming where a table is stored.")],
                    concepts=[{"term": "Tablespace", "definition": "A named location on the server file system."}])
    out, _, _ = resolve([first, extract("k2", claims=claims)])  # tier 1 joins the two spellings
    merged = next(e for e in out.entities if e.name == "TABLESPACE")
    assert {c.text for c in out.claims if merged.id in c.entity_ids} == {c["text"] for c in claims}
