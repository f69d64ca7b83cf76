"""Groups the small UPDATEs of a REFINE run, in plan order, into calls that write several pages."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..engines.tasks import PageRequest

SMALL_UPDATE_TOKENS = 400  # new evidence of at most this many tokens is a small update
MAX_GROUP_PAGES = 16  # pages one grouped call writes at most

Ask = Callable[[list[PageRequest]], Awaitable[dict[str, str]]]


@dataclass
class _Waiting:
    request: PageRequest
    tokens: int
    answer: asyncio.Future[str | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class UpdateGroups:
    """Pages are decided in plan order (position 0, 1, ...): each either joins the open group
    (`write`) or goes its own way (`skip`). The open group is sent when the next small update
    would take it past `budget` tokens of new evidence or `max_pages`, and when every page is
    decided. Deciding in plan order, not in the order pages happen to be ready, makes the same
    plan give the same groups, so a resumed compile meets its grouped replies in the cache.

    A page waits in its group holding its slot among the pages in progress: the caller allows
    more than `max_pages` of them, and a group is sent once it holds `max_pages`, so pages
    waiting in the open group never hold every slot.
    """

    def __init__(self, count: int, budget: int, ask: Ask, *, max_pages: int = MAX_GROUP_PAGES):
        self.count, self.budget, self.ask, self.max_pages = count, budget, ask, max(1, max_pages)
        self._decided: dict[int, _Waiting | None] = {}
        self._next = 0  # the first position not yet taken in order
        self._open: list[_Waiting] = []
        self._tokens = 0
        self._sent: set[asyncio.Task[None]] = set()

    async def write(self, position: int, request: PageRequest, tokens: int) -> str | None:
        """The page's reply from a grouped call (a lone small update too: the compact prompt
        costs less than the whole page), or None: the reply had no usable item for it, and the
        caller asks for it alone."""
        waiting = _Waiting(request, tokens)
        self._decide(position, waiting)
        return await waiting.answer

    def skip(self, position: int) -> None:
        """The page at `position` makes no grouped update (said again, it is ignored)."""
        self._decide(position, None)

    def close(self, count: int) -> None:
        """Only the first `count` pages will be decided (a cancelled run starts no more)."""
        self.count = min(self.count, count)
        self._take()

    def _decide(self, position: int, item: _Waiting | None) -> None:
        if position < self._next or position in self._decided:
            return
        self._decided[position] = item
        self._take()

    def _take(self) -> None:
        while self._next in self._decided:
            item = self._decided.pop(self._next)
            self._next += 1
            if item is None:
                continue
            if self._open and self._tokens + item.tokens > self.budget:
                self._send()
            self._open.append(item)
            self._tokens += item.tokens
            if len(self._open) >= self.max_pages:
                self._send()
        if self._next >= self.count:
            self._send()

    def _send(self) -> None:
        group, self._open, self._tokens = self._open, [], 0
        if not group:
            return
        task = asyncio.create_task(self._answer(group))
        self._sent.add(task)  # kept until done: the loop holds tasks weakly
        task.add_done_callback(self._sent.discard)

    async def _answer(self, group: list[_Waiting]) -> None:
        try:
            written = await self.ask([w.request for w in group])
        except asyncio.CancelledError:
            for w in group:
                w.answer.cancel()
            raise
        except Exception as exc:  # every page of the group meets it, as its own call would
            for w in group:
                if not w.answer.done():
                    w.answer.set_exception(exc)
            return
        for w in group:
            if not w.answer.done():
                w.answer.set_result(written.get(w.request.slug))
