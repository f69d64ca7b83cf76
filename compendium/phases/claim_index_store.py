"""The claim index to and from the store: opened with its directory, parts read as they are
needed, a topic's claims counted again from its members' parts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..storage.base import Store
from ..storage.records import CacheEntry
from .claim_index import ClaimIndex
from .claim_index_keys import (
    DIR_PREFIX,
    GROUP_PREFIX,
    NAMESPACE,
    STATE_KEY,
    TEXT_PREFIX,
    VERSION,
    entity_set,
)


async def open_index(store: Store) -> ClaimIndex:
    """The index as stored: its directory, word counts and groups; no part yet."""
    found = await store.get(CacheEntry, [STATE_KEY])
    if not found:
        return ClaimIndex(complete=True)
    state = found[0].value or {}  # type: ignore[attr-defined]
    if state.get("version") != VERSION:
        return ClaimIndex(complete=True)  # laid out otherwise: built again (see plan_claims.py)
    index = ClaimIndex(tag=state.get("tag"), words=dict(state.get("words") or {}), plans=dict(state.get("plans") or {}),
                       repeated=dict(state.get("repeated") or {}))
    keys = [f"{DIR_PREFIX}{a}{b}" for a in "0123456789abcdef" for b in "0123456789abcdef"]
    for entry in await store.get(CacheEntry, keys):
        index.layout.update(entry.value or {})  # type: ignore[attr-defined]
    wanted = [GROUP_PREFIX + gid for gid in state.get("groups") or ()]
    for entry in await store.get(CacheEntry, wanted):
        index.groups[entry.id[len(GROUP_PREFIX):]] = entry.value  # type: ignore[attr-defined]
    return index


_GET_BATCH = 900  # ids per read: under SQLite's bound on query parameters


async def load_parts(store: Store, index: ClaimIndex, keys: Iterable[str]) -> None:
    """Bring these parts into memory (an absent part is an empty one)."""
    wanted = index.missing(keys)
    for start in range(0, len(wanted), _GET_BATCH):
        batch = wanted[start:start + _GET_BATCH]
        found = {e.id: e.value for e in await store.get(CacheEntry, batch)}  # type: ignore[attr-defined]
        for key in batch:
            if key.startswith(TEXT_PREFIX):
                index.texts[key] = dict(found.get(key) or {})
            else:
                index.parts[key] = set(found.get(key) or ())


async def reset_index(store: Store) -> None:
    """Forget the stored index (it is written again whole)."""
    await store.delete(CacheEntry, {"namespace": NAMESPACE})


async def regroup(store: Store, index: ClaimIndex, group_id: str, members: Sequence[str], k: int) -> list[str]:
    """The group's first `k` claims for these members (see ClaimIndex.ranking), counting the
    group again from its members' sets when its members changed or its kept claims ran short."""
    ranked = index.ranking(group_id, k) if index.members(group_id) == sorted(set(members)) else None
    if ranked is None:
        await load_parts(store, index, [key for m in set(members) for key in index.all_parts(entity_set(m))])
        index.count_group(group_id, members)
        ranked = index.ranking(group_id, k)
    assert ranked is not None  # counted from every claim: nothing is short
    return ranked
