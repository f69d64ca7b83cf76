"""The outline on two public manuals: reach, fan-out, root topics, titles judged by reading, and
stability after a one-document add and a one-document delete.

The manuals are the HTML of Debian's `postgresql-doc-15` and `python3.11-doc` packages, fetched
once into a cache by benchmarks/offline_corpus.py. Each is compiled offline with the built-in wiki
template (which builds the `outline`), first without one held-out document, then with it (the
add), then without another (the delete). Printed and written to benchmarks/reports/outline.md:

- pages listed within 3 levels of the root: in a root topic (level 1), a subtopic (2) or a
  subtopic of that (3), target 100%; also within 2 levels (a page one click below a subtopic);
- the largest fan-out (children plus pages) of any node, target <= 50;
- the number of root topics, target 5-12;
- the share of node titles that name a real subject, from a seeded sample of 30 judged by
  reading (benchmarks/outline_judgement.yaml, rule in the report), target >= 80%; the same for
  a map made from communities alone, to compare with the authors' structure;
- pages moved and nodes renamed after the add and after the delete, target <= 2% of pages
  moved and 0 renames of nodes whose membership changed by less than 20%.

    python -m benchmarks.outline [--manual postgres|python] [--limit N] [--no-write] [--dump FILE]
    python -m benchmarks.outline --render FILE   # the report again from a dump, once its new titles are judged
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.findings import kept_findings
from benchmarks.offline_corpus import debian_doc, postgres_manual

REPORT = Path(__file__).parent / "reports" / "outline.md"
JUDGEMENT = Path(__file__).parent / "outline_judgement.yaml"
PYTHON_PACKAGE = "python3.11-doc"
SAMPLE = 30
SEED = 14
BUILTIN = Path(__file__).parents[1] / "compendium" / "templates" / "builtin" / "wiki.yaml"
SKIP_PYTHON = ("genindex", "py-modindex", "search", "download")  # generated lists, not prose


def python_manual() -> Path:
    return debian_doc(PYTHON_PACKAGE, Path("usr/share/doc/python3.11/html"))


def manual_files(name: str, limit: int | None) -> tuple[Path, list[Path]]:
    if name == "postgres":
        root = postgres_manual()
        files = sorted(root.glob("*.html"))
    else:
        root = python_manual()
        files = sorted(p for p in root.rglob("*.html")
                       if not any(part.startswith("_") for part in p.relative_to(root).parts)
                       and not p.name.startswith(SKIP_PYTHON) and "whatsnew" not in p.parts)
    if limit and len(files) > limit:  # evenly through the manual, so every part is present
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return root, files


def _workspace(root: Path, manual: Path, files: list[Path]) -> Path:
    from compendium.workspace import init_workspace

    workspace = init_workspace(root / "ws")
    for path in files:
        copy = workspace / "documents" / path.relative_to(manual)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    text = BUILTIN.read_text(encoding="utf-8").replace("name: wiki\n", "name: mapped\n", 1)
    (workspace / "templates").mkdir(exist_ok=True)
    (workspace / "templates" / "mapped.yaml").write_text(text, encoding="utf-8")
    config = workspace / "compendium.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("default_template: wiki", "default_template: mapped"))
    return workspace


async def _compile_and_read(workspace: Path) -> dict[str, Any]:
    from compendium.export.outline_view import site_outline
    from compendium.export.snapshot import load_snapshot
    from compendium.operations import compile_workspace, opened_store
    from compendium.outline import OutlineNode, build_outline
    from compendium.outline.placement import SourceDocument, SourcePassage, Structure, place
    from compendium.settings import load_settings

    settings = load_settings(workspace, env={})
    started = time.perf_counter()
    await compile_workspace(settings)
    wall = time.perf_counter() - started
    async with opened_store(settings) as store:
        wiki = await load_snapshot(store)
    tree = site_outline(wiki)
    stored = wiki.outline or {"roots": []}
    roots = [OutlineNode.from_dict(d) for d in stored["roots"]]
    # The same pages mapped from communities alone (no folders, files or headings), to compare.
    node_ids = {n.id for r in roots for n, _d in r.walk()}
    pages = [p for p in wiki.pages if p.subject_id not in node_ids]
    members = {t.id: t.members for t in wiki.topics}
    chunks = {}
    for p in pages:
        ents = members.get(p.subject_id, [p.subject_id])
        chunks[p.subject_id] = sorted({c for e in ents if e in wiki.entity_by_id for c in wiki.entity_by_id[e].chunk_ids})[:24]
    passages = {c.id: SourcePassage(c.id, c.document_id, c.ordinal, tuple(c.heading_path)) for c in wiki.chunks}
    structure = Structure([SourceDocument(d.id, d.path, d.title) for d in wiki.documents])  # headings only matter here
    leaves = place(chunks, {p.subject_id: p.title for p in pages}, {}, passages, structure)
    for leaf in leaves:
        leaf.path = []
    from compendium.outline.build import subject_edges
    entity_of = {p.subject_id: members.get(p.subject_id, [p.subject_id]) for p in pages}
    edges = subject_edges(entity_of, ((r.source, r.target, float(max(r.strength, 1))) for r in wiki.relations))
    communities_only = build_outline(leaves, edges)
    titles = {p.subject_id: p.title for p in pages}
    return {"tree": tree, "roots": roots, "wall": wall, "pages": len(wiki.pages),
            "communities_only": communities_only, "titles": titles,
            "documents": len(wiki.documents)}


def _nodes(tree: dict) -> list[tuple[dict, int]]:
    out, stack = [], [(c, 1) for c in tree["children"]]
    while stack:
        node, depth = stack.pop()
        out.append((node, depth))
        stack.extend((c, depth + 1) for c in node["children"])
    return out


def shape(tree: dict, pages: int) -> dict[str, Any]:
    from compendium.outline import page_depths

    depths = page_depths(tree)
    nodes = _nodes(tree)
    return {
        "pages": pages,
        "nodes": len(nodes),
        "within_3": sum(1 for d in depths.values() if d <= 3) / max(pages, 1),
        "within_2": sum(1 for d in depths.values() if d <= 2) / max(pages, 1),
        "listed": len(depths),
        "fan_out": max((len(n["children"]) + len(n["pages"]) for n, _d in nodes), default=0),
        "roots": len(tree["children"]),
        "depth": max((d for _n, d in nodes), default=0),
    }


def stability(before: list, after: list) -> dict[str, Any]:
    """Pages moved between nodes, and renames of nodes whose membership changed < 20%."""
    def index(roots: list) -> tuple[dict[str, str], dict[str, tuple[str, set[str]]]]:
        nodes = [n for r in roots for n, _d in r.walk()]
        return ({s: n.id for n in nodes for s in n.subjects},
                {n.id: (n.title, set(n.all_subjects())) for n in nodes})

    where_b, nodes_b = index(before)
    where_a, nodes_a = index(after)
    kept = where_b.keys() & where_a.keys()
    moved = sum(1 for s in kept if where_b[s] != where_a[s])
    renamed, small_change = 0, 0
    for nid, (title, members) in nodes_b.items():
        if nid not in nodes_a:
            continue
        new_title, new_members = nodes_a[nid]
        union = members | new_members
        if union and len(members ^ new_members) / len(union) < 0.2:
            small_change += 1
            renamed += new_title != title
    return {"moved": moved, "moved_share": moved / max(len(kept), 1), "renamed_small": renamed,
            "nodes_small_change": small_change, "nodes_gone": len(nodes_b.keys() - nodes_a.keys()),
            "nodes_new": len(nodes_a.keys() - nodes_b.keys())}


def sample_titles(tree_nodes: list[tuple[str, list[str]]], k: int = SAMPLE) -> list[tuple[str, list[str]]]:
    rng = random.Random(SEED)
    ordered = sorted(tree_nodes)
    return sorted(rng.sample(ordered, min(k, len(ordered))))


def judged_share(manual: str, kind: str, sample: list[tuple[str, list[str]]]) -> tuple[float | None, list[str]]:
    verdicts = (yaml.safe_load(JUDGEMENT.read_text(encoding="utf-8")) or {}) if JUDGEMENT.exists() else {}
    mine = (verdicts.get(manual) or {}).get(kind) or {}
    unjudged = [t for t, _p in sample if t not in mine]
    judged = [bool(mine[t]) for t, _p in sample if t in mine]
    return (sum(judged) / len(judged) if judged else None), unjudged


def run_manual(name: str, limit: int | None) -> dict[str, Any]:
    manual, files = manual_files(name, limit)
    # Held out and added back: a document from the middle of the manual; deleted: another.
    added = files[len(files) // 2]
    deleted = files[len(files) // 3]
    root = Path(tempfile.mkdtemp(prefix="compendium-outline-"))
    try:
        workspace = _workspace(root, manual, [f for f in files if f != added])
        first = asyncio.run(_compile_and_read(workspace))
        copy = workspace / "documents" / added.relative_to(manual)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(added, copy)
        grown = asyncio.run(_compile_and_read(workspace))
        (workspace / "documents" / deleted.relative_to(manual)).unlink()
        shrunk = asyncio.run(_compile_and_read(workspace))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    final = grown
    titled = [(n["title"], n["pages"][:4]) for n, _d in _nodes(final["tree"])]
    names = final["titles"]
    community_titled = [(n.title, [names.get(s, s) for s in n.all_subjects()[:4]])
                        for r in final["communities_only"] for n, _d in r.walk()]
    return {
        "manual": name, "documents": final["documents"], "files": len(files),
        "added": str(added.relative_to(manual)), "deleted": str(deleted.relative_to(manual)),
        "walls": [first["wall"], grown["wall"], shrunk["wall"]],
        "shape": shape(final["tree"], final["pages"]),
        "add": stability(first["roots"], grown["roots"]),
        "delete": stability(grown["roots"], shrunk["roots"]),
        "sample": sample_titles(titled),
        "community_sample": sample_titles(community_titled),
        "roots": [n["title"] for n in final["tree"]["children"]],
        "community_roots": [r.title for r in final["communities_only"]],
    }


RULE = (
    "A title names a real subject when a reader of the manual, shown only the title, would know "
    "what the pages under it are about and would find that subject named in the manual itself "
    "(a part, chapter or section name such as 'Server Configuration', a module or command name "
    "such as 'os' or 'CREATE TABLE' when the node is about that module or command, or a "
    "technical term such as 'Write-Ahead Log'). It fails when it is a bare parameter, value or "
    "code fragment that only one page is about ('new_owner', 'Table F'), a generic word with no "
    "subject ('Overview', 'Notes', 'Examples'), a numbering remnant, or two names joined."
)


def render(results: list[dict[str, Any]]) -> str:
    lines = ["# The outline on two public manuals", "",
             "Offline engine, built-in wiki template (it builds the `outline`), one process; other "
             "engineers' jobs shared the 2 cores. Reproduce: `.venv/bin/python -m benchmarks.outline`.",
             "", "| manual | documents | pages | nodes | within 3 levels | within 2 | largest fan-out | root topics | depth "
             "| titles naming a subject (outline) | (communities only) | add: pages moved | add: renames <20% "
             "| delete: pages moved | delete: renames <20% | compile s (first, add, delete) |",
             "|" + "---|" * 16]
    for r in results:
        s, a, d = r["shape"], r["add"], r["delete"]
        mine, _ = judged_share(r["manual"], "outline", r["sample"])
        theirs, _ = judged_share(r["manual"], "communities", r["community_sample"])
        lines.append(
            f"| {r['manual']} | {r['documents']} | {s['pages']} | {s['nodes']} | {s['within_3']:.1%} | {s['within_2']:.1%} | "
            f"{s['fan_out']} | {s['roots']} | {s['depth']} | {_pct(mine)} | {_pct(theirs)} | "
            f"{a['moved']} ({a['moved_share']:.2%}) | {a['renamed_small']} of {a['nodes_small_change']} | "
            f"{d['moved']} ({d['moved_share']:.2%}) | {d['renamed_small']} of {d['nodes_small_change']} | "
            f"{', '.join(f'{w:.0f}' for w in r['walls'])} |")
    lines += ["", "Targets: 100% within 3 levels; fan-out <= 50; 5-12 roots; >= 80% titles; <= 2% pages "
              "moved and 0 renames of nodes whose membership changed by less than 20%.", "",
              "## How titles were judged", "", RULE, "",
              "Each sample is 30 node titles drawn with a fixed seed; the verdicts are in "
              "`benchmarks/outline_judgement.yaml`, written by reading each title beside the first "
              "pages under it. The same was done for a map built from Leiden communities alone (the "
              "authors' folders, files and headings withheld), to judge which map reads better.", ""]
    for r in results:
        lines += [f"## {r['manual']}", "",
                  f"Held out then added: `{r['added']}`; then deleted: `{r['deleted']}`. "
                  f"Add: {r['add']['nodes_new']} nodes new, {r['add']['nodes_gone']} gone. "
                  f"Delete: {r['delete']['nodes_new']} new, {r['delete']['nodes_gone']} gone.", "",
                  "Root topics: " + "; ".join(r["roots"]), "",
                  "Root topics from communities alone: " + "; ".join(r["community_roots"]), ""]
        for kind, sample in (("outline", r["sample"]), ("communities", r["community_sample"])):
            verdicts = ((yaml.safe_load(JUDGEMENT.read_text(encoding="utf-8")) or {}) if JUDGEMENT.exists() else {})
            mine = (verdicts.get(r["manual"]) or {}).get(kind) or {}
            lines += [f"Sample ({kind}): " + "; ".join(
                f"{t} [{'yes' if mine.get(t) else ('no' if t in mine else '?')}]" for t, _p in sample), ""]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "unjudged" if x is None else f"{x:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manual", choices=("postgres", "python"), action="append")
    parser.add_argument("--limit", type=int, default=None, help="documents per manual, evenly spread")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dump", type=Path, help="also write the raw results as YAML here")
    parser.add_argument("--render", type=Path,
                        help="compile nothing: render the report from a --dump (after judging its new titles)")
    args = parser.parse_args()
    if args.render:
        results = yaml.safe_load(args.render.read_text(encoding="utf-8"))
    else:
        results = [run_manual(m, args.limit) for m in (args.manual or ["postgres", "python"])]
    text = render(results)
    print(text)
    for r in results:
        for kind in ("sample", "community_sample"):
            print(f"\n{r['manual']} {kind}:")
            for title, pages in r[kind]:
                print(f"  {title!r}: {pages}")
    if args.dump:
        args.dump.write_text(yaml.safe_dump(results, allow_unicode=True, sort_keys=False), encoding="utf-8")
    if not args.no_write:
        findings = kept_findings(REPORT)  # written by hand: kept
        REPORT.write_text(text + "\n" + (f"\n{findings}" if findings else ""), encoding="utf-8")


if __name__ == "__main__":
    main()
