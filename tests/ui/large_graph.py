"""A generated entity graph as large as the canvas must stay readable at (5,000 nodes, 20,000
relations), clustered like a real one, written straight into a running server's store."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from compendium.storage.factory import open_store
from compendium.storage.records import Entity, Relation, Topic
from compendium.tenancy import kb_store, server_store_url

from .server import UiServer, create_tenant

TYPES = ["person", "organization", "component", "concept", "place", "event", "product", "standard"]
RELATION_TYPES = ["uses", "part_of", "related_to", "depends_on", "created_by"]


def generate(n: int, m: int, seed: int = 11) -> tuple[list[Entity], list[Relation], list[Topic]]:
    """Most relations inside communities of ~100 (the topics), a few across; importance by degree."""
    rng = np.random.default_rng(seed)
    communities = max(1, n // 100)
    home = rng.integers(0, communities, size=n)
    members = [np.flatnonzero(home == c) for c in range(communities)]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m:
        a = int(rng.integers(0, n))
        if rng.random() < 0.85 and len(members[home[a]]) > 1:
            b = int(rng.choice(members[home[a]]))
        else:
            b = int(rng.integers(0, n))
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    degree = np.zeros(n, dtype=int)
    for a, b in pairs:
        degree[a] += 1
        degree[b] += 1
    top = degree.max() or 1
    entities = [
        Entity(id=f"e{i:05d}", name=f"Entity {i}", type=TYPES[i % len(TYPES)],
               description=f"Generated entity {i} of community {home[i]}.",
               degree=int(degree[i]), importance=round(float(degree[i] / top), 4))
        for i in range(n)
    ]
    relations = [
        Relation(id=f"r{k:06d}", source=f"e{a:05d}", target=f"e{b:05d}",
                 type=RELATION_TYPES[k % len(RELATION_TYPES)], strength=int(1 + rng.poisson(1.0)),
                 chunk_ids=[])
        for k, (a, b) in enumerate(sorted(pairs))
    ]
    topics = [Topic(id=f"t{c:03d}", slug=f"community-{c}", title=f"Community {c}",
                    members=[f"e{i:05d}" for i in members[c]]) for c in range(communities)]
    return entities, relations, topics


async def write_graph(store_url: str, tenant: str, kb: str, n: int, m: int) -> None:
    store = await open_store(store_url, "_system")
    try:
        scoped = kb_store(store, tenant, kb)
        entities, relations, topics = generate(n, m)
        for start in range(0, len(entities), 1000):
            await scoped.upsert(entities[start : start + 1000])
        for start in range(0, len(relations), 2000):
            await scoped.upsert(relations[start : start + 2000])
        await scoped.upsert(topics)
    finally:
        await store.close()


def seed_large_graph(server: UiServer, *, tenant: str, kb: str, n: int = 5000, m: int = 20000) -> str:
    """A tenant with knowledge base `kb` holding the generated graph; returns the tenant's key."""
    key = create_tenant(server, tenant)
    with server.client(key) as client:
        client.post("/knowledge-bases", json={"name": kb}).raise_for_status()
    url = server_store_url(server.settings.store_url, server.data_dir)
    with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever the caller's thread runs
        pool.submit(asyncio.run, write_graph(url, tenant, kb, n, m)).result()
    return key
