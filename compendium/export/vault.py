"""Markdown vault export (Obsidian style): one SLUG.md per page with front matter, and _index.md."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import yaml

from ..storage.records import Page
from .folder import ExportFolder
from .site import KIND_TITLES, updated_date
from .snapshot import WikiSnapshot


def front_matter(wiki: WikiSnapshot, page: Page) -> str:
    """YAML front matter: title, kind, aliases, tags (the page's topics) and updated date."""
    meta = {
        "title": page.title or page.slug,
        "kind": page.kind,
        "aliases": list(page.aliases),
        "tags": [t.slug for t in wiki.topics_of(page)],
        "updated": updated_date(page),
    }
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{text}---\n"


def vault_page(wiki: WikiSnapshot, page: Page) -> str:
    """A page file: front matter, then the page Markdown unchanged ([[links]] and footnotes kept)."""
    body = page.markdown if page.markdown.endswith("\n") else page.markdown + "\n"
    return front_matter(wiki, page) + "\n" + body


def _link(page: Page) -> str:
    # Titles can hold '|' or ']' which would break the wikilink; the slug alone then reads fine.
    title = page.title
    if title and title != page.slug and not any(c in title for c in "|[]"):
        return f"[[{page.slug}|{title}]]"
    return f"[[{page.slug}]]"


def index_markdown(wiki: WikiSnapshot, title: str) -> str:
    """_index.md: every page by kind, then by topic."""
    by_kind: dict[str, list[Page]] = defaultdict(list)
    for page in sorted(wiki.pages, key=lambda p: (p.title.lower(), p.slug)):
        by_kind[page.kind].append(page)
    lines = [f"# {title}", "", f"{len(wiki.pages)} pages.", ""]
    for kind in [*KIND_TITLES, *sorted(set(by_kind) - set(KIND_TITLES))]:
        if by_kind.get(kind):
            lines += [f"## {KIND_TITLES.get(kind, kind.title())}", ""]
            lines += [f"- {_link(p)}" for p in by_kind[kind]] + [""]
    topics = []
    for topic in sorted(wiki.topics, key=lambda t: (t.title.lower(), t.slug)):
        pages = sorted(
            (p for p in (wiki.page_of(m) for m in topic.members) if p is not None),
            key=lambda p: (p.title.lower(), p.slug),
        )
        if pages:
            topics += (
                [f"### {topic.title or topic.slug}", ""] + [f"- {_link(p)}" for p in pages] + [""]
            )
    if topics:
        lines += ["## By topic", "", *topics]
    return "\n".join(lines).rstrip() + "\n"


def write_vault(wiki: WikiSnapshot, out: Path, title: str) -> int:
    """Write the vault into `out`; returns the number of files written."""
    folder = ExportFolder(out)
    for page in wiki.pages:
        folder.write(f"{page.slug}.md", vault_page(wiki, page))
    folder.write("_index.md", index_markdown(wiki, title))
    return folder.finish()
