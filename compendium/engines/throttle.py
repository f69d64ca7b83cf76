"""Rate limits for an endpoint: requests per minute, tokens per minute and concurrent calls."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from asyncio_throttle import Throttler


class TokenBucket:
    """Tokens per minute, refilled continuously; a call waits until its estimate fits.

    The estimate is taken before the call; `settle` charges the difference once the real
    count is known, so a bucket can go into debt and later calls wait it off.
    """

    def __init__(self, tokens_per_minute: int):
        if tokens_per_minute <= 0:
            raise ValueError("tokens_per_minute must be positive")
        self.capacity = float(tokens_per_minute)
        self.rate = tokens_per_minute / 60.0  # tokens per second
        self.level = self.capacity
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self, tokens: int) -> None:
        # A request larger than a minute's allowance would wait forever: let it through alone.
        need = min(float(tokens), self.capacity)
        async with self._lock:  # first come, first served
            self._refill()
            while self.level < need:
                await asyncio.sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= need

    def settle(self, estimated: int, actual: int) -> None:
        self.level -= actual - min(float(estimated), self.capacity)


class CallLimits:
    """Everything that gates one HTTP call: a concurrency semaphore, then the rate limits.

    Requests per minute are spread evenly (one call every 60/rpm seconds) rather than let
    through in a burst at the top of each minute, which is what provider limits punish.
    """

    def __init__(
        self,
        *,
        max_concurrency: int,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
    ):
        self.semaphore = asyncio.Semaphore(max(1, max_concurrency))
        self.requests: Throttler | None = None
        if requests_per_minute:
            period = 60.0 / requests_per_minute
            self.requests = Throttler(rate_limit=1, period=period, retry_interval=min(0.01, period / 4))
        self.tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None

    @contextlib.asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[None]:
        async with self.semaphore:
            if self.tokens is not None:
                await self.tokens.take(estimated_tokens)
            if self.requests is not None:
                await self.requests.acquire()
            yield

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        if self.tokens is not None:
            self.tokens.settle(estimated_tokens, actual_tokens)
