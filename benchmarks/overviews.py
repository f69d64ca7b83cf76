"""A seeded sample of overview pages from vault exports, as the site publishes them, for a reader.

Reads the vaults `benchmarks/quality.py --dump DIR` writes (DIR/<manual>/): an overview page is
the page a map (`maps/*.md`) names on its "Overview:" line, a topic page or a document's page
standing for its node. Each sampled page is written as its text, then its node's members as the
map lists them but for those the page's own list says what they are (as the site shows them), to OUT/<manual>/NN-<slug>.md; the sample is the 20 overview slugs whose seeded
hash is smallest (stable: a page stays in the sample while it exists).

    python -m benchmarks.overviews /tmp/ov-base-dump /tmp/ov-base-overviews
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

import xxhash

SEED = 13
SAMPLE = 20
_OVERVIEW = re.compile(r"^Overview: \[\[([^|\]]+)(?:\|[^\]]*)?\]\]", re.MULTILINE)
_LINK = re.compile(r"\[\[([^|\]]+)(?:\|[^\]]*)?\]\]")
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def overviews(vault: Path) -> dict[str, Path]:
    """Each overview slug with the map that names it."""
    found: dict[str, Path] = {}
    for map_file in sorted((vault / "maps").glob("*.md")):
        hit = _OVERVIEW.search(map_file.read_text(encoding="utf-8"))
        if hit and (vault / f"{hit[1]}.md").exists():
            found.setdefault(hit[1], map_file)
    return found


def listing(map_file: Path) -> str:
    """The map's members (what follows its Overview line), as the site lists them."""
    text = _FRONT.sub("", map_file.read_text(encoding="utf-8"))
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
    body = _OVERVIEW.split(text, 1)[-1].split("\n", 1)[-1].strip() if _OVERVIEW.search(text) else ""
    return f"## In {title} (as the site lists it)\n\n{body}\n" if body else ""


def _page_of(vault: Path, target: str) -> str:
    """A link's page: a subtopic's map by its overview page."""
    if not target.startswith("maps/"):
        return target
    note = vault / f"{target}.md"
    hit = _OVERVIEW.search(note.read_text(encoding="utf-8")) if note.exists() else None
    return hit[1] if hit else target


def _without(listing_text: str, described: set[str], vault: Path, page: str = "") -> str:
    """The listing as the site shows it under a page: members the page's own list says what they
    are are not listed again (a subtopic by its overview page), and a line that is the page's lead
    is not said again."""
    from compendium.export.outline_view import lead_of

    said_on_page = lead_of(page)
    def page_of(target: str) -> str:
        return _page_of(vault, target)

    out, also = [], []
    for line in listing_text.splitlines():
        link = _LINK.match(line[2:]) if line.startswith("- ") else None
        if link and page_of(link[1]) in described:
            continue
        core = " ".join(line[2 + link.end():].lstrip(" :–—,").split()).rstrip(".") if link else ""
        if link and len(core) > 20 and core in said_on_page:
            also.append(link[0])  # its line is the page's lead: a link only
            continue
        if line.startswith("Also: "):
            also += [m[0] for m in _LINK.finditer(line) if page_of(m[1]) not in described]
            continue
        out.append(line)
    if also:
        out += ["Also: " + ", ".join(also), ""]
    return "\n".join(out)


def sample(vault: Path, size: int = SAMPLE, seed: int = SEED) -> list[tuple[str, str]]:
    from compendium.export.outline_view import described_in, without_listed_related

    found = overviews(vault)
    slugs = sorted(found, key=lambda s: xxhash.xxh3_64_intdigest(f"{seed}:{s}".encode()))[:size]
    out = []
    for s in slugs:
        page = _FRONT.sub("", (vault / f"{s}.md").read_text(encoding="utf-8")).rstrip()
        members = listing(found[s])
        shown = _without(members, described_in(page), vault, page)
        # (the page's Related links its node lists under it are not shown twice)
        listed = {_page_of(vault, m[1]) for m in _LINK.finditer(members)}
        out.append((s, without_listed_related(page, listed).rstrip() + "\n\n" + shown))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path, help="the --dump folder of benchmarks/quality.py")
    parser.add_argument("out", type=Path, help="folder for the sampled pages")
    parser.add_argument("--size", type=int, default=SAMPLE)
    args = parser.parse_args(argv)
    for vault in sorted(p for p in args.dump.iterdir() if (p / "maps").is_dir()):
        here = args.out / vault.name
        shutil.rmtree(here, ignore_errors=True)
        here.mkdir(parents=True)
        picked = sample(vault, args.size)
        for n, (slug, text) in enumerate(picked, 1):
            (here / f"{n:02}-{slug[:80]}.md").write_text(text, encoding="utf-8")
        print(f"{vault.name}: {len(overviews(vault))} overview pages, {len(picked)} sampled")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
