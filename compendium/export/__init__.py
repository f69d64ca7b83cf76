"""Exports of a compiled knowledge base: static site, Markdown vault, JSON, GraphML and CSV tables."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..storage.base import Store
from ..tempfiles import earlier_exports, sweep
from .folder import write_atomic
from .graphml import graphml_bytes
from .json_export import wiki_json
from .site import write_site
from .snapshot import WikiSnapshot, load_snapshot
from .tables import write_tables
from .vault import write_vault

__all__ = ["FORMATS", "ExportResult", "export"]

FORMATS = ("vault", "site", "json", "graphml", "tables")
_FILE_NAMES = {"json": "compendium.json", "graphml": "compendium.graphml"}


@dataclass(frozen=True)
class ExportResult:
    format: str
    path: Path  # the folder (vault, site, tables) or the file (json, graphml) written
    files: int
    pages: int


async def export(store: Store, fmt: str, out: Path, *, title: str | None = None) -> ExportResult:
    """Export the store's knowledge base as `fmt` into `out`.

    vault, site and tables write a folder (created if needed; files a previous export wrote and this one
    did not are removed, anything else in the folder is left alone). json and graphml write one
    file; when `out` is an existing folder, the file goes inside it. Deleted pages are not exported.
    Without a `title`, the manual names itself (manual_title).
    """
    if fmt not in FORMATS:
        raise InputError(
            f"unknown export format {fmt!r}",
            hint=f"use one of: {', '.join(FORMATS)}",
            field="format",
        )
    out = Path(out)
    # json reads the sources too: an outline built at export time follows their structure.
    wiki = await load_snapshot(store, sources=fmt in ("site", "vault", "tables", "json") or not title)
    title = title or manual_title(wiki)
    # Rendering and file writes are blocking work: keep them off the event loop (the API serves exports).
    out, files = await asyncio.to_thread(_write, wiki, fmt, out, title)
    return ExportResult(format=fmt, path=out, files=files, pages=len(wiki.pages))


# Where authors name their manual: its front page, by file name, the shallowest first.
_FRONT_PAGES = ("index", "readme", "home", "introduction", "intro", "overview", "contents", "about", "start")
_FRONT_SUFFIX = re.compile(r"\s*(?:[:\u2014\u2013|-]|\s-\s)\s*(?:an?\s+)?(?:introduction|overview|contents|"
                           r"home|start|about|index|readme)\s*$", re.IGNORECASE)


def manual_title(wiki: WikiSnapshot) -> str:
    """A title for a knowledge base whose settings give none: that of its front page (an
    index, README or introduction, the shallowest in the folder; 'Lumen DB Handbook:
    Introduction' gives 'Lumen DB Handbook'), since that is where authors name their manual;
    else 'Compendium'. Not the first document's title, which names one subject of many
    ('Checkpointer'), nor a folder's name ('W') or the default knowledge base's ('default')."""
    fronts = [d for d in wiki.documents if Path(d.path).stem.lower() in _FRONT_PAGES and d.title]
    if fronts:
        front = min(fronts, key=lambda d: (d.path.count("/"), _FRONT_PAGES.index(Path(d.path).stem.lower()), d.path))
        title = _FRONT_SUFFIX.sub("", front.title).strip() or front.title
        manual, sep, node = title.partition(": ")
        return manual if sep and manual.strip().lower() == node.strip().lower() else title  # "X: X" (texinfo's Top)
    return "Compendium"


def _write(wiki: WikiSnapshot, fmt: str, out: Path, title: str) -> tuple[Path, int]:
    if fmt == "vault":
        return out, write_vault(wiki, out, title)
    if fmt == "site":
        return out, write_site(wiki, out, title)
    if fmt == "tables":
        return out, write_tables(wiki, out)
    if out.is_dir():
        out = out / _FILE_NAMES[fmt]
    out.parent.mkdir(parents=True, exist_ok=True)
    sweep(out.parent, recursive=False, earlier=earlier_exports([out.name]))  # temp files of a killed export
    data = wiki_json(wiki, title).encode("utf-8") if fmt == "json" else graphml_bytes(wiki)
    write_atomic(out, data)
    return out, 1
