"""A capitalised word the corpus writes in lowercase is a common word, not a name."""

from __future__ import annotations

import random
import re
from collections import Counter

from compendium.phases.common_words import corpus_spellings, word_counts
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
    # the claims it is the subject of; the database's sentence only mentions a tablespace
    assert {c.text for c in out.claims if merged.id in c.entity_ids} == {c["text"] for c in claims[1:]}


def test_word_counts_are_those_of_every_match_in_the_text_whatever_the_separators():
    pattern = re.compile(r"[A-Za-z][A-Za-z'-]*")
    rng = random.Random(11)
    alphabet = "abXY'-_1.,;é\u212a  \n\t\r\u00a0\u2028\x1c"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(2000)]
    # and one text longer than a slice, whose lines and words cross the slice boundaries
    texts.append("\n".join(" ".join(rng.choice(["Page", "page's", "write-ahead", "x--y", "a.b", "WAL,"])
                                    for _ in range(rng.randint(1, 30))) for _ in range(40_000)))
    for text in texts:
        assert word_counts(text) == Counter(pattern.findall(text)), text[:80]



def test_a_name_defined_as_code_gathers_no_claim_of_the_prose_word():
    # the class `Attributes`, titled as the prose writes the word, is not the plural the prose
    # uses ("all of the element's attributes"), nor a member of that name
    claims = [{"text": "`attributes`: Get all of the element's attributes.", "entities": ["Element"]},
              {"text": "Attributes are kept in a map of keys to values.", "entities": ["Attributes"]},
              {"text": "The attributes of a tag are parsed first.", "entities": []},
              {"text": "Each attributes list is sorted.", "entities": []}]
    out, _, _ = resolve([
        extract("k1", entities=[ent("Attributes", description="`Attributes`: The attributes of an Element.")],
                claims=claims[1:2]),
        extract("k2", entities=[ent("Element")], claims=claims[:1] + claims[2:]),
    ])
    attributes = next(e for e in out.entities if "Attributes" in (e.name, *e.aliases))
    assert {c.text for c in out.claims if attributes.id in c.entity_ids} == {claims[1]["text"]}
