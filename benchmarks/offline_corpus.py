"""Compiles a real corpus with the offline engine and reports what came out and how fast.

The corpus is a folder of documents, or (--postgres) the HTML manual of Debian's
`postgresql-doc-15` package, fetched once with `apt-get download` and unpacked with
`dpkg-deb -x` into a cache folder (no server is installed). The compile runs in a temporary
workspace. Printed and written to benchmarks/reports/offline_corpus.md: documents, chunks,
pages, entities, concepts, relations, claims, topics, aliases merged, seconds and chunks per
second of each phase, peak memory, a few page titles and one page excerpt.

    python -m benchmarks.offline_corpus FOLDER [--limit N] [--profile PHASE] [--no-write]
    python -m benchmarks.offline_corpus --postgres [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import platform
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPORT = Path(__file__).parent / "reports" / "offline_corpus.md"
CACHE = Path(tempfile.gettempdir()) / "compendium-corpora"
POSTGRES_PACKAGE = "postgresql-doc-15"
SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx")
PHASES = ("ingest", "map", "reduce", "plan", "refine")


def debian_doc(package: str, html: Path, cache: Path = CACHE) -> Path:
    """The `html` folder (relative to the package root) of a Debian -doc package, downloaded
    and unpacked under `cache` on first use."""
    target = cache / package
    html = target / html
    if html.is_dir():
        return html
    target.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["apt-get", "download", package], cwd=target, check=True,
                       capture_output=True, text=True)
        debs = sorted(target.glob(f"{package}_*.deb"))
        if not debs:
            raise SystemExit(f"apt-get download left no {package} .deb in {target}")
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(target)], check=True,
                       capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise SystemExit(f"could not fetch {package}: {detail.strip()}") from exc
    if not html.is_dir():
        raise SystemExit(f"{package} unpacked without {html}")
    return html


def postgres_manual(cache: Path = CACHE) -> Path:
    """The html/ folder of postgresql-doc-15, downloaded and unpacked on first use."""
    return debian_doc(POSTGRES_PACKAGE, Path("usr/share/doc") / POSTGRES_PACKAGE / "html", cache)


def pick_documents(folder: Path, limit: int | None) -> list[Path]:
    """Documents under `folder` in name order, the first `limit` of them."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    return files[:limit] if limit else files


def peak_memory_mb() -> float:
    """Peak resident memory of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


async def _compile(workspace: Path, profile: str | None) -> tuple[dict[str, Any], dict[str, Any], str]:
    from compendium.compiler import orchestrator
    from compendium.operations import compile_workspace, opened_store
    from compendium.settings import load_settings
    from compendium.storage.records import Entity, Page

    settings = load_settings(workspace, env={})
    profiled = io.StringIO()
    if profile:
        # Wrap one phase in cProfile; the other phases run as they are.
        phases = orchestrator.default_phases()
        profiler = cProfile.Profile()

        def wrap(name, phase):  # type: ignore[no-untyped-def]
            if name != profile:
                return phase

            async def run(template, ctx):  # type: ignore[no-untyped-def]
                profiler.enable()
                try:
                    return await phase(template, ctx)
                finally:
                    profiler.disable()

            return run

        wrapped = [(n, wrap(n, p)) for n, p in phases]
        original = orchestrator.default_phases
        orchestrator.default_phases = lambda: wrapped  # type: ignore[assignment]
        try:
            report = await compile_workspace(settings)
        finally:
            orchestrator.default_phases = original  # type: ignore[assignment]
        pstats.Stats(profiler, stream=profiled).sort_stats("cumulative").print_stats(25)
    else:
        report = await compile_workspace(settings)
    async with opened_store(settings) as store:
        entities = [e async for e in store.scan(Entity)]
        pages = [p async for p in store.scan(Page, {"status": "active"})]
    with_aliases = [e for e in entities if e.aliases]  # type: ignore[attr-defined]
    extra = {
        "entities_with_aliases": len(with_aliases),
        "aliases": sum(len(e.aliases) for e in with_aliases),  # type: ignore[attr-defined]
        "pages": pages,
    }
    return report.as_dict(), extra, profiled.getvalue()


def run(folder: Path, limit: int | None, profile: str | None = None) -> dict[str, Any]:
    from compendium.workspace import add_documents, init_workspace

    documents = pick_documents(folder, limit)
    if not documents:
        raise SystemExit(f"no documents ({', '.join(SUFFIXES)}) under {folder}")
    root = Path(tempfile.mkdtemp(prefix="compendium-offline-"))
    try:
        workspace = init_workspace(root / "ws")
        staging = root / "corpus"
        for path in documents:  # keep the folder layout, so document paths stay readable
            copy = staging / path.relative_to(folder)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        add_documents(workspace, [staging])
        started = time.perf_counter()
        report, extra, profiled = asyncio.run(_compile(workspace, profile))
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"folder": str(folder), "limit": limit, "report": report, "wall": wall,
            "peak_mb": peak_memory_mb(), "profile": profiled, **extra}


def _sample_pages(pages: list[Any]) -> tuple[list[str], str]:
    """Titles of the biggest entity pages, and the start of the one with most citations."""
    ranked = sorted(pages, key=lambda p: (-len(p.cited_chunks), p.slug))
    titles = [p.title for p in ranked if p.kind != "topic"][:12]
    topics = [p.title for p in ranked if p.kind == "topic"][:5]
    excerpt = ""
    if ranked:
        lines = ranked[0].markdown.splitlines()
        excerpt = "\n".join(lines[:28])
    return titles + [f"(topic) {t}" for t in topics], excerpt


def render(result: dict[str, Any]) -> str:
    report = result["report"]
    counts = report["counts"]
    chunks = report["chunks"] or 1
    rows = []
    for name in PHASES:
        phase = report["phases"].get(name, {})
        seconds = float(phase.get("seconds", 0.0))
        rate = chunks / seconds if seconds > 0 else float("inf")
        rows.append(f"| {name} | {seconds:.2f} | {rate:,.0f} |")
    total = sum(float(report["phases"].get(n, {}).get("seconds", 0.0)) for n in PHASES)
    titles, excerpt = _sample_pages(result["pages"])
    source = result["folder"] + (f" (first {result['limit']} documents)" if result["limit"] else "")
    lines = [
        "# Offline compile of a real corpus",
        "",
        f"Corpus: `{source}`. Machine: {platform.machine()}, Python {platform.python_version()}, one process.",
        f"Status: {report['status']}{(' — ' + report['error']) if report['error'] else ''}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| documents | {report['documents']} |",
        f"| chunks | {report['chunks']} |",
        f"| pages | {len(result['pages'])} |",
        f"| entities | {counts.get('entities', 0)} |",
        f"| concepts | {counts.get('concepts', 0)} |",
        f"| relations | {counts.get('relations', 0)} |",
        f"| claims | {counts.get('claims', 0)} |",
        f"| topics | {counts.get('topics', 0)} |",
        f"| entities with aliases merged | {result['entities_with_aliases']} ({result['aliases']} aliases) |",
        f"| peak memory | {result['peak_mb']:.0f} MB |",
        f"| wall time | {result['wall']:.1f} s |",
        "",
        "| phase | seconds | chunks/second |",
        "|---|---|---|",
        *rows,
        f"| total | {total:.2f} | {chunks / total if total else 0:,.0f} |",
        "",
        "Sample page titles: " + "; ".join(titles),
        "",
        "Sample page (start):",
        "",
        "```markdown",
        excerpt,
        "```",
    ]
    if result["profile"]:
        lines += ["", "Profile:", "", "```", result["profile"].strip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="folder of documents")
    parser.add_argument("--postgres", action="store_true", help=f"use the {POSTGRES_PACKAGE} HTML manual")
    parser.add_argument("--limit", type=int, default=None, help="take the first N documents")
    parser.add_argument("--profile", choices=PHASES, default=None, help="cProfile one phase")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {REPORT.name}")
    args = parser.parse_args(argv)
    if args.postgres == bool(args.folder):
        parser.error("give a FOLDER or --postgres (one of them)")
    folder = postgres_manual() if args.postgres else args.folder
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    text = render(run(folder, args.limit, args.profile))
    print(text)
    if not args.no_write:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
