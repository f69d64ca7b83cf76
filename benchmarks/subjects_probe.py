"""A quick look at an exported vault's subjects: how many pages, how often one sentence is
published on three or more pages, and a seeded sample of page titles and leads to read.

    python -m benchmarks.subjects_probe VAULT [--sample 40] [--seed 13]

It reads the Markdown an export wrote (`compendium export --format vault`), so it measures what
a reader sees. The judging itself is a reader's (benchmarks/judging_rules.md); this only draws
the sample and counts.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

_CITED = re.compile(r"([^\n\[\]]+?)\[\^\d+\]")
_FRONT = re.compile(r"^---\n(.*?)\n---\n", re.DOTALL)


def pages(vault: Path) -> dict[str, tuple[str, str, str]]:
    """file name -> (title, kind, body) of every page (source notes and maps left out)."""
    out = {}
    for path in sorted(vault.glob("*.md")):
        if path.name.startswith("_"):
            continue
        text = path.read_text(encoding="utf-8")
        front = _FRONT.match(text)
        meta = front.group(1) if front else ""
        title = re.search(r"^title: (.*)$", meta, re.MULTILINE)
        kind = re.search(r"^kind: (.*)$", meta, re.MULTILINE)
        out[path.name] = (title.group(1).strip("'\"") if title else path.stem, kind.group(1) if kind else "",
                          text[front.end():] if front else text)
    return out


def sentences(body: str) -> list[str]:
    """The cited sentences of a page body, each once per page."""
    found = []
    for match in _CITED.finditer(body):
        text = match.group(1).strip(" -*")
        if len(text.split()) >= 4:
            found.append(text)
    return list(dict.fromkeys(found))


def lead(body: str) -> str:
    for line in body.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "*Also", "-", "[^")):
            return line
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    found = pages(args.vault)
    per_page = {name: sentences(body) for name, (_, _, body) in found.items()}
    spread = Counter(s for found_here in per_page.values() for s in found_here)
    occurrences = sum(spread.values())
    wide = sum(n for n in spread.values() if n >= 3)
    kinds = Counter(kind for _, kind, _ in found.values())
    print(f"pages {len(found)} {dict(kinds)}; sentence occurrences {occurrences}, on 3+ pages "
          f"{wide} ({100 * wide / max(occurrences, 1):.0f}%)")
    rng = random.Random(args.seed)
    for name in sorted(rng.sample(sorted(found), min(args.sample, len(found)))):
        title, kind, body = found[name]
        print(f"- [{kind}] {title} :: {lead(body)[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
