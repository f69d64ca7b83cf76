"""The public manuals every quality figure is measured on, fetched from package registries.

Chosen before any rule was changed (2026-12-06), one per toolchain, none of them tuned on:

| name | toolchain | source |
|---|---|---|
| git | man pages rendered from AsciiDoc (flat folder, howto/, technical/) | Debian `git-doc` |
| django | Sphinx HTML | Debian `python-django-doc` |
| sphinx | reST sources | PyPI sdist `sphinx==7.2.6`, `doc/` |
| mkdocs | MkDocs HTML | Debian `mkdocs-doc` |
| commons-lang | Javadoc HTML | Debian `libcommons-lang3-java-doc` |
| gettext | texinfo HTML book | Debian `gettext-doc` |

`sqlite` (Debian `sqlite3-doc`, a flat folder of HTML pages with one contents page) is a
seventh, for the outline. `postgres` and `python` are regression checks only: their figures
never count toward a target. Downloads land in a cache folder, never in the repository.

    python -m benchmarks.manuals [NAME ...]     # fetch and print each manual's folder and size
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.offline_corpus import CACHE, debian_doc

SEED = 13
READABLE = (".html", ".htm", ".rst", ".md", ".markdown", ".txt", ".pdf", ".docx")


@dataclass(frozen=True)
class Manual:
    name: str
    toolchain: str
    package: str  # Debian package, or "pypi:NAME==VERSION" for an sdist
    folder: str  # the documents' folder inside the unpacked package
    suffixes: tuple[str, ...]
    skip: tuple[str, ...] = ()  # path fragments that are site furniture, not documents
    counts: bool = True  # False: a regression check, never toward a target

    def path(self, cache: Path = CACHE) -> Path:
        if self.package.startswith("pypi:"):
            return _sdist(self.package[5:], Path(self.folder), cache)
        return debian_doc(self.package, Path(self.folder), cache)

    def documents(self, size: int | None = None, seed: int = SEED, cache: Path = CACHE) -> list[Path]:
        """The manual's documents, or a seeded sample of `size` of them, in path order."""
        root = self.path(cache)
        files = sorted(
            p for p in root.rglob("*")
            if p.is_file() and p.suffix.lower() in self.suffixes
            and not any(s in p.relative_to(root).as_posix() for s in self.skip)
        )
        if size is not None and size < len(files):
            files = sorted(random.Random(seed).sample(files, size))
        return files


MANUALS: dict[str, Manual] = {m.name: m for m in (
    Manual("git", "AsciiDoc man pages (HTML)", "git-doc", "usr/share/doc/git-doc", (".html",)),
    Manual("django", "Sphinx HTML", "python-django-doc", "usr/share/doc/python-django-doc/html", (".html",),
           skip=("_static/", "_sources/", "_images/", "_modules/", "genindex", "py-modindex", "search.html")),
    Manual("sphinx", "reST sources", "pypi:sphinx==7.2.6", "doc", (".rst",)),
    Manual("mkdocs", "MkDocs HTML", "mkdocs-doc", "usr/share/doc/mkdocs/html", (".html",),
           skip=("404.html", "search/", "assets/", "js/", "css/", "fonts/", "img/")),
    Manual("commons-lang", "Javadoc HTML", "libcommons-lang3-java-doc", "usr/share/doc/libcommons-lang3-java/api",
           (".html",), skip=("src-html/", "index-all", "allclasses", "allpackages", "overview-tree",
                             "package-tree", "deprecated-list", "help-doc", "serialized-form", "constant-values",
                             "jquery/", "resources/", "legal/", "search.html", "class-use/")),
    Manual("gettext", "texinfo HTML book", "gettext-doc", "usr/share/doc/gettext", (".html",),
           skip=("csharpdoc/", "javadoc2/", "examples/", "libasprintf/")),
    Manual("sqlite", "flat HTML folder, one contents page", "sqlite3-doc", "usr/share/doc/sqlite3", (".html",),
           skip=("images/",)),
    Manual("postgres", "DocBook HTML (regression check)", "postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html",
           (".html",), skip=("release-",), counts=False),
    Manual("python", "Sphinx HTML (regression check)", "python3.11-doc", "usr/share/doc/python3.11/html", (".html",),
           skip=("whatsnew/", "_static/", "_sources/", "_images/", "c-api/", "genindex", "py-modindex",
                 "search.html"), counts=False),
)}
SIX = ("git", "django", "sphinx", "mkdocs", "commons-lang", "gettext")


def _sdist(requirement: str, folder: Path, cache: Path) -> Path:
    """`folder` inside the unpacked PyPI sdist of `requirement`, fetched once with pip."""
    name, _, version = requirement.partition("==")
    target = cache / "sdists"
    unpacked = target / f"{name}-{version}" / folder
    if unpacked.is_dir():
        return unpacked
    target.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        requirement, "-d", str(target)], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise SystemExit(f"could not fetch the sdist {requirement}: {detail.strip()}") from exc
    archives = sorted(target.glob(f"{name}-{version}.tar.gz"))
    if not archives:
        raise SystemExit(f"pip left no {name}-{version}.tar.gz in {target}")
    with tarfile.open(archives[0]) as archive:
        archive.extractall(target, filter="data")
    if not unpacked.is_dir():
        raise SystemExit(f"the sdist {requirement} has no {folder}")
    return unpacked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(MANUALS))
    args = parser.parse_args(argv)
    for name in args.names:
        manual = MANUALS[name]
        docs = manual.documents()
        print(f"{name:13} {len(docs):5} documents  {manual.path()}  ({manual.toolchain})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
