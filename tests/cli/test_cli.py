"""The `compendium` command line as a user drives it: init, add, compile, status, changes,
export, templates, and one clear line with a non-zero exit for each kind of mistake."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx
import pytest

from compendium.cli import main
from tests.support.workspace_fixtures import SAMPLE_CORPUS

ENV_VARS = (
    "COMPENDIUM_LLM_BASE_URL",
    "COMPENDIUM_LLM_API_KEY",
    "COMPENDIUM_LLM_MODEL",
    "COMPENDIUM_EMBED_BASE_URL",
    "COMPENDIUM_EMBED_API_KEY",
    "COMPENDIUM_EMBED_MODEL",
    "COMPENDIUM_STORE",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_makes_the_workspace_named_by_w(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "-w", "kb", "init")
    assert "kb" in out
    assert code == 0 and (tmp_path / "kb" / "compendium.yaml").exists()
    assert not (tmp_path / "compendium.yaml").exists()
    code, _, err = run(capsys, "-w", "kb", "init", "other")
    assert code != 0 and "kb" in err and "other" in err and not (tmp_path / "other").exists()


def test_offline_session_from_init_to_export(tmp_path: Path, capsys):
    ws = tmp_path / "kb"
    code, out, _ = run(capsys, "init", str(ws))
    assert code == 0 and (ws / "compendium.yaml").exists()
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_CORPUS / "storage", docs)
    code, out, _ = run(capsys, "-w", str(ws), "add", str(docs))
    assert code == 0
    copied = sorted(p for p in (ws / "documents").rglob("*") if p.is_file())
    assert len(copied) == len([p for p in docs.rglob("*") if p.is_file()])

    report_file = tmp_path / "report.json"
    code, out, err = run(capsys, "-w", str(ws), "compile", "--plain", "--report", str(report_file))
    assert code == 0, err
    assert "offline engine" in err  # the output says no LLM endpoint is used
    report = json.loads(report_file.read_text())
    assert report["engine"] == "offline"
    assert report["documents"] == len(copied)
    assert set(report["phases"]) == {"ingest", "map", "reduce", "plan", "refine"}
    for phase in ("map", "reduce", "plan", "refine"):
        entry = report["phases"][phase]
        for key in ("items", "done", "skipped", "failed", "llm_calls", "prompt_tokens",
                    "completion_tokens", "embedding_calls", "seconds"):
            assert key in entry, (phase, key)
        assert entry["llm_calls"] == 0 and entry["failed"] == 0
    assert report["phases"]["map"]["items"] == report["chunks"] > 0
    assert report["pages"]["created"] > 0 and report["pages"]["updated"] == 0
    assert set(report["counts"]) >= {"entities", "relations", "claims", "topics"}
    assert report["totals"]["llm_calls"] == 0

    code, out, _ = run(capsys, "-w", str(ws), "status", "--json")
    status = json.loads(out)
    assert status["counts"]["documents"] == report["documents"]
    assert status["counts"]["chunks"] == report["chunks"]
    assert status["counts"]["pages"] == report["pages"]["created"]
    assert status["store"]["backend"] == "sqlite"
    assert status["last_compile"]["status"] == "succeeded"

    code, out, _ = run(capsys, "-w", str(ws), "changes")
    assert code == 0 and out.count("created") >= report["pages"]["created"]

    # Nothing changed: nothing re-extracted, no page rewritten.
    code, out, err = run(capsys, "-w", str(ws), "compile", "--plain", "--report", str(report_file))
    again = json.loads(report_file.read_text())
    assert code == 0
    assert again["phases"]["map"]["done"] == 0
    assert again["pages"] == {"created": 0, "updated": 0, "unchanged": report["pages"]["created"], "deleted": 0}

    for fmt, probe in (("vault", "_index.md"), ("site", "index.html"), ("json", None), ("graphml", None)):
        out_dir = tmp_path / f"out-{fmt}"
        code, out, err = run(capsys, "-w", str(ws), "export", "--format", fmt, str(out_dir))
        assert code == 0, err
        assert str(out_dir) in out
        if probe:
            assert (out_dir / probe).exists()
        elif fmt == "json":  # one file, holding every page
            assert len(json.loads(out_dir.read_text())["pages"]) == report["pages"]["created"]
        else:
            graph = networkx.read_graphml(out_dir)
            assert graph.number_of_nodes() == status["counts"]["entities"] + status["counts"]["concepts"]


def test_templates_commands(tmp_path: Path, capsys):
    code, out, _ = run(capsys, "templates", "list")
    assert code == 0
    for name in ("wiki", "entity-graph", "topics"):
        assert name in out
    code, out, _ = run(capsys, "templates", "show", "wiki")
    assert code == 0 and "name: wiki" in out
    good = tmp_path / "mine.yaml"
    good.write_text("name: mine\nversion: 2\nartifacts: [entity_graph]\n")
    code, out, _ = run(capsys, "templates", "validate", str(good))
    assert code == 0 and "valid" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nreduce:\n  auto_marge: 0.9\n")
    code, _, err = run(capsys, "templates", "validate", str(bad))
    assert code != 0
    assert "bad.yaml:3" in err and "reduce.auto_marge" in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_template_name_is_one_clear_line(tmp_path: Path, capsys):
    ws = tmp_path / "kb"
    run(capsys, "init", str(ws))
    code, _, err = run(capsys, "-w", str(ws), "compile", "--template", "no-such-template")
    assert code != 0
    assert "no-such-template" in err and "wiki" in err  # names what exists
    assert len(err.strip().splitlines()) == 1


def test_missing_workspace_is_one_clear_line(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "status")
    assert code != 0
    assert "compendium init" in err
    assert len(err.strip().splitlines()) == 1


def test_unreachable_llm_endpoint_fails_cleanly_and_keeps_what_is_stored(tmp_path: Path, capsys, monkeypatch):
    ws = tmp_path / "kb"
    run(capsys, "init", str(ws))
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    assert run(capsys, "-w", str(ws), "compile", "--plain")[0] == 0
    before = json.loads(run(capsys, "-w", str(ws), "status", "--json")[1])["counts"]

    monkeypatch.setenv("COMPENDIUM_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("COMPENDIUM_LLM_API_KEY", "k")
    (ws / "compendium.yaml").write_text(
        (ws / "compendium.yaml").read_text() + "\nllm:\n  timeout: 0.5\n  max_retries: 1\n"
    )
    code, _, err = run(capsys, "-w", str(ws), "compile", "--plain")
    assert code != 0
    assert "127.0.0.1:9" in err and "COMPENDIUM_LLM_BASE_URL" in err
    monkeypatch.delenv("COMPENDIUM_LLM_BASE_URL")
    after = json.loads(run(capsys, "-w", str(ws), "status", "--json")[1])["counts"]
    assert after["pages"] == before["pages"] and after["documents"] == before["documents"]


def test_wrong_api_key_says_so(tmp_path: Path, capsys, monkeypatch, llm_server):
    llm_server.api_key = "the-right-key"
    ws = tmp_path / "kb"
    run(capsys, "init", str(ws))
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    monkeypatch.setenv("COMPENDIUM_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("COMPENDIUM_LLM_API_KEY", "a-wrong-key")
    code, _, err = run(capsys, "-w", str(ws), "compile", "--plain")
    assert code != 0
    assert "API key" in err and "COMPENDIUM_LLM_API_KEY" in err
    assert "a-wrong-key" not in err
