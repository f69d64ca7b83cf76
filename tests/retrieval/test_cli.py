"""`compendium retrieve` and `compendium ask` on the compiled sample workspace."""

from __future__ import annotations

import json

import pytest

from compendium.cli import main


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for name in ("COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_EMBEDDING_BASE_URL", "COMPENDIUM_STORE"):
        monkeypatch.delenv(name, raising=False)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_retrieve_prints_the_context_or_the_json(compiled_offline, capsys):
    ws = str(compiled_offline.workspace)
    code, out, _ = run(capsys, "-w", ws, "retrieve", "How does the buffer pool evict pages?", "--top", "3")
    assert code == 0 and out.startswith("# Knowledge for: How does the buffer pool evict pages?")
    assert "## Passages" in out and "[C1] corpus/storage/buffer-pool.md" in out
    code, out, _ = run(capsys, "-w", ws, "retrieve", "buffer pool eviction", "--json", "--mode", "local")
    data = json.loads(out)
    assert data["question"] == "buffer pool eviction" and data["topics"] == []
    assert len(data["chunks"]) == 8
    code, _, err = run(capsys, "-w", ws, "retrieve", "?!")
    assert code != 0 and "no words" in err


def test_ask_prints_a_cited_answer_and_its_sources(compiled_offline, capsys):
    code, out, _ = run(capsys, "-w", str(compiled_offline.workspace), "ask",
                       "What does TOAST do with large values?")
    assert code == 0
    answer, *sources = out.strip().splitlines()
    assert "[C1]" in answer and "TOAST" in answer
    assert any(line.strip().startswith("[C1] corpus/storage/toast.md") for line in sources)


def test_status_names_how_the_store_searches_text(compiled_offline, capsys):
    code, out, _ = run(capsys, "-w", str(compiled_offline.workspace), "status")
    assert code == 0 and "full text: fts5 bm25" in out
