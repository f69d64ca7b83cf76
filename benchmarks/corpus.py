"""A deterministic synthetic corpus of technical documents for benchmarks.

Documents describe the components of an invented storage system. Components recur across
documents, are introduced with acronyms ("Segment Compaction Daemon (SCD)") or with
"also known as", and are mentioned later by either name, so extraction and entity resolution
have real work to do. Each document has a title, 3-5 sections and 300-600 words.

    python -m benchmarks.corpus OUT_DIR [--documents 300] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from pathlib import Path

QUALIFIERS = (
    "Segment Shard Ledger Snapshot Replica Journal Catalog Quota Lease Partition Index Cache "
    "Tenant Schema Bloom Checkpoint Manifest Vector Stream Archive Token Session Metric Audit"
).split()
ACTIONS = (
    "Compaction Routing Recovery Allocation Eviction Replication Validation Scheduling "
    "Encryption Placement Rebalancing Admission"
).split()
ROLES = "Daemon Manager Service Coordinator Controller Scheduler Broker Monitor Planner Writer".split()
NICKNAMES = (
    "the janitor", "the gatekeeper", "the mover", "the clerk", "the sweeper", "the courier",
    "the archivist", "the referee", "the watchman", "the cartographer",
)
VERBS = (
    "sends requests to", "reads metadata from", "depends on", "notifies", "hands work to",
    "is throttled by", "reports progress to", "shares a lock with", "replaces parts of",
    "waits for",
)
CLAUSES = (
    "whenever a node joins the cluster", "before a checkpoint is written", "during a rolling upgrade",
    "after every failover", "when disk usage passes its threshold", "under sustained write load",
    "at startup", "once per maintenance window", "if a replica falls behind",
    "while a snapshot is being taken",
)
FACTS = (
    "keeps its state in a write-ahead journal so that a crash loses nothing",
    "runs one worker per core and backs off when the queue is empty",
    "exposes counters for throughput, latency and errors",
    "batches small requests to amortise the cost of each round trip",
    "refuses new work when its memory budget is spent",
    "retries failed operations with exponential backoff",
    "verifies checksums on every block it reads",
    "can be paused by an operator without losing queued work",
    "records every decision in the audit log",
    "was rewritten in the last major release to cut its latency in half",
)
PARAMETERS = ("interval", "threshold", "budget", "timeout", "parallelism", "batch size")


@dataclass
class Component:
    name: str
    acronym: str
    nickname: str = ""  # introduced with "also known as"
    neighbours: list[int] = field(default_factory=list)

    def first(self) -> str:
        if self.nickname:
            return f"{self.name}, also known as {self.nickname},"
        return f"{self.name} ({self.acronym})"

    def later(self, rng: random.Random) -> str:
        return self.acronym if rng.random() < 0.5 else self.name


def components(rng: random.Random, count: int = 160) -> list[Component]:
    names: dict[str, Component] = {}
    acronyms: set[str] = set()
    while len(names) < count:
        words = [rng.choice(QUALIFIERS), rng.choice(ACTIONS), rng.choice(ROLES)]
        name = " ".join(words)
        acronym = "".join(w[0] for w in words)
        if name in names or acronym in acronyms:
            continue
        acronyms.add(acronym)
        names[name] = Component(name, acronym)
    out = list(names.values())
    for i, c in enumerate(out):
        if i < len(NICKNAMES):
            c.nickname = NICKNAMES[i]
        # A small world: each component works with a few others, so topics emerge.
        c.neighbours = rng.sample([j for j in range(len(out)) if j != i and abs(j - i) < 12], 4)
    return out


def sentence(rng: random.Random, subject: str, other: str) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return f"{subject} {rng.choice(VERBS)} {other} {rng.choice(CLAUSES)}."
    if kind == 1:
        return f"{subject} {rng.choice(FACTS)}."
    if kind == 2:
        return (
            f"The {rng.choice(PARAMETERS)} of {subject} is set to {rng.randrange(2, 500)} by default, "
            f"and {other} adjusts it {rng.choice(CLAUSES)}."
        )
    return f"{rng.choice(CLAUSES).capitalize()}, {subject} {rng.choice(VERBS)} {other}."


def document(rng: random.Random, number: int, comps: list[Component]) -> tuple[str, str]:
    """(file name, markdown) of one document, 300-600 words."""
    main = comps[number % len(comps)]
    cast = [main, *(comps[j] for j in main.neighbours)]
    introduced: set[str] = set()

    def mention(c: Component) -> str:
        if c.name in introduced:
            return c.later(rng)
        introduced.add(c.name)
        return c.first()

    target_words = rng.randrange(300, 600)
    lines = [f"# {main.name}", ""]
    words = 0
    section = 0
    while words < target_words:
        section += 1
        focus = cast[section % len(cast)]
        lines += [f"## {focus.name}: {rng.choice(('overview', 'operation', 'tuning', 'failure modes', 'history'))}", ""]
        for _ in range(rng.randrange(2, 4)):
            paragraph = []
            for _ in range(rng.randrange(3, 6)):
                other = rng.choice([c for c in cast if c is not focus])
                text = sentence(rng, mention(focus), mention(other))
                paragraph.append(text[0].upper() + text[1:])
            words += sum(len(s.split()) for s in paragraph)
            lines += [" ".join(paragraph), ""]
            if words >= target_words:
                break
    slug = main.name.lower().replace(" ", "-")
    return f"{number:04d}-{slug}.md", "\n".join(lines)


@dataclass
class CorpusStats:
    documents: int
    words: int
    path: Path


def generate_corpus(out: Path, documents: int = 300, seed: int = 7) -> CorpusStats:
    """Write `documents` markdown files into `out` (created); the same seed gives the same files."""
    rng = random.Random(seed)
    comps = components(rng)
    out.mkdir(parents=True, exist_ok=True)
    words = 0
    for n in range(documents):
        name, text = document(rng, n, comps)
        (out / name).write_text(text, encoding="utf-8")
        words += len(text.split())
    return CorpusStats(documents, words, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    stats = generate_corpus(args.out, args.documents, args.seed)
    print(f"{stats.documents} documents, {stats.words} words in {stats.path}")


if __name__ == "__main__":
    main()
