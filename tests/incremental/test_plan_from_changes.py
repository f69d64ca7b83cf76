"""PLAN brought up to date from what REDUCE changed plans what PLAN over every claim plans.

After an edit REDUCE may hand PLAN only the claims it changed (its output's claims as None):
PLAN then keeps its claim index up to date from those changes and reads no other claim. The
plan and the pages it leads to must be exactly those of a PLAN that builds its index again
from every claim of the same KB.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from compendium.compiler.orchestrator import default_phases, run_compile
from compendium.engines.factory import build_embedder, build_engine
from compendium.engines.usage import UsageMeter
from compendium.operations import opened_store, resolve_template
from compendium.phases.claim_index_keys import NAMESPACE
from compendium.pipeline.context import CompileContext, PhaseResult
from compendium.settings import load_settings
from compendium.storage.records import CacheEntry, Page
from compendium.templates.schema import Template

from .corpus import make_workspace
from .test_one_path import MORE, NEW_SENTENCE, _compile_offline


async def _reduce_handing_changes_only(template: Template, ctx: CompileContext) -> PhaseResult:
    """REDUCE as it is, then handing PLAN its output's claims as None: the changes alone."""
    reduce_phase = dict(default_phases())["reduce"]
    result = await reduce_phase(template, ctx)
    records = (ctx.state.get("reduce") or {}).get("records")
    if records is not None:
        ctx.state["reduce"]["records"] = (records[0], records[1], None)
    return result


async def _compile_with(workspace: Path, phases: list[tuple[str, Any]]) -> dict[str, Any]:
    settings = load_settings(workspace, env={})
    template = resolve_template(settings, None)
    async with opened_store(settings) as store:
        usage = UsageMeter(settings.token_budget)
        engine = build_engine(settings, template, usage=usage)
        embedder = build_embedder(settings, template, usage=usage)
        ctx = CompileContext(store=store, engine=engine, embedder=embedder, template=template,
                             documents_dir=workspace / "documents")
        try:
            report = (await run_compile(ctx, phases=phases)).as_dict()
        finally:
            await engine.close()
            await embedder.close()
    assert report["status"] == "succeeded", report["error"]
    return report


async def _outcome(workspace: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The stored plan and every page, without what depends on when they were written."""
    async with opened_store(load_settings(workspace, env={})) as store:
        plan = [e.value async for e in store.scan(CacheEntry, {"namespace": "plan"})]
        pages = {}
        async for page in store.scan(Page):
            data = page.to_dict()
            for moment in ("created_at", "updated_at", "embedding"):
                data.pop(moment)
            pages[page.slug] = data
    return plan, pages


def _add_sentence(folder: Path) -> None:
    buffer = folder / "buffer.md"
    buffer.write_text(buffer.read_text(encoding="utf-8").replace(
        "Clock Sweep Policy. ", f"Clock Sweep Policy. {NEW_SENTENCE} ", 1), encoding="utf-8")


CHECKPOINTER = (  # a subject of its own: a page to CREATE
    "# Checkpointer\n\n## Duties\n\nThe Checkpointer flushes dirty pages of the Buffer Pool every five minutes. "
    "The Checkpointer writes a checkpoint record to the Redo Journal.\n\n## Tuning\n\n"
    "The Checkpointer spreads its writes over half the interval. "
    "The Checkpointer wakes early when the Redo Journal grows past a gigabyte.\n"
)


def _remove_and_add(folder: Path) -> None:
    (folder / "gateway.md").unlink()
    for name, text in {**MORE, "checkpointer.md": CHECKPOINTER}.items():
        (folder / name).write_text(text, encoding="utf-8")


async def test_a_plan_kept_up_to_date_from_changed_claims_is_the_plan_made_from_every_claim(tmp_path: Path):
    changes = make_workspace(tmp_path / "changes")
    await _compile_offline(changes)
    everything = tmp_path / "everything"
    shutil.copytree(changes, everything)
    phases = [(name, _reduce_handing_changes_only if name == "reduce" else phase) for name, phase in default_phases()]
    actions: set[str] = set()
    for edit in (_add_sentence, _remove_and_add):
        for workspace in (changes, everything):
            edit(workspace / "documents" / "kb")
        async with opened_store(load_settings(everything, env={})) as store:
            assert await store.delete(CacheEntry, {"namespace": NAMESPACE}) > 0  # its PLAN starts from no index

        by_changes = await _compile_with(changes, phases)
        by_everything = await _compile_with(everything, default_phases())

        for report in (by_changes, by_everything):
            report["phases"]["plan"].pop("seconds")
        assert by_changes["phases"]["plan"].pop("claim_index_rebuilt") == 0  # brought up to date
        assert by_everything["phases"]["plan"].pop("claim_index_rebuilt") == 1
        read, every = by_changes["phases"]["plan"].pop("claims_read"), by_everything["phases"]["plan"].pop("claims_read")
        assert read <= every == by_everything["counts"]["claims"]
        assert by_changes["phases"]["plan"] == by_everything["phases"]["plan"]
        plan, pages = await _outcome(changes)
        assert (plan, pages) == await _outcome(everything)
        actions |= {p["action"] for entries in plan for p in entries}
    assert {"KEEP", "UPDATE", "CREATE", "DELETE"} <= actions
