"""A token budget is a ceiling: each call reserves its prompt and its reply's bound (max_tokens)
before it is sent, and is settled to what the server reports after."""

from __future__ import annotations

import asyncio

import pytest

from compendium.engines.openai_client import OpenAIClient
from compendium.engines.usage import UsageMeter
from compendium.errors import BudgetExceeded
from tests.support.llm_server import LLMServer

REPLY = "Armonk is where IBM is based. " * 5  # about 35 tokens


def client(server: LLMServer, usage: UsageMeter, **options) -> OpenAIClient:
    return OpenAIClient(
        base_url=server.base_url, api_key="k", model="test-chat", usage=usage,
        timeout=2.0, max_retries=0, retry_wait=0.01, **options,
    )


async def test_a_call_whose_reply_bound_does_not_fit_is_never_sent(llm_server):
    llm_server.responder = lambda request: REPLY
    usage = UsageMeter(budget_tokens=300)
    llm = client(llm_server, usage)
    try:
        with pytest.raises(BudgetExceeded, match="needs up to"):
            # The prompt alone fits; the prompt and the reply's bound do not.
            await llm.complete_text(system="", prompt="Where is IBM based?", temperature=0.0, max_tokens=400)
        text = await llm.complete_text(system="", prompt="Where is IBM based?", temperature=0.0, max_tokens=100)
    finally:
        await llm.close()
    assert text == REPLY.strip()
    assert llm_server.calls["chat"] == 1
    assert usage.in_flight == 0  # settled: only what the server reported stays counted
    assert usage.total_tokens == llm_server.prompt_tokens + llm_server.completion_tokens


async def test_calls_without_a_bound_of_their_own_state_the_configured_one(llm_server):
    llm_server.responder = lambda request: '{"answer": "Armonk"}'
    usage = UsageMeter(budget_tokens=900)  # the prompt fits; the prompt and 900 reply tokens do not
    llm = client(llm_server, usage, max_reply_tokens=900)
    try:
        with pytest.raises(BudgetExceeded):
            await llm.complete_text(system="", prompt="Where?", temperature=0.0)
    finally:
        await llm.close()
    assert llm_server.calls["chat"] == 0

    llm = client(llm_server, UsageMeter(), max_reply_tokens=900)
    try:
        await llm.complete_text(system="", prompt="Where?", temperature=0.0)
    finally:
        await llm.close()
    assert llm_server.requests[0].body["max_tokens"] == 900


async def test_concurrent_calls_never_spend_past_the_budget(llm_server):
    llm_server.responder = lambda request: REPLY
    llm_server.set_latency(0.05)  # calls overlap
    budget = 1000
    usage = UsageMeter(budget_tokens=budget)
    llm = client(llm_server, usage, max_concurrency=8)

    async def one(i: int) -> bool:
        try:
            await llm.complete_text(system="", prompt=f"Question {i}: where is IBM based?", temperature=0.0,
                                    max_tokens=60)
        except BudgetExceeded:
            return False
        return True

    try:
        answered = await asyncio.gather(*(one(i) for i in range(40)))
    finally:
        await llm.close()
    spent = llm_server.prompt_tokens + llm_server.completion_tokens
    assert 1 < sum(answered) < 40
    # A call hedged on a loaded machine is counted twice (its dropped twin may have been
    # billed), so the meter never says less than the server saw, and never passes the budget.
    assert 0 < spent <= usage.total_tokens <= budget, (spent, usage.total_tokens)
    assert usage.get("other").hedged_calls > 0 or usage.total_tokens == spent
    assert usage.in_flight == 0


@pytest.mark.parametrize("budget", [None, 10_000])
async def test_a_server_that_reports_no_usage_is_counted_by_our_estimate(llm_server, budget):
    """Without a budget or a tokens-per-minute limit no prompt is counted before it is sent; a
    reply without a usage block is then counted after it, as a budgeted call's estimate is."""
    from compendium.tokens import count_tokens

    llm_server.responder = lambda request: REPLY
    llm_server.reports_usage = False
    usage = UsageMeter(budget_tokens=budget)
    llm = client(llm_server, usage)
    prompt = "Where is IBM based? " * 20
    try:
        with UsageMeter.phase("refine"):
            await llm.complete_text(system="Answer briefly.", prompt=prompt, temperature=0.0, max_tokens=100)
    finally:
        await llm.close()
    used = usage.get("refine")
    assert used.prompt_tokens == count_tokens("Answer briefly.") + count_tokens(prompt)
    assert used.completion_tokens == count_tokens(REPLY.strip())
    assert usage.in_flight == 0
