"""Calls overlapped and page embeddings batched write exactly what one call at a time writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from compendium.cli import main
from compendium.storage.records import Page
from tests.support.llm_server import LLMServer

from .conftest import compile_in_process, new_workspace, read_store

ONE_AT_A_TIME = """
llm:
  max_concurrency: 1
embedding:
  batch_size: 1
"""


def _vault(workspace: Path, out: Path) -> dict[str, bytes]:
    assert main(["-w", str(workspace), "export", "--format", "vault", str(out)]) == 0
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _compile(root: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch, config: str = "") -> Path:
    workspace = new_workspace(root)
    if config:
        with (workspace / "compendium.yaml").open("a", encoding="utf-8") as out:
            out.write(config)
    server.reset()
    monkeypatch.setenv("COMPENDIUM_EMBED_BASE_URL", server.base_url)
    monkeypatch.setenv("COMPENDIUM_EMBED_API_KEY", "test-key")
    monkeypatch.setenv("COMPENDIUM_EMBED_MODEL", "test-embed")
    compile_in_process(workspace, server)
    return workspace


def test_overlapped_calls_and_batched_embeddings_write_the_same_wiki(
    e2e_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    e2e_server.set_latency(0.01)  # so that overlapping requests are seen overlapping
    try:
        serial = _compile(tmp_path / "serial" / "kb", e2e_server, monkeypatch, ONE_AT_A_TIME)
        serial_embeddings = e2e_server.calls["embeddings"]
        assert e2e_server.most_in_flight["completions"] == 1
        overlapped = _compile(tmp_path / "overlapped" / "kb", e2e_server, monkeypatch)
    finally:
        e2e_server.set_latency(0.0)
    assert e2e_server.most_in_flight["completions"] > 1
    (pages,) = read_store(overlapped, Page)
    written = [p for p in pages if p.status == "active"]
    assert written and all(p.embedding is not None for p in written)
    # Each page was embedded in a request of its own one at a time; here pages share requests.
    assert serial_embeddings >= len(written) > e2e_server.calls["embeddings"]
    assert _vault(overlapped, tmp_path / "v2") == _vault(serial, tmp_path / "v1")
