"""The package's layers, read from its imports: arrows that must not exist, and no circles."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "compendium"
UI_JS = ROOT / PACKAGE / "api" / "static" / "js"

# (importer prefix, imported prefix, why): no module under the first may import the second.
FORBIDDEN = [
    ("compendium.phases", "compendium.compiler", "phases see compendium.pipeline; the compiler runs them"),
    ("compendium.engines", "compendium.storage", "engines keep replies in the ResponseCache they are given"),
    ("compendium.distributed", "compendium.phases", "tasks carry engine calls; the phases run in the compile"),
    ("compendium.distributed", "compendium.compiler", "task workers answer engine calls; they run no compile"),
    ("compendium.outline", "compendium.phases", "the outline reads records, plans and graphs, never phase internals"),
    ("compendium.engines", "compendium.outline", "engines answer one request; how groups are titled is compendium.titles"),
    ("compendium.export", "compendium.phases", "exports read stored records"),
    ("compendium.retrieval", "compendium.phases", "retrieval reads a compiled knowledge base"),
    ("compendium.graph", "compendium.phases", "graph algorithms sit below everything that uses them"),
    ("compendium.graph", "compendium.outline", "graph algorithms sit below everything that uses them"),
    ("compendium.storage", "compendium.phases", "records, plans and slugs sit below the phases"),
    ("compendium.ingest", "compendium.phases", "readers and chunking sit below the ingest phase that calls them"),
    ("compendium.ingest", "compendium.storage", "readers turn bytes into blocks; the ingest phase stores them"),
    *[("compendium.storage", above, "the store is the floor: records know nothing that reads them")
      for above in ("compendium.outline", "compendium.export", "compendium.retrieval", "compendium.pipeline",
                    "compendium.compiler", "compendium.distributed", "compendium.graph")],
]
# Only these run the phases or read their internals; everything else (engines, pipeline,
# templates, the records, graph, outline, export, retrieval, distributed, the small shared
# modules at the top) sits below them.
PHASE_USERS = ("compendium.phases", "compendium.compiler", "compendium.operations", "compendium.cli")
# (package, what alone it may import of ours, why): a floor that imports almost nothing.
ONLY = [
    ("compendium.graph", ("compendium.graph", "compendium.fingerprint"),
     "graph algorithms take plain nodes and weights: no store, engine or phase"),
]
FRONT_ENDS = ("compendium.cli", "compendium.api")  # the core never imports these
# (library, the one part that may import it): the front ends stay thin, their frameworks stay in them.
FRAMEWORKS = [
    ("argparse", "compendium.cli"), ("rich", "compendium.cli"),
    ("fastapi", "compendium.api"), ("starlette", "compendium.api"), ("uvicorn", "compendium.api"),
]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    where: str  # file:line


def _modules(root: Path, package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def python_imports(root: Path, package: str) -> list[Import]:
    """Every import of one of the package's modules, wherever it sits (module level, inside a
    function, under TYPE_CHECKING). `from p import n` names module p.n when n is a module, else
    p itself. The parent packages an import runs on the way are not counted as imported."""
    modules = _modules(root, package)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    imports = []
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [known(a.name) for a in node.names if a.name.split(".")[0] == package]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                if source.split(".")[0] != package:
                    continue
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else known(source)
                           for a in node.names]
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            imports += [Import(name, t, where) for t in targets if t and t != name]
    return imports


def library_imports(root: Path, package: str) -> list[Import]:
    """Every import of a library from outside the package (`import a.b`, `from a.b import c`:
    library a), wherever it sits in a module."""
    imports = []
    for name, path in _modules(root, package).items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            imports += [Import(name, top, where) for top in tops if top != package]
    return imports


def frameworks_outside_their_front_end(imports: Iterable[Import]) -> list[str]:
    return [f"{i.where}: {i.importer} imports {i.imported} (only {owner} may)"
            for i in imports for library, owner in FRAMEWORKS
            if i.imported == library and not _under(i.importer, owner)]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def forbidden_arrows(imports: Iterable[Import]) -> list[str]:
    bad = []
    for i in imports:
        reasons = [why for importer, imported, why in FORBIDDEN
                   if _under(i.importer, importer) and _under(i.imported, imported)]
        reasons += [why for package, allowed, why in ONLY
                    if _under(i.importer, package) and not any(_under(i.imported, a) for a in allowed)]
        if (not reasons and _under(i.imported, "compendium.phases")
                and not any(_under(i.importer, u) for u in PHASE_USERS)):
            reasons.append("only the compiler, operations and the CLI use the phases;"
                           " move what is shared below them")
        bad += [f"{i.where}: {i.importer} imports {i.imported} ({why})" for why in reasons]
        front_end = any(_under(i.importer, f) for f in FRONT_ENDS)
        if not front_end and any(_under(i.imported, f) for f in FRONT_ENDS):
            bad.append(f"{i.where}: {i.importer} imports {i.imported} (the core never imports cli/api)")
    return bad


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a longer circle
    (strongly connected components of more than one module, or a module importing itself)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in sorted(graph):  # Tarjan's algorithm, iterative (no recursion limit)
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph[node]:
                    found.append(sorted(group))
    return found


_STATIC = re.compile(r"""^\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']""", re.M)
_BARE = re.compile(r"""^\s*import\s*["']([^"']+)["']""", re.M)
_DYNAMIC = re.compile(r"""\bimport\(\s*["']([^"']+)["']\s*\)""")


def js_imports(folder: Path) -> list[tuple[str, str]]:
    """(importer, imported) for every relative import between the UI's ES modules: static
    `import … from`, `export … from`, bare `import "…"` and dynamic `import("…")`."""
    edges = []
    for path in sorted(folder.rglob("*.js")):
        text = path.read_text()
        for pattern in (_STATIC, _BARE, _DYNAMIC):
            for spec in pattern.findall(text):
                if spec.startswith("."):
                    target = (path.parent / spec).resolve()
                    edges.append((str(path.relative_to(folder)), str(target.relative_to(folder))))
    return edges


# ---- the rules, on the package --------------------------------------------------------------


def test_no_layer_imports_against_the_direction_of_the_house():
    imports = python_imports(ROOT, PACKAGE)
    assert len({i.importer for i in imports}) > 50  # the walk really read the package
    bad = forbidden_arrows(imports)
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_only_the_cli_parses_arguments_and_only_the_api_serves_http():
    imports = library_imports(ROOT, PACKAGE)
    assert {"argparse", "fastapi"} <= {i.imported for i in imports}  # the walk found both front ends
    bad = frameworks_outside_their_front_end(imports)
    assert not bad, "frameworks outside their front end:\n" + "\n".join(bad)


def test_no_python_module_imports_itself_back_around_a_circle():
    imports = python_imports(ROOT, PACKAGE)
    found = cycles((i.importer, i.imported) for i in imports)
    shown = [f"{i.where}: {i.importer} -> {i.imported}" for group in found for i in imports
             if i.importer in group and i.imported in group]
    assert not found, "modules that import each other (move what both need below them):\n" + "\n".join(shown)


def test_no_ui_module_imports_itself_back_around_a_circle():
    edges = js_imports(UI_JS)
    assert ("app.js", "router.js") in edges and ("app.js", "wiki.js") in edges  # static and dynamic
    found = cycles(edges)
    assert not found, f"UI modules that import each other (share through router.js/state.js): {found}"


# ---- the checks, on a small package built to break them -------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checks_find_forbidden_arrows_and_circles(tmp_path):
    _write(tmp_path, {
        "compendium/__init__.py": "",
        "compendium/cli.py": "from .compiler import jobs\n",
        "compendium/operations.py": "def run():\n    from . import cli\n",
        "compendium/phases/__init__.py": "",
        "compendium/phases/map.py": "from ..compiler.jobs import enqueue\nfrom ..pipeline import context\n",
        "compendium/compiler/__init__.py": "",
        "compendium/compiler/jobs.py": "def enqueue():\n    from .schedules import fire\n",
        "compendium/compiler/schedules.py": "from compendium.compiler.jobs import enqueue\n",
        "compendium/pipeline/__init__.py": "",
        "compendium/pipeline/context.py": "",
        "compendium/engines/__init__.py": "",
        "compendium/engines/client.py": "import compendium.storage.base\n",
        "compendium/storage/__init__.py": "",
        "compendium/storage/base.py": "",
    })
    imports = python_imports(tmp_path, PACKAGE)
    assert forbidden_arrows(imports) == [
        "compendium/engines/client.py:1: compendium.engines.client imports compendium.storage.base"
        " (engines keep replies in the ResponseCache they are given)",
        "compendium/operations.py:2: compendium.operations imports compendium.cli"
        " (the core never imports cli/api)",
        "compendium/phases/map.py:1: compendium.phases.map imports compendium.compiler.jobs"
        " (phases see compendium.pipeline; the compiler runs them)",
    ]
    assert ("compendium.phases.map", "compendium.pipeline.context") in {
        (i.importer, i.imported) for i in imports
    }
    assert cycles((i.importer, i.imported) for i in imports) == [
        ["compendium.compiler.jobs", "compendium.compiler.schedules"]
    ]


def test_the_checks_keep_the_phases_above_what_they_use(tmp_path):
    _write(tmp_path, {
        "compendium/__init__.py": "",
        "compendium/operations.py": "from .phases import map\n",  # allowed: it runs them
        "compendium/compiler/__init__.py": "",
        "compendium/compiler/run.py": "from ..phases.map import run\n",  # allowed
        "compendium/phases/__init__.py": "",
        "compendium/phases/map.py": "from ..graph import communities\nfrom ..outline import build\n",
        "compendium/engines/__init__.py": "",
        "compendium/engines/offline.py": "from ..phases.map import run\n",
        "compendium/outline/__init__.py": "",
        "compendium/outline/build.py": "from ..phases.map import run\nfrom ..graph.communities import leiden\n",
        "compendium/export/__init__.py": "",
        "compendium/export/vault.py": "from ..phases import map\nfrom ..outline import build\n",
        "compendium/retrieval/__init__.py": "from ..phases import map\n",
        "compendium/distributed/__init__.py": "from compendium.phases.map import run\n",
        "compendium/graph/__init__.py": "",
        "compendium/graph/communities.py": (
            "from ..fingerprint import fingerprint\nfrom ..outline import build\nfrom ..storage import records\n"
        ),
        "compendium/fingerprint.py": "",
        "compendium/storage/__init__.py": "",
        "compendium/storage/records.py": "from ..outline.build import tree\nfrom ..engines import offline\n",
        "compendium/words.py": "from .phases.map import run\n",
    })
    found = forbidden_arrows(python_imports(tmp_path, PACKAGE))
    assert [line.split(" (")[0] for line in found] == [
        "compendium/distributed/__init__.py:1: compendium.distributed imports compendium.phases.map",
        "compendium/engines/offline.py:1: compendium.engines.offline imports compendium.phases.map",
        "compendium/export/vault.py:1: compendium.export.vault imports compendium.phases.map",
        "compendium/graph/communities.py:2: compendium.graph.communities imports compendium.outline.build",
        "compendium/graph/communities.py:2: compendium.graph.communities imports compendium.outline.build",
        "compendium/graph/communities.py:3: compendium.graph.communities imports compendium.storage.records",
        "compendium/outline/build.py:1: compendium.outline.build imports compendium.phases.map",
        "compendium/retrieval/__init__.py:1: compendium.retrieval imports compendium.phases.map",
        "compendium/storage/records.py:1: compendium.storage.records imports compendium.outline.build",
        "compendium/words.py:1: compendium.words imports compendium.phases.map",
    ]
    assert "only the compiler, operations and the CLI use the phases" in found[1]
    assert "graph algorithms take plain nodes and weights" in found[4]  # the floor, besides the outline rule


def test_the_check_finds_a_framework_outside_its_front_end(tmp_path):
    _write(tmp_path, {
        "compendium/__init__.py": "",
        "compendium/cli/__init__.py": "import argparse\nfrom rich.console import Console\n",
        "compendium/api/app.py": "from fastapi import FastAPI\n",
        "compendium/operations.py": "import os, argparse\n\ndef serve():\n    import uvicorn.main\n",
        "compendium/export/site.py": "from starlette.responses import HTMLResponse\nfrom . import vault\n",
        "compendium/export/vault.py": "",
    })
    assert frameworks_outside_their_front_end(library_imports(tmp_path, PACKAGE)) == [
        "compendium/export/site.py:1: compendium.export.site imports starlette (only compendium.api may)",
        "compendium/operations.py:1: compendium.operations imports argparse (only compendium.cli may)",
        "compendium/operations.py:4: compendium.operations imports uvicorn (only compendium.api may)",
    ]


def test_the_js_check_finds_a_view_importing_the_shell_back(tmp_path):
    _write(tmp_path, {
        "app.js": 'import { h } from "./dom.js";\nconst v = () => import("./views/wiki.js");\n',
        "dom.js": "export function h() {}\n",
        "views/wiki.js": 'import {\n  go,\n} from "../app.js";\nimport "../dom.js";\n',
    })
    edges = js_imports(tmp_path)
    assert sorted(edges) == [
        ("app.js", "dom.js"), ("app.js", "views/wiki.js"),
        ("views/wiki.js", "app.js"), ("views/wiki.js", "dom.js"),
    ]
    assert cycles(edges) == [["app.js", "views/wiki.js"]]
