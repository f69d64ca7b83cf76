"""The chunks a page is offered as excerpts: its claims' chunks by how many claims they hold, then
its own chunks in order, whatever the size of the subject's chunk list."""

import random

from compendium.phases.chunk_pages import LONG_PAGE, ChunkPages
from compendium.phases.page_candidates import MAX_SOURCES, source_ids
from compendium.phases.planning import PagePlan
from compendium.storage.records import Claim


def _by_definition(plan: PagePlan, claims: list[Claim]) -> list[str]:
    per_chunk: dict[str, int] = {}
    for c in claims:
        per_chunk[c.chunk_id] = per_chunk.get(c.chunk_id, 0) + 1
    wanted = list(dict.fromkeys([*plan.chunk_ids, *per_chunk]))
    wanted.sort(key=lambda cid: -per_chunk.get(cid, 0))
    return wanted[:MAX_SOURCES]


def test_sources_are_the_chunks_holding_most_claims_then_the_subjects_own_in_order():
    rng = random.Random(5)
    for size in (0, 3, 70, 5000):
        chunks = sorted({f"{rng.getrandbits(32):08x}" for _ in range(size)})
        plan = PagePlan(slug="p", title="P", kind="entity", subject_id="e", action="CREATE", chunk_ids=chunks)
        pool = chunks + [f"x{i}" for i in range(20)]  # some claims sit in chunks the subject is not named in
        claims = [Claim(id=f"c{i}", text="t", chunk_id=rng.choice(pool)) for i in range(rng.randint(0, 150))]
        assert source_ids(plan, claims) == _by_definition(plan, claims)


def test_the_pages_of_a_chunk_are_the_same_looked_up_one_by_one_or_a_window_at_a_time():
    rng = random.Random(7)
    pool = [f"{i:06d}" for i in range(3000)]
    plans = [
        PagePlan(slug=f"p{n}", title=f"P{n}", kind="entity", subject_id=f"e{n}", action="CREATE",
                 chunk_ids=sorted(rng.sample(pool, size)))
        for n, size in enumerate([0, 2, 40, LONG_PAGE + 1, 900, 2999, 5, LONG_PAGE])
    ]

    def by_definition(chunk_id: str) -> list[str]:
        return [p.slug for p in plans if chunk_id in p.chunk_ids]

    asked = [*rng.sample(pool, 400), "not-a-chunk"]
    one_by_one, together = ChunkPages(plans), ChunkPages(plans)
    together.look_up(asked[:7])  # a small window: long pages searched chunk by chunk
    together.look_up(asked)  # a large one: each long page passed over once
    for chunk_id in asked:
        expected = by_definition(chunk_id)
        assert one_by_one.get(chunk_id, []) == expected == together.get(chunk_id, [])
