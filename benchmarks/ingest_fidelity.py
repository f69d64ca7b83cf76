"""How faithfully ingest reads public documentation sets, checked against an independent reading.

Corpora come from Debian -doc packages, fetched with `apt-get download` and unpacked with
`dpkg-deb -x` into build/corpora (git-ignored) on first use:

- the PostgreSQL 15 manual, HTML (`postgresql-doc-15`, DocBook output, 1,169 pages);
- the Python 3.11 documentation, HTML (`python3.11-doc`, Sphinx output);
- the same Python documentation's reST sources (`_sources/**/*.rst.txt`, a Sphinx project).

For each chunk, its first locatable block is looked up in an independent reading of the same
file: lxml's tree and the document order of its <h1>-<h6> for HTML (with each corpus's chrome
named explicitly by XPath, not by the reader's rules), docutils' doctree section titles for
reST. Printed and written to benchmarks/reports/ingest_fidelity.md:

- heading paths: share of located chunks whose heading path is the independent one (>= 99.5%);
- markup remnants: share of prose sentences with reST, HTML or Markdown markup left (0);
- glued structure: share of prose sentences holding two table cells, a code line or two list
  items of the independent reading (<= 0.5%);
- MB/s of each reader (reading only, one process).

    python -m benchmarks.ingest_fidelity [--limit N] [--no-write]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.offline_corpus import debian_doc

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "corpora"
REPORT = Path(__file__).parent / "reports" / "ingest_fidelity.md"
PG_HTML = "usr/share/doc/postgresql-doc-15/html"
PY_HTML = "usr/share/doc/python3.11/html"

_SPACE = re.compile(r"\s+")
_MARKUP = [
    ("reST role", re.compile(r"(?<![\w`]):[a-z][\w:+.-]*:`")),
    ("reST literal ``", re.compile(r"``")),
    ("reST directive", re.compile(r"(?:^|\s)\.\. [\w:-]+::")),
    ("reST substitution", re.compile(r"(?<![\w|])\|[A-Za-z][\w -]*\|(?![\w|])")),
    ("reST link `_", re.compile(r"`_{1,2}(?!\w)")),
    ("heading underline", re.compile(r"([=~^#*+-])\1{3,}")),
    ("HTML tag", re.compile(r"</?(?:a|b|i|u|em|strong|code|span|div|p|br|hr|li|ul|ol|dl|dt|dd|table|tr|td|th|pre|img"
                            r"|h[1-6]|sup|sub|tt|kbd|var|samp|blockquote|section|nav|script|style)\b[^<>]*>", re.I)),
    ("HTML entity", re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{2,5});")),
    ("pilcrow", re.compile(r"¶")),
    ("Markdown fence", re.compile(r"```")),
    ("Markdown heading", re.compile(r"^#{1,6} ")),
    ("table pipe row", re.compile(r"^\|.*\|$")),
]


def fetch(package: str) -> Path:
    """The unpacked tree of a Debian package under build/corpora, downloaded on first use."""
    return debian_doc(package, Path(), BUILD)


def norm(text: str) -> str:
    return _SPACE.sub(" ", text.replace("¶", "")).strip()


def block_key(kind: str, text: str) -> str:
    """A block's words as the independent reading sees them (no markers, fences or backticks)."""
    if kind == "code":  # its first line of code (a piece of a long block may start anywhere)
        lines = [line for line in text.split("\n") if line.strip() and not line.startswith("```")]
        text = lines[0] if lines else ""
    elif kind == "table":
        first = text.split("\n", 1)[0].strip("| ")
        text = first.split(" | ")[0]
    elif kind == "item":
        text = re.sub(r"^\s*(?:-|\d+\.)\s", "", text)
    elif kind == "quote":
        text = text[2:]
    return norm(text.replace("`", "")).replace("\\|", "|")


@dataclass
class Reading:
    """The independent reading of one file: text -> heading paths, and structure to spot."""

    paths: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)
    glue: set[str] = field(default_factory=set)  # strings a prose sentence must never contain

    def add(self, text: str, path: tuple[str, ...]) -> None:
        text = norm(text)
        if text:
            self.paths.setdefault(text[:48], set()).add(path)

    def lookup(self, text: str) -> set[tuple[str, ...]] | None:
        return self.paths.get(text[:48])


# -- independent readings -------------------------------------------------------------------

PG_CHROME = (
    "//head|//script|//style|//div[@class='navheader']|//div[@class='navfooter']"
    "|//div[contains(concat(' ', @class, ' '), ' toc ')]"
)
PY_CHROME = (
    "//head|//script|//style|//div[contains(@class, 'sphinxsidebar')]|//div[@class='related']"
    "|//div[@class='footer']|//a[@class='headerlink']|//nav|//div[@class='mobile-nav']"
    "|//div[contains(@class, 'switcher')]|//div[@class='inline-search']|//form"
)
_LEAVES = {"p", "li", "dd", "dt", "pre", "td", "th", "blockquote", "caption"}


def html_reading(path: Path, chrome: str) -> Reading:
    import lxml.html
    from lxml import etree

    parser = lxml.html.HTMLParser(huge_tree=True)
    root = lxml.html.parse(str(path), parser).getroot()
    for node in root.xpath(chrome):
        node.drop_tree()
    reading = Reading()
    stack: list[tuple[int, str]] = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.lower()
        if re.fullmatch(r"h[1-6]", tag):
            level = int(tag[1])
            while stack and stack[-1][0] >= level:
                stack.pop()
            title = norm(el.text_content())
            if title:
                stack.append((level, title))
                reading.add(title, tuple(h for _, h in stack))
        elif tag in _LEAVES:
            path_ = tuple(h for _, h in stack)
            if tag in ("td", "th"):
                reading.add(el.text_content(), path_)
            elif tag == "pre":
                for line in el.text_content().split("\n"):
                    reading.add(line, path_)
                _code_glue(reading, el.text_content())
            else:
                reading.add(_own_text(el, etree), path_)
        if tag == "tr":
            cells = [norm(c.text_content()) for c in el if isinstance(c.tag, str) and c.tag in ("td", "th")]
            _pair_glue(reading, cells)
        elif tag in ("ul", "ol"):
            items = [norm(_own_text(c, etree)) for c in el if isinstance(c.tag, str) and c.tag == "li"]
            _pair_glue(reading, items)
    return reading


def _pair_glue(reading: Reading, texts: list[str]) -> None:
    """Neighbouring table cells or list items: no prose sentence may hold two of them."""
    for a, b in itertools.pairwise(texts):
        if min(len(a), len(b)) >= 4 and len(a) + len(b) >= 16:
            reading.glue.add(f"{a} {b}")


def _code_glue(reading: Reading, code: str) -> None:
    """A code block's statement-like lines: none may turn up inside a prose sentence."""
    for line in code.strip().split("\n")[:3]:
        line = norm(line)
        if len(line) >= 20 and len(line.split()) >= 3 and re.search(r"[(){};=]", line):
            reading.glue.add(line)


def _own_text(el: Any, etree: Any) -> str:
    """An element's text up to its first nested block (a list item's own words)."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and child.tag in ("ul", "ol", "dl", "p", "pre", "table", "div", "blockquote"):
            if norm("".join(parts)):
                break
            return norm(child.text_content()) if child.tag == "p" else norm("".join(parts))
        parts.append(etree.tostring(child, method="text", encoding="unicode", with_tail=True))
    return "".join(parts)


def rest_reading(path: Path) -> Reading:
    from docutils import nodes
    from docutils.core import publish_doctree

    from compendium.ingest.readers.sphinx import register_unknown

    source = path.read_text(encoding="utf-8", errors="replace")
    overrides = {"report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False,
                 "doctitle_xform": False, "sectsubtitle_xform": False, "warning_stream": False,
                 "syntax_highlight": "none"}
    # Sphinx's names need the same stand-ins, or docutils would drop those blocks here.
    from docutils.frontend import get_default_settings
    from docutils.languages import get_language
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    probe = new_document(str(path), get_default_settings(Parser))
    register_unknown(source, get_language("en", probe.reporter), probe)
    tree = publish_doctree(source, source_path=str(path), settings_overrides=overrides)
    reading = Reading()
    for node in tree.findall(nodes.Element):
        sections = [a for a in _ancestors(node) if isinstance(a, nodes.section)]
        path_ = tuple(norm(s[0].astext()) for s in reversed(sections) if s.children and isinstance(s[0], nodes.title))
        if isinstance(node, nodes.title) and isinstance(node.parent, nodes.section):
            reading.add(node.astext(), path_)
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            for line in node.astext().split("\n"):
                reading.add(line, path_)
            _code_glue(reading, node.astext())
        elif isinstance(node, nodes.paragraph | nodes.term | nodes.field_name | nodes.entry):
            reading.add(node.astext(), path_)
        elif isinstance(node, nodes.row):
            cells = [norm(e.astext()) for e in node.children]
            _pair_glue(reading, cells)
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            items = [norm(i[0].astext()) if i.children else "" for i in node.children]
            _pair_glue(reading, items)
    return reading


def _ancestors(node: Any) -> Iterable[Any]:
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


# -- measuring ------------------------------------------------------------------------------


@dataclass
class Figures:
    name: str
    reader: str
    files: int = 0
    failed: list[str] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    chunks: int = 0
    located: int = 0
    matched: int = 0
    sentences: int = 0
    remnants: int = 0
    glued: int = 0
    mismatches: list[str] = field(default_factory=list)
    remnant_examples: list[str] = field(default_factory=list)
    glue_examples: list[str] = field(default_factory=list)
    remnant_kinds: dict[str, int] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)  # what read_document took each file for

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds else 0.0


def measure(name: str, reader: str, files: list[Path], read: Callable[[Path], Any],
            independent: Callable[[Path], Reading]) -> Figures:
    import compendium.ingest.readers.html
    import compendium.ingest.readers.rest  # noqa: F401 - imports are not reading time
    from compendium.engines.offline.sentences import sentences_of
    from compendium.ingest.chunking import chunk_document
    from compendium.templates.schema import Template

    chunking = Template(name="bench").chunking
    fig = Figures(name, reader)
    for path in files:
        fig.files += 1
        size = path.stat().st_size
        # CPU time: the machine is shared, and wall time would measure the neighbours.
        started = time.process_time()
        try:
            doc = read(path)
        except Exception as exc:  # a failed document is a figure of its own, not a stop
            fig.failed.append(f"{path.name}: {str(exc)[:120]}")
            continue
        fig.seconds += time.process_time() - started
        fig.bytes += size
        fig.formats[doc.format] = fig.formats.get(doc.format, 0) + 1
        chunks = chunk_document(doc, max_tokens=chunking.max_tokens, overlap_tokens=chunking.overlap_tokens)
        reading = independent(path)
        for chunk in chunks:
            fig.chunks += 1
            _check_path(fig, chunk, reading, path)
            blocks = [list(b) for b in chunk.blocks]
            for sentence in sentences_of(chunk.text, blocks):
                fig.sentences += 1
                _check_sentence(fig, sentence.text, reading)
    return fig


def _check_path(fig: Figures, chunk: Any, reading: Reading, path: Path) -> None:
    """The chunk's first block that the independent reading also holds decides."""
    body = [(k, s, e) for k, s, e in chunk.blocks if k != "heading"]
    heads = [(k, s, e) for k, s, e in chunk.blocks if k == "heading"]
    for kind, start, end in [*body[:3], *heads[-1:]]:
        found = reading.lookup(block_key(kind, chunk.text[start:end]))
        if found is None:
            continue
        fig.located += 1
        if tuple(norm(h) for h in chunk.heading_path) in found:
            fig.matched += 1
        else:
            _mismatch(fig, path, chunk, found)
        return


def _mismatch(fig: Figures, path: Path, chunk: Any, found: set[tuple[str, ...]]) -> None:
    if len(fig.mismatches) < 8:
        fig.mismatches.append(
            f"{path.name}: chunk {' › '.join(chunk.heading_path)!r}; independent {' › '.join(sorted(found)[0])!r}"
        )


_INLINE_CODE = re.compile(r"`[^`]+`")


def _check_sentence(fig: Figures, text: str, reading: Reading) -> None:
    # Inline code in single backticks is the model's convention for authored code in prose.
    prose = _INLINE_CODE.sub("C", text)
    for kind, pattern in _MARKUP:
        if pattern.search(prose):
            fig.remnants += 1
            fig.remnant_kinds[kind] = fig.remnant_kinds.get(kind, 0) + 1
            if len(fig.remnant_examples) < 6:
                fig.remnant_examples.append(f"[{kind}] {text[:160]}")
            break
    plain = norm(prose)
    if len(plain) > 24 and any(g in plain for g in reading.glue if len(g) < len(plain) + 1):
        fig.glued += 1
        if len(fig.glue_examples) < 6:
            fig.glue_examples.append(plain[:160])


def corpora(limit: int | None) -> list[tuple[str, str, list[Path], Callable[[Path], Any], Callable[[Path], Reading]]]:
    from compendium.ingest.readers import read_document

    pg = sorted((fetch("postgresql-doc-15") / PG_HTML).glob("*.html"))
    py_root = fetch("python3.11-doc") / PY_HTML
    skip = ("genindex", "search.html", "py-modindex", "contents.html")
    py_html = sorted(p for p in py_root.rglob("*.html") if "_sources" not in p.parts
                     and "_static" not in p.parts and not p.name.startswith(skip))
    py_rest = sorted((py_root / "_sources").rglob("*.rst.txt"))

    cut = (lambda xs: xs[:limit]) if limit else (lambda xs: xs)
    return [
        ("PostgreSQL 15 manual (DocBook HTML)", "html", cut(pg), read_document, lambda p: html_reading(p, PG_CHROME)),
        ("Python 3.11 docs (Sphinx HTML)", "html", cut(py_html), read_document, lambda p: html_reading(p, PY_CHROME)),
        # .rst.txt files go through read_document as a user's .txt would: reST when they parse as reST.
        ("Python 3.11 docs (reST sources, .rst.txt)", "rest", cut(py_rest), read_document, rest_reading),
    ]


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.2f}%" if b else "n/a"


def report(figures: list[Figures]) -> str:
    lines = [
        "# Ingest fidelity on public documentation sets",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, one process. "
        "Corpora: Debian `postgresql-doc-15` and `python3.11-doc`, unpacked into build/corpora.",
        "Heading paths are checked against an independent reading (lxml's heading order for HTML, "
        "docutils' doctree sections for reST); glue is checked against that reading's table rows, "
        "code lines and sibling list items.",
        "",
        "| corpus | files | read as | failed | MB | chunks | located | heading path matches (>= 99.5%) "
        "| prose sentences | markup remnants (0) | glued structure (<= 0.5%) | reader MB/s (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f.name} | {f.files} | {', '.join(f'{k} {v}' for k, v in sorted(f.formats.items()))} | {len(f.failed)} | {f.bytes / 1e6:.1f} | {f.chunks} | {pct(f.located, f.chunks)} "
            f"| {pct(f.matched, f.located)} | {f.sentences} | {f.remnants} ({pct(f.remnants, f.sentences)}) "
            f"| {f.glued} ({pct(f.glued, f.sentences)}) | {f.mb_per_s:.1f} |"
        )
    for f in figures:
        lines += ["", f"## {f.name}", ""]
        if f.remnant_kinds:
            lines.append("Remnants by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(f.remnant_kinds.items())))
        for title, items in (("Failed files", f.failed[:8]), ("Heading path mismatches", f.mismatches),
                             ("Markup remnants", f.remnant_examples), ("Glued sentences", f.glue_examples)):
            if items:
                lines += [f"{title}:", ""] + [f"- `{i}`" for i in items] + [""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="files per corpus")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    figures = []
    for name, reader, files, read, independent in corpora(args.limit):
        fig = measure(name, reader, files, read, independent)
        print(f"{name}: {fig.files} files, {fig.chunks} chunks, paths {pct(fig.matched, fig.located)}, "
              f"remnants {pct(fig.remnants, fig.sentences)}, glued {pct(fig.glued, fig.sentences)}, "
              f"{fig.mb_per_s:.1f} MB/s", file=sys.stderr)
        figures.append(fig)
    text = report(figures)
    print(text)
    if not args.no_write:
        REPORT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
