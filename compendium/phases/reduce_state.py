"""What REDUCE keeps between runs, so that a recompile redoes only what the changed chunks touch.

Each part is a map kept in buckets of CacheEntry records (by a hash of the key): a run reads
the buckets it needs and rewrites only the buckets it changed, so no one record grows with the
knowledge base past what a server takes in one packet, and a one-document edit writes a few.
Everything here is a function of the extracts REDUCE last reduced (`Ledger.base` names them),
so a run from an empty ledger over every extract is the same computation as any other run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import xxhash

from ..storage.base import Store
from ..storage.records import CacheEntry

NAMESPACE = "reduce"
LEDGER_VERSION = 4  # 3: claim-words counts a word's occurrences, no longer the claims holding it;
# 4: name keys keep the underscores at an identifier's ends
EMPTY_BASE = "0" * 32
_GET_BATCH = 500


async def get_in_batches(store: Store | None, kind: type, ids: Sequence[str]) -> list[Any]:
    """store.get of many ids, a batch at a time (none without a store)."""
    if store is None or not ids:
        return []
    out: list[Any] = []
    for s in range(0, len(ids), _GET_BATCH):
        out += await store.get(kind, list(ids[s : s + _GET_BATCH]))
    return out


def _bucket(key: str, buckets: int) -> int:
    return xxhash.xxh3_64_intdigest(key.encode()) % buckets


def add_count(counts: dict[str, Any], key: str, n: int) -> None:
    """Add n to the count under key (n < 0 takes away); a count down to zero drops its key."""
    total = counts.get(key, 0) + n
    if total > 0:
        counts[key] = total
    else:
        counts.pop(key, None)


class BucketedMap:
    """A str -> JSON map stored as `buckets` CacheEntry records named `reduce:<name>:<n>`."""

    def __init__(self, name: str, buckets: int) -> None:
        self.name, self.buckets = name, buckets
        self._data: dict[int, dict[str, Any]] = {}  # bucket -> its map, for buckets read (or created)
        self._dirty: set[int] = set()

    def entry_id(self, bucket: int) -> str:
        return f"{NAMESPACE}:{self.name}:{bucket:03x}"

    async def _read(self, store: Store, wanted: Iterable[int]) -> None:
        todo = sorted(b for b in set(wanted) if b not in self._data)
        ids = [self.entry_id(b) for b in todo]
        found = {e.id: e.value for e in await get_in_batches(store, CacheEntry, ids)}
        for b in todo:
            self._data[b] = dict(found.get(self.entry_id(b)) or {})

    async def load_all(self, store: Store) -> None:
        await self._read(store, range(self.buckets))

    async def load(self, store: Store, keys: Iterable[str]) -> None:
        await self._read(store, (_bucket(k, self.buckets) for k in keys))

    def clear(self) -> None:
        """Empty, as if nothing had been stored: saving then replaces every stored bucket."""
        self._data = {b: {} for b in range(self.buckets)}
        self._dirty = set(range(self.buckets))

    def _of(self, key: str) -> tuple[int, dict[str, Any]]:
        """The key's bucket and its map (the key hashed once per operation)."""
        b = _bucket(key, self.buckets)
        data = self._data.get(b)
        if data is None:
            raise KeyError(f"{self.name}: bucket of {key!r} was not read")
        return b, data

    def bucket(self, key: str) -> dict[str, Any]:
        """The map holding the key, to change in place: its bucket is written at the next save."""
        b, data = self._of(key)
        self._dirty.add(b)
        return data

    def slot(self, key: str) -> tuple[int, dict[str, Any]]:
        """The key's bucket and the map holding it; a change made in that map is saved only once
        `mark` names the bucket."""
        return self._of(key)

    def mark(self, bucket: int) -> None:
        self._dirty.add(bucket)

    def get(self, key: str, default: Any = None) -> Any:
        return self._of(key)[1].get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self._of(key)[1]

    def set(self, key: str, value: Any) -> None:
        b, data = self._of(key)
        data[key] = value
        self._dirty.add(b)

    def touch(self, key: str) -> None:
        """The value under key was changed in place."""
        self._dirty.add(_bucket(key, self.buckets))

    def pop(self, key: str) -> None:
        b, data = self._of(key)
        if data.pop(key, None) is not None:
            self._dirty.add(b)

    def add_counts(self, counts: dict[str, int], sign: int) -> None:
        """Values are counts: add these (sign 1) or take them away (sign -1); zero drops the key."""
        for key, n in counts.items():
            b, data = self._of(key)
            add_count(data, key, sign * n)
            self._dirty.add(b)

    def items(self) -> Iterable[tuple[str, Any]]:
        """Every key and value read so far."""
        for b in sorted(self._data):
            yield from self._data[b].items()

    def changes(self, now: float) -> tuple[list[CacheEntry], list[str]]:
        """The buckets to write, and the ids of emptied buckets to delete."""
        write, gone = [], []
        for b in sorted(self._dirty):
            value = self._data[b]
            if value:
                write.append(CacheEntry(id=self.entry_id(b), namespace=NAMESPACE, value=value, created_at=now))
            else:
                gone.append(self.entry_id(b))
        return write, gone


def sig_key(category: str, type_: str, name: str, aliases: Iterable[str]) -> str:
    """A mention signature's key: 16 hex digits of its canonical JSON."""
    text = json.dumps([category, type_, name, list(aliases)], ensure_ascii=False, separators=(",", ":"))
    return xxhash.xxh3_64_hexdigest(text.encode())


@dataclass
class Ledger:
    """REDUCE's state: see the module docstring. `meta` holds the small KB-wide tables."""

    base: str = EMPTY_BASE  # extracts_fingerprint of the extracts reduced
    meta: dict[str, Any] = field(default_factory=dict)
    # chunk id -> {"fp", "doc", "m": [sig keys], "r": [[relation id, description]], "f": [norms], "x": [dropped, loops]}
    chunks: BucketedMap = field(default_factory=lambda: BucketedMap("chunks", 256))
    # sig key -> {"k": [category, type, name, aliases], "c": {chunk: first position},
    #             "n": {chunk: mentions, where more than one}, "d": {document: chunks}, "s": {description: {chunk: 1}}}
    sigs: BucketedMap = field(default_factory=lambda: BucketedMap("sigs", 64))
    # relation id -> {"s", "d", "t", "c": {chunk: mentions}, "x": {description: mentions}}
    relations: BucketedMap = field(default_factory=lambda: BucketedMap("relations", 256))
    # normalised name -> {chunk: 1}: chunks resolving that name KB-wide (not among their own)
    foreign: BucketedMap = field(default_factory=lambda: BucketedMap("foreign", 64))
    # word -> count: words as written in every claim (common_words), and each lowercase word (term_mentions)
    words: BucketedMap = field(default_factory=lambda: BucketedMap("words", 16))
    claim_words: BucketedMap = field(default_factory=lambda: BucketedMap("claim-words", 16))
    # term spelling -> {"p": [claim ids], "k": [claim ids as code], "a": as code, "w": as plain word}
    spellings: BucketedMap = field(default_factory=lambda: BucketedMap("spellings", 64))
    fresh: bool = False

    META_ID = f"{NAMESPACE}:ledger"

    @classmethod
    async def open(cls, store: Store) -> Ledger:
        """The stored ledger with its KB-wide parts read (an empty one when none is usable)."""
        ledger = cls()
        found = await store.get(CacheEntry, [cls.META_ID])
        meta = dict(found[0].value or {}) if found else {}  # type: ignore[attr-defined]
        if meta.get("version") != LEDGER_VERSION:
            return cls.empty()
        ledger.base, ledger.meta = meta.pop("base"), meta
        for part in (ledger.sigs, ledger.words, ledger.claim_words):
            await part.load_all(store)
        return ledger

    @classmethod
    def empty(cls) -> Ledger:
        ledger = cls(fresh=True)
        for part in ledger.parts():
            part.clear()
        return ledger

    def parts(self) -> tuple[BucketedMap, ...]:
        return (self.chunks, self.sigs, self.relations, self.foreign, self.words, self.claim_words, self.spellings)

    def changes(self, base: str) -> tuple[list[CacheEntry], list[str]]:
        now = time.time()
        write: list[CacheEntry] = [CacheEntry(id=self.META_ID, namespace=NAMESPACE,
                                              value={**self.meta, "version": LEDGER_VERSION, "base": base}, created_at=now)]
        gone: list[str] = []
        for part in self.parts():
            w, g = part.changes(now)
            write += w
            gone += g
        return write, gone
