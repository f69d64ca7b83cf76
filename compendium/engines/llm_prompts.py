"""The LLM engine's prompts, each rendered from the template.

Variables every prompt may use (template authors can override any prompt):
  map       entity_types, relation_types ([{name, description}]), chunks ([{label, header, text}]),
            max_items
  pairs     pairs ([PairQuestion: label, similarity, a/b: {name, type, description, aliases, evidence}])
  summary   name, type, descriptions, max_chars
  matches   questions ([MatchQuestion: label, similarity, candidate, page_title, page_summary])
  topic     members ([EntitySketch]), claims ([str])
  page      title, kind, description, aliases, evidence ([{ref, source, text, chunk_id}]),
            links ([{slug, title}]), writer_example, existing_markdown, removed_refs, max_tokens,
            new_evidence_only (an UPDATE: `evidence` holds only the new items; the page cites the rest)
  page_updates  pages ([{label, title, kind, description, sections, evidence, links}]): several
            small UPDATEs in one call; each page's new evidence only, its "## " headings, and
            the links its new evidence names (built-in prompt only)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any, TypeVar

from ..spacing import single_spaced
from ..templates.render import prompt_source, render, renders_here
from ..templates.schema import Template
from .map_example import map_example
from .page_evidence import evidence_line, said_once, sent_evidence
from .prompt_text import as_data, chunk_body, chunk_header, fence_key
from .tasks import ExtractionBatch, PageRequest

T = TypeVar("T")

_SECTION = re.compile(r"^#{2,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
UPDATE_LABEL = "u"  # pages of a grouped update are u1, u2, ...


def render_prompt(configured: str, default: str, where: str, **variables: Any) -> str:
    return render(prompt_source(configured, default), where=where, **variables)


async def prepared(build: Callable[..., T], *args: Any, sources: Iterable[str]) -> T:
    """`build(*args)`, a prompt builder: a stranger's prompt renders in a worker process, so
    it is waited for off the event loop; built-in prompts render here at once (a thread
    hop costs more CPU than they take, and they hold the GIL either way)."""
    if all(renders_here(source) for source in sources):
        return build(*args)
    return await asyncio.to_thread(build, *args)


@cache
def judge_system() -> str:
    """The built-in system prompt of every judgment and summary: it reads no variables, so it
    is rendered once (REDUCE asks for it with each of its calls)."""
    return render(prompt_source("", "judge_system"), where="judge_system")


# The prompt sources each builder renders (system, prompt): whether they all render here.
def map_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.map.system, "map_system"), prompt_source(template.map.prompt, "map")


def page_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.refine.system, "page_system"), prompt_source(template.refine.writer_prompt, "page")


def updates_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.refine.system, "page_system"), prompt_source("", "page_updates")


def map_prompt(batch: ExtractionBatch, template: Template, max_items: int, lean: bool) -> tuple[str, str]:
    """(system, prompt) for one batch; separate so prompt size can be measured."""
    system = render_prompt(template.map.system, "map_system", f"{template.name}: map.system")
    chunks = [{"label": c.label, "header": as_data(chunk_header(c)), "text": as_data(chunk_body(c))}
              for c in batch.chunks]
    key = fence_key(*(f"{c['header']}\n{c['text']}" for c in chunks))
    prompt = render_prompt(
        template.map.prompt,
        "map",
        f"{template.name}: map.prompt",
        entity_types=[{"name": t.name, "description": t.description} for t in template.entity_types],
        relation_types=[{"name": t.name, "description": t.description} for t in template.relation_types],
        chunks=chunks,
        max_items=min(template.map.max_items_per_chunk, max_items),
        key=key,
        example=map_example(template, lean=lean),
        labels=[c.label for c in batch.chunks],
        lean=lean,
    )
    return system, prompt


def page_prompt(request: PageRequest, template: Template) -> tuple[str, str]:
    system = render_prompt(template.refine.system, "page_system", f"{template.name}: refine.system")
    evidence = said_once([evidence_line(e) for e in sent_evidence(request)])
    existing = as_data(request.existing_markdown.strip()).replace("[ ^", "[^")  # its own citations stay
    key = fence_key(*(e["text"] for e in evidence), existing)
    prompt = render_prompt(
        template.refine.writer_prompt,
        "page",
        f"{template.name}: refine.writer_prompt",
        title=request.title,
        kind=request.kind,
        description=single_spaced(request.description),
        aliases=request.aliases,
        evidence=evidence,
        links=[{"slug": link.slug, "title": link.title} for link in request.links],
        writer_example=template.refine.writer_example.strip(),
        existing_markdown=existing,
        removed_refs=request.removed_refs,
        max_tokens=request.max_tokens,
        new_evidence_only=bool(request.existing_markdown.strip() and request.new_refs),
        key=key,
    )
    return system, prompt


def updates_prompt(requests: Sequence[PageRequest], template: Template) -> tuple[str, str]:
    """(system, prompt) of a grouped update: per page, its headings and new evidence only."""
    system = render_prompt(template.refine.system, "page_system", f"{template.name}: refine.system")
    pages = []
    for n, request in enumerate(requests, start=1):
        evidence = sent_evidence(request)
        named = {slug for e in evidence for slug in e.about}
        pages.append({
            "label": f"{UPDATE_LABEL}{n}",
            "title": request.title,
            "kind": request.kind,
            "description": single_spaced(request.description),
            "sections": list(dict.fromkeys(_SECTION.findall(request.existing_markdown))),
            "evidence": said_once([evidence_line(e) for e in evidence]),
            "links": [{"slug": link.slug, "title": link.title} for link in request.links if link.slug in named],
        })
    key = fence_key(*(e["text"] for p in pages for e in p["evidence"]))
    return system, render_prompt("", "page_updates", "page_updates", pages=pages, key=key)
