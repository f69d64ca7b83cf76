"""A compile killed in the middle of any phase resumes without asking the LLM again for stored work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compendium.storage.records import CacheEntry, Chunk, Extract, Page
from tests.support.llm_server import ChatRequest, LLMServer
from tests.support.workspace_fixtures import REPO

from .conftest import compile_in_process, llm_env, new_workspace, read_store
from .wiki_checks import (
    broken_links,
    client_cache_key,
    extraction_chunk_texts,
    flat,
    page_title,
    request_key,
)

LATENCY = 0.05  # per call: long enough that every phase is caught while it works
DEADLINE = 60.0


def _is(schema: str | None) -> Callable[[ChatRequest], bool]:
    return lambda r: r.schema_name == schema


# (phase, which requests belong to it, how many of them to let through before the kill)
KILL_POINTS = [
    ("map", _is("extraction"), 6),
    ("reduce", lambda r: r.schema_name in ("description", "pairs"), 3),
    ("plan", lambda r: r.schema_name in ("topic", "matches"), 2),
    ("refine", _is(None), 8),
]


def _kill_during(workspace: Path, server: LLMServer, belongs: Callable[[ChatRequest], bool], after: int) -> None:
    """Run `compendium compile` as a process and SIGKILL it once `after` requests of the phase
    were answered."""
    env = {**os.environ, **llm_env(server)}
    env.pop("COMPENDIUM_STORE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "compendium.cli", "-w", str(workspace), "compile", "--plain"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + DEADLINE
    try:
        while sum(1 for r in list(server.requests) if belongs(r)) < after:
            if proc.poll() is not None:
                pytest.fail(f"compile ended before the phase was caught: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                pytest.fail("the phase under test never started")
            time.sleep(0.002)
        # A phase asks several things at once (PLAN names all its topics together): the kill
        # comes once the answers of the requests counted have come back and been stored.
        time.sleep(1.5 * LATENCY)
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -9
    time.sleep(2 * LATENCY)  # requests still in flight reach the log, unanswered


def _stored(workspace: Path, requests: list[ChatRequest]) -> list[ChatRequest]:
    """The requests whose replies the killed process had stored."""
    (entries,) = read_store(workspace, CacheEntry)
    have = {e.id for e in entries}
    return [r for r in requests if client_cache_key(r) in have]


@pytest.mark.parametrize(("phase", "belongs", "after"), KILL_POINTS, ids=[k[0] for k in KILL_POINTS])
def test_a_compile_killed_mid_phase_finishes_without_asking_again(
    phase: str, belongs: Callable[[ChatRequest], bool], after: int, e2e_server: LLMServer, tmp_path: Path
):
    workspace = new_workspace(tmp_path / "ws")
    e2e_server.reset()
    e2e_server.set_latency(LATENCY)
    try:
        _kill_during(workspace, e2e_server, belongs, after)
    finally:
        e2e_server.set_latency(0.0)
    first = list(e2e_server.requests)
    stored = _stored(workspace, first)
    assert any(belongs(r) for r in stored), f"nothing of {phase} was stored before the kill"
    extracts, pages = read_store(workspace, Extract, Page)
    done_chunks = {flat(t) for r in first if r.schema_name == "extraction" for t in extraction_chunk_texts(r)}
    extracted = {e.id for e in extracts if e.status == "done"}
    written = {p.title: p.evidence_fingerprint for p in pages if p.status == "active"}
    e2e_server.reset()

    report = compile_in_process(workspace, e2e_server)

    second = list(e2e_server.requests)
    assert report["status"] == "succeeded"
    assert any(belongs(r) for r in second), f"the rest of {phase} was done on the rerun"
    repeated = {request_key(r) for r in stored} & {request_key(r) for r in second}
    assert not repeated, f"{len(repeated)} requests answered and stored before the kill were asked again"
    # MAP: no chunk whose extract was stored is extracted again.
    asked_again = {t for r in second if r.schema_name == "extraction" for t in extraction_chunk_texts(r)}
    chunks_after, pages_after = read_store(workspace, Chunk, Page)
    stored_texts = {flat(c.text) for c in chunks_after if c.id in extracted}
    assert not (asked_again & stored_texts)
    if phase == "map":
        assert extracted and asked_again and not (asked_again & done_chunks & stored_texts)
    # REFINE: no page stored with its current evidence is written again.
    final = {p.title: p.evidence_fingerprint for p in pages_after if p.status == "active"}
    kept = {title for title, fp in written.items() if final.get(title) == fp}
    rewritten = {page_title(r) for r in second if r.schema_name is None}
    assert not (kept & rewritten)
    if phase == "refine":
        assert kept and rewritten
    assert report["phases"]["map"]["failed"] == 0 and broken_links(pages_after) == []

