"""A real SQLite store holding a tiny hand-made wiki: pages, entities, relations, a topic."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from compendium.storage.base import Store
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk, Claim, Document, Entity, Page, Relation, Topic

WAL_MD = """The **Write-Ahead Log** records every change before the page is written.[^1]
The [[checkpointer|checkpoint process]] flushes pages, and positions are [[lsn]]s.[^2]
See also [[not-a-page]] and [[gone]].

[^1]: Lumen handbook › Durability — chunk c0ffee0001
[^2]: Lumen handbook › LSN — chunk c0ffee0002
"""

HOSTILE_MD = """A page whose text came from a hostile document.

<script>alert(1)</script>

<img src=x onerror=alert(1)>

[click](javascript:alert(1)) and [[wal]].
"""


DURABILITY_TEXT = (
    "Durability\n\n"
    "Lumen flushes pages lazily. The Write-Ahead Log records every change before the page is "
    "written to disk. A commit waits for its log record."
)
LSN_TEXT = "LSN\n\nEach record has a position in the log. The checkpoint process flushes pages."


def sources() -> list:
    """The document the wiki cites and its two passages (chunk ids as the footnotes name them)."""
    return [
        Document(id="d-hb", path="handbook/durability.md", title="Lumen handbook",
                 chunk_ids=["c0ffee0001", "c0ffee0002"]),
        Chunk(id="c0ffee0001", document_id="d-hb", ordinal=0, text=DURABILITY_TEXT,
              heading_path=["Lumen handbook", "Durability"], start=0, end=len(DURABILITY_TEXT)),
        Chunk(id="c0ffee0002", document_id="d-hb", ordinal=1, text=LSN_TEXT,
              heading_path=["Lumen handbook", "LSN"], start=len(DURABILITY_TEXT), end=200),
        Claim(id="cl1", text="The Write-Ahead Log records every change before the page is written.",
              chunk_id="c0ffee0001", document_id="d-hb", entity_ids=["e-wal"]),
    ]


def records() -> list:
    vec = np.ones(4, dtype=np.float32) / 2.0
    return [*sources(),
        Entity(
            id="e-wal",
            name="Write-Ahead Log",
            type="component",
            aliases=["WAL", "write-ahead log"],
            importance=0.9,
            degree=2,
            embedding=vec,
        ),
        Entity(
            id="e-ckpt",
            name="Checkpointer",
            type="process",
            aliases=["checkpoint process"],
            importance=0.7,
            degree=1,
        ),
        Entity(
            id="e-lsn",
            name="Log Sequence Number",
            type="concept",
            category="concept",
            aliases=["LSN"],
            importance=0.5,
            degree=1,
        ),
        Relation(
            id="r1",
            source="e-ckpt",
            target="e-wal",
            type="writes_to",
            description="writes a checkpoint record",
            strength=3,
            chunk_ids=["c1", "c2", "c3"],
        ),
        Relation(
            id="r2",
            source="e-wal",
            target="e-lsn",
            type="addressed_by",
            description="positions are LSNs",
            strength=2,
        ),
        Relation(id="r3", source="e-wal", target="e-missing", type="mentions", strength=1),
        Topic(
            id="t-dur",
            slug="durability",
            title="Durability",
            summary="How Lumen keeps data.",
            members=["e-wal", "e-ckpt", "e-lsn"],
        ),
        Page(
            id="wal",
            slug="wal",
            title="Write-Ahead Log",
            kind="entity",
            subject_id="e-wal",
            markdown=WAL_MD,
            summary="The journal of changes.",
            aliases=["WAL"],
            outlinks=["checkpointer", "lsn"],
            cited_chunks=["c0ffee0001", "c0ffee0002"],
            updated_at=1_700_000_000.0,
            embedding=vec,
        ),
        Page(
            id="checkpointer",
            slug="checkpointer",
            title="Checkpointer",
            kind="entity",
            subject_id="e-ckpt",
            markdown="Writes dirty pages; see [[wal|the WAL]].\n",
        ),
        Page(
            id="lsn",
            slug="lsn",
            title="Log Sequence Number",
            kind="concept",
            subject_id="e-lsn",
            markdown="A position in the [[wal]].\n",
            aliases=["LSN"],
        ),
        Page(
            id="durability",
            slug="durability",
            title="Durability",
            kind="topic",
            subject_id="t-dur",
            markdown="Overview of [[wal]] and [[checkpointer]].\n",
        ),
        Page(
            id="hostile",
            slug="hostile",
            title="Hostile <b>page</b>",
            kind="concept",
            markdown=HOSTILE_MD,
        ),
        Page(
            id="gone",
            slug="gone",
            title="Gone page",
            kind="entity",
            status="deleted",
            markdown="This page was deleted.",
        ),
    ]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", kb="lumen")
    await opened.upsert(records())
    yield opened
    await opened.close()
