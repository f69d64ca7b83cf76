"""Read what an export needs from a store: active pages, the entity graph, topics and sources."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..outline.stored import stored_outline
from ..storage.base import Store
from ..storage.records import Chunk, Claim, Document, Entity, Page, Relation, Topic
from ..storage.slugs import slugify

# Slugs become file names: keep them to one path segment with no hidden or reserved names.
_SAFE_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
RESERVED_SLUGS = frozenset({"_index"})


@dataclass
class WikiSnapshot:
    """Everything exported, sorted by id so that every export of the same store is identical."""

    pages: list[Page]
    entities: list[Entity]
    relations: list[Relation]
    topics: list[Topic]
    documents: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)  # by document, then position in it
    claims: list[Claim] = field(default_factory=list)
    outline: dict[str, Any] | None = None  # the stored outline (compendium.outline.stored), if any
    page_by_slug: dict[str, Page] = field(init=False)
    entity_by_id: dict[str, Entity] = field(init=False)

    def __post_init__(self) -> None:
        self.page_by_slug = {p.slug: p for p in self.pages}
        self.entity_by_id = {e.id: e for e in self.entities}
        self.chunk_by_id = {c.id: c for c in self.chunks}
        self.document_by_id = {d.id: d for d in self.documents}
        self.source_name = _source_names(self.documents)
        self._chunks_of: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in self.chunks:
            self._chunks_of[chunk.document_id].append(chunk)
        self._page_of_subject = {p.subject_id: p for p in self.pages if p.subject_id}
        # Indexes built once, so entity and topic listings stay linear in the size of the graph.
        self._topics_of_subject: dict[str, list[Topic]] = defaultdict(list)
        for topic in self.topics:
            for subject in dict.fromkeys([topic.id, *topic.members]):
                self._topics_of_subject[subject].append(topic)
        self._relations_of: dict[str, list[Relation]] = defaultdict(list)
        for rel in self.relations:
            for end in {rel.source, rel.target}:
                self._relations_of[end].append(rel)

    def page_of(self, subject_id: str) -> Page | None:
        """The page written about an entity or topic, if there is one."""
        return self._page_of_subject.get(subject_id)

    def topics_of(self, page: Page) -> list[Topic]:
        """Topics the page belongs to: those whose members include its subject, or its own topic."""
        return list(self._topics_of_subject.get(page.subject_id, [])) if page.subject_id else []

    def topic_of(self, entity_id: str) -> Topic | None:
        """The entity's topic (its community); the largest when it is in several."""
        topics = self._topics_of_subject.get(entity_id, [])
        return max(topics, key=lambda t: (len(t.members), t.id)) if topics else None

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Relations touching an entity, strongest first."""
        return sorted(
            self._relations_of.get(entity_id, []), key=lambda r: (-r.strength, r.type, r.id)
        )

    def chunks_of(self, document_id: str) -> list[Chunk]:
        """The document's chunks in reading order."""
        return self._chunks_of.get(document_id, [])


def _source_names(documents: list[Document]) -> dict[str, str]:
    """A readable file name (no extension) per document: its path slugified, made unique."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for doc in documents:
        stem = doc.path.rsplit(".", 1)[0] if "." in doc.path.rsplit("/", 1)[-1] else doc.path
        name = slugify(stem or doc.title or doc.id)
        if name in taken:
            name = f"{name}-{doc.id[:8]}"
        taken.add(name)
        names[doc.id] = name
    return names


def check_slug(page: Page) -> str:
    """The page's slug, refused when it could not be a plain file name."""
    slug = page.slug or page.id
    if not _SAFE_SLUG.match(slug) or slug in RESERVED_SLUGS:
        raise InputError(
            f"page {page.id!r}: slug {slug!r} cannot be used as a file name",
            hint="slugs are letters, digits, '.', '_' and '-', starting with a letter or digit",
            field="slug",
        )
    return slug


async def load_snapshot(store: Store, *, sources: bool = True) -> WikiSnapshot:
    """Active pages (deleted ones are left out), entities, relations and topics of the store's
    kb; with `sources`, its documents, chunks and claims too (what citations point at)."""
    pages = [p async for p in store.scan(Page, {"status": "active"})]
    entities = [e async for e in store.scan(Entity)]
    relations = [r async for r in store.scan(Relation)]
    topics = [t async for t in store.scan(Topic)]
    documents = [d async for d in store.scan(Document)] if sources else []
    chunks = [c async for c in store.scan(Chunk)] if sources else []
    claims = [c async for c in store.scan(Claim)] if sources else []
    outline = await stored_outline(store)
    seen: dict[str, str] = {}
    for page in pages:
        slug = check_slug(page)
        if slug in seen:
            raise InputError(
                f"pages {seen[slug]!r} and {page.id!r} share the slug {slug!r}", field="slug"
            )
        seen[slug] = page.id
        page.slug = slug
    return WikiSnapshot(
        pages=sorted(pages, key=lambda p: p.slug),
        entities=sorted(entities, key=lambda e: e.id),  # type: ignore[arg-type]
        relations=sorted(relations, key=lambda r: r.id),  # type: ignore[arg-type]
        topics=sorted(topics, key=lambda t: t.id),  # type: ignore[arg-type]
        documents=sorted(documents, key=lambda d: (d.path, d.id)),  # type: ignore[arg-type]
        chunks=sorted(chunks, key=lambda c: (c.document_id, c.ordinal, c.id)),  # type: ignore[arg-type]
        claims=sorted(claims, key=lambda c: c.id),  # type: ignore[arg-type]
        outline=outline,
    )


def wiki_counts(wiki: WikiSnapshot) -> dict[str, int]:
    """What a compile report counts, counted the same way in every export: pages, entities and
    concepts apart (both are Entity records), relations, topics."""
    concepts = sum(1 for e in wiki.entities if getattr(e, "category", "entity") == "concept")
    return {"pages": len(wiki.pages), "entities": len(wiki.entities) - concepts, "concepts": concepts,
            "relations": len(wiki.relations), "topics": len(wiki.topics)}
