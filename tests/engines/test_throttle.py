"""Rate limits: the token bucket makes a call wait for its tokens."""

from __future__ import annotations

import asyncio
import time

from compendium.engines.throttle import CallLimits, TokenBucket


async def test_token_bucket_waits_for_refill():
    bucket = TokenBucket(tokens_per_minute=6000)  # 100 tokens per second
    await bucket.take(6000)  # the whole minute's allowance, at once
    started = time.perf_counter()
    await bucket.take(20)  # needs 0.2 s of refill
    assert time.perf_counter() - started >= 0.18


async def test_settled_debt_delays_the_next_call():
    bucket = TokenBucket(tokens_per_minute=6000)
    await bucket.take(100)
    bucket.settle(estimated=100, actual=6000)  # the call cost far more than estimated
    started = time.perf_counter()
    await bucket.take(10)
    assert time.perf_counter() - started >= 0.09


async def test_concurrency_is_bounded():
    limits = CallLimits(max_concurrency=2)
    running = peak = 0

    async def call() -> None:
        nonlocal running, peak
        async with limits.slot(1):
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.02)
            running -= 1

    await asyncio.gather(*(call() for _ in range(6)))
    assert peak == 2
