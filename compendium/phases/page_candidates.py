"""What a page could be written from, best first: its claims, its relations and excerpts of
the chunks that hold most of its claims."""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ..engines.tasks import EvidenceItem
from ..storage.records import Chunk, Claim, Relation
from .chunk_pages import holds
from .evidence import Source, Statement, rank_evidence
from .planning import PagePlan, relation_text

MAX_SOURCES = 60  # chunks offered as excerpts to one page, those holding most claims first


@dataclass
class PageWindow:
    """The records a few consecutive pages are written from, read together."""

    claims: dict[str, Claim] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name, for relation sentences
    chunks: dict[str, Chunk] = field(default_factory=dict)
    # claim id -> the claim as a statement about its entities' pages (rank_evidence keeps it as is)
    statements: dict[str, Statement] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)  # chunk id -> the chunk as offered to pages
    relation_texts: dict[str, str] = field(default_factory=dict)  # relation id -> its sentence (from `names`)
    source_ids: dict[str, list[str]] = field(default_factory=dict)  # slug -> its chunks offered, as read


def source_ids(plan: PagePlan, claims: Sequence[Claim]) -> list[str]:
    """The chunks offered as excerpts: the plan's and its claims', those holding most claims first."""
    per_chunk: dict[str, int] = defaultdict(int)
    for c in claims:
        per_chunk[c.chunk_id] += 1
    # The plan's chunks (sorted, unique, often 100k) in order, then the claims' other chunks;
    # those holding more claims first, ties in that order: the claims' chunks are placed by
    # bisection and the rest taken from the front, not the whole list sorted.
    ids, after = plan.chunk_ids, len(plan.chunk_ids)

    def place(n_cid: tuple[int, str]) -> tuple[int, int]:
        n, cid = n_cid
        return (-per_chunk[cid], bisect.bisect_left(ids, cid) if holds(ids, cid) else after + n)

    held = [cid for _n, cid in sorted(enumerate(per_chunk), key=place)][:MAX_SOURCES]
    rest = (cid for cid in ids if cid not in per_chunk)
    return held + list(itertools.islice(rest, MAX_SOURCES - len(held)))


def candidates(
    plan: PagePlan,
    window: PageWindow,
    titles: dict[str, str],
    slug_of_subject: dict[str, str],
    chunk_about: Mapping[str, list[str]],
) -> list[EvidenceItem]:
    """Everything the page could be written from, best first (claims, relations, excerpts)."""
    claims = [window.claims[c] for c in plan.claim_ids if c in window.claims]
    relations = [window.relations[r] for r in plan.relation_ids if r in window.relations]
    names = window.names

    # Items never name their own page (rank_evidence drops plan.slug from their `about`).
    statements: list[Statement] = []
    made = window.statements  # a claim is offered to every page about its entities: made once
    for claim in claims:
        said = made.get(claim.id)
        if said is None:
            about = [slug_of_subject[e] for e in claim.entity_ids if e in slug_of_subject]
            said = made[claim.id] = Statement(claim.text, [claim.chunk_id], about)
        statements.append(said)
    # A relation whose description is one of the page's claims says nothing the claim does not.
    spoken = {_spoken(c.text) for c in claims}
    kept_relations = [r for r in relations if _spoken(r.description) not in spoken]
    texts = window.relation_texts
    for r in kept_relations:
        text = texts.get(r.id)
        if text is None:
            text = texts[r.id] = relation_text(r, names)
        # Its own Statement per page: the page's sources reorder its chunks (below).
        statements.append(Statement(text, list(r.chunk_ids),
                                    [slug_of_subject[e] for e in (r.source, r.target) if e in slug_of_subject],
                                    "relation"))
    sources = {}
    offered = window.source_ids.get(plan.slug)  # worked out when the window was read
    for cid in offered if offered is not None else source_ids(plan, claims):
        source = window.sources.get(cid)
        if source is None and cid in window.chunks:  # one Source per chunk, shared by the window's pages
            c = window.chunks[cid]
            source = window.sources[cid] = Source(c.id, c.text, titles.get(c.document_id, ""), list(c.heading_path),
                                                  list(chunk_about.get(c.id, ())), list(c.blocks), c.start,
                                                  tuple(c.examples), c.follows_code)
        if source is not None:
            sources[cid] = source
    # A relation is cited by its first chunk: make that the chunk its description quotes.
    for statement, relation in zip(statements[len(claims):], kept_relations, strict=True):
        quoted = " ".join(relation.description.split())
        if not quoted:
            continue
        # Only the page's sources can quote it: the others keep their order behind them.
        ids = statement.chunk_ids  # whichever is fewer: the relation's chunks or the page's sources
        # (a source's flat text is worked out only when asked: most are never searched)
        quoting = ({cid for cid in ids if cid in sources and quoted in sources[cid].flat} if len(ids) < len(sources)
                   else {cid for cid, source in sources.items() if quoted in source.flat})
        if quoting:  # those first, the others behind them, each in their order
            ids = statement.chunk_ids
            ids[:] = [c for c in ids if c in quoting] + [c for c in ids if c not in quoting]
    # A topic's own passages (an outline node's part opening and its members' first passages) are
    # what it is written from, whether or not they hold a claim about a member.
    return rank_evidence(statements, sources, [plan.title, *plan.aliases], own=plan.slug,
                         furniture=frozenset(plan.furniture), description=plan.description,
                         openings=frozenset(plan.chunk_ids) if plan.kind == "topic" else ())


@lru_cache(maxsize=65536)
def _spoken(text: str) -> str:
    """A sentence as said aloud: spacing and case ignored (cached: a claim serves many pages)."""
    return " ".join(text.split()).casefold()
