"""The outline on public manuals of different toolchains: reach, balance, roots, placement judged
by reading, overview pages read, and stability after a one-document add and a one-document delete.

The manuals are those of benchmarks/manuals.py (the six, sqlite as a flat folder with one
contents page; postgres and python as regression checks), fetched once into a cache. Each is
compiled offline in a temporary workspace with the built-in wiki template (which builds the
`outline`): first without one held-out document, then with it (the add), then without another
(the delete). A manual past `--size` documents is a seeded sample of that many, with its
contents pages kept (a page named index/contents/toc, or one that links most others): a reader
compiles the whole manual, contents page included. Printed and written to
benchmarks/reports/outline.md, per manual:

- pages within 3 levels (a page listed in a root topic is at level 1), target 100%, and the
  deepest level;
- the largest node's share of all pages (its pages and its subtopics'), target <= 25%;
- the largest fan-out (children plus pages) of any node, target <= 50;
- the root topics, and those titled by a number, a letter or a heading from inside one document
  (target: none);
- pages in no node (target: none);
- a seeded sample of 30 nodes (title, parent, 5 members) and 20 overview pages, written to
  files under --samples for reading; their verdicts are in benchmarks/outline_judgement.yaml;
- pages moved after the add and after the delete, target <= 2% of pages.

    python -m benchmarks.outline [--manual NAME ...] [--size N] [--no-write] [--dump FILE] [--samples DIR]
    python -m benchmarks.outline --render FILE   # the report again from a dump, once its samples are judged
    python -m benchmarks.outline --screenshot gettext   # Chromium screenshot of that manual's site index
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from benchmarks.findings import kept_findings
from benchmarks.manuals import MANUALS, SIX, Manual

REPORT = Path(__file__).parent / "reports" / "outline.md"
JUDGEMENT = Path(__file__).parent / "outline_judgement.yaml"
SAMPLES = Path(tempfile.gettempdir()) / "compendium-outline-samples"
NODE_SAMPLE = 30
OVERVIEW_SAMPLE = 20
SEED = 14
SIZE = 0  # 0: the whole manual (a contents page lists pages a sample would miss)
DEFAULT = (*SIX, "sqlite")
BUILTIN = Path(__file__).parents[1] / "compendium" / "templates" / "builtin" / "wiki.yaml"
_CONTENTS_NAMES = re.compile(r"^(index|contents|toc|docs|sitemap|overview-summary|_index)\.", re.IGNORECASE)
_HREF = re.compile(rb'href="([^"#:]+\.html?)', re.IGNORECASE)


def manual_files(manual: Manual, size: int | None) -> tuple[Path, list[Path]]:
    """The manual's documents, or a seeded sample of `size` that keeps its contents pages: those
    named like one and the few pages that link most others."""
    root = manual.path()
    files = manual.documents()
    if size is None or len(files) <= size:
        return root, files
    links = {p: len(set(_HREF.findall(p.read_bytes()))) for p in files}
    linking = sorted(files, key=lambda p: (-links[p], str(p)))[:3]
    kept = {p for p in files if _CONTENTS_NAMES.match(p.name)} | set(linking)
    kept = set(sorted(kept, key=lambda p: (-links[p], str(p)))[: size // 10])
    rest = sorted(p for p in files if p not in kept)
    chosen = kept | set(random.Random(SEED).sample(rest, size - len(kept)))
    return root, sorted(chosen)


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
    from compendium.export.snapshot import load_snapshot
    from compendium.operations import compile_workspace, opened_store
    from compendium.outline import OutlineNode
    from compendium.outline.stored import published
    from compendium.settings import load_settings

    settings = load_settings(workspace, env={})
    started = time.perf_counter()
    await compile_workspace(settings)
    wall = time.perf_counter() - started
    async with opened_store(settings) as store:
        wiki = await load_snapshot(store)
    stored = wiki.outline or {"roots": []}
    roots = [OutlineNode.from_dict(d) for d in stored["roots"]]
    tree = published(stored, set(wiki.page_by_slug))
    pages = {p.slug: {"title": p.title, "markdown": p.markdown} for p in wiki.pages}
    for node, _depth, _parent in _nodes(tree):
        if node["slug"] in pages:
            pages[node["slug"]]["members"] = _members_shown(node, wiki)
    return {"tree": tree, "roots": roots, "wall": wall, "pages": pages, "documents": len(wiki.documents)}


def _members_shown(node: dict, wiki: Any) -> str:
    """The node's members as the site's page of its overview lists them under the page's text
    ("In <node>": subtopics and pages, each with its line), as Markdown for reading."""
    from compendium.export.outline_view import described_in, node_members

    overview = wiki.page_by_slug[node["slug"]].markdown
    shown = node_members(node, wiki, described_in(overview), shown=overview)
    lines = [f"- {title}{said}" for title, _slug, _c, said in shown["children"]]
    lines += [f"- {title}{said}" for _s, title, said in shown["pages"]]
    if shown["also"]:
        lines += ["Also: " + ", ".join(title for _s, title, _c in shown["also"])]
    return f"## In {node['title']} (as the site lists it)\n\n" + "\n".join(lines) + "\n" if lines else ""


def _nodes(tree: dict) -> list[tuple[dict, int, str]]:
    """Every node of a published tree with its level and its parent's title, in reading order."""
    out: list[tuple[dict, int, str]] = []
    stack = [(c, 1, "") for c in reversed(tree["children"])]
    while stack:
        node, depth, parent = stack.pop()
        out.append((node, depth, parent))
        stack.extend((c, depth + 1, node["title"]) for c in reversed(node["children"]))
    return out


def _listed(node: dict) -> set[str]:
    found = set(node["pages"]) | ({node["slug"]} if node["slug"] else set())
    for c in node["children"]:
        found |= _listed(c)
    return found


_NUMBER_OR_LETTER = re.compile(r"^[\W\d_]*[A-Za-z]?[\W\d_]*$")


def shape(tree: dict, roots: list, pages: dict[str, Any]) -> dict[str, Any]:
    from compendium.outline import page_depths

    depths = page_depths(tree)
    nodes = _nodes(tree)
    total = max(len(pages), 1)
    largest = max(nodes, key=lambda n: len(_listed(n[0])), default=None)
    bad_roots = [r.title for r in roots
                 if _NUMBER_OR_LETTER.match(r.title) or r.key.startswith("heading:")]
    return {
        "pages": len(pages),
        "nodes": len(nodes),
        "within_3": sum(1 for d in depths.values() if d <= 3) / total,
        "deepest": max(depths.values(), default=0),
        "unlisted": len(set(pages) - set(depths)),
        "largest": len(_listed(largest[0])) / total if largest else 0.0,
        "largest_title": largest[0]["title"] if largest else "",
        "fan_out": max((len(n["children"]) + len(n["pages"]) for n, _d, _p in nodes), default=0),
        "roots": len(tree["children"]),
        "bad_roots": bad_roots,
    }


def stability(before: list, after: list) -> dict[str, Any]:
    """Pages moved between nodes."""
    def index(roots: list) -> dict[str, tuple[str, str]]:
        return {s: (n.id, n.title) for r in roots for n, _d in r.walk() for s in n.subjects}

    where_b, where_a = index(before), index(after)
    kept = where_b.keys() & where_a.keys()
    moved = sorted(s for s in kept if where_b[s][0] != where_a[s][0])
    # Where the moved pages went, node to node (most pages first), to tell what moved them.
    flows = Counter((where_b[s][1], where_a[s][1]) for s in moved)
    return {"moved": len(moved), "moved_share": len(moved) / max(len(kept), 1),
            "flows": [f"{a} -> {b}: {n}" for (a, b), n in flows.most_common(5)]}


def node_sample(tree: dict, pages: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = _nodes(tree)
    rng = random.Random(SEED)
    picked = sorted(rng.sample(range(len(nodes)), min(NODE_SAMPLE, len(nodes))))
    out = []
    for i in picked:
        node, depth, parent = nodes[i]
        members = [pages[s]["title"] for s in node["pages"][:5] if s in pages]
        members += [c["title"] for c in node["children"][: 5 - len(members)]]
        out.append({"title": node["title"], "parent": parent, "level": depth, "members": members,
                    "size": len(_listed(node))})
    return out


def overview_sample(tree: dict, pages: dict[str, Any]) -> list[dict[str, Any]]:
    slugs = sorted({n["slug"] for n, _d, _p in _nodes(tree) if n["slug"] and n["slug"] in pages})
    picked = sorted(random.Random(SEED).sample(slugs, min(OVERVIEW_SAMPLE, len(slugs))))
    # The page as the site publishes it: its text, then its node's members, each with its line.
    return [{"slug": s, "title": pages[s]["title"],
             "markdown": pages[s]["markdown"].rstrip() + "\n\n" + pages[s].get("members", "")} for s in picked]


def write_samples(folder: Path, result: dict[str, Any]) -> None:
    """The samples as files to read: nodes.md (title, parent, members) and one file per overview page."""
    here = folder / result["manual"]
    shutil.rmtree(here, ignore_errors=True)
    (here / "overviews").mkdir(parents=True)
    lines = [f"# {result['manual']}: {len(result['nodes'])} sampled nodes", ""]
    for n in result["nodes"]:
        lines += [f"- **{n['title']}** (level {n['level']}, {n['size']} pages) under "
                  f"*{n['parent'] or '(root)'}*: " + "; ".join(n["members"])]
    lines += ["", "Roots: " + "; ".join(result["roots"])]
    (here / "nodes.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for o in result["overviews"]:
        (here / "overviews" / f"{o['slug']}.md").write_text(o["markdown"], encoding="utf-8")


def run_manual(name: str, size: int | None) -> dict[str, Any]:
    manual = MANUALS[name]
    source, files = manual_files(manual, size)
    # Held out and added back: a document from the middle of the manual; deleted: another.
    added = files[len(files) // 2]
    deleted = files[len(files) // 3]
    root = Path(tempfile.mkdtemp(prefix="compendium-outline-"))
    try:
        workspace = _workspace(root, source, [f for f in files if f != added])
        first = asyncio.run(_compile_and_read(workspace))
        copy = workspace / "documents" / added.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(added, copy)
        grown = asyncio.run(_compile_and_read(workspace))
        (workspace / "documents" / deleted.relative_to(source)).unlink()
        shrunk = asyncio.run(_compile_and_read(workspace))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    final = grown
    return {
        "manual": name, "counts": manual.counts, "documents": final["documents"], "files": len(files),
        "added": str(added.relative_to(source)), "deleted": str(deleted.relative_to(source)),
        "walls": [first["wall"], grown["wall"], shrunk["wall"]],
        "shape": shape(final["tree"], final["roots"], final["pages"]),
        "add": stability(first["roots"], grown["roots"]),
        "delete": stability(grown["roots"], shrunk["roots"]),
        "roots": [n["title"] for n in final["tree"]["children"]],
        "nodes": node_sample(final["tree"], final["pages"]),
        "overviews": overview_sample(final["tree"], final["pages"]),
    }


CHROMIUM = "/usr/bin/chromium"


def screenshot(name: str, out: Path) -> Path:
    """The site index of a manual, compiled whole and exported as a static site, as Chromium
    shows it (a full-page PNG at `out`). Needs Debian's chromium and the playwright package."""
    from playwright.sync_api import sync_playwright

    from compendium.operations import export_workspace
    from compendium.settings import load_settings

    manual = MANUALS[name]
    source, files = manual_files(manual, None)
    root = Path(tempfile.mkdtemp(prefix="compendium-outline-shot-"))
    try:
        workspace = _workspace(root, source, files)
        asyncio.run(_compile_and_read(workspace))
        site = root / "site"
        asyncio.run(export_workspace(load_settings(workspace, env={}), "site", site))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto((site / "index.html").as_uri())
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), full_page=True)
            finally:
                browser.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def _verdicts(manual: str, kind: str) -> dict[str, Any]:
    data = (yaml.safe_load(JUDGEMENT.read_text(encoding="utf-8")) or {}) if JUDGEMENT.exists() else {}
    return ((data.get(manual) or {}).get(kind)) or {}


def judged(manual: str, nodes: list[dict[str, Any]], overviews: list[dict[str, Any]]) -> dict[str, Any]:
    """Shares of the samples judged: nodes naming a real subject, nodes placed sensibly, overview
    pages publishable (None where a sample is unjudged)."""
    node_v = _verdicts(manual, "nodes")
    page_v = _verdicts(manual, "overviews")
    keyed = [f"{n['title']} < {n['parent'] or '(root)'}" for n in nodes]
    # A node's verdict says "subject", "placed", both or "neither"; a comment may follow a "#".
    nodes_judged = [str(node_v[k]).split("#")[0].split() for k in keyed if k in node_v]
    pages = [str(page_v[o["slug"]]).split("#")[0].strip() for o in overviews if o["slug"] in page_v]
    return {
        "subject": sum("subject" in v for v in nodes_judged) / len(nodes_judged) if nodes_judged else None,
        "placed": sum("placed" in v for v in nodes_judged) / len(nodes_judged) if nodes_judged else None,
        "publishable": sum(v == "publishable" for v in pages) / len(pages) if pages else None,
        "judged": (len(nodes_judged), len(pages)),
    }


RULE = (
    "A node names a real subject when its title is a phrase a reader of the manual would use (a "
    "section title of the authors, a kind such as 'Commands', 'Guides', 'Release notes', a module "
    "or command name when the node is about it); it fails on a bare parameter, value or code "
    "fragment, a generic word ('Overview', 'Notes'), a number, a letter, or a heading from inside "
    "one document over pages that are not about it; a node cut from a part and titled by a range "
    "names a subject when the range names the authors' sections it holds, or runs within one list "
    "the authors gave no sections ('Core Settings (ABSOLUTE_URL_OVERRIDES – DEBUG)'), and fails when "
    "its ends are member names across the authors' sections ('Plugins (on_pre_template – "
    "entry_points)' over Template Events, Page Events and Entry Point). It is placed sensibly when its parent is the "
    "group a reader would look in for it and its five members shown fit its title. An overview "
    "page is read as the site publishes it (its text, then its node's members as the page lists them) "
    "and is publishable when its first sentence says what the group is (from the sources) or, where "
    "no passage of the sources says it, the page opens on its members under its title (never on one "
    "member's stray sentence), its members belong together under its title, and each member is "
    "listed with a line saying what it is (benchmarks/judging_rules.md); a one-page node's overview "
    "is judged as that page. Strictly: as a knowledge manager would post it unedited."
)


def render(results: list[dict[str, Any]]) -> str:
    lines = ["# The outline on public manuals", "",
             "Offline engine, built-in wiki template (it builds the `outline`), one process; other "
             "engineers' jobs shared the 2 cores. Reproduce: `.venv/bin/python -m benchmarks.outline`. "
             "postgres and python are regression checks: their figures count toward no target.", "",
             "| manual | documents | pages | nodes | within 3 levels | deepest | largest node | largest fan-out "
             "| roots | bad roots | pages in no node | nodes naming a subject | nodes placed sensibly "
             "| overviews publishable | add: pages moved | delete: pages moved | compile s (first, add, delete) |",
             "|" + "---|" * 17]
    for r in results:
        s, a, d = r["shape"], r["add"], r["delete"]
        j = judged(r["manual"], r["nodes"], r["overviews"])
        lines.append(
            f"| {r['manual']} | {r['documents']} | {s['pages']} | {s['nodes']} | {s['within_3']:.1%} | {s['deepest']} | "
            f"{s['largest']:.0%} | {s['fan_out']} | {s['roots']} | {len(s['bad_roots'])} | {s['unlisted']} | "
            f"{_pct(j['subject'])} | {_pct(j['placed'])} | {_pct(j['publishable'])} | "
            f"{a['moved']} ({a['moved_share']:.2%}) | {d['moved']} ({d['moved_share']:.2%}) | "
            f"{', '.join(f'{w:.0f}' for w in r['walls'])} |")
    lines += ["", "Targets: 100% within 3 levels; largest node <= 25% of pages; fan-out <= 50; no root titled by "
              "a number, a letter or a heading from inside one document; no page in no node; >= 90% of 30 "
              "sampled nodes naming a subject and >= 85% placed sensibly; >= 60% of 20 overview pages "
              "publishable; <= 2% of pages moved by an add or a delete.", "",
              "## How samples were judged", "", RULE, "",
              "The samples are drawn with a fixed seed and written to files for reading (`--samples`); the "
              "verdicts are in `benchmarks/outline_judgement.yaml`.", ""]
    for r in results:
        s = r["shape"]
        lines += [f"## {r['manual']}", "",
                  f"{r['files']} documents compiled. Held out then added: `{r['added']}`; then deleted: "
                  f"`{r['deleted']}`. Largest node: {s['largest_title']} ({s['largest']:.0%}).", "",
                  "Roots: " + "; ".join(r["roots"]), ""]
        if s["bad_roots"]:
            lines += ["Roots titled by a number, a letter or an inner heading: " + "; ".join(s["bad_roots"]), ""]
        for step in ("add", "delete"):
            if r[step].get("flows"):
                lines += [f"Pages moved by the {step}, node to node: " + "; ".join(r[step]["flows"]), ""]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "unjudged" if x is None else f"{x:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manual", choices=sorted(MANUALS), action="append")
    parser.add_argument("--size", type=int, default=SIZE, help="documents per manual (a seeded sample); 0: all")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dump", type=Path, help="also write the raw results as YAML here")
    parser.add_argument("--samples", type=Path, default=SAMPLES, help="folder for the sampled nodes and overviews")
    parser.add_argument("--render", type=Path,
                        help="compile nothing: render the report from a --dump (after judging its samples)")
    parser.add_argument("--screenshot", choices=sorted(MANUALS),
                        help="compile nothing else: a Chromium screenshot of this manual's site index, "
                             "written to benchmarks/reports/outline-index-<manual>.png")
    args = parser.parse_args()
    if args.screenshot:
        print(screenshot(args.screenshot, REPORT.parent / f"outline-index-{args.screenshot}.png"))
        return
    if args.render:
        results = yaml.safe_load(args.render.read_text(encoding="utf-8"))
    else:
        results = []
        for m in args.manual or DEFAULT:
            results.append(run_manual(m, args.size or None))
            write_samples(args.samples, results[-1])
            print(f"{m}: {results[-1]['shape']}  add {results[-1]['add']}  delete {results[-1]['delete']}", flush=True)
    text = render(results)
    print(text)
    if args.dump:
        args.dump.write_text(yaml.safe_dump(results, allow_unicode=True, sort_keys=False), encoding="utf-8")
    if not args.no_write:
        findings = kept_findings(REPORT)  # written by hand: kept
        REPORT.write_text(text + "\n" + (f"\n{findings}" if findings else ""), encoding="utf-8")


if __name__ == "__main__":
    main()
