"""Every phase's progress has its total before it counts: the first progress event of a phase
already carries the total all its events carry, done never goes back nor past it, and the phase's
last progress event has done equal to the total (REDUCE's total jumped 0/? -> 70/70 -> 5,642)."""

from __future__ import annotations

from pathlib import Path

from compendium.operations import compile_workspace
from compendium.pipeline.events import ListSink, PhaseProgress, PhaseStarted
from compendium.settings import load_settings
from tests.incremental.corpus import env_for
from tests.support.llm_server import LLMServer


def _check(events: list) -> dict[str, list[tuple[int, int]]]:
    """Each phase's (done, total) in order, after asserting the property for every phase."""
    started = [e.phase for e in events if isinstance(e, PhaseStarted)]
    progress: dict[str, list[tuple[int, int]]] = {phase: [] for phase in started}
    for e in events:
        if isinstance(e, PhaseProgress):
            progress[e.phase].append((e.done, e.total))
    for phase, seen in progress.items():
        if not seen:
            continue
        total = seen[0][1]
        assert total > 0, (phase, seen[:5])
        assert {t for _, t in seen} == {total}, (phase, sorted({t for _, t in seen}))
        dones = [d for d, _ in seen]
        assert all(0 <= d <= total for d in dones), (phase, total, dones)
        assert dones == sorted(dones), (phase, dones)
        assert dones[-1] == total, (phase, dones[-5:], total)
    return progress


async def _compile(workspace: Path, env: dict[str, str]) -> tuple[dict, dict[str, list[tuple[int, int]]]]:
    sink = ListSink()
    report = (await compile_workspace(load_settings(workspace, env=env), events=sink)).as_dict()
    assert report["status"] == "succeeded", report["error"]
    return report, _check(sink.events)


async def test_every_phase_counts_to_a_total_known_before_it_starts_offline(sample_workspace: Path):
    report, progress = await _compile(sample_workspace, {})
    assert progress["reduce"][-1] == (report["chunks"], report["chunks"])  # the chunks it folded
    assert progress["map"] and progress["refine"]
    # A recompile with nothing changed, then one with a document added (REDUCE folds its chunk
    # alone): whatever they report holds the same.
    await _compile(sample_workspace, {})
    (sample_workspace / "documents" / "corpus" / "quokka.md").write_text(
        "# Quokka cache\n\nThe Quokka cache keeps pages of Lumen DB in memory. Quokka evicts the oldest page first.\n")
    _, progress = await _compile(sample_workspace, {})
    assert progress["reduce"] and progress["reduce"][-1][1] < report["chunks"]


async def test_reduce_counts_to_one_total_through_pair_judgments_and_summaries(sample_workspace: Path,
                                                                             llm_server: LLMServer):
    report, progress = await _compile(sample_workspace, env_for(llm_server))
    reduce = report["phases"]["reduce"]
    assert reduce["tier3_pairs"] > 0 and reduce["summaries"] > 0, reduce  # the stages whose size comes late
    assert len(progress["reduce"]) > 2
