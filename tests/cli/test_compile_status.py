"""How a compile ended says the same thing everywhere: the report, `status --json` and the exit
code; items that failed for good make a compile `partial`, never `succeeded`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compendium.cli import COMPILE_EXIT_CODES, main
from compendium.compiler.report import STATUSES
from compendium.errors import BudgetExceeded, Cancelled
from tests.support.llm_responder import KnowledgeResponder
from tests.support.llm_server import LLMServer
from tests.support.scripted_replies import POISON_DOCUMENT, BoundedResponder, poisoned
from tests.support.workspace_fixtures import SAMPLE_CORPUS


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch, llm_server: LLMServer) -> Path:
    monkeypatch.setenv("COMPENDIUM_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("COMPENDIUM_LLM_API_KEY", "test-key")
    monkeypatch.setenv("COMPENDIUM_LLM_MODEL", "test-chat")
    monkeypatch.delenv("COMPENDIUM_STORE", raising=False)
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    (ws / "compendium.yaml").write_text(
        (ws / "compendium.yaml").read_text() + "\nllm:\n  max_retries: 0\n  retry_wait: 0.01\n"
    )
    return ws


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_status_has_its_own_exit_code():
    assert set(COMPILE_EXIT_CODES) == set(STATUSES)
    codes = list(COMPILE_EXIT_CODES.values())
    assert len(set(codes)) == len(codes) and COMPILE_EXIT_CODES["succeeded"] == 0
    # A compile stopped by the budget or a cancel exits as the error of that name does.
    assert COMPILE_EXIT_CODES["budget_exceeded"] == BudgetExceeded.exit_code
    assert COMPILE_EXIT_CODES["cancelled"] == Cancelled.exit_code


def test_batches_that_failed_for_good_make_the_compile_partial_everywhere(workspace, llm_server, capsys):
    llm_server.responder = poisoned
    (workspace / "documents" / "glitch.md").write_text(POISON_DOCUMENT, encoding="utf-8")
    report_file = workspace.parent / "report.json"
    code, _, err = run(capsys, "-w", str(workspace), "compile", "--plain", "--report", str(report_file))
    report = json.loads(report_file.read_text())
    assert report["phases"]["map"]["failed"] > 0
    assert report["status"] == "partial"
    assert "map" in report["error"] and "run compile again" in report["error"]
    assert code == COMPILE_EXIT_CODES["partial"]
    assert "Compile partial" in err
    assert report["pages"]["created"] > 0  # what did not fail is published

    code, out, _ = run(capsys, "-w", str(workspace), "status", "--json")
    last = json.loads(out)["last_compile"]
    assert code == 0
    assert last["status"] == "partial" and last["error"] == report["error"]

    # Fixed: the rerun retries only the failed batch and succeeds.
    llm_server.responder = KnowledgeResponder()
    code, _, err = run(capsys, "-w", str(workspace), "compile", "--plain", "--report", str(report_file))
    report = json.loads(report_file.read_text())
    assert code == 0, err
    assert report["status"] == "succeeded" and report["error"] == ""
    assert report["phases"]["map"]["done"] > 0 and report["phases"]["map"]["failed"] == 0
    last = json.loads(run(capsys, "-w", str(workspace), "status", "--json")[1])["last_compile"]
    assert last["status"] == "succeeded"


def test_a_clean_compile_succeeds_with_exit_code_zero(workspace, capsys):
    code, _, err = run(capsys, "-w", str(workspace), "compile", "--plain")
    assert code == 0, err
    last = json.loads(run(capsys, "-w", str(workspace), "status", "--json")[1])["last_compile"]
    assert last["status"] == "succeeded" and last["error"] == ""


def test_a_token_budget_is_a_ceiling_with_concurrent_calls(workspace, llm_server, capsys):
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    replies = BoundedResponder()
    llm_server.responder = replies
    budget = 60_000
    (workspace / "compendium.yaml").write_text(
        (workspace / "compendium.yaml").read_text().replace("  retry_wait: 0.01\n", "  retry_wait: 0.01\n  max_reply_tokens: 9000\n")
        + f"token_budget: {budget}\n"
    )
    report_file = workspace.parent / "report.json"
    code, _, err = run(capsys, "-w", str(workspace), "compile", "--plain", "--report", str(report_file))
    report = json.loads(report_file.read_text())
    assert replies.most_at_once > 1  # MAP calls were in flight together
    assert report["status"] == "budget_exceeded" and code == COMPILE_EXIT_CODES["budget_exceeded"]
    assert f"token budget of {budget}" in report["error"] and "Compile budget_exceeded" in err
    spent = llm_server.prompt_tokens + llm_server.completion_tokens
    assert budget / 2 < spent <= budget, spent  # most of the budget was used, none past it
    totals = report["totals"]
    assert totals["prompt_tokens"] + totals["completion_tokens"] == spent
    assert all(r.body["max_tokens"] > 0 for r in llm_server.requests)  # every call is bounded
    last = json.loads(run(capsys, "-w", str(workspace), "status", "--json")[1])["last_compile"]
    assert last["status"] == "budget_exceeded"
