"""Reads an offline-compiled wiki the way a knowledge manager would, and counts what is wrong.

Measured on the public manuals of `benchmarks/manuals.py` (fetched once into a cache folder,
never committed): the six that count (git, django, sphinx, mkdocs, commons-lang, gettext) and
two regression checks whose figures never count (postgres, python). Each manual is sampled to
`--documents` documents with a fixed seed, compiled offline in a temporary workspace, and its
wiki measured with the mechanical rules of `benchmarks/quality_rules.py` (the written rule):
pages, noise among a seeded sample of 100 page subjects, leads that open with the subject's
authored definition where the evidence holds one, sentence occurrences published on three or
more pages, cited pieces not verbatim in their passage, and the older measures (defining leads
by regex, connective leads, file-name titles, repeats; the regression checks' checklists, false
merges and PostgreSQL's alias gold set).

For a reader, each manual's folder under `--out` (default build/quality/<manual>/) receives
`subjects.txt` (the 100 sampled page subjects with their mechanical verdict), `pages/` (a
seeded sample of 45 pages) and `topics/` (20 topic pages), each page as the Markdown published.

    python -m benchmarks.quality --manual git --documents 80          # one manual, report not written
    python -m benchmarks.quality --manual git --manual django --documents 80
    python -m benchmarks.quality --manual six --documents 80          # the six; writes reports/quality.md
    python -m benchmarks.quality --manual all --documents 80          # the six and the regression checks
    python -m benchmarks.quality --manual postgres --documents 150 --dump build/quality-json
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import quality_rules as rules
from benchmarks.findings import kept_findings
from benchmarks.manuals import MANUALS, SIX
from benchmarks.offline_corpus import CACHE, debian_doc, peak_memory_mb, postgres_manual
from compendium.errors import InputError

REPORT = Path(__file__).parent / "reports" / "quality.md"
SEED = 13
SAMPLE = 100
TOPIC_SAMPLE = 30
READ_PAGES = 45  # pages a reader judges in full
READ_TOPICS = 20  # topic and overview pages a reader judges
OUT = Path("build") / "quality"

PYTHON_PACKAGE = "python3.11-doc"

# Documents every sample keeps: the ones the checklist and the alias gold set need.
POSTGRES_KEEP = (
    "acronyms.html", "glossary.html", "wal-intro.html", "mvcc-intro.html", "routine-vacuuming.html",
    "sql-vacuum.html", "sql-select.html", "indexes-types.html", "runtime-config-wal.html",
    "monitoring-stats.html", "ddl-constraints.html", "tutorial-transactions.html",
    "sql-createtable.html", "functions-json.html", "plpgsql-overview.html", "logical-replication.html",
    "warm-standby.html", "sql-explain.html", "datatype-numeric.html", "auth-pg-hba-conf.html",
    "tutorial-join.html", "app-pgdump.html", "ddl-partitioning.html", "textsearch-intro.html",
)
POSTGRES_CHECKLIST = (
    ("Write-Ahead Log", "WAL", "write-ahead logging"),
    ("MVCC", "Multiversion Concurrency Control"),
    ("VACUUM",),
    ("autovacuum", "autovacuum daemon", "Autovacuum Daemon"),
    ("SELECT",),
    ("B-tree", "btree"),
    ("GIN", "Generalized Inverted Index"),
    ("max_wal_size",),
    ("pg_stat_activity",),
    ("checkpoint",),
    ("transaction",),
    ("primary key",),
    ("foreign key",),
    ("JSON", "jsonb"),
    ("PL/pgSQL",),
    ("logical replication",),
    ("standby server", "standby", "hot standby"),
    ("EXPLAIN",),
    ("pg_hba.conf",),
    ("pg_dump",),
    ("partitioning", "table partitioning"),
    ("join", "joins"),
    ("tablespace",),
    ("full text search", "text search"),
)
POSTGRES_APART = (("NULL", "REAL"), ("VACUUM", "AUTOVACUUM"), ("SELECT", "other"), ("VACUUM", "ANALYZE"),
                  ("INSERT", "UPDATE"), ("WAL", "WAL segment"))

PYTHON_KEEP = (
    "glossary.html", "tutorial/classes.html", "tutorial/datastructures.html", "tutorial/errors.html",
    "tutorial/modules.html", "tutorial/controlflow.html", "library/functions.html",
    "library/stdtypes.html", "library/os.html", "library/json.html", "library/re.html",
    "library/asyncio-task.html", "library/threading.html", "library/pathlib.html",
    "reference/datamodel.html", "reference/import.html", "library/exceptions.html",
    "howto/descriptor.html", "library/collections.html", "library/itertools.html",
    "library/venv.html", "library/logging.html",
)
PYTHON_CHECKLIST = (
    ("list", "lists"), ("dictionary", "dict"), ("tuple", "tuples"), ("exception", "exceptions"),
    ("module", "modules"), ("class", "classes"), ("generator", "generators"), ("decorator",),
    ("iterator",), ("coroutine", "coroutines"), ("descriptor", "descriptors"),
    ("Global Interpreter Lock", "GIL"), ("virtual environment", "venv"), ("json",),
    ("open()", "open"), ("os.path",), ("pathlib",), ("asyncio",), ("regular expression", "re"),
    ("namedtuple()", "namedtuple"), ("package", "packages"), ("lambda",),
)
PYTHON_APART = (("list", "tuple"), ("str", "bytes"), ("int", "float"), ("import", "importlib"))


def python_manual(cache: Path = CACHE) -> Path:
    """The html/ folder of python3.11-doc, downloaded and unpacked on first use."""
    return debian_doc(PYTHON_PACKAGE, Path("usr/share/doc/python3.11/html"), cache)


CORPORA: dict[str, dict[str, Any]] = {
    "postgres": {"folder": postgres_manual, "keep": POSTGRES_KEEP, "checklist": POSTGRES_CHECKLIST,
                 "apart": POSTGRES_APART, "skip": ("release-",), "shape": "DocBook HTML, one file per section"},
    "python": {"folder": python_manual, "keep": PYTHON_KEEP, "checklist": PYTHON_CHECKLIST,
               "apart": PYTHON_APART, "skip": ("whatsnew/", "_static/", "_sources/", "_images/",
                                               "c-api/", "genindex", "py-modindex", "search.html"),
               "shape": "Sphinx HTML, API reference with dl blocks and code samples"},
}


def sample_documents(folder: Path, keep: tuple[str, ...], skip: tuple[str, ...], size: int) -> list[Path]:
    """The kept documents plus a seeded random fill up to `size`."""
    files = sorted(p for p in folder.rglob("*.html") if p.is_file())
    relative = {p.relative_to(folder).as_posix(): p for p in files}
    eligible = [r for r in relative if not any(s in r for s in skip)]
    chosen = [r for r in keep if r in relative]
    rest = [r for r in eligible if r not in chosen]
    random.Random(SEED).shuffle(rest)
    chosen += rest[: max(0, size - len(chosen))]
    return [relative[r] for r in sorted(chosen)]


async def _compile_and_read(workspace: Path, vault: Path | None) -> dict[str, Any]:
    from compendium.compiler import orchestrator
    from compendium.operations import compile_workspace, export_workspace, opened_store
    from compendium.settings import load_settings
    from compendium.storage.records import Chunk, Document, Entity, Page, Topic

    settings = load_settings(workspace, env={})
    phase_cpu: dict[str, float] = {}

    def timed(name, phase):  # type: ignore[no-untyped-def]
        async def run(template, ctx):  # type: ignore[no-untyped-def]
            began = time.process_time()
            try:
                return await phase(template, ctx)
            finally:
                phase_cpu[name] = phase_cpu.get(name, 0.0) + time.process_time() - began

        return run

    original = orchestrator.default_phases
    wrapped = [(n, timed(n, p)) for n, p in original()]
    orchestrator.default_phases = lambda: wrapped  # type: ignore[assignment]
    started, cpu = time.perf_counter(), time.process_time()
    try:
        report = await compile_workspace(settings)
    finally:
        orchestrator.default_phases = original  # type: ignore[assignment]
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    async with opened_store(settings) as store:
        data = {
            "entities": [e async for e in store.scan(Entity)],
            "pages": [p async for p in store.scan(Page, {"status": "active"})],
            "topics": [t async for t in store.scan(Topic)],
            "chunks": [c async for c in store.scan(Chunk)],
            "documents": [d async for d in store.scan(Document)],
        }
    if vault is not None:
        shutil.rmtree(vault, ignore_errors=True)
        await export_workspace(settings, "vault", vault)
    return {"report": report.as_dict(), "wall": wall, "cpu": cpu, "phase_cpu": phase_cpu, **data}


def compile_corpus(folder: Path, documents: list[Path], vault: Path | None = None) -> dict[str, Any]:
    from compendium.workspace import add_documents, init_workspace

    root = Path(tempfile.mkdtemp(prefix="compendium-quality-"))
    try:
        workspace = init_workspace(root / "ws")
        staging = root / "corpus"
        for path in documents:
            copy = staging / path.relative_to(folder)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        refused: list[str] = []
        try:  # a file the workspace refuses (binary content in a .html) is left out, and counted
            add_documents(workspace, [staging])
        except InputError as exc:  # raised once every other file is added
            refused.append(str(exc))
        return {**asyncio.run(_compile_and_read(workspace, vault)), "refused": refused}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def manual_documents(name: str, size: int) -> tuple[Path, list[Path]]:
    """The manual's folder and its seeded sample; a regression check keeps its checklist's documents."""
    if name in CORPORA:
        spec = CORPORA[name]
        folder = spec["folder"]()
        return folder, sample_documents(folder, spec["keep"], spec["skip"], size)
    manual = MANUALS[name]
    return manual.path(), manual.documents(size, SEED)


def measure(name: str, size: int, out: Path | None = None, vault: Path | None = None) -> dict[str, Any]:
    manual = MANUALS[name]
    spec = CORPORA.get(name, {"checklist": (), "apart": ()})
    folder, documents = manual_documents(name, size)
    data = compile_corpus(folder, documents, vault / name if vault else None)
    result = rules.judge_wiki(data, seed=SEED, sample=SAMPLE, topic_sample=TOPIC_SAMPLE,
                              checklist=spec["checklist"], apart=spec["apart"])
    result.update(rules.judge_manual(data, seed=SEED, pages=READ_PAGES, topics=READ_TOPICS))
    if name == "postgres":
        gold = rules.acronym_gold(folder / "acronyms.html")
        result["aliases"] = rules.alias_scores(gold, data["entities"])
    result.update(corpus=name, shape=manual.toolchain, counts=manual.counts,
                  documents=len(documents) - len(data["refused"]), refused=data["refused"],
                  chunks=data["report"]["chunks"], words=sum(len(c.text.split()) for c in data["chunks"]),
                  wall=data["wall"], cpu=data["cpu"], phase_cpu=data["phase_cpu"], peak_mb=peak_memory_mb(),
                  phases={k: v.get("seconds", 0.0) for k, v in data["report"]["phases"].items()})
    if out is not None:
        write_samples(out / name, result)
    return result


def write_samples(folder: Path, result: dict[str, Any]) -> None:
    """The sampled subjects, pages and topic pages, as files a reader opens one by one."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "pages").mkdir(parents=True)
    (folder / "topics").mkdir()
    verdicts = result["noise_pages"][3]
    (folder / "subjects.txt").write_text(
        "".join(f"{n:3}. {name}" + (f"    [noise: {why}]" if why else "") + "\n"
                for n, (name, why) in enumerate(verdicts, 1)), encoding="utf-8")
    for kind, pages in (("pages", result["page_sample"]), ("topics", result["topic_sample"])):
        for n, page in enumerate(pages, 1):
            (folder / kind / f"{n:02}-{page.slug[:80]}.md").write_text(page.markdown, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manual", "--corpus", action="append", choices=(*MANUALS, "six", "all"),
                        help="a manual of benchmarks/manuals.py, 'six' (default) or 'all'; may repeat")
    parser.add_argument("--documents", type=int, default=80, help="documents sampled per manual")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the samples a reader judges")
    parser.add_argument("--write", action="store_true", help=f"write {REPORT.name} (the default for six/all)")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {REPORT.name}")
    parser.add_argument("--dump", type=Path, default=None,
                        help="folder (under build/) for each manual's vault export and the measures as JSON")
    args = parser.parse_args(argv)
    asked = args.manual or ["six"]
    names: list[str] = []
    for a in asked:
        group = list(SIX) if a == "six" else [m for m in MANUALS if m != "sqlite"] if a == "all" else [a]
        names += [n for n in group if n not in names]
    results = []
    # Each manual in a process of its own, as a `compile` runs: in one process every compile after
    # the first would also pay collecting what the ones before it left (0.3-0.6 CPU s a manual).
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn, max_tasks_per_child=1) as pool:
        for name in names:
            result = pool.submit(measure, name, args.documents, args.out, args.dump).result()
            print(f"{name}: measured ({result['chunks']} chunks, {result['cpu']:.0f} CPU s)", flush=True)
            results.append(result)
    text = rules.render_manuals(results, documents=args.documents, seed=SEED, out=args.out.as_posix())
    print(text)
    if args.dump:
        rules.dump(results, args.dump / "measures.json")
    whole = any(a in ("six", "all") for a in asked)
    if (whole or args.write) and not args.no_write:
        findings = kept_findings(REPORT)
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(text + ("\n" + findings if findings else ""), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
