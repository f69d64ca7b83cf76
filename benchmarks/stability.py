"""How little moves when one document changes: pages written and vault files changed per page
that cites the changed document, and the CPU of the recompile against a full compile.

A 100-document corpus is compiled and exported as a Markdown vault; then one document is
added, one edited (a sentence appended to a paragraph) and one deleted, each followed by a
recompile and a re-export into the same vault folder. Two runs:
- offline: the PostgreSQL 15 manual (`postgresql-doc-15`, fetched at run time), a seeded
  sample of documents, the offline engine;
- llm: the generated corpus of benchmarks/corpus.py through the scripted OpenAI-compatible
  server (tests/support/llm_server.py, in a separate process, so its CPU is not ours).

For each step: pages written (created + updated + deleted), vault files whose bytes changed
(created, rewritten or removed), files rewritten with identical bytes (must be 0), and the
pages citing the changed document's chunks (before or after the change); the ratios of the
first two to the last (target ≤ 2), and the recompile's CPU as a share of the full compile's.

    python -m benchmarks.stability [--documents 100] [--run offline|llm|both] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import multiprocessing as mp
import platform
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.incremental import edit_document

REPORT = Path(__file__).parent / "reports" / "stability.md"
SEED = 7
TARGET = 2.0


@dataclass
class Step:
    name: str
    document: str
    written: int
    vault_changed: int
    vault_same_bytes_rewritten: int
    citing: int
    cpu: float
    seconds: float
    renamed_topics: int
    why: Counter[str]


def _vault_state(folder: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(folder.rglob("*.md")):
        data = path.read_bytes()
        out[path.relative_to(folder).as_posix()] = (hashlib.sha1(data).hexdigest(), path.stat().st_mtime_ns)
    return out


async def _compile(workspace: Path, env: dict[str, str], vault: Path) -> dict[str, Any]:
    from compendium.operations import compile_workspace, export_workspace, opened_store
    from compendium.settings import load_settings
    from compendium.storage.records import Document, Page, Topic

    settings = load_settings(workspace, env=env)
    cpu, started = time.process_time(), time.perf_counter()
    report = await compile_workspace(settings)
    await export_workspace(settings, "vault", vault)
    cpu, seconds = time.process_time() - cpu, time.perf_counter() - started
    async with opened_store(settings) as store:
        pages = {p.slug: set(p.cited_chunks) async for p in store.scan(Page, {"status": "active"})}  # type: ignore[attr-defined]
        documents = {d.path: set(d.chunk_ids) async for d in store.scan(Document)}  # type: ignore[attr-defined]
        topics = {t.id: t.title async for t in store.scan(Topic)}  # type: ignore[attr-defined]
        plans = await load_plan_entries(store)
    why = Counter(f"{p['action']} {p['kind']}: {p['reason'].split(':')[0]}" for p in plans if p["action"] != "KEEP")
    return {"report": report.as_dict(), "cpu": cpu, "seconds": seconds, "pages": pages,
            "documents": documents, "topics": topics, "why": why}


async def load_plan_entries(store: Any) -> list[dict[str, Any]]:
    from compendium.storage.records import CacheEntry

    found = [e async for e in store.scan(CacheEntry, {"namespace": "plan"})]
    return [p for e in found for p in e.value]


def run_steps(workspace: Path, corpus: Path, spare: Path, env: dict[str, str], vault: Path) -> tuple[dict, list[Step]]:
    """Full compile, then add `spare`, edit one document, delete one document."""
    full = asyncio.run(_compile(workspace, env, vault))
    steps: list[Step] = []
    present = sorted(p for p in corpus.rglob("*") if p.is_file())
    rng = random.Random(SEED)
    edited, deleted = rng.sample(present, 2)
    state, before = _vault_state(vault), full

    def step(name: str, path: Path, relative: str) -> None:
        nonlocal state, before
        after = asyncio.run(_compile(workspace, env, vault))
        new_state = _vault_state(vault)
        changed = sum(1 for k in set(state) | set(new_state) if state.get(k, ("", 0))[0] != new_state.get(k, ("", 0))[0])
        same_rewritten = sum(1 for k in set(state) & set(new_state)
                             if state[k][0] == new_state[k][0] and state[k][1] != new_state[k][1])
        chunks = before["documents"].get(relative, set()) | after["documents"].get(relative, set())
        citing = {s for s, cited in before["pages"].items() if cited & chunks}
        citing |= {s for s, cited in after["pages"].items() if cited & chunks}
        pages = after["report"]["pages"]
        renamed = sum(1 for t, title in after["topics"].items() if t in before["topics"] and before["topics"][t] != title)
        steps.append(Step(name, relative, pages["created"] + pages["updated"] + pages["deleted"], changed,
                          same_rewritten, len(citing), after["cpu"], after["seconds"], renamed, after["why"]))
        state, before = new_state, after

    documents = workspace / "documents"
    target = corpus / spare.name
    shutil.copyfile(spare, target)
    step("add one document", target, target.relative_to(documents).as_posix())
    edit_document(edited)
    step("edit one document", edited, edited.relative_to(documents).as_posix())
    relative = deleted.relative_to(documents).as_posix()
    deleted.unlink()
    step("delete one document", deleted, relative)
    return full, steps


def offline_run(documents: int) -> tuple[dict, list[Step]]:
    from benchmarks.offline_corpus import postgres_manual
    from compendium.workspace import init_workspace

    folder = postgres_manual()
    files = sorted(p for p in folder.glob("*.html") if not p.name.startswith("release-"))
    random.Random(SEED).shuffle(files)
    chosen, spare = sorted(files[:documents]), files[documents]
    root = Path(tempfile.mkdtemp(prefix="compendium-stability-"))
    try:
        workspace = init_workspace(root / "ws")
        corpus = workspace / "documents" / "manual"
        corpus.mkdir(parents=True)
        for path in chosen:
            shutil.copyfile(path, corpus / path.name)
        return run_steps(workspace, corpus, spare, {}, root / "vault")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _serve(conn: Any) -> None:
    from tests.support.llm_server import LLMServer

    server = LLMServer().start()
    conn.send(server.base_url)
    conn.recv()
    server.stop()


def llm_run(documents: int) -> tuple[dict, list[Step]]:
    from benchmarks.corpus import generate_corpus
    from compendium.workspace import init_workspace

    root = Path(tempfile.mkdtemp(prefix="compendium-stability-llm-"))
    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(theirs,), daemon=True)
    server.start()
    try:
        base_url = ours.recv()
        env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench",
               "COMPENDIUM_LLM_MODEL": "test-chat"}
        workspace = init_workspace(root / "ws")
        generated = root / "generated"
        generate_corpus(generated, documents + 1)
        files = sorted(generated.iterdir())
        corpus = workspace / "documents" / "synthetic"
        corpus.mkdir(parents=True)
        for f in files[:documents]:
            shutil.copyfile(f, corpus / f.name)
        return run_steps(workspace, corpus, files[documents], env, root / "vault")
    finally:
        ours.send("stop")
        server.join(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def render(runs: list[tuple[str, dict, list[Step]]], documents: int) -> str:
    lines = [
        "# Stability benchmark: one document added, edited, deleted",
        "",
        f"`python -m benchmarks.stability --documents {documents}` on CPython {platform.python_version()}, "
        f"{platform.machine()}; SQLite store; vault re-exported into the same folder after every compile. "
        f"Target: pages written and vault files changed ≤ {TARGET:g} × pages citing the changed document.",
        "",
    ]
    for name, full, steps in runs:
        fr = full["report"]
        lines += [
            f"## {name}",
            "",
            f"Full compile: {fr['documents']} documents, {fr['chunks']} chunks, {len(full['pages'])} pages, "
            f"{len(full['topics'])} topics; {full['cpu']:.1f} s CPU, {full['seconds']:.1f} s wall.",
            "",
            "| step | document | pages citing it | pages written | written / citing | vault files changed "
            "| changed / citing | identical files rewritten | topics renamed | CPU s | CPU / full | met |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s in steps:
            base = max(s.citing, 1)
            met = s.written / base <= TARGET and s.vault_changed / base <= TARGET and s.vault_same_bytes_rewritten == 0
            lines.append(
                f"| {s.name} | `{s.document}` | {s.citing} | {s.written} | {s.written / base:.2f} | {s.vault_changed} "
                f"| {s.vault_changed / base:.2f} | {s.vault_same_bytes_rewritten} | {s.renamed_topics} | {s.cpu:.2f} "
                f"| {s.cpu / max(full['cpu'], 1e-9):.2f} | {'yes' if met else 'no'} |"
            )
        lines += ["", "Why pages were written (plan action, page kind, reason):", ""]
        for s in steps:
            lines.append(f"- {s.name}: " + "; ".join(f"{k} × {v}" for k, v in s.why.most_common()))
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--run", choices=("offline", "llm", "both"), default="both")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    runs = []
    if args.run in ("offline", "both"):
        runs.append(("offline engine, PostgreSQL manual sample", *offline_run(args.documents)))
    if args.run in ("llm", "both"):
        runs.append(("scripted LLM server, generated corpus", *llm_run(args.documents)))
    text = render(runs, args.documents)
    print(text)
    if not args.no_write:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
