"""The offline compile of the sample corpus reads like a reference: checked page by page."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import yaml

from compendium.operations import compile_workspace, opened_store, resolve_template
from compendium.settings import load_settings
from compendium.storage.records import Chunk, Page
from compendium.tokens import count_tokens
from compendium.workspace import add_documents, init_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
EXPECTED = yaml.safe_load((SAMPLES / "expected.yaml").read_text(encoding="utf-8"))
FOOTNOTE = re.compile(r"^\[\^(\d+)\]: .* — chunk (\w+)$", re.M)
CITE = re.compile(r"\[\^(\d+)\]")
LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
UNITS_AND_BOILERPLATE = {
    "kb", "mb", "gb", "tb", "ms", "id", "ids", "i/o", "cpu", "note", "example", "table",
    "figure", "section", "warning", "tip",
}
MARGIN = 1.1  # the writer budgets with the same counter; footnotes come on top


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One offline compile of samples/corpus, shared by the module: pages and chunk texts."""
    workspace = init_workspace(tmp_path_factory.mktemp("sample") / "ws")
    add_documents(workspace, [SAMPLES / "corpus"])
    settings = load_settings(workspace, env={})

    async def go() -> dict:
        report = await compile_workspace(settings)
        async with opened_store(settings) as store:
            pages = [p async for p in store.scan(Page, {"status": "active"})]
            chunks = {c.id: " ".join(c.text.split()) async for c in store.scan(Chunk)}
        return {"report": report, "pages": pages, "chunks": chunks}

    result = asyncio.run(go())
    result["template"] = resolve_template(settings, None)
    assert result["report"].status == "succeeded"
    return result


def titles(compiled: dict) -> set[str]:
    return {p.title.lower() for p in compiled["pages"]} | {
        a.lower() for p in compiled["pages"] for a in p.aliases
    }


def body_lines(markdown: str) -> list[str]:
    """Prose lines a reader reads as facts: paragraphs and bullet facts (not links or labels)."""
    out = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "[^", "*Also known as:*", "- [[")):
            continue
        out.append(line.removeprefix("- "))
    return out


def test_the_important_entities_get_pages(compiled):
    have = titles(compiled)
    missing = [name for name in EXPECTED["entities"] if name.lower() not in have]
    # a few may still be split or named by an alias; most must be there
    assert len(missing) <= 4, missing


def test_no_page_for_units_or_boilerplate(compiled):
    bad = [p.title for p in compiled["pages"] if p.title.lower() in UNITS_AND_BOILERPLATE]
    assert not bad
    topics = [p.title for p in compiled["pages"] if p.kind == "topic"]
    for title in topics:
        assert "," not in title, title  # a title, not a list of member names
        # Each named member is a real name ("DROP TABLE" may be; "Table" or "KB" alone may not).
        assert not {part.strip().lower() for part in title.split(" and ")} & UNITS_AND_BOILERPLATE, title


def test_no_alias_keeps_trailing_punctuation_or_doubles_its_name(compiled):
    for page in compiled["pages"]:
        for name in (page.title, *page.aliases):
            assert not name.endswith((".", ",", ":", "*")), (page.slug, name)
            words = name.split()
            half = len(words) // 2
            assert not (half and words[:half] == words[half:]), (page.slug, name)


def test_every_page_has_a_lead_and_a_cited_fact(compiled):
    for page in compiled["pages"]:
        lines = body_lines(page.markdown)
        assert lines, page.slug
        assert lines[0] == page.markdown.split("\n\n")[1].strip(), page.slug  # lead right under the title
        assert any(CITE.search(line) for line in lines), page.slug


def test_every_sentence_is_verbatim_in_the_chunk_it_cites(compiled):
    chunks = compiled["chunks"]
    checked = 0
    for page in compiled["pages"]:
        notes = dict(FOOTNOTE.findall(page.markdown))
        for line in body_lines(page.markdown):
            # each cited piece of a line is one or more sentences followed by its marker
            for piece, ref in re.findall(r"(.+?)\[\^(\d+)\]", line):
                text = LINK.sub(lambda m: m.group(2) or m.group(1), piece).strip()
                assert ref in notes, (page.slug, ref)
                assert " ".join(text.split()) in chunks[notes[ref]], (page.slug, text)
                checked += 1
    assert checked > 200


def test_no_empty_sections_and_no_generic_section_names(compiled):
    for page in compiled["pages"]:
        parts = re.split(r"^## .*$", page.markdown, flags=re.M)[1:]
        for part in parts:
            assert part.strip(), page.slug
        headings = re.findall(r"^## (.+)$", page.markdown, flags=re.M)
        assert not [h for h in headings if h.startswith("More on ")], page.slug
        assert len(headings) == len(set(headings)), page.slug


def test_no_sentence_repeated_on_a_page(compiled):
    for page in compiled["pages"]:
        sentences = [
            " ".join(s.split())
            for line in body_lines(page.markdown)
            for s in re.split(r"\[\^\d+\]\s*", line)
            if s.strip()
        ]
        assert len(sentences) == len(set(sentences)), page.slug


def test_no_page_exceeds_the_token_budget(compiled):
    budget = compiled["template"].refine.max_page_tokens
    for page in compiled["pages"]:
        body = FOOTNOTE.sub("", page.markdown)
        assert count_tokens(body) <= budget * MARGIN, page.slug
