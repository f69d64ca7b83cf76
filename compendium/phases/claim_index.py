"""What PLAN keeps of every claim between compiles: per entity and per topic, sorted claim-id sets
and word counts, stored in small buckets and brought up to date from REDUCE's changes.

A page is planned from its subject's first claims (by id), how many claims name it and whether
they write its name as a name; a topic page from the claims naming most of its members. Reading
every claim of a large KB for that costs seconds (737k claims at 100k chunks), so PLAN keeps
those answers as sets of claim ids, each split by id prefix into parts of at most PART_LIMIT ids:
an edit reads and rewrites the few parts its claims fall in, and a subject's first claims are
the first parts of its set. A compile from scratch is the same bookkeeping with every claim new.

The pure `ClaimIndex` works on the parts in memory; `open_index`, `load_parts` and
`index_entries` move them to and from the store.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import xxhash

from ..storage.base import Store
from ..storage.records import CacheEntry, Claim, Entity

NAMESPACE = "plan-claims"
STATE_KEY = f"{NAMESPACE}:state"
PART_LIMIT = 1024  # ids per part: a split doubles nothing, it goes 16 ways
_DIR_PREFIX = f"{NAMESPACE}:dir:"
_PART_PREFIX = f"{NAMESPACE}:part:"
_PLAIN_TITLE_WORD = re.compile(r"^[A-Z][a-z]+$")


def entity_set(entity_id: str) -> str:
    return f"e:{entity_id}"


def topic_set(topic_id: str, hits: int) -> str:
    """The claims naming exactly `hits` of the topic's members."""
    return f"t:{topic_id}:{hits}"


@lru_cache(maxsize=65536)
def _dir_key(set_id: str) -> str:
    return _DIR_PREFIX + xxhash.xxh3_64_hexdigest(set_id.encode())[:2]


def _part_key(set_id: str, prefix: str) -> str:
    return f"{_PART_PREFIX}{set_id}:{prefix}"


def name_word(entity: Entity) -> str | None:
    """The capitalised plain word ("Lock") a subject is named by, when it is one: such a name may
    be a common word, told by whether its claims capitalise it inside a sentence."""
    name = entity.name.strip()
    if name.islower() and entity.aliases and entity.aliases[0].lower() == name:
        name = entity.aliases[0]  # REDUCE took the corpus's lowercase spelling: judge the capitalised one
    if not _PLAIN_TITLE_WORD.match(name) or any(a.lower() != name.lower() for a in entity.aliases):
        return None
    return name


@lru_cache(maxsize=4096)
def _inside(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<=[^\s.!?:]\s){re.escape(word)}\b|(?<=[(\"'“]){re.escape(word)}\b")


@lru_cache(maxsize=4096)
def _lowercase(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")


def words_of(entities: Iterable[Entity]) -> dict[str, list[str]]:
    """Entity id -> [its name word, that word in lowercase as the prose would write it], for the
    entities named by one plain word (the others need no word counts)."""
    out = {}
    for e in entities:
        word = name_word(e)
        if word is not None:
            out[e.id] = [word, e.name.strip().lower()]
    return out


@dataclass
class ClaimIndex:
    """Sorted claim-id sets, each kept as parts by id prefix (`layout`: set id -> {"d": prefix
    length, "n": {prefix: ids}}), and per entity its word counts (`words`: entity id -> [word,
    claims capitalising it inside a sentence, lowercase word, claims writing it so])."""

    tag: str | None = None  # the REDUCE output these sets describe
    layout: dict[str, dict[str, Any]] = field(default_factory=dict)
    words: dict[str, list[Any]] = field(default_factory=dict)
    topics: dict[str, list[str]] = field(default_factory=dict)  # topic id -> members the sets count
    plans: dict[str, str | None] = field(default_factory=dict)  # stored plan key -> the tag it was planned at
    parts: dict[str, set[str]] = field(default_factory=dict)  # part key -> ids, those in memory
    complete: bool = False  # every part is in memory (an index built here from scratch)
    touched: set[str] = field(default_factory=set)  # sets whose ids changed in this compile
    regrouped: set[str] = field(default_factory=set)  # topics whose members changed in this compile
    _dirty_parts: set[str] = field(default_factory=set)
    _dropped: set[str] = field(default_factory=set)  # sets of topics gone
    _gone_parts: set[str] = field(default_factory=set)

    # -- reading ---------------------------------------------------------------------------

    def size(self, set_id: str) -> int:
        found = self.layout.get(set_id)
        return sum(found["n"].values()) if found else 0

    def facts(self, entity_id: str) -> int:
        """How many claims name the entity."""
        return self.size(entity_set(entity_id))

    def common_words(self) -> set[str]:
        """Entities named by one capitalised plain word that none of their (two or more) claims
        capitalises inside a sentence: a common word, not a name (see planning.common_word_subjects)."""
        return {eid for eid, (_w, inside, _l, _lower) in self.words.items() if inside == 0 and self.facts(eid) >= 2}

    def written_lowercase(self, entity_id: str) -> bool:
        found = self.words.get(entity_id)
        return bool(found and found[3])

    def part_of(self, set_id: str, claim_id: str) -> str:
        found = self.layout.get(set_id)
        return _part_key(set_id, claim_id[: found["d"] if found else 0])

    def _loaded(self, key: str) -> bool:
        return self.complete or key in self.parts

    def missing(self, keys: Iterable[str]) -> list[str]:
        """Of these part keys, those not in memory yet (load them before using them)."""
        return sorted({k for k in keys if not self._loaded(k)})

    def all_parts(self, set_id: str) -> list[str]:
        found = self.layout.get(set_id)
        return [_part_key(set_id, p) for p in sorted(found["n"])] if found else []

    def head_parts(self, set_id: str, k: int) -> list[str]:
        """The parts holding the set's first `k` ids."""
        found = self.layout.get(set_id)
        if not found:
            return []
        out, seen = [], 0
        for prefix in sorted(found["n"]):
            if seen >= k:
                break
            out.append(_part_key(set_id, prefix))
            seen += found["n"][prefix]
        return out

    def head(self, set_id: str, k: int) -> list[str]:
        """The set's first `k` ids in order (its head parts must be in memory)."""
        out: list[str] = []
        for key in self.head_parts(set_id, k):
            out.extend(sorted(self.parts.get(key, ())))
        return out[:k]

    def ids(self, set_id: str) -> list[str]:
        return [i for key in self.all_parts(set_id) for i in sorted(self.parts.get(key, ()))]

    def topic_levels(self, topic_id: str) -> list[int]:
        """The member counts the topic's claims reach, most first."""
        members = self.topics.get(topic_id, ())
        return [h for h in range(len(members), 0, -1) if topic_set(topic_id, h) in self.layout]

    def topic_head_parts(self, topic_id: str, k: int) -> list[str]:
        out, seen = [], 0
        for h in self.topic_levels(topic_id):
            if seen >= k:
                break
            out += self.head_parts(topic_set(topic_id, h), k - seen)
            seen += self.size(topic_set(topic_id, h))
        return out

    def topic_ranking(self, topic_id: str, k: int) -> list[str]:
        """The topic's first `k` claims: those naming most members first, then by id."""
        out: list[str] = []
        for h in self.topic_levels(topic_id):
            if len(out) >= k:
                break
            out += self.head(topic_set(topic_id, h), k - len(out))
        return out

    # -- changing --------------------------------------------------------------------------

    def _add(self, set_id: str, claim_id: str) -> None:
        key = self.part_of(set_id, claim_id)
        ids = self.parts.setdefault(key, set())
        if claim_id in ids:
            return
        ids.add(claim_id)
        found = self.layout.setdefault(set_id, {"d": 0, "n": {}})
        prefix = key[len(_PART_PREFIX) + len(set_id) + 1:]
        found["n"][prefix] = found["n"].get(prefix, 0) + 1
        self._changed(set_id, key)

    def _discard(self, set_id: str, claim_id: str) -> None:
        key = self.part_of(set_id, claim_id)
        ids = self.parts.get(key)
        if not ids or claim_id not in ids:
            return
        ids.discard(claim_id)
        found = self.layout[set_id]
        prefix = key[len(_PART_PREFIX) + len(set_id) + 1:]
        found["n"][prefix] -= 1
        if not found["n"][prefix]:
            del found["n"][prefix]
            if not found["n"]:
                del self.layout[set_id]
        self._changed(set_id, key)

    def _changed(self, set_id: str, key: str) -> None:
        self.touched.add(set_id)
        self._dirty_parts.add(key)

    def claim_parts(self, claims: Iterable[Claim]) -> list[str]:
        """The parts `apply` reads and writes for these claims."""
        keys = []
        for c in claims:
            ents = set(c.entity_ids)
            for eid in ents:
                keys.append(self.part_of(entity_set(eid), c.id))
            for tid, members in self.topics.items():
                h = len(ents.intersection(members))
                if h:
                    keys.append(self.part_of(topic_set(tid, h), c.id))
        return keys

    def apply(self, removed: Iterable[Claim], added: Iterable[Claim], words: Mapping[str, Sequence[str]]) -> set[str]:
        """Take out the old versions of changed and removed claims, put in the new ones (their
        parts in memory: see claim_parts). `words`: entity id -> [name word, lowercase word]
        (see words_of). Returns the entities whose word counts must be made again from all
        their claims (see recount): their word changed, or they had claims before they had one."""
        stale = {eid for eid, found in self.words.items() if eid in words and list(words[eid]) != found[::2]}
        stale |= {eid for eid in words if eid not in self.words and self.facts(eid)}
        for eid in stale:
            self.words.pop(eid, None)
        topics = [(tid, set(members)) for tid, members in self.topics.items()]
        for sign, claims in ((-1, removed), (1, added)):
            step = self._discard if sign < 0 else self._add
            for c in claims:
                ents = dict.fromkeys(c.entity_ids)
                for eid in ents:
                    step(entity_set(eid), c.id)
                    pair = words.get(eid)
                    if pair is None or eid in stale:
                        continue
                    counts = self.words.get(eid)
                    if counts is None:
                        counts = self.words[eid] = [pair[0], 0, pair[1], 0]
                    if _inside(pair[0]).search(c.text):
                        counts[1] += sign
                    if _lowercase(pair[1]).search(c.text):
                        counts[3] += sign
                for tid, members in topics:
                    h = len(members.intersection(ents))
                    if h:
                        step(topic_set(tid, h), c.id)
        for eid in [e for e in self.words if e not in words or not self.facts(e)]:
            del self.words[eid]
        return {eid for eid in stale if self.facts(eid)}

    def recount(self, entity_id: str, pair: Sequence[str], texts: Iterable[str]) -> None:
        """Word counts of an entity from the texts of all its claims."""
        inside, lower = _inside(pair[0]), _lowercase(pair[1])
        texts = list(texts)
        self.words[entity_id] = [pair[0], sum(1 for t in texts if inside.search(t)),
                                 pair[1], sum(1 for t in texts if lower.search(t))]

    def member_claims(self, topic_id: str, members: Sequence[str]) -> list[str]:
        """Ids of the claims whose member count changes if the topic's members become `members`:
        those of the members that come or go (their entity sets must be in memory)."""
        old = set(self.topics.get(topic_id, ()))
        moved = old.symmetric_difference(members)
        return sorted({i for m in moved for i in self.ids(entity_set(m))})

    def retopic(self, topic_id: str, members: Sequence[str], claims: Mapping[str, Sequence[str]]) -> None:
        """The topic's sets for its new `members`; `claims`: id -> entity ids of every claim
        member_claims named (their topic parts in memory, see retopic_parts)."""
        old, new = set(self.topics.get(topic_id, ())), set(members)
        for cid, entity_ids in claims.items():
            ents = set(entity_ids)
            before, after = len(ents & old), len(ents & new)
            if before != after:
                if before:
                    self._discard(topic_set(topic_id, before), cid)
                if after:
                    self._add(topic_set(topic_id, after), cid)
        if new != old:
            self.regrouped.add(topic_id)
        self.topics[topic_id] = sorted(new)

    def retopic_parts(self, topic_id: str, members: Sequence[str], claims: Mapping[str, Sequence[str]]) -> list[str]:
        old, new = set(self.topics.get(topic_id, ())), set(members)
        keys = []
        for cid, entity_ids in claims.items():
            ents = set(entity_ids)
            for h in {len(ents & old), len(ents & new)} - {0}:
                keys.append(self.part_of(topic_set(topic_id, h), cid))
        return keys

    def drop_topic(self, topic_id: str) -> None:
        for h in range(1, len(self.topics.get(topic_id, ())) + 1):
            set_id = topic_set(topic_id, h)
            for key in self.all_parts(set_id):
                self.parts.pop(key, None)
                self._gone_parts.add(key)
            if self.layout.pop(set_id, None) is not None:
                self._dropped.add(set_id)
        self.topics.pop(topic_id, None)
        self.regrouped.add(topic_id)

    def oversized(self) -> list[str]:
        """Sets with a part past PART_LIMIT: split them (all their parts in memory) with `split`."""
        return sorted({set_id for set_id in self.touched if set_id in self.layout
                       and max(self.layout[set_id]["n"].values()) > PART_LIMIT})

    def split(self, set_id: str) -> None:
        """Spread the set over parts of a longer prefix, so none holds more than PART_LIMIT ids
        when ids are spread evenly (they are hashes)."""
        ids = self.ids(set_id)
        depth = self.layout[set_id]["d"]
        while len(ids) > PART_LIMIT * 16 ** depth and depth < 8:
            depth += 1
        depth = max(depth, self.layout[set_id]["d"] + 1)
        for key in self.all_parts(set_id):
            self.parts.pop(key, None)
            self._gone_parts.add(key)
        self.layout[set_id] = {"d": depth, "n": {}}
        for claim_id in ids:
            self._add(set_id, claim_id)

    # -- storing ---------------------------------------------------------------------------

    def entries(self, now: float) -> tuple[list[CacheEntry], list[str]]:
        """The records to write and the ids to delete for what changed since loaded."""
        write: list[CacheEntry] = []
        dirs: dict[str, dict[str, Any]] = {}
        changed = self.layout if self.complete else self.touched | self._dropped
        wanted = {_dir_key(s) for s in changed}
        for set_id, found in self.layout.items():
            key = _dir_key(set_id)
            if key in wanted:
                dirs.setdefault(key, {})[set_id] = found
        write += [CacheEntry(id=k, namespace=NAMESPACE, value=v, created_at=now) for k, v in dirs.items()]
        delete = sorted(wanted - set(dirs))
        parts = self._dirty_parts | (set(self.parts) if self.complete else set())
        for key in sorted(parts):
            ids = self.parts.get(key)
            if ids:
                write.append(CacheEntry(id=key, namespace=NAMESPACE, value=sorted(ids), created_at=now))
            else:
                delete.append(key)
        written = {e.id for e in write}
        delete += sorted(k for k in self._gone_parts if k not in written)
        write.append(CacheEntry(id=STATE_KEY, namespace=NAMESPACE, created_at=now, value={
            "tag": self.tag, "words": self.words, "topics": self.topics, "plans": self.plans}))
        return write, sorted(set(delete))


def built_index(claims: Iterable[Claim], entities: Iterable[Entity], tag: str | None = None) -> ClaimIndex:
    """An index of these claims from scratch, every part in memory (word counts included)."""
    index = ClaimIndex(tag=tag, complete=True)
    words = words_of(entities)
    index.apply([], claims, words)
    for set_id in index.oversized():
        index.split(set_id)
    return index


async def open_index(store: Store) -> ClaimIndex:
    """The index as stored: its directory and word counts, no part yet."""
    found = await store.get(CacheEntry, [STATE_KEY])
    if not found:
        return ClaimIndex(complete=True)
    state = found[0].value or {}  # type: ignore[attr-defined]
    index = ClaimIndex(tag=state.get("tag"), words=dict(state.get("words") or {}),
                       topics=dict(state.get("topics") or {}), plans=dict(state.get("plans") or {}))
    keys = [f"{_DIR_PREFIX}{a}{b}" for a in "0123456789abcdef" for b in "0123456789abcdef"]
    for entry in await store.get(CacheEntry, keys):
        index.layout.update(entry.value or {})  # type: ignore[attr-defined]
    return index


_GET_BATCH = 900  # ids per read: under SQLite's bound on query parameters


async def load_parts(store: Store, index: ClaimIndex, keys: Iterable[str]) -> None:
    """Bring these parts into memory (an absent part is an empty one)."""
    wanted = index.missing(keys)
    for start in range(0, len(wanted), _GET_BATCH):
        batch = wanted[start:start + _GET_BATCH]
        found = {e.id: e.value for e in await store.get(CacheEntry, batch)}  # type: ignore[attr-defined]
        for key in batch:
            index.parts[key] = set(found.get(key) or ())


async def reset_index(store: Store) -> None:
    """Forget the stored index (it is written again whole)."""
    await store.delete(CacheEntry, {"namespace": NAMESPACE})


async def regroup(store: Store, index: ClaimIndex, group_id: str, members: Sequence[str],
                  entity_ids_of: Callable[[list[str]], Awaitable[Mapping[str, Sequence[str]]]]) -> None:
    """The index's sets of a topic (or outline node) for these members: only the claims of the
    members that came or went are read (`entity_ids_of`: claim ids -> their entity ids)."""
    if sorted(index.topics.get(group_id, ())) == sorted(set(members)):
        return
    moved = set(index.topics.get(group_id, ())).symmetric_difference(members)
    await load_parts(store, index, [k for m in moved for k in index.all_parts(entity_set(m))])
    claims = await entity_ids_of(index.member_claims(group_id, members))
    await load_parts(store, index, index.retopic_parts(group_id, members, claims))
    index.retopic(group_id, members, claims)
