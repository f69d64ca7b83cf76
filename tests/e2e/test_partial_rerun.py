"""After a compile whose MAP failed in part, a rerun writes the wiki a clean compile writes."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

from compendium.compiler.report import CompileReport
from compendium.operations import compile_workspace, export_workspace
from compendium.settings import load_settings
from tests.support.llm_server import LLMServer

from .conftest import llm_env, new_workspace


def _wiki_workspace(root: Path) -> Path:
    """The sample corpus with the built-in wiki template minus topic pages.

    Topic pages keep their slug when their membership drifts (links stay stable), so a topic
    first found from part of the corpus is named differently from one found from all of it."""
    workspace = new_workspace(root)
    builtin = (resources.files("compendium.templates") / "builtin" / "wiki.yaml").read_text(encoding="utf-8")
    text = builtin.replace("artifacts: [wiki_pages, entity_graph, topics]", "artifacts: [wiki_pages, entity_graph]")
    assert text != builtin
    (workspace / "templates").mkdir(exist_ok=True)
    (workspace / "templates" / "wiki.yaml").write_text(text, encoding="utf-8")
    return workspace


def _compile(workspace: Path, server: LLMServer) -> CompileReport:
    settings = load_settings(workspace, env=llm_env(server), overrides={"llm.max_retries": 0, "llm.retry_wait": 0.01})
    return asyncio.run(compile_workspace(settings))


def _vault(workspace: Path, server: LLMServer, out: Path) -> dict[str, bytes]:
    settings = load_settings(workspace, env=llm_env(server))
    asyncio.run(export_workspace(settings, "vault", out))
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_rerun_after_a_partial_map_failure_writes_what_a_clean_compile_writes(e2e_server: LLMServer, tmp_path: Path):
    clean_ws = _wiki_workspace(tmp_path / "clean")
    e2e_server.reset()
    assert _compile(clean_ws, e2e_server).status == "succeeded"
    clean = _vault(clean_ws, e2e_server, tmp_path / "clean-vault")

    partial_ws = _wiki_workspace(tmp_path / "partial")
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
