"""The evidence a page prompt carries: each item a line with its source, said once, and
what each citation key a page may write names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..spacing import single_spaced
from ..support import split_sentences
from .prompt_text import as_data, folded, source_path
from .tasks import EvidenceItem, PageRequest


def evidence_line(e: EvidenceItem) -> dict[str, Any]:
    # A document's first heading is usually its title: said once, as in a MAP chunk's header.
    source = source_path(e.document, *e.heading_path) or e.chunk_id
    return {
        "ref": e.ref,
        "source": as_data(single_spaced(source)).replace("(", "[").replace(")", "]"),
        "text": as_data(single_spaced(e.text)),
        "chunk_id": e.chunk_id,
    }


MIN_REPEAT_CHARS = 20  # a shorter sentence ("Requires a restart.") may be said again


def said_once(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evidence lines as a page prompt carries them: a line all of whose sentences earlier lines
    already gave is left out (a page's pack holds a fact both as a claim and as its chunk's
    excerpt, measured on the sample corpus: one REFINE prompt token in twenty-three). A line
    that still says something new is sent whole: cut down to its new sentences, an excerpt's
    context would stand alone as a fact of the page. The model cites the line that says a
    fact; its reply is still checked against every item it was sent."""
    said: set[str] = set()
    out: list[dict[str, Any]] = []
    for line in lines:
        keys = [folded(p) for p in split_sentences(line["text"]) if p.strip()]
        if not keys or any(len(k) < MIN_REPEAT_CHARS or k not in said for k in keys):
            out.append(line)
        said.update(keys)
    return out


def evidence_texts(evidence: Sequence[EvidenceItem]) -> dict[str, str]:
    """What each citation key a page may write names: by ref and by chunk id."""
    out: dict[str, str] = {}
    for e in evidence:
        out[str(e.ref)] = e.text
        out[e.chunk_id] = f"{out[e.chunk_id]} {e.text}" if e.chunk_id in out else e.text
    return out


def sent_evidence(request: PageRequest) -> list[EvidenceItem]:
    """The evidence a page prompt carries. An UPDATE with new_refs sends the page as it stands
    and only the new evidence: the page already carries (and cites) the rest, so the prompt
    grows with the change only."""
    if request.existing_markdown.strip() and request.new_refs:
        wanted = set(request.new_refs)
        return [e for e in request.evidence if e.ref in wanted]
    return list(request.evidence)


def sent_refs(request: PageRequest) -> list[str]:
    """What a page reply must cite one of: the evidence it was sent, by ref or chunk id."""
    sent = sent_evidence(request)
    return list(dict.fromkeys([*(str(e.ref) for e in sent), *(e.chunk_id for e in sent)]))
