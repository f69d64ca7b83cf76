"""GraphML export of the entity graph (nodes: entities; edges: relations), for Gephi, yEd or networkx."""

from __future__ import annotations

import io
import re

import networkx as nx

from .snapshot import WikiSnapshot

# XML 1.0 forbids most control characters; one in a description would make the file unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub(" ", value)


def entity_graph(wiki: WikiSnapshot) -> nx.MultiDiGraph:
    """Entities and the relations between them; relations to unknown entities are left out."""
    graph = nx.MultiDiGraph()
    for entity in wiki.entities:
        page = wiki.page_of(entity.id)
        graph.add_node(
            entity.id,
            name=_text(entity.name),
            type=_text(entity.type),
            category=_text(entity.category),
            importance=float(entity.importance),
            degree=int(entity.degree),
            aliases=_text("; ".join(entity.aliases)),
            page=page.slug if page else "",
        )
    for rel in wiki.relations:
        if rel.source in graph and rel.target in graph:
            graph.add_edge(
                rel.source,
                rel.target,
                key=rel.id,
                type=_text(rel.type),
                strength=int(rel.strength),
                description=_text(rel.description),
            )
    return graph


def graphml_bytes(wiki: WikiSnapshot) -> bytes:
    buffer = io.BytesIO()
    nx.write_graphml(entity_graph(wiki), buffer, encoding="utf-8", prettyprint=True)
    return buffer.getvalue()
