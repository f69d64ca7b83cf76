"""Where the claim index keeps its pieces: the ids of its sets and the keys of their parts,
directories, text buckets and groups."""

from __future__ import annotations

from functools import lru_cache

import xxhash

NAMESPACE = "claim-index"  # ids sort away from the stored plan, a large row that slows writes beside it
STATE_KEY = f"{NAMESPACE}:state"
PART_LIMIT = 1024  # ids per part; a set past it is split 16 ways per prefix character
DIR_PREFIX = f"{NAMESPACE}:dir:"
PART_PREFIX = f"{NAMESPACE}:part:"
GROUP_PREFIX = f"{NAMESPACE}:group:"
TEXT_PREFIX = f"{NAMESPACE}:text:"
VERSION = 2  # of the stored layout: an index stored by another version is built again


def entity_set(entity_id: str) -> str:
    return f"e:{entity_id}"


def defining_set(entity_id: str) -> str:
    """The entity's claims shaped as authored definitions ("`git-rebase`: Reapply commits ...",
    "EXPLAIN — show the execution plan ..."): offered to its page before its other claims,
    which are taken by id and may run to hundreds."""
    return f"d:{entity_id}"


@lru_cache(maxsize=65536)
def dir_key(set_id: str) -> str:
    return DIR_PREFIX + xxhash.xxh3_64_hexdigest(set_id.encode())[:2]


def text_key(text: str) -> str:
    """The key of a claim's text, spaced as any: claims with one key write one sentence."""
    return xxhash.xxh3_64_hexdigest(" ".join(text.split()).encode())


def text_bucket(key: str) -> str:
    return TEXT_PREFIX + key[:3]


def part_key(set_id: str, prefix: str) -> str:
    return f"{PART_PREFIX}{set_id}:{prefix}"


def depth_for(size: int) -> int:
    """The prefix length that spreads `size` hashed ids at about half PART_LIMIT per part."""
    depth = 0
    while size > PART_LIMIT // 2 * 16 ** depth and depth < 8:
        depth += 1
    return depth
