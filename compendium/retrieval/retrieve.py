"""retrieve(): a question to typed evidence (passages first; then the entities, relations,
pages and topics of the subjects it names) and a Markdown context block.

Passages are ranked the same way in every mode: full text (BM25) and dense vectors over
chunks, fused by score, the head reranked by how closely the passages' words meet the
question's (rerank.py, with the bundled offline embedder's word vectors), then capped per
document (the named subjects' passages as a third list, and a rerank of the fused head by
cosine, were measured and added nothing). With `rerank_by="llm"` the configured model reorders
the first passages in one cached call (llm_rerank.py), the fused order kept on any failure.
The ranking does not depend on `top_k`: --top 5 is the first five of --top 10. The graph only
adds what is linked to a subject the question names (an entity whose whole name or alias the
question spells out as a name); a word of the question that merely equals an entity's name is
not evidence.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..storage.base import Store
from ..storage.text import words
from .context import build_context
from .index import ensure_index
from .options import MAX_TOP, MODES, RERANKERS, Options
from .passages import ranked_passages
from .ranking import RANKINGS, ranked
from .scope import documents_in_node, documents_under
from .subjects import linked_entities, named_subjects, subject_pages, subject_topics
from .terms import QuestionTerms, clip_question, llm_terms, rule_terms


@dataclass(slots=True)
class Retrieval:
    """The evidence for a question. `refs` maps each context label to (kind, record id)."""

    question: str
    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    pages: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    context: str
    refs: dict[str, tuple[str, str]] = field(default_factory=dict)
    terms: QuestionTerms | None = None
    notes: list[str] = field(default_factory=list)  # what degraded (the LLM unreachable...)
    model_error: str | None = None  # the model could not be reached: why

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `retrieve --json` and of the API."""
        out = {
            "question": self.question,
            "entities": [_pick(e, "id", "name", "type", "score", "page") for e in self.entities],
            "relations": [
                _pick(r, "id", "source", "target", "type", "description", "strength", "score")
                for r in self.relations
            ],
            "pages": [_pick(p, "slug", "title", "score") for p in self.pages],
            "topics": [_pick(t, "id", "slug", "title", "score") for t in self.topics],
            "chunks": [
                _pick(c, "chunk_id", "document", "heading_path", "text", "score") for c in self.chunks
            ],
            "context": self.context,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _pick(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: item[k] for k in keys}


async def retrieve(
    question: str,
    store: Store,
    *,
    embedder: Any,
    passages: Any | None = None,
    llm: Any | None = None,
    options: Options | None = None,
) -> Retrieval:
    """Evidence for `question` from the knowledge base `store` is scoped to.

    `embedder` is the one the knowledge base was compiled with (entity names); `passages` the
    one its passages were embedded with at compile time (default: the one the compile chose for
    `embedder`, engines.factory.passage_embedder); `llm`, an
    OpenAIClient, rewrites the question into names and keywords (one cached call); without it,
    or when it cannot be reached, rules and the alias table do.
    """
    opts = options or Options()
    if opts.mode not in MODES:
        raise InputError(f"unknown retrieval mode {opts.mode!r}; use one of: {', '.join(MODES)}",
                         field="mode")
    if opts.ranking not in RANKINGS:
        raise InputError(f"unknown ranking {opts.ranking!r}; use one of: {', '.join(RANKINGS)}",
                         field="ranking")
    if opts.rerank_by not in RERANKERS:
        raise InputError(f"unknown rerank {opts.rerank_by!r}; use one of: {', '.join(RERANKERS)}",
                         field="rerank")
    text = clip_question(question)
    if not words(text):
        raise InputError("the question has no words", field="question")
    if passages is None:
        from ..engines.factory import passage_embedder

        passages = passage_embedder(embedder)
    top_k = max(1, min(int(opts.top_k), MAX_TOP))
    mark = await ensure_index(store, passages)
    notes: list[str] = []
    if not mark:  # an empty knowledge base: nothing to look up, no model to ask
        return Retrieval(question=text, entities=[], relations=[], pages=[], topics=[], chunks=[],
                         context=build_context(text, {}, 200)[0], terms=rule_terms(text), notes=notes)
    terms, model_error = await _terms(text, llm, notes)
    if opts.rerank_by == "llm" and llm is not None and model_error:  # it would wait for it again
        opts = dataclasses.replace(opts, rerank_by="words")
        notes.append("the model could not be reached: the passages keep their fused order")
    search = " ".join([*terms.words, *terms.names])
    documents = await documents_under(store, opts.path_prefix) if opts.path_prefix else None
    if opts.outline_node:
        in_node = await documents_in_node(store, opts.outline_node)
        documents = in_node if documents is None else [d for d in documents if d in set(in_node)]

    subjects = await named_subjects(store, embedder, text, terms)
    entity_scores, entity_records, relations = await linked_entities(store, subjects, opts)
    headings = {" ".join(words(n)) for _, e in subjects.values() for n in [e.name, *e.aliases]} if opts.heading_weight else set()
    chunks = await ranked_passages(store, passages, text, search, documents, opts, top_k, headings, mark,
                                   llm=llm, notes=notes)

    top_entities = ranked(entity_scores, top_k)
    pages = await subject_pages(store, entity_scores, top_entities, opts, top_k)
    topics = await subject_topics(store, entity_scores, top_k) if opts.mode != "local" and subjects else []
    entities = [
        {
            "id": i, "name": entity_records[i].name, "type": entity_records[i].type,
            "score": round(entity_scores[i], 4), "page": next((p["slug"] for p in pages if p["subject_id"] == i), None),
            "description": entity_records[i].description,
        }
        for i in top_entities
    ]
    if opts.mode == "global":
        entities = entities[: max(1, top_k // 2)]
    names = {i: e.name for i, e in entity_records.items()}
    relation_items = [
        {**r, "source_name": names.get(r["source"], r["source"]),
         "target_name": names.get(r["target"], r["target"])}
        for r in relations[:top_k]
    ]
    parts = {"entities": entities, "relations": relation_items, "pages": pages[:top_k],
             "topics": topics, "chunks": chunks}
    context, labels = build_context(text, parts, max(200, int(opts.budget_tokens)))
    refs = {}
    for key, kind, id_key in (("entities", "entity", "id"), ("relations", "relation", "id"),
                              ("pages", "page", "slug"), ("topics", "topic", "id"),
                              ("chunks", "chunk", "chunk_id")):
        for index, item in enumerate(parts[key]):
            ref = f"{key[0].upper()}{index + 1}"
            if ref in labels:
                refs[ref] = (kind, item[id_key])
    return Retrieval(question=text, entities=entities, relations=relation_items,
                     pages=pages[:top_k], topics=topics, chunks=chunks, context=context,
                     refs=refs, terms=terms, notes=notes, model_error=model_error)


async def _terms(text: str, llm: Any | None, notes: list[str]) -> tuple[QuestionTerms, str | None]:
    """The LLM's rewrite when one is configured and answers; the rules' terms otherwise (and,
    when the model could not be reached, why)."""
    if llm is None:
        return rule_terms(text), None
    from ..errors import CompendiumError, EngineUnavailable

    try:
        return await llm_terms(text, llm), None
    except CompendiumError as exc:
        notes.append(f"the model could not rewrite the question ({exc}); searched with the question's own words")
        return rule_terms(text), str(exc) if isinstance(exc, EngineUnavailable) else None


