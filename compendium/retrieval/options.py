"""The knobs of one retrieval, with the measured best as defaults."""

from __future__ import annotations

from dataclasses import dataclass

from .ranking import DEFAULT_RANKING

MODES: tuple[str, ...] = ("local", "global", "hybrid")
MODE_HELP = {
    "hybrid": "passages, and the entities, relations, pages and topics of the subjects the question names",
    "local": "passages, and the named subjects with their neighbours and relations (no topics)",
    "global": "passages, and the pages and topics of the named subjects (fewer entities)",
}
DEFAULT_BUDGET = 2000  # tokens of context
MAX_TOP = 50
RERANKERS: tuple[str, ...] = ("words", "llm", "none")


@dataclass(slots=True)
class Options:
    """Knobs of one retrieval; the defaults are the measured best (benchmarks/retrieval.py)."""

    top_k: int = 8
    mode: str = "hybrid"
    budget_tokens: int = DEFAULT_BUDGET
    ranking: str = DEFAULT_RANKING
    hops: int = 1
    # Passages: BM25 and cosine fused by score ("convex", alpha the full text's share) or by
    # rank ("rrf"). Measured on four manuals (benchmarks/reports/retrieval.md): convex beat RRF
    # on recall@5 and MRR@10 on all of them; alpha 0.35 with the word-match rerank below.
    fusion: str = "convex"
    alpha: float = 0.35
    # The word-match rerank of the fused head (rerank.py): its weight on the convex scores' scale
    # (RRF's are 1/(60 + rank), where it would decide alone); 0: none.
    rerank: float = 0.15
    # What reorders the head after fusion: "words" (the word-match rerank above), "llm" (the
    # word match, then the configured model reorders the first passages: llm_rerank.py; one
    # cached call, the fused order kept on any failure) or "none".
    rerank_by: str = "words"
    vectors: bool = True  # False: full text alone
    heading_weight: float = 0.2  # a passage under a heading that names a subject of the question
    per_document: int = 1  # passages of one document in the first five (0: no cap); one: five documents, measured best on all four manuals
    path_prefix: str | None = None  # only documents whose path starts with it
    outline_node: str | None = None  # only the documents of this outline node (id, slug or title)
