"""Chunking: exact spans, the budget, overlap, section boundaries and stable ids."""

from itertools import pairwise

from compendium.ingest.chunking import chunk_document
from compendium.ingest.readers import read_document
from compendium.tokens import count_tokens


def sentences(prefix, n):
    return " ".join(f"{prefix} sentence {i} says something about turbines and grids." for i in range(n))


DOC = f"""# Energy

## Wind

{sentences("Wind", 60)}

## Solar

Panels are short.

# Hydro

{sentences("Hydro", 5)}

```text
{"x = 1 " * 2000}
```
"""


def parse(tmp_path, text, name="doc.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_document(path)


def test_spans_are_exact_and_budget_is_respected(tmp_path):
    doc = parse(tmp_path, DOC)
    chunks = chunk_document(doc, max_tokens=120, overlap_tokens=25, document_id="d1")
    assert len(chunks) > 5
    for i, c in enumerate(chunks):
        assert doc.text[c.start : c.end] == c.text
        assert c.ordinal == i
        assert c.tokens == count_tokens(c.text) <= 120
        assert c.text == c.text.strip()
    # all text is covered (overlaps allowed), in order
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())


def test_chunks_stay_inside_their_section(tmp_path):
    doc = parse(tmp_path, DOC)
    chunks = chunk_document(doc, max_tokens=120, overlap_tokens=25, document_id="d1")
    for c in chunks:
        path = c.heading_path
        if path == ("Energy", "Wind"):
            assert "Solar" not in c.text and "Hydro" not in c.text
        if path == ("Energy", "Solar"):
            assert c.text == "Solar\n\nPanels are short."
    # the heading-only "Energy" section is merged into "Wind", not a chunk of its own
    assert chunks[0].text.startswith("Energy\n\nWind\n\nWind sentence 0")
    assert chunks[0].heading_path == ("Energy", "Wind")
    assert all(c.text.strip() != "Energy" for c in chunks)


def test_overlap_repeats_trailing_sentences_within_a_section(tmp_path):
    doc = parse(tmp_path, DOC)
    chunks = [c for c in chunk_document(doc, max_tokens=120, overlap_tokens=25, document_id="d")
              if c.heading_path == ("Energy", "Wind")]
    assert len(chunks) >= 3
    for prev, nxt in pairwise(chunks):
        assert nxt.start < prev.end  # overlapping spans
        shared = doc.text[nxt.start : prev.end]
        assert shared.endswith(".") and count_tokens(shared) <= 25
    no_overlap = [c for c in chunk_document(doc, max_tokens=120, overlap_tokens=0, document_id="d")
                  if c.heading_path == ("Energy", "Wind")]
    for prev, nxt in pairwise(no_overlap):
        assert nxt.start > prev.end


def test_giant_code_block_is_hard_split(tmp_path):
    doc = parse(tmp_path, DOC)
    chunks = chunk_document(doc, max_tokens=120, overlap_tokens=25, document_id="d")
    code = [c for c in chunks if "x = 1" in c.text]
    assert len(code) > 10
    assert all(c.tokens <= 120 for c in code)


def test_ids_stable_when_a_paragraph_is_inserted_at_the_top(tmp_path):
    before = parse(tmp_path, DOC, "a.md")
    after = parse(tmp_path, "Preface paragraph that is new.\n\n" + DOC, "b.md")
    old = chunk_document(before, max_tokens=120, overlap_tokens=25, document_id="doc")
    new = chunk_document(after, max_tokens=120, overlap_tokens=25, document_id="doc")
    old_ids, new_ids = [c.id for c in old], [c.id for c in new]
    assert len(new_ids) == len(old_ids) + 1
    assert new_ids[1:] == old_ids  # only the new chunk is new; positions moved, ids did not
    assert new[1].start != old[0].start


def test_identical_chunks_get_distinct_ids(tmp_path):
    doc = parse(tmp_path, "# A\n\nSame text.\n\n# B\n\nOther.\n\n# A\n\nSame text.\n")
    chunks = chunk_document(doc, max_tokens=100, overlap_tokens=10, document_id="d")
    assert chunks[0].text == chunks[2].text
    assert len({c.id for c in chunks}) == 3
    other = chunk_document(doc, max_tokens=100, overlap_tokens=10, document_id="other")
    assert not {c.id for c in chunks} & {c.id for c in other}


def test_plain_text_without_headings(tmp_path):
    doc = parse(tmp_path, sentences("Plain", 40) + "\n\nLast paragraph.\n", "p.txt")
    chunks = chunk_document(doc, max_tokens=64, overlap_tokens=10, document_id="p")
    assert len(chunks) > 3
    assert all(c.heading_path == () and c.tokens <= 64 for c in chunks)
    assert chunks[-1].text.endswith("Last paragraph.")


EXAMPLE_DOC = """# Forms

## The work that needs to be done

A view renders a form and reads the `POST` data it sends back.

```html
<input id="your_name" type="text" name="your_name" value="{{ current_name }}">
""" + "\n".join(f'<input id="field_{i}" type="text" name="field_{i}">' for i in range(120)) + """
```

If the template context contains a `current_name` variable, that pre-fills the `your_name` field.
The `POST` request carries the form data to the server.

## Another section

A `display_name` is what a profile stores.
"""


def test_a_chunk_knows_the_names_an_example_of_its_section_made_up(tmp_path):
    doc = parse(tmp_path, EXAMPLE_DOC)
    chunks = chunk_document(doc, max_tokens=300, overlap_tokens=0)
    after = next(c for c in chunks if "pre-fills" in c.text)
    made = dict(after.examples)
    # made up by the example (its code wrote them before any heading or prose of the section),
    # from where the example ends; `POST` was told in prose before it
    assert set(made) == {"current_name", "your_name"}
    assert made["current_name"] == made["your_name"] == after.text.index("```\n\nIf the template") + 3
    other = next(c for c in chunks if "profile stores" in c.text)
    assert other.examples == ()  # no example in its section


def test_a_name_told_in_another_sections_prose_is_no_examples_invention(tmp_path):
    doc = parse(tmp_path, EXAMPLE_DOC + "\n## Reference\n\nThe `your_name` field holds what the visitor typed.\n")
    chunks = chunk_document(doc, max_tokens=300, overlap_tokens=0)
    after = next(c for c in chunks if "pre-fills" in c.text)
    assert set(dict(after.examples)) == {"current_name"}


def test_a_name_the_examples_code_defines_is_its_own_though_told_elsewhere(tmp_path):
    doc = parse(tmp_path, """# Models

## Reference

A `Person` stores a visitor. `Greeting` and `render` are told here too.

## An example

```python
class Person(models.Model):
    name = models.CharField(max_length=100)

greeting = render(Person)
```

The `Person` class here keeps the typed name, `greeting` holds the page and `render` draws it.
""")
    chunks = chunk_document(doc, max_tokens=300, overlap_tokens=0)
    after = next(c for c in chunks if "typed name" in c.text)
    # the code declares the type `Person`; `greeting` and `render` may be a setting or a hook
    assert set(dict(after.examples)) == {"person"}


def test_a_chunk_cut_right_after_a_code_block_knows_it_follows_code(tmp_path):
    doc = parse(tmp_path, "# Views\n\n## The view\n\nA view answers a request.\n\n```python\n"
                + "\n".join(f"line_{i} = handle(request, {i})" for i in range(60))
                + "\n```\n\nWe call the handler for every line. " + "It runs fast and well. " * 30 + "\n")
    chunks = chunk_document(doc, max_tokens=300, overlap_tokens=0)
    after = next(c for c in chunks if c.text.startswith("We call"))
    assert after.follows_code
    assert not chunks[0].follows_code
