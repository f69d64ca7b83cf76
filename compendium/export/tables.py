"""Tables export: CSV files of entities, relations, claims, pages, chunks and topics (the shape of
GraphRAG's output tables), for spreadsheets, pandas or a database import. Lists are '; '-joined."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .folder import ExportFolder
from .site import updated_date
from .snapshot import WikiSnapshot

TABLES = ("entities", "relations", "claims", "pages", "chunks", "topics")


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return value


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows)
    return buffer.getvalue()


def tables(wiki: WikiSnapshot) -> dict[str, str]:
    """File name -> CSV text, one per table; rows in the snapshot's fixed order."""
    name = {e.id: e.name for e in wiki.entities}
    topic_of = {e.id: wiki.topic_of(e.id) for e in wiki.entities}
    out = {}
    out["entities.csv"] = _csv(
        ["id", "title", "type", "category", "description", "aliases", "degree", "importance",
         "topic", "page", "chunk_ids", "document_ids"],
        ([e.id, e.name, e.type, e.category, e.description, e.aliases, e.degree, e.importance,
          topic_of[e.id].slug if topic_of[e.id] else "",
          (wiki.page_of(e.id).slug if wiki.page_of(e.id) else ""), e.chunk_ids, e.document_ids]
         for e in wiki.entities),
    )
    out["relations.csv"] = _csv(
        ["id", "source", "target", "source_id", "target_id", "type", "description", "weight", "chunk_ids"],
        ([r.id, name.get(r.source, ""), name.get(r.target, ""), r.source, r.target, r.type,
          r.description, r.strength, r.chunk_ids] for r in wiki.relations),
    )
    out["claims.csv"] = _csv(
        ["id", "text", "chunk_id", "document_id", "entity_ids", "entities"],
        ([c.id, c.text, c.chunk_id, c.document_id, c.entity_ids,
          [name[i] for i in c.entity_ids if i in name]] for c in wiki.claims),
    )
    out["pages.csv"] = _csv(
        ["id", "slug", "title", "kind", "subject_id", "summary", "aliases", "outlinks",
         "cited_chunks", "version", "edited", "updated", "markdown"],
        ([p.id, p.slug, p.title, p.kind, p.subject_id, p.summary, p.aliases, p.outlinks,
          p.cited_chunks, p.version, p.edited, updated_date(p), p.markdown] for p in wiki.pages),
    )
    documents = wiki.document_by_id
    out["chunks.csv"] = _csv(
        ["id", "document_id", "document", "document_title", "ordinal", "heading_path", "start",
         "end", "tokens", "text"],
        ([c.id, c.document_id, documents[c.document_id].path if c.document_id in documents else "",
          documents[c.document_id].title if c.document_id in documents else "", c.ordinal,
          " › ".join(c.heading_path), c.start, c.end, c.tokens, c.text] for c in wiki.chunks),
    )
    out["topics.csv"] = _csv(
        ["id", "slug", "title", "summary", "size", "members", "member_ids"],
        ([t.id, t.slug, t.title, t.summary, len(t.members), [name[m] for m in t.members if m in name],
          t.members] for t in wiki.topics),
    )
    return out


def write_tables(wiki: WikiSnapshot, out: Path) -> int:
    """Write the CSV files into the folder `out`; returns the number of files written."""
    folder = ExportFolder(out)
    for file_name, text in tables(wiki).items():
        folder.write(file_name, text)
    return folder.finish()
