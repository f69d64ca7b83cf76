"""Built-in prompts render outside the sandbox's guards: to the same text as in the sandbox."""

from __future__ import annotations

import random

import pytest

from compendium.engines.tasks import EntitySketch, MatchQuestion, PairQuestion
from compendium.errors import TemplateError
from compendium.templates import render as rendering
from compendium.templates.render import default_prompt, render_here

WORDS = ["buffer", "page", "WAL", "  spaced  out ", "naïve", "x{y}", "%s", "{{ no }}", "a\nb", "", "—"]


def _text(rng: random.Random, most: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most)))


def _sketch(rng: random.Random) -> EntitySketch:
    return EntitySketch(_text(rng, 3), _text(rng, 1), _text(rng), [_text(rng, 2) for _ in range(rng.randint(0, 2))],
                        [_text(rng) for _ in range(rng.randint(0, 3))])


def _key(rng: random.Random) -> str:
    """A per-call fence key, or none (a template written before fences)."""
    return rng.choice(["", f"{rng.getrandbits(40):010x}"])


def _variables(name: str, rng: random.Random) -> dict:
    some = lambda make, most=5: [make() for _ in range(rng.randint(0, most))]  # noqa: E731
    line = lambda: {"ref": rng.randint(1, 99), "source": _text(rng, 3), "text": _text(rng), "chunk_id": "c1"}  # noqa: E731
    link = lambda: {"slug": _text(rng, 1), "title": _text(rng, 3)}  # noqa: E731
    if name == "page":
        return {"title": _text(rng, 3), "kind": "entity", "description": _text(rng), "aliases": some(lambda: _text(rng, 2)),
                "evidence": some(line, 30), "links": some(link), "writer_example": _text(rng),
                "existing_markdown": rng.choice(["", _text(rng, 40)]), "removed_refs": some(lambda: "c9", 2),
                "max_tokens": 1200, "new_evidence_only": rng.random() < 0.5, "key": _key(rng)}
    if name == "page_updates":
        return {"pages": some(lambda: {"label": "u1", "title": _text(rng, 2), "kind": "concept", "description": _text(rng),
                                       "sections": some(lambda: _text(rng, 2), 3), "evidence": some(line),
                                       "links": some(link, 3)}), "key": _key(rng)}
    if name == "map":
        types = lambda: {"name": _text(rng, 1), "description": _text(rng, 4)}  # noqa: E731
        return {"entity_types": some(types), "relation_types": some(types), "max_items": 12,
                "chunks": some(lambda: {"label": "c1", "header": _text(rng, 3), "text": _text(rng, 40)}),
                "key": _key(rng), "labels": rng.choice([[], ["c1", "c2"]]), "lean": rng.random() < 0.5,
                "example": rng.choice(["", '{"claims": [{"chunk": "c1", "text": "x"}]}'])}
    if name == "pairs":
        return {"pairs": some(lambda: PairQuestion("p1", _sketch(rng), _sketch(rng), rng.random()))}
    if name == "matches":
        return {"questions": some(lambda: MatchQuestion("q1", _sketch(rng), _text(rng, 3), _text(rng), rng.random()))}
    if name == "summary":
        return {"name": _text(rng, 2), "type": "component", "descriptions": some(lambda: _text(rng)), "max_chars": 400}
    if name == "topic":
        return {"members": some(lambda: _sketch(rng)), "claims": some(lambda: _text(rng))}
    if name == "page_layout.md":
        sentence = lambda: rng.choice([{"text": _text(rng), "ref": rng.choice([1, None])}, _text(rng)])  # noqa: E731
        return {"title": _text(rng, 3), "lead": sentence(), "aliases": some(lambda: _text(rng, 2)),
                "sections": some(lambda: rng.choice([{"heading": _text(rng, 2), "sentences": some(sentence)},
                                                     {"heading": _text(rng, 2), "paragraphs": [some(sentence)],
                                                      "bullets": some(sentence)}]), 3),
                "related": some(link)}
    return {}


@pytest.mark.parametrize("name", ["page", "page_system", "page_updates", "map", "map_system", "pairs", "matches",
                                  "summary", "topic", "judge_system", "page_layout.md"])
def test_a_builtin_prompt_renders_as_a_strangers_copy_of_it_does(name):
    source = default_prompt(name)
    copy = "{# a stranger's copy #}" + source  # not the built-in text: rendered in the sandbox
    rng = random.Random(name)
    for _ in range(40):
        variables = _variables(name, rng)
        assert render_here(source, where="b", **variables) == render_here(copy, where="b", **variables)


def test_a_builtin_prompt_keeps_the_output_limit(monkeypatch):
    monkeypatch.setattr(rendering, "MAX_OUTPUT", 100)
    with pytest.raises(TemplateError, match="writes more than 100 characters"):
        render_here(default_prompt("summary"), where="b", name="n", type="t", descriptions=["x" * 200], max_chars=9)
