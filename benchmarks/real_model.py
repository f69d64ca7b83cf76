"""Benchmark of the LLM path on a real model: a fixed 5-document slice of samples/corpus,
compiled through the endpoint the environment names and offline, side by side.

Skipped (exit 0) when COMPENDIUM_LLM_BASE_URL is not set. A small local model is slow: give it
a long timeout and one call at a time (the defaults below), and run this in the background.

    eval "$(~/.cache/realmodel/start.sh 1.5b | grep ^export)"
    COMPENDIUM_LLM_CONTEXT_TOKENS=8192 python -m benchmarks.real_model [--label 1.5b] [--keep DIR]

`--replay calls.jsonl` (the server's `--dump` log of earlier runs) answers a request that was
asked before, word for word, with the reply it got then, and sends the others to the endpoint:
the model's replies are the same for the same request (temperature and seed fixed), so a
re-measure after a change to the checks repeats only the calls the change alters.

Reports, for the model and for the offline engine:
- items valid (non-empty), empty and failed by phase (MAP chunks, REFINE pages);
- entities, relations, pages; LLM calls, tokens and wall time;
- per page: sentences, citations, and the share of citations whose evidence holds the
  sentence's content words (compendium.support, the check REFINE applies), and the sentences
  with no citation of their own or of their paragraph;
- `ask` on 11 questions (ASKED, each with the facts a correct answer gives): answered, cited, and the
  share of cited sentences their evidence supports.

The figures go to stdout and, as JSON, to build/real_model/<label>.json; every page and the
answers are written under build/real_model/<label>/ for a person to read. The report
(benchmarks/reports/real_model.md) is written by hand from these.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from compendium.words import split_sentences

from .real_model_replay import ReplayProxy

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "samples" / "corpus"
SLICE = [
    "transactions/mvcc.md",
    "transactions/transaction-ids.md",
    "transactions/vacuum.md",
    "durability/write-ahead-log.md",
    "storage/toast.md",
]
# Each question with the facts a correct answer gives (from the slice's documents, by reading):
# an answer is correct when it states them, half when it states part, not when none.
ASKED = [
    ("What does vacuum remove, and why can a long-running transaction hold it back?",
     "dead tuples (versions no running snapshot can see); the transaction holds back the oldest snapshot, "
     "so no version that became dead after it started can be removed"),
    ("Why must old tuples be frozen before the transaction ID counter wraps around?",
     "the counter is 32 bits wide and compared modulo 2^32: an xmin older than 2.1 billion transactions "
     "would appear to be in the future and the row invisible (XID wraparound)"),
    ("What must be written to the write-ahead log before a data page reaches disk?",
     "the WAL records describing the page's modification must be flushed first"),
    ("How does TOAST store a large column value?",
     "compressed inline, or moved out of line to the table's TOAST table (compressed or not), "
     "cut into chunks of just under 2 KB stored as rows; the tuple keeps an 18-byte TOAST pointer"),
    ("What is a snapshot in MVCC and what does it decide?",
     "a record of which transactions were finished at a given moment (xmin, xmax, the XIDs in progress); "
     "it decides which tuple versions are visible"),
    ("Why does Lumen write full-page images into the WAL after a checkpoint?",
     "to protect against torn pages: a crash while writing an 8 KB page can leave half of it on disk, "
     "onto which a WAL record of a small change could not be replayed"),
    ("What happens when the age of a table's relfrozenxid exceeds autovacuum_freeze_max_age?",
     "the Autovacuum Daemon starts an anti-wraparound Vacuum on the table, even if autovacuum is disabled "
     "for it; it visits every page not all-frozen and cannot be cancelled by a lock request"),
    ("Does a plain Vacuum return free space to the operating system?",
     "no, except empty pages at the very end of a table, which it truncates; VACUUM FULL rewrites the "
     "table (under an ACCESS EXCLUSIVE lock) to shrink it"),
    ("When does TOAST store a value without compressing it?",
     "when compression would save less than 25 percent of its size (decompressing wastes CPU on every read); "
     "also the second strategy moves a value out of line uncompressed, and EXTERNAL columns skip compression"),
    ("Which transaction ID does a tuple's xmax field hold?",
     "the XID of the transaction that deleted the version or replaced it with a newer one (empty after an INSERT)"),
    ("Why can Vacuum on the primary cancel queries on a Hot Standby?",
     "replaying its removal of a tuple that a standby query still needs conflicts with the query; the standby "
     "waits up to max_standby_streaming_delay, then cancels it (hot_standby_feedback avoids this)"),
]
QUESTIONS = [question for question, _ in ASKED]
EXPECTED = dict(ASKED)
OUT = ROOT / "build" / "real_model"
LLM_SETTINGS = """
llm:
  timeout: {timeout}
  max_concurrency: 1
  max_retries: 1
"""
_FOOTNOTE = re.compile(r"^\[\^(\d+)\]: .*? — chunk (\S+)\s*$", re.MULTILINE)
_ANSWER_CITE = re.compile(r"\[([ERPTC]\d+(?:\s*,\s*[ERPTC]\d+)*)\]")


def _env(llm: bool) -> dict[str, str]:
    env = dict(os.environ)
    if not llm:
        for key in list(env):
            if key.startswith(("COMPENDIUM_LLM_", "COMPENDIUM_EMBED_")):
                env.pop(key)
    return env


def _workspace(base: Path, name: str, llm: bool, timeout: float) -> Path:
    ws = base / name
    compendium = [sys.executable, "-m", "compendium.cli"]
    subprocess.run([*compendium, "init", str(ws)], check=True, capture_output=True, env=_env(False))
    for rel in SLICE:
        subprocess.run([*compendium, "-w", str(ws), "add", str(CORPUS / rel)], check=True, capture_output=True,
                       env=_env(False))
    if llm:
        with (ws / "compendium.yaml").open("a") as f:
            f.write(LLM_SETTINGS.format(timeout=timeout))
    return ws


def _compile(ws: Path, llm: bool) -> tuple[dict[str, Any], float, str]:
    report = ws / "report.json"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "compendium.cli", "-w", str(ws), "compile", "--plain",
                           "--report", str(report)], capture_output=True, text=True, env=_env(llm))
    wall = time.perf_counter() - started
    data = json.loads(report.read_text()) if report.exists() else {}
    return data, wall, done.stdout + done.stderr


async def _pages(ws: Path) -> list[dict[str, Any]]:
    """Each active page with its sentence checks against the chunks its footnotes name."""
    from compendium.storage.factory import open_store
    from compendium.storage.records import Chunk, Page
    from compendium.support import check_text

    store = await open_store(f"sqlite:///{ws / '.compendium' / 'store.db'}")
    try:
        pages = [p async for p in store.scan(Page, {"status": "active"})]
        chunk_ids = {cid for p in pages for cid in p.cited_chunks}  # type: ignore[attr-defined]
        chunks = {c.id: c.text for c in await store.get(Chunk, sorted(chunk_ids))}  # type: ignore[attr-defined]
    finally:
        await store.close()
    out = []
    for page in pages:
        markdown = page.markdown  # type: ignore[attr-defined]
        notes = {n: chunks.get(cid, "") for n, cid in _FOOTNOTE.findall(markdown)}
        body = _FOOTNOTE.sub("", markdown)
        report = check_text(body, notes)
        out.append({
            "slug": page.slug,  # type: ignore[attr-defined]
            "kind": page.kind,  # type: ignore[attr-defined]
            "sentences": len(report.sentences),
            "uncited": len(report.uncited),
            "citations": report.citations,
            "supported": report.supported_citations,
            "markdown": markdown,
        })
    return out


async def _ask(ws: Path, llm: bool) -> list[dict[str, Any]]:
    from compendium.retrieval import Options
    from compendium.retrieval.workspace import ask_in_workspace
    from compendium.settings import load_settings
    from compendium.support import SUPPORT_THRESHOLD, content_words, overlap, split_sentences

    settings = load_settings(ws, env=_env(llm))
    out = []
    for question in QUESTIONS:
        final: dict[str, Any] = {}
        started = time.perf_counter()
        # The options `compendium ask` uses. The top 6 this asked before left out the passage
        # that answers "What is a snapshot?" (the third of its document: one document per place
        # in the first five, on a knowledge base of five documents).
        events = ask_in_workspace(settings, question, Options())
        async with contextlib.aclosing(events):
            async for event in events:
                if event["type"] in ("final", "error"):
                    final = event
        answer = final.get("answer", "") or ""
        evidence = final.get("evidence") or {}
        texts = {}
        for letter, kind, fields in (("C", "chunks", ("text",)), ("E", "entities", ("name",)),
                                     ("P", "pages", ("title",)), ("T", "topics", ("title",))):
            for i, item in enumerate(evidence.get(kind, []), start=1):
                texts[f"{letter}{i}"] = " ".join(str(item.get(f, "")) for f in fields)
        sentences = cited = supported = 0
        for sentence in split_sentences(answer.replace("\n", " ")):
            if not sentence.strip():
                continue
            sentences += 1
            labels = [x.strip() for group in _ANSWER_CITE.findall(sentence) for x in group.split(",")]
            if labels:
                cited += 1
                pooled = set().union(*(content_words(texts.get(label, "")) for label in labels))
                supported += overlap(_ANSWER_CITE.sub("", sentence), pooled) >= SUPPORT_THRESHOLD
        out.append({"question": question, "expected": EXPECTED[question], "answer": answer,
                    "engine": final.get("engine", ""),
                    "error": final.get("message", ""), "sentences": sentences, "cited": cited,
                    "supported": supported, "seconds": round(time.perf_counter() - started, 1)})
    return out


def _summary(report: dict[str, Any], wall: float, pages: list[dict[str, Any]], asks: list[dict[str, Any]]) -> dict[str, Any]:
    phases = report.get("phases", {})
    mapped = phases.get("map", {})
    details = mapped.get("details") or mapped  # the report keeps a phase's details beside its counts
    empty = details.get("empty_chunks", 0)
    refine = phases.get("refine", {})
    totals = report.get("totals", {})
    answered = [a for a in asks if a["answer"] and a["sentences"] and not a["answer"].startswith("No passage")]
    return {
        "status": report.get("status"), "error": report.get("error", ""),
        "map": {"chunks": mapped.get("items", 0), "valid": mapped.get("done", 0) - empty, "empty": empty,
                "failed": mapped.get("failed", 0), "split_batches": details.get("split_batches", 0),
                "batches": details.get("batches", 0)},
        "refine": {"pages": refine.get("items", 0), "written": refine.get("done", 0), "failed": refine.get("failed", 0),
                   "withheld": (refine.get("details") or refine).get("withheld", 0)},
        "counts": report.get("counts", {}),
        "calls": {name: p.get("llm_calls", 0) for name, p in phases.items() if p.get("llm_calls")},
        "tokens": {"prompt": totals.get("prompt_tokens", 0), "completion": totals.get("completion_tokens", 0)},
        "wall_seconds": round(wall, 1),
        "pages": {"count": len(pages), "sentences": sum(p["sentences"] for p in pages),
                  "uncited": sum(p["uncited"] for p in pages), "citations": sum(p["citations"] for p in pages),
                  "supported": sum(p["supported"] for p in pages)},
        "ask": {"asked": len(asks), "answered": len(answered),
                "cited": sum(1 for a in answered if a["cited"]),
                "all_supported": sum(1 for a in answered if a["cited"] and a["supported"] == a["cited"]),
                "sentences": sum(a["sentences"] for a in asks), "cited_sentences": sum(a["cited"] for a in asks),
                "supported_sentences": sum(a["supported"] for a in asks)},
    }


def _share(a: int, b: int) -> str:
    return f"{a}/{b} ({a / b:.0%})" if b else "-"


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    rows = [
        ("status", lambda s: s["status"]),
        ("MAP chunks valid / empty / failed", lambda s: f"{s['map']['valid']} / {s['map']['empty']} / {s['map']['failed']}"
         f" of {s['map']['chunks']}"),
        ("MAP batches (split when cut off)", lambda s: f"{s['map']['batches']} ({s['map']['split_batches']} split)"),
        ("entities / relations / topics", lambda s: f"{s['counts'].get('entities', 0)} / {s['counts'].get('relations', 0)}"
         f" / {s['counts'].get('topics', 0)}"),
        ("pages written / failed / withheld", lambda s: f"{s['pages']['count']} / {s['refine']['failed']} / {s['refine']['withheld']}"),
        ("LLM calls by phase", lambda s: ", ".join(f"{k} {v}" for k, v in s["calls"].items()) or "0"),
        ("tokens prompt / completion", lambda s: f"{s['tokens']['prompt']} / {s['tokens']['completion']}"),
        ("compile wall", lambda s: f"{s['wall_seconds'] / 60:.1f} min"),
        ("page sentences (uncited)", lambda s: f"{s['pages']['sentences']} ({s['pages']['uncited']})"),
        ("citations supporting their sentence", lambda s: _share(s["pages"]["supported"], s["pages"]["citations"])),
        ("ask: answered / cited / all supported", lambda s: f"{s['ask']['answered']} / {s['ask']['cited']} / "
         f"{s['ask']['all_supported']} of {s['ask']['asked']}"),
        ("ask: cited sentences supported", lambda s: _share(s["ask"]["supported_sentences"], s["ask"]["cited_sentences"])),
    ]
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(str(cell(results[n])) for n in names) + " |")
    return "\n".join(lines)


def _run_one(base: Path, name: str, llm: bool, timeout: float, keep: Path) -> dict[str, Any]:
    ws = _workspace(base, name, llm, timeout)
    report, wall, log = _compile(ws, llm)
    pages = asyncio.run(_pages(ws))
    asks = asyncio.run(_ask(ws, llm))
    summary = _summary(report, wall, pages, asks)
    target = keep / name
    shutil.rmtree(target, ignore_errors=True)
    (target / "pages").mkdir(parents=True)
    (target / "compile.log").write_text(log)
    (target / "report.json").write_text(json.dumps(report, indent=1))
    for page in pages:  # every page, for a person to read
        (target / "pages" / f"{page['slug']}.md").write_text(page["markdown"])
    (target / "pages.json").write_text(json.dumps([{k: v for k, v in p.items() if k != "markdown"} for p in pages], indent=1))
    (target / "ask.json").write_text(json.dumps(asks, indent=1))
    (target / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


_TRAILING_MARKERS = re.compile(r"(?:\s*\[\^(\d+)\])+\s*$")


def cited_sentences(body: str) -> list[tuple[str, str]]:
    """Each sentence of a page body that ends with citation markers, as (its text without them,
    its first marker's note), cut by the sentence splitter the checks use: a stop ends a sentence
    only before a space or the line's end, so "the 2.1 billion XIDs before it" stays whole (a
    cut at every stop gave the model "1 billion XIDs before it" as evidence)."""
    out = []
    for line in body.splitlines():
        for sentence in split_sentences(line):
            markers = _TRAILING_MARKERS.search(sentence)
            if markers is None:
                continue
            note = re.search(r"\d+", markers.group(0)).group(0)  # type: ignore[union-attr]
            text = " ".join(sentence[: markers.start()].split()).lstrip("-* ")
            out.append((text, note))
    return out


async def _probe_pages(ws: Path, count: int, label: str, mode: str = "engine") -> list[dict[str, Any]]:
    """REFINE on the model alone: pages of the offline KB written again by the model from the
    sentences the offline page cites (its evidence), each checked sentence by sentence. For a
    machine too slow to compile the slice through the model in one sitting. `mode`: "engine"
    (write_page, as REFINE asks), "prose" (the prose prompt and its repairs alone) or
    "sentences" (the page asked as JSON sentences alone)."""
    from compendium.engines.factory import build_engine
    from compendium.engines.page_evidence import evidence_texts
    from compendium.engines.page_sentences import write_sentences
    from compendium.engines.tasks import EvidenceItem, PageRequest
    from compendium.engines.usage import UsageMeter
    from compendium.settings import load_settings
    from compendium.storage.factory import open_store
    from compendium.storage.records import Page
    from compendium.support import check_text
    from compendium.templates.registry import load_template

    store = await open_store(f"sqlite:///{ws / '.compendium' / 'store.db'}")
    try:
        pages = sorted([p async for p in store.scan(Page, {"status": "active"})],
                       key=lambda p: -len(p.cited_chunks))[:count]  # type: ignore[attr-defined]
    finally:
        await store.close()
    settings = load_settings(ws, env={k: v for k, v in os.environ.items() if not k.startswith("COMPENDIUM_EMBED_")})
    template = load_template("wiki")
    engine = build_engine(settings, template, usage=UsageMeter())
    out = []
    try:
        for page in pages:
            markdown = page.markdown  # type: ignore[attr-defined]
            chunk_of = dict(_FOOTNOTE.findall(markdown))
            evidence: list[EvidenceItem] = []
            for text, note in cited_sentences(_FOOTNOTE.sub("", markdown)):
                if note in chunk_of and len(text.split()) >= 4 and all(e.text != text for e in evidence):
                    evidence.append(EvidenceItem(len(evidence) + 1, text, chunk_of[note]))
            evidence = evidence[:10]
            request = PageRequest(slug=page.slug, title=page.title, kind=page.kind, description="",  # type: ignore[attr-defined]
                                  aliases=[], evidence=evidence, links=[],
                                  max_tokens=engine.page_limits(template)[1])
            texts = evidence_texts(evidence)
            started = time.perf_counter()
            calls = sum(u.llm_calls for u in engine.usage.by_phase.values())
            write = {"engine": engine.write_page, "prose": engine.write_prose,
                     "sentences": lambda r, t: write_sentences(engine.client, r, t)}[mode]
            try:
                raw = await write(request, template)
                error = ""
            except Exception as exc:  # a page the model could not write is a figure too
                raw, error = "", str(exc)
            calls = sum(u.llm_calls for u in engine.usage.by_phase.values()) - calls
            before = check_text(raw, texts)
            kept = check_text(before.kept_text, texts)
            out.append({"slug": page.slug, "mode": mode, "calls": calls, "evidence": len(evidence), "error": error,  # type: ignore[attr-defined]
                        "seconds": round(time.perf_counter() - started, 1),
                        "raw_sentences": len(before.sentences), "raw_citations": before.citations,
                        "raw_supported": before.supported_citations, "uncited": len(before.uncited),
                        "kept_sentences": len(kept.sentences), "kept_citations": kept.citations,
                        "kept_supported": kept.supported_citations, "raw": raw, "kept": before.kept_text,
                        "evidence_texts": texts})
            print(json.dumps({k: v for k, v in out[-1].items() if k not in ("raw", "kept", "evidence_texts")}), flush=True)
    finally:
        await engine.close()
    return out


def _probe(label: str, pages: int, asks: int, keep: Path, mode: str = "engine") -> int:
    """Pages and answers by the model over the offline-compiled slice (see _probe_pages)."""
    with tempfile.TemporaryDirectory(prefix="real-model-probe-") as tmp:
        ws = _workspace(Path(tmp), "offline", False, 1500)
        _compile(ws, False)
        with (ws / "compendium.yaml").open("a") as f:  # the model's calls: long timeout, one at a time
            f.write(LLM_SETTINGS.format(timeout=1500))
        written = asyncio.run(_probe_pages(ws, pages, label, mode)) if pages else []
        answers: list[dict[str, Any]] = []
        if asks:
            global QUESTIONS
            QUESTIONS = QUESTIONS[:asks]
            no_embed = {k: v for k, v in os.environ.items() if not k.startswith("COMPENDIUM_EMBED_")}
            saved = dict(os.environ)
            os.environ.clear()
            os.environ.update(no_embed)
            try:
                answers = asyncio.run(_ask(ws, True))
            finally:
                os.environ.clear()
                os.environ.update(saved)
            for a in answers:
                print(json.dumps({k: a[k] for k in ("question", "answer", "sentences", "cited", "supported", "seconds")}), flush=True)
    target = keep / f"{label}-probe-{mode}"
    target.mkdir(parents=True, exist_ok=True)
    (target / "pages.json").write_text(json.dumps(written, indent=1))
    (target / "ask.json").write_text(json.dumps(answers, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default=os.environ.get("COMPENDIUM_LLM_MODEL", "llm"),
                        help="the model's column name (default: COMPENDIUM_LLM_MODEL)")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds one call may take")
    parser.add_argument("--keep", default=str(OUT), help="where pages, answers and figures are written")
    parser.add_argument("--skip-offline", action="store_true", help="the model only")
    parser.add_argument("--probe-pages", type=int, default=0,
                        help="instead of compiling through the model: N offline pages written again by it")
    parser.add_argument("--probe-asks", type=int, default=0, help="with --probe-pages: the first N questions too")
    parser.add_argument("--replay", default="",
                        help="a server dump (JSON lines) whose replies answer requests asked before")
    parser.add_argument("--page-mode", choices=("engine", "prose", "sentences"), default="engine",
                        help="with --probe-pages: how pages are asked (default: as REFINE asks them)")
    args = parser.parse_args(argv)
    if not os.environ.get("COMPENDIUM_LLM_BASE_URL"):
        print("real_model: skipped, no endpoint (set COMPENDIUM_LLM_BASE_URL, see ../shared/realmodel/)")
        return 0
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    if args.replay:
        def asked(request: dict[str, Any]) -> None:
            print(f"real_model: asking the model: {request['messages'][-1]['content'][:80]!r}", flush=True)

        with ReplayProxy(Path(args.replay), os.environ["COMPENDIUM_LLM_BASE_URL"], args.timeout, asked) as proxy:
            os.environ["COMPENDIUM_LLM_BASE_URL"] = proxy.base_url
            try:
                return _main(args, keep)
            finally:
                print(f"real_model: replayed {proxy.replayed} replies, asked the model {proxy.forwarded} times",
                      flush=True)
    return _main(args, keep)


def _main(args: argparse.Namespace, keep: Path) -> int:
    if args.probe_pages or args.probe_asks:
        return _probe(args.label, args.probe_pages, args.probe_asks, keep, args.page_mode)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="real-model-") as tmp:
        base = Path(tmp)
        results[args.label] = _run_one(base, args.label, True, args.timeout, keep)
        if not args.skip_offline:
            results["offline"] = _run_one(base, "offline", False, args.timeout, keep)
    (keep / f"{args.label}.json").write_text(json.dumps(results, indent=1))
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
