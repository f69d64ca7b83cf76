"""What PLAN keeps of every claim between compiles: per entity its sorted claim ids and word
counts, per topic (or outline node) its claims by how many members they name, stored in small
buckets and brought up to date from REDUCE's changes.

A page is planned from its subject's first claims (by id), how many claims name it and whether
they write its name as a name; a topic page from the claims naming most of its members. Reading
every claim of a large KB for that costs seconds (737k claims at 100k chunks), so PLAN keeps:
- per entity, the set of its claim ids, split by id prefix into parts of at most PART_LIMIT
  ids: an edit reads and rewrites the few parts its claims fall in, and an entity's first
  claims are in the first parts of its set; and the set of those shaped as authored
  definitions, which its page is offered first;
- per topic, for each member count, how many claims name that many members and the first
  RESERVE of them by id (exactly those: a claim that comes in is kept when it sorts among them,
  one that goes is dropped). A topic whose members change, or whose kept claims run short of
  what its page takes, is counted again from its members' sets.
- per claim text, the claims writing it and their documents: a sentence written word for word
  in REPEATED_IN documents or more ("Mandatory arguments to long options are mandatory for short
  options too.") is the manual's furniture, not a fact of any one subject, and sits in no
  entity's set (an entry of a definition list never is: see claim_kinds.an_entry). When a text crosses that line, its
  claims leave or join their entities' sets, so those pages are planned again.
A compile from scratch is the same bookkeeping with every claim new.

The pure `ClaimIndex` works on what is in memory; `ClaimIndex.entries` and claim_index_store
(`open_index`, `load_parts`, `regroup`) move it to and from the store; claim_index_keys names
where each piece is kept, claim_kinds what a claim is shaped as.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engines.offline.whole_words import has_word, inside_sentence
from ..storage.records import CacheEntry, Claim, Entity
from .claim_index_keys import (
    GROUP_PREFIX,
    NAMESPACE,
    PART_LIMIT,
    PART_PREFIX,
    STATE_KEY,
    VERSION,
    defining_set,
    depth_for,
    dir_key,
    entity_set,
    part_key,
    text_bucket,
    text_key,
)
from .claim_kinds import an_entry, defining, words_of

RESERVE = 240  # claims kept per topic and member count: four pages' worth (planning.MAX_TOPIC_CLAIMS)
REPEATED_IN = 5  # documents writing one sentence word for word: furniture from there on


def _documents(claims: Mapping[str, Sequence[Any]]) -> int:
    return len({document for document, _chunk, _entities in claims.values()})


@dataclass
class ClaimIndex:
    """Sorted claim-id sets, each kept as parts by id prefix (`layout`: set id -> {"d": prefix
    length, "n": {prefix: ids}}); per entity its word counts (`words`: entity id -> [word,
    claims capitalising it inside a sentence, lowercase word, claims writing it so]); per topic
    its members and levels (`groups`: id -> {"members": [...], "levels": {member count: [claims,
    first RESERVE claim ids]}})."""

    tag: str | None = None  # the REDUCE output this index describes
    layout: dict[str, dict[str, Any]] = field(default_factory=dict)
    words: dict[str, list[Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    plans: dict[str, str | None] = field(default_factory=dict)  # stored plan key -> the tag it was planned at
    parts: dict[str, set[str]] = field(default_factory=dict)  # part key -> ids, those in memory
    # text bucket key -> {text key: {claim id: [document id, chunk id, entity ids]}}, the buckets in memory
    texts: dict[str, dict[str, dict[str, list[Any]]]] = field(default_factory=dict)
    repeated: dict[str, list[str]] = field(default_factory=dict)  # furniture text key -> the chunks writing it
    complete: bool = False  # every part is in memory (an index built here from scratch)
    touched: set[str] = field(default_factory=set)  # sets whose ids changed in this compile
    changed_groups: set[str] = field(default_factory=set)  # groups whose claims or members changed
    _dirty_parts: set[str] = field(default_factory=set)
    _dirty_texts: set[str] = field(default_factory=set)
    _gone_parts: set[str] = field(default_factory=set)
    _gone_groups: set[str] = field(default_factory=set)

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
        return part_key(set_id, claim_id[: found["d"] if found else 0])

    def missing(self, keys: Iterable[str]) -> list[str]:
        """Of these part or text bucket keys, those not in memory yet (load them before using them)."""
        if self.complete:
            return []
        return sorted({k for k in keys if k not in self.parts and k not in self.texts})

    def furniture(self, text: str) -> bool:
        """Is this claim text written word for word in REPEATED_IN documents?"""
        return text_key(text) in self.repeated

    def furniture_by_chunk(self) -> dict[str, list[str]]:
        """Chunk id -> the furniture text keys it writes: sentences its passages leave out."""
        out: dict[str, list[str]] = defaultdict(list)
        for key, chunks in sorted(self.repeated.items()):
            for chunk in chunks:
                out[chunk].append(key)
        return dict(out)

    @staticmethod
    def text_buckets(claims: Iterable[Claim]) -> list[str]:
        """The text buckets `apply` reads and writes for these claims (load them before claim_parts)."""
        return sorted({text_bucket(text_key(c.text)) for c in claims if not an_entry(c.text)})

    def all_parts(self, set_id: str) -> list[str]:
        found = self.layout.get(set_id)
        return [part_key(set_id, p) for p in sorted(found["n"])] if found else []

    def head_parts(self, set_id: str, k: int) -> list[str]:
        """The parts holding the set's first `k` ids."""
        found = self.layout.get(set_id)
        if not found:
            return []
        out, seen = [], 0
        for prefix in sorted(found["n"]):
            if seen >= k:
                break
            out.append(part_key(set_id, prefix))
            seen += found["n"][prefix]
        return out

    def head(self, set_id: str, k: int) -> list[str]:
        """The set's first `k` ids in order (its head parts in memory)."""
        out: list[str] = []
        for key in self.head_parts(set_id, k):
            out.extend(sorted(self.parts.get(key, ())))
        return out[:k]

    def ids(self, set_id: str) -> list[str]:
        """Every id of the set, in order (all its parts in memory)."""
        return [i for key in self.all_parts(set_id) for i in sorted(self.parts.get(key, ()))]

    def members(self, group_id: str) -> list[str]:
        return list((self.groups.get(group_id) or {}).get("members", ()))

    def ranking(self, group_id: str, k: int) -> list[str] | None:
        """The group's first `k` claims: those naming most members first, then by id; None when
        the claims kept run short (count the group again: see count_group)."""
        levels = (self.groups.get(group_id) or {}).get("levels", {})
        out: list[str] = []
        for h in sorted(levels, key=int, reverse=True):
            count, first = levels[h]
            want = min(count, k - len(out))
            if want <= 0:
                break
            if len(first) < want:
                return None
            out += first[:want]
        return out

    # -- changing --------------------------------------------------------------------------

    def _add(self, set_id: str, claim_id: str) -> None:
        key = self.part_of(set_id, claim_id)
        ids = self.parts.setdefault(key, set())
        if claim_id in ids:
            return
        ids.add(claim_id)
        found = self.layout.setdefault(set_id, {"d": 0, "n": {}})
        prefix = key[len(PART_PREFIX) + len(set_id) + 1:]
        found["n"][prefix] = found["n"].get(prefix, 0) + 1
        self.touched.add(set_id)
        self._dirty_parts.add(key)

    def _discard(self, set_id: str, claim_id: str) -> None:
        key = self.part_of(set_id, claim_id)
        ids = self.parts.get(key)
        if not ids or claim_id not in ids:
            return
        ids.discard(claim_id)
        found = self.layout[set_id]
        prefix = key[len(PART_PREFIX) + len(set_id) + 1:]
        found["n"][prefix] -= 1
        if not found["n"][prefix]:
            del found["n"][prefix]
            if not found["n"]:
                del self.layout[set_id]
        self.touched.add(set_id)
        self._dirty_parts.add(key)

    def _level(self, group_id: str, hits: int, claim_id: str, sign: int) -> None:
        levels = self.groups[group_id]["levels"]
        level = levels.setdefault(str(hits), [0, []])
        count, first = level
        if sign > 0:
            # Kept when it sorts among the first kept, or when every claim of the level is kept.
            if len(first) == count or (first and claim_id < first[-1]):
                bisect.insort(first, claim_id)
                del first[RESERVE:]
            level[0] = count + 1
        else:
            at = bisect.bisect_left(first, claim_id)
            if at < len(first) and first[at] == claim_id:
                del first[at]
            level[0] = count - 1
            if level[0] <= 0:
                del levels[str(hits)]
        self.changed_groups.add(group_id)

    def claim_parts(self, claims: Iterable[Claim]) -> list[str]:
        """The parts `apply` reads and writes for these claims and for the claims that write the
        same sentences, which join or leave their sets when it becomes furniture or stops being
        it (their text buckets in memory: see text_buckets)."""
        claims = list(claims)
        out = [self.part_of(set_of(eid), c.id) for c in claims for eid in set(c.entity_ids)
               for set_of in ((entity_set, defining_set) if defining(c.text) else (entity_set,))]
        for key in {text_key(c.text) for c in claims if not an_entry(c.text)}:
            for claim_id, (_document, _chunk, eids) in self.texts.get(text_bucket(key), {}).get(key, {}).items():
                out += [self.part_of(entity_set(eid), claim_id) for eid in eids]
        return out

    def apply(self, removed: Iterable[Claim], added: Iterable[Claim], words: Mapping[str, Sequence[str]]) -> set[str]:
        """Take out the old versions of changed and removed claims, put in the new ones (their
        parts and text buckets in memory: see text_buckets, claim_parts). `words`: entity id ->
        [name word, lowercase word] (see words_of). Returns the entities whose word counts must
        be made again from all their claims (see recount): their word changed, or they had
        claims before they had one."""
        stale = {eid for eid, found in self.words.items() if eid in words and list(words[eid]) != found[::2]}
        stale |= {eid for eid in words if eid not in self.words and self.facts(eid)}
        for eid in stale:
            self.words.pop(eid, None)
        groups = [(gid, set(g["members"])) for gid, g in self.groups.items()]

        def count(claim_id: str, text: str, entity_ids: Iterable[str], sign: int) -> None:
            self._count(claim_id, text, entity_ids, sign, words, stale, groups)

        for sign, claims in ((-1, removed), (1, added)):
            for c in claims:
                if an_entry(c.text):  # however often written, an entry is its owner's
                    count(c.id, c.text, c.entity_ids, sign)
                    continue
                key = text_key(c.text)
                bucket = text_bucket(key)
                writing = self.texts.setdefault(bucket, {}).setdefault(key, {})
                was = _documents(writing) >= REPEATED_IN
                if sign > 0:
                    writing[c.id] = [c.document_id, c.chunk_id, list(dict.fromkeys(c.entity_ids))]
                elif writing.pop(c.id, None) is None:
                    if not writing:
                        del self.texts[bucket][key]
                    continue  # not in the index
                now = _documents(writing) >= REPEATED_IN
                self._dirty_texts.add(bucket)
                if now:
                    self.repeated[key] = sorted({chunk for _document, chunk, _entities in writing.values()})
                else:
                    self.repeated.pop(key, None)
                if not writing:
                    del self.texts[bucket][key]
                if sign > 0 and not now:
                    count(c.id, c.text, c.entity_ids, 1)
                elif sign < 0 and not was:
                    count(c.id, c.text, c.entity_ids, -1)
                if was != now:  # the sentence became furniture, or stopped being it
                    for other, (_document, _chunk, eids) in writing.items():
                        if other != c.id:
                            count(other, c.text, eids, 1 if was else -1)
        for eid in [e for e in self.words if e not in words or not self.facts(e)]:
            del self.words[eid]
        return {eid for eid in stale if self.facts(eid)}

    def _count(self, claim_id: str, text: str, entity_ids: Iterable[str], sign: int,
               words: Mapping[str, Sequence[str]], stale: set[str], groups: list[tuple[str, set[str]]]) -> None:
        """Put a claim in (sign 1) or take it out of (-1) its entities' sets, word counts and groups."""
        step = self._discard if sign < 0 else self._add
        ents = dict.fromkeys(entity_ids)
        defines = defining(text)
        for eid in ents:
            step(entity_set(eid), claim_id)
            if defines:
                step(defining_set(eid), claim_id)
            pair = words.get(eid)
            if pair is None or eid in stale:
                continue
            counts = self.words.get(eid)
            if counts is None:
                counts = self.words[eid] = [pair[0], 0, pair[1], 0]
            if inside_sentence(text, pair[0]):
                counts[1] += sign
            if has_word(text, pair[1]):
                counts[3] += sign
        for gid, members in groups:
            h = len(members.intersection(ents))
            if h:
                self._level(gid, h, claim_id, sign)

    def recount(self, entity_id: str, pair: Sequence[str], texts: Iterable[str]) -> None:
        """Word counts of an entity from the texts of all its claims."""
        texts = list(texts)
        self.words[entity_id] = [pair[0], sum(1 for t in texts if inside_sentence(t, pair[0])),
                                 pair[1], sum(1 for t in texts if has_word(t, pair[1]))]

    def count_group(self, group_id: str, members: Sequence[str]) -> None:
        """A group's levels counted from its members' sets (all their parts in memory)."""
        hits: Counter[str] = Counter()
        for m in sorted(set(members)):
            for key in self.all_parts(entity_set(m)):
                hits.update(self.parts.get(key, ()))
        by_level: dict[int, list[str]] = defaultdict(list)
        for claim_id, h in hits.items():
            by_level[h].append(claim_id)
        self.groups[group_id] = {"members": sorted(set(members)), "levels": {
            str(h): [len(ids), heapq.nsmallest(RESERVE, ids)] for h, ids in sorted(by_level.items())}}
        self.changed_groups.add(group_id)
        self._gone_groups.discard(group_id)

    def drop_group(self, group_id: str) -> None:
        if self.groups.pop(group_id, None) is not None:
            self._gone_groups.add(group_id)
            self.changed_groups.add(group_id)

    def oversized(self) -> list[str]:
        """Sets with a part past PART_LIMIT: split them (all their parts in memory) with `split`."""
        return sorted({set_id for set_id in self.touched if set_id in self.layout
                       and max(self.layout[set_id]["n"].values()) > PART_LIMIT})

    def split(self, set_id: str) -> None:
        """Spread the set over parts of a longer prefix (ids are hashes: evenly)."""
        ids = self.ids(set_id)
        depth = max(depth_for(len(ids)), self.layout[set_id]["d"] + 1)
        for key in self.all_parts(set_id):
            self.parts.pop(key, None)
            self._gone_parts.add(key)
        self.layout[set_id] = {"d": depth, "n": {}}
        for claim_id in ids:
            self._add(set_id, claim_id)

    # -- storing ---------------------------------------------------------------------------

    def entries(self, now: float) -> tuple[list[CacheEntry], list[str]]:
        """The records to write and the ids to delete for what changed since loaded (all of
        it for an index built here: the stored one is deleted first, see reset_index)."""
        write: list[CacheEntry] = []
        changed = self.layout if self.complete else self.touched
        wanted = {dir_key(s) for s in changed}
        dirs: dict[str, dict[str, Any]] = {}
        for set_id, found in self.layout.items():
            key = dir_key(set_id)
            if key in wanted:
                dirs.setdefault(key, {})[set_id] = found
        write += [CacheEntry(id=k, namespace=NAMESPACE, value=v, created_at=now) for k, v in dirs.items()]
        delete = sorted(wanted - set(dirs))
        for key in sorted(self._dirty_parts | (set(self.parts) if self.complete else set())):
            ids = self.parts.get(key)
            if ids:
                write.append(CacheEntry(id=key, namespace=NAMESPACE, value=sorted(ids), created_at=now))
            else:
                delete.append(key)
        written = {e.id for e in write}
        delete += [k for k in self._gone_parts if k not in written]
        for bucket in sorted(set(self.texts) if self.complete else self._dirty_texts):
            if self.texts.get(bucket):
                write.append(CacheEntry(id=bucket, namespace=NAMESPACE, value=self.texts[bucket], created_at=now))
            else:
                delete.append(bucket)
        groups = self.groups if self.complete else self.changed_groups
        write += [CacheEntry(id=GROUP_PREFIX + gid, namespace=NAMESPACE, value=self.groups[gid], created_at=now)
                  for gid in sorted(groups) if gid in self.groups]
        delete += [GROUP_PREFIX + gid for gid in self._gone_groups if gid not in self.groups]
        write.append(CacheEntry(id=STATE_KEY, namespace=NAMESPACE, created_at=now, value={
            "version": VERSION, "tag": self.tag, "words": self.words, "repeated": self.repeated, "groups": sorted(self.groups), "plans": self.plans}))
        return write, sorted(set(delete))


def built_index(claims: Iterable[Claim], entities: Iterable[Entity], tag: str | None = None) -> ClaimIndex:
    """An index of these claims from scratch, every part in memory: what `apply` makes of an
    empty index given every claim, laid out at once in parts of the size it ends with."""
    words = words_of(entities)
    claims = list(claims)
    texts: dict[str, dict[str, dict[str, list[Any]]]] = defaultdict(dict)
    for c in claims:
        if not an_entry(c.text):
            key = text_key(c.text)
            texts[text_bucket(key)].setdefault(key, {})[c.id] = [c.document_id, c.chunk_id, list(dict.fromkeys(c.entity_ids))]
    repeated = {key: sorted({chunk for _document, chunk, _entities in writing.values()})
                for bucket in texts.values() for key, writing in bucket.items() if _documents(writing) >= REPEATED_IN}
    by_entity: dict[str, list[str]] = defaultdict(list)
    counts = {eid: [pair[0], 0, pair[1], 0] for eid, pair in words.items()}
    defined: dict[str, list[str]] = defaultdict(list)
    for c in claims:
        defines = defining(c.text)
        if repeated and not an_entry(c.text) and text_key(c.text) in repeated:
            continue  # furniture: in no entity's set
        for eid in dict.fromkeys(c.entity_ids):
            by_entity[eid].append(c.id)
            if defines:
                defined[eid].append(c.id)
            found = counts.get(eid)
            if found is not None:
                if inside_sentence(c.text, found[0]):
                    found[1] += 1
                if has_word(c.text, found[2]):
                    found[3] += 1
    index = ClaimIndex(tag=tag, complete=True, texts=dict(texts), repeated=repeated)
    sets = [(entity_set(eid), ids) for eid, ids in by_entity.items()]
    sets += [(defining_set(eid), ids) for eid, ids in defined.items()]
    for set_id, ids in sets:
        unique = set(ids)
        depth = depth_for(len(unique))
        parts: dict[str, set[str]] = defaultdict(set)
        for claim_id in unique:
            parts[claim_id[:depth]].add(claim_id)
        index.layout[set_id] = {"d": depth, "n": {p: len(v) for p, v in parts.items()}}
        for prefix, v in parts.items():
            index.parts[part_key(set_id, prefix)] = v
        index.touched.add(set_id)
    index.words = {eid: found for eid, found in counts.items() if eid in by_entity}
    return index
