"""Benchmark of incremental recompiles: what a small change costs against a full compile.

A generated corpus is compiled once against the scripted LLM server (in a separate process,
counting calls and tokens), then recompiled after: no change; editing one chunk (a sentence
added to one paragraph); editing 1% of the documents;
adding 1%; deleting 1%; changing only the REFINE prompt. For each it prints LLM calls and
tokens (prompt + completion) by phase, as a fraction of the full compile's, REDUCE's pair
questions and summaries, MAP's prompt outside the chunks it reads per call, and the
amplification: the recompile's tokens divided by (changed chunk tokens / all chunk tokens x
the full compile's tokens). Changed chunk tokens are those of the chunks that appeared or
disappeared, whichever is larger (an edit replaces chunks: counting both would halve it).
With --compare it runs everything twice, the second time with every page update in a call of
its own (as before small updates were grouped), and prints REFINE's calls and tokens side by side.

    python -m benchmarks.incremental [--documents 500] [--compare] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import generate_corpus
from benchmarks.findings import kept_findings

REPORT = Path(__file__).parent / "reports" / "incremental.md"
SHARE = 0.01
TARGET_MAP_REDUCE = 1.2
TARGET_WHOLE = 3.0
PHASES = ("map", "reduce", "plan", "refine")
REFINE_PROMPT_EXTRA = "\nKeep every paragraph short."


def _serve(conn: Any) -> None:
    """Child process: the scripted server; answers 'counters' (then resets) until 'stop'."""
    from tests.support.llm_server import LLMServer

    server = LLMServer().start()
    conn.send(server.base_url)
    while (command := conn.recv()) != "stop":
        if command == "counters":
            conn.send({"chat": server.calls.get("chat", 0), "tokens": server.prompt_tokens + server.completion_tokens})
            server.reset()
    server.stop()


@dataclass
class Step:
    name: str
    report: dict[str, Any]
    server: dict[str, int]
    changed_tokens: int
    total_tokens: int
    seconds: float
    appeared_tokens: int = 0  # of the chunks that are new to this compile: what MAP reads

    def tokens(self, phases: tuple[str, ...] = PHASES) -> int:
        p = self.report["phases"]
        return sum(p.get(n, {}).get("prompt_tokens", 0) + p.get(n, {}).get("completion_tokens", 0) for n in phases)

    def calls(self, phases: tuple[str, ...] = PHASES) -> int:
        return sum(self.report["phases"].get(n, {}).get("llm_calls", 0) for n in phases)


async def _compile(workspace: Path, base_url: str) -> tuple[dict[str, Any], dict[str, int]]:
    from compendium.operations import compile_workspace, opened_store
    from compendium.settings import load_settings
    from compendium.storage.records import Chunk

    env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat"}
    settings = load_settings(workspace, env=env)
    report = await compile_workspace(settings)
    async with opened_store(settings) as store:
        chunks = {c.id: c.tokens async for c in store.scan(Chunk)}  # type: ignore[attr-defined]
    return report.as_dict(settings.llm), chunks


EDIT_SENTENCE = " An operator can inspect it with the status command at any time."


def edit_document(path: Path) -> None:
    """Append one sentence to the document's second paragraph of prose (HTML: its second <p>),
    so the document's opening stays as it was."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".html", ".htm"):
        first = text.find("</p>")
        at = text.find("</p>", first + 4) if first >= 0 else -1
        at = at if at >= 0 else first
        text = text[:at] + EDIT_SENTENCE + text[at:]
    else:
        paragraphs = text.split("\n\n")
        prose = [i for i, p in enumerate(paragraphs) if p and not p.startswith("#")]
        i = prose[min(1, len(prose) - 1)]
        paragraphs[i] += EDIT_SENTENCE
        text = "\n\n".join(paragraphs)
    path.write_text(text, encoding="utf-8")


def _refine_only_template(workspace: Path) -> None:
    """A workspace copy of the built-in `wiki` template whose writer prompt says one more thing."""
    import yaml

    from compendium.templates.registry import show_template
    from compendium.templates.render import default_prompt

    data = yaml.safe_load(show_template("wiki"))
    data.setdefault("refine", {})["writer_prompt"] = default_prompt("page") + REFINE_PROMPT_EXTRA
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def run(documents: int, grouped: bool = True) -> list[Step]:
    from compendium.phases import refine, update_groups
    from compendium.workspace import init_workspace

    # No update is small enough to group: every page update gets a call of its own, as before.
    refine.SMALL_UPDATE_TOKENS = update_groups.SMALL_UPDATE_TOKENS if grouped else -1

    extra = max(1, round(documents * SHARE))
    root = Path(tempfile.mkdtemp(prefix="compendium-incr-"))
    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(theirs,), daemon=True)
    server.start()
    try:
        base_url = ours.recv()
        workspace = init_workspace(root / "ws")
        spare = root / "spare"
        generate_corpus(spare, documents + extra)  # same seed: the first N are the corpus
        corpus = workspace / "documents" / "synthetic"
        corpus.mkdir(parents=True)
        files = sorted(spare.iterdir())
        for f in files[:documents]:
            shutil.move(str(f), corpus / f.name)
        added = files[documents:]
        present = sorted(corpus.iterdir())
        step = max(1, len(present) // extra)
        edited = present[::step][:extra]
        deleted = present[step // 2 :: step][:extra]

        steps: list[Step] = []
        before: dict[str, int] = {}

        def compile_step(name: str) -> None:
            nonlocal before
            started = time.perf_counter()
            report, chunks = asyncio.run(_compile(workspace, base_url))
            seconds = time.perf_counter() - started
            ours.send("counters")
            counters = ours.recv()
            appeared = sum(t for c, t in chunks.items() if c not in before)
            vanished = sum(t for c, t in before.items() if c not in chunks)
            total = sum(chunks.values()) if name == "full" else sum(before.values())
            steps.append(Step(name, report, counters, max(appeared, vanished), total, seconds, appeared))
            before = chunks

        compile_step("full")
        compile_step("no change")
        # One chunk: a sentence appended to one paragraph of one document (a document read again,
        # one of its chunks changed), away from the documents the 1% steps touch.
        edit_document(present[step // 4])
        compile_step("edit one chunk")
        for path in edited:
            edit_document(path)
        compile_step(f"edit {len(edited)} documents")
        for f in added:
            shutil.move(str(f), corpus / f.name)
        compile_step(f"add {len(added)} documents")
        for path in deleted:
            path.unlink()
        compile_step(f"delete {len(deleted)} documents")
        _refine_only_template(workspace)
        compile_step("REFINE prompt changed")
        return steps
    finally:
        ours.send("stop")
        server.join(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def amplification(step: Step, full: Step, phases: tuple[str, ...]) -> float | None:
    share = step.changed_tokens / max(step.total_tokens, 1)
    expected = share * full.tokens(phases)
    return step.tokens(phases) / expected if expected else None


def table(steps: list[Step]) -> list[str]:
    full = steps[0]
    rows = [
        "| Run | Changed chunk tokens | Calls | Calls / full | Tokens | Tokens / full "
        "| MAP+REDUCE tokens | Amplification MAP+REDUCE | Amplification whole | Pages written | Met |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in steps:
        pages = s.report["pages"]
        written = pages["created"] + pages["updated"] + pages["deleted"]
        mr = s.tokens(("map", "reduce"))
        if s is full:
            rows.append(
                f"| {s.name} | {s.changed_tokens} | {s.calls()} | 1 | {s.tokens()} | 1 | {mr} | — | — | {written} | — |"
            )
            continue
        a_mr, a_all = amplification(s, full, ("map", "reduce")), amplification(s, full, PHASES)
        met = _met(s, a_mr, a_all)
        rows.append(
            f"| {s.name} | {s.changed_tokens} | {s.calls()} | {s.calls() / max(full.calls(), 1):.4f} | "
            f"{s.tokens()} | {s.tokens() / max(full.tokens(), 1):.4f} | {mr} | {_fmt(a_mr)} | {_fmt(a_all)} | "
            f"{written} | {met} |"
        )
    rows += ["", "Tokens by phase (prompt + completion):", "", "| Run | " + " | ".join(PHASES) + " |",
             "|---|" + "---|" * len(PHASES)]
    for s in steps:
        rows.append(f"| {s.name} | " + " | ".join(str(s.tokens((p,))) for p in PHASES) + " |")
    rows += ["", "LLM calls by phase:", "", "| Run | " + " | ".join(PHASES) + " |", "|---|" + "---|" * len(PHASES)]
    for s in steps:
        rows.append(f"| {s.name} | " + " | ".join(str(s.calls((p,))) for p in PHASES) + " |")
    rows += ["", "REDUCE's work: tier-3 pairs in the review band, of them asked (not found under their fingerprint), "
             "descriptions summarised, chunks redone:", "",
             "| Run | Review pairs | Pairs asked | Summaries | Chunks redone |", "|---|---|---|---|---|"]
    for s in steps:
        r = s.report["phases"].get("reduce") or {}
        asked = r.get("tier3_pairs", 0) - r.get("tier3_cached", 0)
        rows.append(f"| {s.name} | {r.get('tier3_pairs', 0)} | {asked} | {r.get('summaries', 0)} | "
                    f"{r.get('chunks_redone', 0)} |")
    rows += ["", "MAP's prompt outside the chunks it reads (instructions, type lists, example, headings and labels), "
             "per call, against the chunk tokens a call reads:", "",
             "| Run | MAP calls | MAP prompt tokens | Chunk tokens read | Prompt outside the chunks, per call "
             "| Chunk tokens per call |", "|---|---|---|---|---|---|"]
    for s in steps:
        calls = s.calls(("map",))
        if calls:
            prompt = s.report["phases"]["map"].get("prompt_tokens", 0)
            rows.append(f"| {s.name} | {calls} | {prompt} | {s.appeared_tokens} | "
                        f"{(prompt - s.appeared_tokens) / calls:.0f} | {s.appeared_tokens / calls:.0f} |")
    return rows


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _met(s: Step, a_mr: float | None, a_all: float | None) -> str:
    pages = s.report["pages"]
    if s.name == "no change":
        ok = s.calls() == 0 and pages["created"] + pages["updated"] + pages["deleted"] == 0
    elif s.name.startswith("REFINE"):
        ok = s.tokens(("map", "reduce")) == 0
    else:
        ok = (a_mr or 0) <= TARGET_MAP_REDUCE and (a_all or 0) <= TARGET_WHOLE
    return "yes" if ok else "NO"


def comparison(grouped: list[Step], single: list[Step]) -> list[str]:
    """REFINE's calls and tokens with small updates grouped and with a call per page."""
    rows = [
        "Small page updates grouped into one call (`update_pages`) against a call per page update "
        "(the same run with grouping off, `--compare`):",
        "",
        "| Run | REFINE calls, a call per page | REFINE calls, grouped | REFINE tokens, a call per page "
        "| REFINE tokens, grouped | Amplification whole, a call per page | Amplification whole, grouped |",
        "|---|---|---|---|---|---|---|",
    ]
    for g, s in zip(grouped[1:], single[1:], strict=True):
        if g.name in ("no change",) or g.name.startswith("REFINE"):
            continue
        rows.append(
            f"| {g.name} | {s.calls(('refine',))} | {g.calls(('refine',))} | {s.tokens(('refine',))} | "
            f"{g.tokens(('refine',))} | {_fmt(amplification(s, single[0], PHASES))} | "
            f"{_fmt(amplification(g, grouped[0], PHASES))} |"
        )
    return rows


def render(steps: list[Step], documents: int, single: list[Step] | None = None) -> str:
    full = steps[0]
    r = full.report
    counts = r["counts"]
    lines = [
        "# Incremental recompile benchmark",
        "",
        f"Generated by `python -m benchmarks.incremental --documents {documents}"
        f"{' --compare' if single else ''}` on "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}. "
        "Scripted OpenAI-compatible server in a separate process counting calls and tokens; "
        "default `wiki` template; SQLite store; offline embedder.",
        "",
        f"Corpus: {r['documents']} documents (benchmarks/corpus.py), {r['chunks']} chunks, "
        f"{full.total_tokens} chunk tokens; {counts.get('entities', 0)} entities, "
        f"{counts.get('relations', 0)} relations, {counts.get('claims', 0)} claims, "
        f"{counts.get('topics', 0)} topics, {r['pages']['created']} pages.",
        "",
        "Amplification = recompile tokens / (changed chunk tokens / chunk tokens x full compile tokens). "
        f"Targets: no change costs no call and writes no page; MAP+REDUCE ≤ {TARGET_MAP_REDUCE} and whole "
        f"≤ {TARGET_WHOLE} for edit (one chunk or 1% of the documents), add and delete; a REFINE-only change "
        "costs no MAP or REDUCE token.",
        "",
        *table(steps),
        "",
        "Server-counted chat calls per run: "
        + ", ".join(f"{s.name}: {s.server['chat']}" for s in steps)
        + ". Wall seconds: "
        + ", ".join(f"{s.name}: {s.seconds:.1f}" for s in steps)
        + ".",
        "",
        *([*comparison(steps, single), ""] if single else []),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--compare", action="store_true", help="run again with a call per page update")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    args = parser.parse_args()
    steps = run(args.documents)
    single = run(args.documents, grouped=False) if args.compare else None
    text = render(steps, args.documents, single)
    print(text)
    if not args.no_write:
        findings = kept_findings(REPORT)
        REPORT.write_text(f"{text}\n{findings}" if findings else text, encoding="utf-8")


if __name__ == "__main__":
    main()
