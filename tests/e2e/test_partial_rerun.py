"""After a compile whose MAP failed in part, a rerun writes the wiki a clean compile writes.

Pages written from part of the extraction are provisional: when the rest arrives they are
written anew rather than merged into (a merge never adds the links to pages created since),
and topics are not found until the whole corpus is extracted (a topic keeps the name it was
first given)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from compendium.compiler.report import CompileReport
from compendium.operations import compile_workspace, export_workspace
from compendium.settings import load_settings
from tests.support.llm_server import LLMServer

from .conftest import llm_env, new_workspace


def _compile(workspace: Path, server: LLMServer) -> CompileReport:
    settings = load_settings(workspace, env=llm_env(server), overrides={"llm.max_retries": 0, "llm.retry_wait": 0.01})
    return asyncio.run(compile_workspace(settings))


def _vault(workspace: Path, server: LLMServer, out: Path) -> dict[str, bytes]:
    settings = load_settings(workspace, env=llm_env(server))
    asyncio.run(export_workspace(settings, "vault", out))
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_rerun_after_a_partial_map_failure_writes_what_a_clean_compile_writes(e2e_server: LLMServer, tmp_path: Path):
    # Same folder name: an unset site title is taken from it.
    clean_ws = new_workspace(tmp_path / "clean" / "kb")
    e2e_server.reset()
    assert _compile(clean_ws, e2e_server).status == "succeeded"
    clean = _vault(clean_ws, e2e_server, tmp_path / "clean-vault")

    partial_ws = new_workspace(tmp_path / "partial" / "kb")
    e2e_server.reset()
    e2e_server.fail_next(1, "500")  # one MAP batch fails for good (no retries)
    first = _compile(partial_ws, e2e_server)
    assert first.phases["map"]["failed"] > 0
    assert _vault(partial_ws, e2e_server, tmp_path / "partial-vault") != clean  # pages were missing

    e2e_server.reset()
    rerun = _compile(partial_ws, e2e_server)
    assert rerun.status == "succeeded" and rerun.phases["map"]["failed"] == 0
    assert rerun.pages["updated"] > 0  # pages written from part of the corpus were revisited
    again = _vault(partial_ws, e2e_server, tmp_path / "rerun-vault")
    assert sorted(again) == sorted(clean)
    assert [name for name in clean if again[name] != clean[name]] == []
