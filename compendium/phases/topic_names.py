"""Topic names asked all at once, clashes settled in the topics' order: the titles one-by-one naming gives."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Name:
    title: str
    summary: str | None  # None: the engine failed and the title is a stand-in (asked again next run)


# name(i, taken): topic i's name, given the titles the topics before it carry.
Namer = Callable[[int, Sequence[str]], Awaitable[Name]]


async def distinct_names(known: Sequence[str | None], name: Namer, concurrency: int) -> list[Name | None]:
    """A name for every topic whose title `known` leaves None (None for the others), as if each
    were asked in turn with the titles before it taken, without waiting for one answer to ask
    the next.

    Every topic to name is first asked with nothing taken, `concurrency` at a time. Then, in
    the topics' order, an answer whose title an earlier topic already carries is asked again
    with the titles before it taken, one after another: only clashes wait. That gives what
    asking in turn gives as long as a namer's answer only differs when its title would be
    taken (the offline namer passes over taken headings; the model's prompt does not list
    them, so its answer does not change at all). A failed naming (summary None) is final: its
    stand-in title does not depend on what is taken.
    """
    gate = asyncio.Semaphore(max(1, concurrency))

    async def first(i: int) -> Name:
        async with gate:
            return await name(i, ())

    todo = [i for i, title in enumerate(known) if title is None]
    asks = [asyncio.ensure_future(first(i)) for i in todo]
    try:
        answered = dict(zip(todo, await asyncio.gather(*asks), strict=True))
    except BaseException:  # the engine is gone or the budget spent: stop asking
        for ask in asks:
            ask.cancel()
        await asyncio.gather(*asks, return_exceptions=True)
        raise
    used: list[str] = []
    taken: set[str] = set()  # lowercased, as the namers compare
    names: list[Name | None] = []
    for i, title in enumerate(known):
        got: Name | None = None
        if title is None:
            got = answered[i]
            if got.summary is not None and got.title.lower() in taken:
                got = await name(i, list(used))
            title = got.title
        names.append(got)
        used.append(title)
        taken.add(title.lower())
    return names
