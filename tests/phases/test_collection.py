"""A compile collects garbage less often while it runs, and leaves the process as it found it."""

from __future__ import annotations

import gc

import pytest

from compendium.compiler.orchestrator import run_compile
from compendium.pipeline.collector import COMPILE_THRESHOLDS
from compendium.pipeline.context import PhaseResult
from compendium.templates.schema import Template


async def test_the_collector_thresholds_are_raised_during_a_compile_and_restored_after(server, store, make_ctx):
    seen: list[tuple[int, int, int]] = []

    async def probe(template, ctx):  # a phase: what the collector is set to while phases run
        seen.append(gc.get_threshold())
        return PhaseResult()

    before = gc.get_threshold()
    report = await run_compile(make_ctx(Template(name="t")), phases=[("probe", probe)])
    assert report.status == "succeeded"
    assert seen == [tuple(max(a, b) for a, b in zip(before, COMPILE_THRESHOLDS, strict=True))]
    assert gc.get_threshold() == before

    async def broken(template, ctx):
        raise RuntimeError("a bug in a phase")

    with pytest.raises(RuntimeError):
        await run_compile(make_ctx(Template(name="t")), phases=[("broken", broken)])
    assert gc.get_threshold() == before  # restored even when a phase crashes
