"""GraphML export of the entity graph (nodes: entities; edges: relations), for Gephi, yEd, igraph
or networkx: nodes carry `label`, `type`, `topic` and `importance`, edges `label` and `weight`,
the attribute names those tools show and size, colour and lay out by."""

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
        topic = wiki.topic_of(entity.id)
        graph.add_node(
            entity.id,
            label=_text(entity.name),
            name=_text(entity.name),
            topic=_text(topic.title or topic.slug) if topic else "",
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
                label=_text(rel.type),
                weight=float(max(1, rel.strength)),
                type=_text(rel.type),
                strength=int(rel.strength),
                description=_text(rel.description),
            )
    return graph


def graphml_bytes(wiki: WikiSnapshot) -> bytes:
    buffer = io.BytesIO()
    nx.write_graphml(entity_graph(wiki), buffer, encoding="utf-8", prettyprint=True)
    return buffer.getvalue()
