"""Small updates are grouped in plan order, within the token budget and the page cap."""

from __future__ import annotations

import asyncio

from compendium.engines.tasks import PageRequest
from compendium.phases.update_groups import UpdateGroups


def request(slug: str) -> PageRequest:
    return PageRequest(slug=slug, title=slug, kind="entity", description="", aliases=[], evidence=[], links=[])


async def test_groups_follow_plan_order_whatever_order_pages_are_ready_in():
    sent: list[list[str]] = []

    async def ask(requests: list[PageRequest]) -> dict[str, str]:
        sent.append([r.slug for r in requests])
        return {r.slug: f"new for {r.slug}" for r in requests if r.slug != "p3"}  # p3's item was bad

    groups = UpdateGroups(7, budget=100, ask=ask, max_pages=3)

    async def page(position: int, delay: float, tokens: int | None) -> str | None:
        await asyncio.sleep(delay)
        if tokens is None:  # a big change, or a page with nothing to ask
            groups.skip(position)
            return "own call"
        return await groups.write(position, request(f"p{position}"), tokens)

    # Ready in reverse order; p2 has a big change; p5's 90 tokens do not fit beside p4's 20.
    answers = await asyncio.gather(
        page(0, 0.06, 10), page(1, 0.05, 10), page(2, 0.04, None), page(3, 0.03, 10),
        page(4, 0.02, 20), page(5, 0.01, 90), page(6, 0.0, 5),
    )
    assert sent == [["p0", "p1", "p3"], ["p4"], ["p5", "p6"]]
    assert answers == ["new for p0", "new for p1", "own call", None, "new for p4", "new for p5", "new for p6"]
    # p3 had no usable item: its page asks for it alone.


async def test_a_failed_group_call_reaches_every_page_of_the_group():
    async def ask(requests: list[PageRequest]) -> dict[str, str]:
        raise RuntimeError("endpoint down")

    groups = UpdateGroups(2, budget=100, ask=ask)
    outcomes = await asyncio.gather(groups.write(0, request("a"), 1), groups.write(1, request("b"), 1),
                                    return_exceptions=True)
    assert [str(o) for o in outcomes] == ["endpoint down", "endpoint down"]


async def test_a_run_that_stops_early_still_sends_the_open_group():
    seen: list[str] = []

    async def ask(requests: list[PageRequest]) -> dict[str, str]:
        seen.extend(r.slug for r in requests)
        return {}

    groups = UpdateGroups(10, budget=100, ask=ask)
    waiting = [asyncio.ensure_future(groups.write(n, request(f"p{n}"), 1)) for n in range(2)]
    await asyncio.sleep(0)
    groups.close(2)  # cancelled after two pages started
    assert await asyncio.gather(*waiting) == [None, None] and seen == ["p0", "p1"]
