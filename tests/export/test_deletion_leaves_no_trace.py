"""Deletion leaves no trace: after a document is removed and the knowledge base compiled again,
no 8-word span of it (that no surviving document also holds) is anywhere in the exports or the
store: descriptions, summaries, pages and every other derived text are rebuilt from what is left."""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
from pathlib import Path

import pytest

from compendium.cli import main
from compendium.ingest.readers import read_document
from compendium.storage.factory import open_store
from compendium.storage.records import (
    CacheEntry,
    Chunk,
    Claim,
    Document,
    Entity,
    Extract,
    Page,
    PageVersion,
    Relation,
    Topic,
)

SPAN = 8
GONE = "corpus/durability/checkpointer.md"
_WORD = re.compile(r"[^\W_]+")
_TAG = re.compile(r"<[^>]+>")


def _lines(text: str) -> list[list[str]]:
    """The words of each line of `text`, markup tags taken as line ends too: a span never joins
    words that two parts of a page or two blocks of a document put side by side."""
    plain = html.unescape(_TAG.sub("\n", text))
    return [[w.casefold() for w in _WORD.findall(line)] for line in plain.splitlines()]


def spans(text: str) -> set[str]:
    return {" ".join(words[i:i + SPAN]) for words in _lines(text) for i in range(len(words) - SPAN + 1)}


def words_of(text: str) -> str:
    return " | ".join(" ".join(words) for words in _lines(text) if words).join("  ")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def store_texts(workspace: Path) -> dict[str, str]:
    async def dump() -> dict[str, str]:
        store = await open_store(f"sqlite:///{workspace / '.compendium' / 'store.db'}", "default")
        try:
            out = {}
            for kind in (Document, Chunk, Extract, Entity, Relation, Claim, Topic, Page, PageVersion, CacheEntry):
                async for record in store.scan(kind):
                    data = record.to_dict()
                    data.pop(getattr(kind, "VECTOR", None) or "", None)
                    out[f"{kind.KIND}:{record.id}"] = "\n".join(_strings(data))
            return out
        finally:
            await store.close()

    return asyncio.run(dump())


def everything(workspace: Path, out: Path) -> dict[str, str]:
    """The text of every export of the workspace and of every record in its store."""
    texts: dict[str, str] = {}
    for fmt, name in (("json", "kb.json"), ("site", "site"), ("vault", "vault"), ("tables", "tables")):
        assert main(["-w", str(workspace), "export", "--format", fmt, str(out / name)]) == 0
        target = out / name
        for path in [target] if target.is_file() else target.rglob("*"):
            if path.is_file() and path.suffix in (".json", ".html", ".md", ".csv", ".js"):
                texts[str(path.relative_to(out))] = path.read_text(encoding="utf-8")
    texts.update(store_texts(workspace))
    return texts


@pytest.fixture(params=["offline", "llm"])
def engine(request, monkeypatch):
    """The offline engine, or the scripted LLM server through the real client (descriptions and
    summaries are then the model's, merged across documents)."""
    if request.param == "llm":
        server = request.getfixturevalue("llm_server")
        monkeypatch.setenv("COMPENDIUM_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("COMPENDIUM_LLM_API_KEY", "test-key")
        monkeypatch.setenv("COMPENDIUM_LLM_MODEL", "test-chat")
    else:
        for name in ("COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_LLM_API_KEY", "COMPENDIUM_LLM_MODEL"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("COMPENDIUM_STORE", raising=False)
    return request.param


def test_a_deleted_document_leaves_no_8_word_span_in_the_exports_or_the_store(
        engine, sample_workspace, tmp_path, capsys):
    ws = str(sample_workspace)
    documents = sample_workspace / "documents"
    gone = read_document(documents / GONE).text
    # What a knowledge base that never held the document holds: spans of it that appear there
    # come from other documents (a sentence two documents share, or words a layout joins).
    never = tmp_path / "never"
    assert main(["init", str(never)]) == 0
    shutil.copytree(documents, never / "documents", dirs_exist_ok=True)
    (never / "documents" / GONE).unlink()
    assert main(["-w", str(never), "compile", "--plain"]) == 0
    baseline = words_of("\n".join(everything(never, tmp_path / "never-out").values()))

    assert main(["-w", ws, "compile", "--plain"]) == 0
    assert main(["-w", ws, "remove", str(documents / GONE)]) == 0
    assert main(["-w", ws, "compile", "--plain"]) == 0
    kept: set[str] = set()
    for path in documents.rglob("*.*"):
        kept |= spans(read_document(path).text)
    own = {s for s in spans(gone) - kept if f" {s} " not in baseline}
    assert len(own) > 100

    texts = everything(sample_workspace, tmp_path / "out")
    capsys.readouterr()
    found = {}
    for where, text in texts.items():
        flat = words_of(text)
        hits = [s for s in own if f" {s} " in flat]
        if hits:
            found[where] = hits[:3]
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)[:1500] + f"... in {sorted(found)}"
