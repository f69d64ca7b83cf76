"""Scale benchmark of REDUCE tiers 1 and 2 on 10k, 100k and 1M synthetic technical names."""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from compendium.phases.candidates import candidate_pairs
from compendium.phases.resolution import connected_labels, exact_labels, normalize_name

HEAD = (
    "adaptive async atomic batch binary blue cached central cloud cluster cold columnar "
    "compact concurrent consistent continuous cross dynamic edge elastic embedded encrypted "
    "event external fast federated global graph green hashed hot hybrid immutable incremental "
    "indexed inline internal lazy legacy linear local logical lossless managed meta micro "
    "mobile modular multi native neural offline online open optimistic parallel partial "
    "passive peer persistent pessimistic primary private public quantum quick random raw "
    "reactive real redundant remote replicated resilient reverse rolling root safe scalable "
    "secondary secure serverless shadow shared silent simple single smart soft sparse stable "
    "static sticky streaming strict structured sync synthetic tiered transient trusted unified "
    "universal vector versioned virtual visual warm weighted wide zero"
).split()
MIDDLE = (
    "access account alert allocation analytics archive audit auth backup balance billing blob "
    "block bloom bucket buffer build cache catalog certificate channel checkpoint cipher claim "
    "client clock commit compiler compression config consensus container content cursor "
    "dashboard data deploy device directory disk dispatch document domain driver election "
    "email entity export feature file filter firewall flag frame gateway gossip hash health "
    "heap identity image import index inventory journal kernel key label lease ledger license "
    "lock log mail memory merge message metadata metric migration model module monitor "
    "namespace network node notification object order packet page partition patch payment "
    "permission pipeline policy pool port process profile proxy query queue quota record "
    "region registry release replica report request resource route runtime schema search "
    "secret segment sensor session shard signal snapshot socket source storage stream "
    "subscription table task tenant thread ticket token topic trace transaction tree user "
    "vault version volume wallet webhook window worker workflow zone"
).split()
TAIL = (
    "adapter agent allocator analyzer api balancer bridge broker builder bus checker "
    "collector compactor controller coordinator daemon decoder detector dispatcher driver "
    "encoder engine exporter fabric factory fetcher framework gateway generator guard handler "
    "hub importer indexer inspector interface journal keeper kit layer library limiter "
    "listener loader locator logger manager mapper mesh monitor multiplexer negotiator "
    "observer operator optimizer orchestrator parser planner platform plugin poller pool "
    "processor profiler protocol provider proxy publisher reader reconciler recorder "
    "registry relay renderer replicator reporter resolver router runner sampler scanner "
    "scheduler server service sink splitter store supervisor switch syncer system tracker "
    "translator validator viewer watcher writer"
).split()
ACRONYMS = "API CLI CPU DNS GPU HTTP JSON LDAP OAuth RPC S3 SQL SSH TCP TLS UDP URL VPN XML YAML".split()


@dataclass
class Corpus:
    names: list[str]
    tier1_pairs: list[tuple[int, int]] = field(default_factory=list)  # planted spelling variants
    tier2_pairs: list[tuple[int, int]] = field(default_factory=list)  # planted near-duplicates


def _title(words: list[str]) -> str:
    return " ".join(w if w.isupper() or w[0].isupper() else w.capitalize() for w in words)


def _misspell(word: str, rng: np.random.Generator) -> str:
    if len(word) < 5:
        return word + word[-1]
    i = int(rng.integers(1, len(word) - 2))
    kind = int(rng.integers(3))
    if kind == 0:  # swap two neighbours
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:  # drop a letter
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]  # double a letter


def synthetic_names(n: int, *, seed: int = 7, planted: float = 0.05) -> Corpus:
    """n distinct multi-word technical names; a `planted` share are variants of other names."""
    rng = np.random.default_rng(seed)
    n_base = int(n * (1 - planted))
    seen: set[str] = set()
    words_of: list[list[str]] = []
    names: list[str] = []
    while len(names) < n_base:
        m = n_base - len(names)
        heads = rng.integers(len(HEAD), size=m)
        mids = rng.integers(len(MIDDLE), size=(m, 2))
        tails = rng.integers(len(TAIL), size=m)
        shape = rng.random(m)
        acr = rng.integers(len(ACRONYMS), size=m)
        for k in range(m):
            if shape[k] < 0.35:
                words = [HEAD[heads[k]], MIDDLE[mids[k, 0]], TAIL[tails[k]]]
            elif shape[k] < 0.6:
                words = [MIDDLE[mids[k, 0]], MIDDLE[mids[k, 1]], TAIL[tails[k]]]
            elif shape[k] < 0.8:
                words = [HEAD[heads[k]], MIDDLE[mids[k, 0]], MIDDLE[mids[k, 1]], TAIL[tails[k]]]
            elif shape[k] < 0.9:
                words = [ACRONYMS[acr[k]], MIDDLE[mids[k, 0]], TAIL[tails[k]]]
            else:
                words = [HEAD[heads[k]], TAIL[tails[k]]]
            name = _title(words)
            if name not in seen:
                seen.add(name)
                names.append(name)
                words_of.append(words)
    corpus = Corpus(names)
    while len(corpus.names) < n:
        base = int(rng.integers(n_base))
        words = list(words_of[base])
        kind = int(rng.integers(6))
        if kind == 0:
            variant, tier = " ".join(words).lower(), 1
        elif kind == 1:
            variant, tier = "-".join(_title(words).split()), 1
        elif kind == 2:
            variant, tier = _title(words).upper().replace(" ", "  "), 1
        elif kind == 3:
            j = int(rng.integers(len(words)))
            words[j] = _misspell(words[j], rng)
            variant, tier = _title(words), 2
        elif kind == 4:
            variant, tier = _title(words) + "s", 2
        else:  # the head moved to the end: "Cache Service (Distributed)"
            variant, tier = _title([*words[1:], words[0]]), 2
        if variant in seen:
            continue
        seen.add(variant)
        (corpus.tier1_pairs if tier == 1 else corpus.tier2_pairs).append((base, len(corpus.names)))
        corpus.names.append(variant)
    return corpus


class StandInEmbedder:
    """Hashed character 3-grams (with word-boundary marks) in 256 signed dimensions.

    Used only until compendium.engines.offline_embedder exists; vectorised with numpy.
    """

    model = "stand-in-char3-256"
    dimensions = 256

    async def embed(self, texts: list[str]) -> np.ndarray:
        width = max(len(t) for t in texts) + 2
        codes = np.zeros((len(texts), width), dtype=np.uint64)
        for i, t in enumerate(texts):
            s = f" {t.lower()} "
            codes[i, : len(s)] = np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)
        tri = codes[:, :-2] * np.uint64(1_000_003) ** 2 + codes[:, 1:-1] * np.uint64(1_000_003) + codes[:, 2:]
        valid = codes[:, 2:] != 0
        h = (tri * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
        dims = (h % np.uint64(self.dimensions)).astype(np.int64)
        signs = np.where((h >> np.uint64(9)) & np.uint64(1), 1.0, -1.0).astype(np.float32)
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        rows = np.broadcast_to(np.arange(len(texts))[:, None], dims.shape)
        np.add.at(out, (rows[valid], dims[valid]), signs[valid])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    async def close(self) -> None:
        pass
