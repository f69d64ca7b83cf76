"""The claims PLAN reads: each by id from the store once, the claim index brought up to date
with what REDUCE changed, and each subject's claims."""

from __future__ import annotations

from collections.abc import Sequence

from ..pipeline.context import CompileContext
from ..pipeline.stages import rollup
from ..storage.base import Store
from ..storage.records import Claim, Entity
from .claim_index import ClaimIndex, built_index
from .claim_index_keys import entity_set
from .claim_index_store import load_parts, open_index
from .claim_kinds import words_of
from .planning import PagePlan, Subject, subject_claim_parts, subject_claims

READ_BATCH = 5000
REBUILD_SHARE = 0.5  # changes past this share of the claims handed over: the index is built again


class ClaimReader:
    """Claims by id, read from the store once each; every claim only when the claim index is
    built again (from those REDUCE handed over, when it handed them all). `known` is what was
    read: REFINE writes from it first."""

    def __init__(self, store: Store, claims: Sequence[Claim] | None):
        self.store, self.handed = store, claims
        self.whole = False
        self.known: dict[str, Claim] = {}

    async def all(self) -> list[Claim]:
        if not self.whole:
            if self.handed is not None:
                self.known = {c.id: c for c in self.handed}
            else:
                self.known = {c.id: c async for c in self.store.scan(Claim)}  # type: ignore[misc]
            self.whole = True
        return list(self.known.values())

    async def get(self, ids: Sequence[str]) -> dict[str, Claim]:
        if not self.whole:
            missing = [i for i in dict.fromkeys(ids) if i not in self.known]
            for start in range(0, len(missing), READ_BATCH):
                for claim in await self.store.get(Claim, missing[start:start + READ_BATCH]):
                    self.known[claim.id] = claim  # type: ignore[assignment]
        return {i: self.known[i] for i in ids if i in self.known}


async def updated_claim_index(ctx: CompileContext, entities: Sequence[Entity], reader: ClaimReader) -> tuple[ClaimIndex, bool]:
    """The claim index brought up to date with what REDUCE changed, or built from every claim
    when it does not describe the REDUCE output those changes start from. Returns (index, rebuilt)."""
    reduced = ctx.state.get("reduce") or {}
    current = rollup(ctx.state, "reduce")
    # REDUCE hands what it changed since its last output; without changes handed (it found
    # nothing to do) the index must describe its output as it stands.
    since = reduced.get("claims_since") if "changed_claims" in reduced else current
    index = await open_index(ctx.store)
    words = words_of(entities)
    removed, added = list(reduced.get("old_claims") or ()), list(reduced.get("changed_claims") or ())
    # Most claims changed (REDUCE's own code did): building the index again from them costs less.
    most = reader.handed is not None and len(removed) + len(added) > REBUILD_SHARE * len(reader.handed)
    if current is not None and index.tag is not None and index.tag == since and not most:
        await load_parts(ctx.store, index, index.text_buckets([*removed, *added]))
        await load_parts(ctx.store, index, index.claim_parts([*removed, *added]))
        stale = index.apply(removed, added, words)
        rebuilt = False
    else:
        index = built_index(await reader.all(), entities)
        stale, rebuilt = set(), True
    for eid in sorted(stale):  # renamed: its word is counted again over all its claims
        await load_parts(ctx.store, index, index.all_parts(entity_set(eid)))
        found = await reader.get(index.ids(entity_set(eid)))
        index.recount(eid, words[eid], (c.text for c in found.values()))
    return index, rebuilt


async def claims_by_subject(store: Store, index: ClaimIndex, subjects: Sequence[Subject],
                            previous: dict[str, PagePlan], *, reusable: bool) -> dict[str, list[str]]:
    """Each subject's claims; an entity's are the previous plan's when its claim set did not
    change (`reusable`: that plan was made from the index as it was before this compile)."""
    out: dict[str, list[str]] = {}
    todo: list[Subject] = []
    for s in subjects:
        before = previous.get(s.id) if reusable and s.kind != "topic" else None
        if before is not None and before.kind != "topic" and entity_set(s.id) not in index.touched:
            out[s.id] = list(before.claim_ids)
        else:
            todo.append(s)
    await load_parts(store, index, [k for s in todo for k in subject_claim_parts(s, index)])
    out.update({s.id: subject_claims(s, index) for s in todo})
    return out
