"""The default offline page layout: the Markdown shape the wiki relies on."""

from __future__ import annotations

import re

from compendium.engines.offline.layout import render_default
from compendium.templates.render import default_prompt, render

LAYOUT = default_prompt("page_layout.md")


def page(**overrides):
    variables = {
        "title": "Buffer Manager",
        "lead": {"text": "The Buffer Manager caches disk pages in memory.", "ref": 1},
        "sections": [
            {
                "heading": "Design",
                "sentences": [
                    {"text": "It evicts pages with a clock sweep.", "ref": 2},
                    {"text": "Dirty pages are written back first.", "ref": 3},
                ],
            },
            {"heading": "Nothing to say", "sentences": []},
        ],
        "aliases": ["BufMgr", "buffer pool"],
        "related": [{"slug": "page-cache", "title": "Page Cache"}, {"slug": "wal", "title": "WAL"}],
    }
    variables.update(overrides)
    return render(LAYOUT, where="page_layout", **variables)


def test_full_page_layout():
    assert page() == (
        "# Buffer Manager\n\n"
        "The Buffer Manager caches disk pages in memory.[^1]\n\n"
        "*Also known as:* BufMgr, buffer pool\n\n"
        "## Design\n\n"
        "It evicts pages with a clock sweep.[^2] Dirty pages are written back first.[^3]\n\n"
        "## Related\n\n"
        "- [[page-cache|Page Cache]]\n"
        "- [[wal|WAL]]\n"
    )


def test_optional_parts_are_left_out():
    text = page(aliases=[], related=[], sections=[])
    assert text.startswith("# Buffer Manager\n\nThe Buffer Manager caches")
    assert "Also known as" not in text and "## " not in text


def test_lead_may_be_a_ready_string_and_objects_work_like_mappings():
    class Sentence:
        def __init__(self, text, ref):
            self.text, self.ref = text, ref

    text = page(
        lead="Already cited.[^7]",
        sections=[{"heading": "Use", "sentences": [Sentence("It is used.", 4)]}],
    )
    assert "Already cited.[^7]\n" in text
    assert "## Use\n\nIt is used.[^4]\n" in text


def _folded(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def test_the_offline_writer_renders_the_built_in_layout_as_jinja_does():
    lead = {"text": "The Buffer Manager caches disk pages in memory.", "ref": 1, "order": 0}
    paragraphs = [[{"text": "It evicts pages.", "ref": 2}, {"text": "Dirty pages go first.", "ref": 3}],
                  [], [{"text": "A second passage.", "ref": 4}]]
    bullets = [{"text": "One fact.", "ref": 5}, {"text": "Uncited fact.", "ref": None}]
    cases = [
        {},
        {"lead": None, "aliases": []},
        {"lead": {"text": "Not cited.", "ref": None}, "related": []},
        {"sections": [{"heading": "Design", "paragraphs": paragraphs, "bullets": [], "sentences": []},
                      {"heading": "Other facts", "paragraphs": [], "bullets": bullets, "sentences": bullets},
                      {"heading": "Empty", "paragraphs": [[]], "bullets": [], "sentences": []}]},
        {"sections": [{"heading": "Only bullets", "paragraphs": [], "bullets": bullets[:1], "sentences": []}],
         "lead": lead, "aliases": ["x"], "related": []},
    ]
    for overrides in cases:
        variables = {
            "title": "Buffer Manager",
            "lead": lead,
            "sections": [{"heading": "Design", "paragraphs": paragraphs[:1], "bullets": [], "sentences": []}],
            "aliases": ["BufMgr", "buffer pool"],
            "related": [{"slug": "page-cache", "title": "Page Cache"}],
        } | overrides
        expected = _folded(render(LAYOUT, where="page_layout", **variables))
        assert _folded(render_default(**variables)) == expected, overrides
