"""The example MAP reply every extraction prompt shows, and the names by which a copy of it
is known."""

from __future__ import annotations

import json

from ..templates.schema import Template

EXAMPLE_LABEL = "c0"  # the example's chunk: never one of a batch (labels start at c1)
# The example's names: an item naming one of them that no chunk of the batch holds was copied
# from the example (small models do), whatever label it carries.
EXAMPLE_NAMES = ("cluster manager", "raft", "leader election", "consensus", "cm")


def map_example(template: Template, lean: bool = False) -> str:
    """One short, valid MAP reply for an imaginary chunk "c0", in the template's own types:
    the shape every item takes, shown whatever the transport (a grammar-only server never
    shows the model the schema). Its label names no chunk, so a copied example is dropped."""
    types = [t.name for t in template.entity_types]
    relations = [t.name for t in template.relation_types]

    def pick(wanted: str, names: list[str], default: str) -> str:
        return wanted if wanted in names else (names[0] if names else default)

    # Claims first: pages are written from them, and a small model spends its reply in order.
    example = {
        "claims": [{"chunk": EXAMPLE_LABEL, "text": "The Cluster Manager uses Raft to elect a leader.",
                    "entities": ["Cluster Manager", "Raft"]}],
        "entities": [
            {"chunk": EXAMPLE_LABEL, "name": "Cluster Manager", "type": pick("component", types, "component"),
             "description": "Runs the cluster.", "aliases": ["CM"]},
            {"chunk": EXAMPLE_LABEL, "name": "Raft", "type": pick("algorithm", types, "algorithm"),
             "description": "A consensus algorithm.", "aliases": []},
        ],
        "concepts": [{"chunk": EXAMPLE_LABEL, "term": "leader election", "definition": "Choosing one node to lead."}],
        "relations": [{"chunk": EXAMPLE_LABEL, "source": "Cluster Manager", "target": "Raft",
                       "type": pick("uses", relations, "uses"), "description": "elects a leader", "strength": 9}],
        "topics": [{"chunk": EXAMPLE_LABEL, "name": "Consensus"}],
    }
    if lean:  # claims and entity names only, grouped by chunk (model_profile.grouped_schema)
        example = {EXAMPLE_LABEL: {
            "claims": [{k: c[k] for k in ("text", "entities")} for c in example["claims"]],
            "entities": [{k: e[k] for k in ("name", "type")} for e in example["entities"]]}}
    return json.dumps(example, ensure_ascii=False, separators=(",", ":"))
