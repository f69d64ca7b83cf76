"""Retrieval quality and speed on the PostgreSQL 15 manual, offline.

Quality: 54 questions a user would ask (benchmarks/retrieval_questions.yaml), each with the
manual pages that answer it. recall@5 at document level is the share of a question's pages
among the first five distinct documents of the 25 best passages, averaged over questions, for
`retrieve` (hybrid, and each entity ranking), plain BM25 over chunks (the store's full-text
search) and vector-only search over chunks (kNN on chunk embeddings).

Also reported, not held to the targets: 15 questions in a user's own words, avoiding the
manual's terms (benchmarks/retrieval_questions_own_words.yaml).

Speed: p50/p95 latency of `retrieve` on the embedded SQLite store at 10k and 100k chunks. The
manual has about 7.3k chunks; the scale-up adds synthetic documents whose chunks mix the
sentences of real ones (so full text and vectors meet realistic term statistics), and
entities copied with new names in proportion, then times every question (warm, the index built).

The manual comes from Debian's postgresql-doc-15 (benchmarks/offline_corpus.py fetches it);
the compiled workspace is kept in build/retrieval-bench/ and reused.

    python -m benchmarks.retrieval [--scale 10000,100000] [--no-scale] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "retrieval-bench"
QUESTIONS = Path(__file__).with_name("retrieval_questions.yaml")
OWN_WORDS = Path(__file__).with_name("retrieval_questions_own_words.yaml")
REPORT = Path(__file__).parent / "reports" / "retrieval.md"
K = 5
DEPTH = 25  # passages every method ranks; its first K distinct documents are scored


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def compiled_workspace() -> Path:
    """The manual compiled offline in build/retrieval-bench/ws (compiled on first use)."""
    from benchmarks.offline_corpus import postgres_manual
    from compendium.operations import compile_workspace
    from compendium.settings import load_settings
    from compendium.workspace import add_documents, init_workspace

    workspace = BUILD / "ws"
    done = workspace / ".compendium" / "compiled"
    if done.exists():
        return workspace
    shutil.rmtree(workspace, ignore_errors=True)
    init_workspace(workspace)
    add_documents(workspace, [postgres_manual()])
    started = time.perf_counter()
    report = asyncio.run(compile_workspace(load_settings(workspace, env={})))
    if report.status != "succeeded":
        raise SystemExit(f"the compile {report.status}: {report.error}")
    done.write_text(f"{time.perf_counter() - started:.1f} s\n")
    return workspace


def first_documents(paths: list[str], k: int = K) -> list[str]:
    """The first k distinct documents (file names) in ranked order."""
    out: list[str] = []
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if name not in out:
            out.append(name)
        if len(out) == k:
            break
    return out


def recall(found: list[str], wanted: list[str]) -> float:
    return len(set(found) & set(wanted)) / len(wanted)


async def quality(settings: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    from compendium.operations import opened_store
    from compendium.retrieval import RANKINGS, Options, ensure_index, retrieve
    from compendium.retrieval.workspace import sources_for
    from compendium.storage.records import Chunk, ChunkEmbedding, Document

    async with opened_store(settings) as store, sources_for(store, settings) as src:
        started = time.perf_counter()
        await ensure_index(store, src.embedder)
        index_seconds = time.perf_counter() - started
        paths = {d.id: d.path async for d in store.scan(Document)}  # type: ignore[attr-defined]

        async def chunk_paths(chunks: list[Any]) -> list[str]:
            return [paths.get(c.document_id, "?") for c in chunks]

        variants: dict[str, Options] = {
            "retrieve (hybrid)": Options(top_k=DEPTH),
            "retrieve (local)": Options(top_k=DEPTH, mode="local"),
            "retrieve (global)": Options(top_k=DEPTH, mode="global"),
            "retrieve, no graph lists": Options(top_k=DEPTH, weights=(1.0, 0.2, 0.0, 0.0)),
            "retrieve, full text only": Options(top_k=DEPTH, weights=(1.0, 0.0, 0.0, 0.0)),
            "retrieve, equal weights": Options(top_k=DEPTH, weights=(1.0, 1.0, 1.0, 1.0)),
            "retrieve, no document boost": Options(top_k=DEPTH, document_boost=0.0),
            "retrieve, RRF k=60": Options(top_k=DEPTH, rrf_k=60),
        }
        for name in RANKINGS:
            variants[f"retrieve, ranking {name}"] = Options(top_k=DEPTH, ranking=name)
        scores: dict[str, list[float]] = {"BM25 over chunks": [], "vector over chunks": []}
        scores.update({name: [] for name in variants})
        misses: list[str] = []
        for item in questions:
            question, wanted = item["q"], item["docs"]
            bm25 = await store.search_text(Chunk, question, DEPTH)
            scores["BM25 over chunks"].append(
                recall(first_documents(await chunk_paths([c for c, _ in bm25])), wanted))
            vector = (await src.embedder.embed([question]))[0]
            near = await store.knn(ChunkEmbedding, vector, DEPTH, {"model": src.embedder.model})
            scores["vector over chunks"].append(
                recall(first_documents(await chunk_paths([c for c, _ in near])), wanted))
            for name, options in variants.items():
                result = await retrieve(question, store, embedder=src.embedder, options=options)
                found = first_documents([c["document"] for c in result.chunks])
                scores[name].append(recall(found, wanted))
                if name == "retrieve (hybrid)" and scores[name][-1] < 1.0:
                    misses.append(f"{question} → wanted {', '.join(wanted)}; got {', '.join(found)}")
        return {
            "questions": len(questions),
            "recall": {name: statistics.fmean(values) for name, values in scores.items()},
            "index_seconds": index_seconds,
            "chunks": await store.count(Chunk),
            "documents": len(paths),
            "misses": misses,
        }


def remove_database(target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)


async def scaled_store(source_url: str, target: Path, chunks: int, exists: bool) -> str:
    """A copy of the compiled knowledge base grown to `chunks` chunks with synthetic documents."""
    from compendium.storage.copy import copy_store
    from compendium.storage.factory import open_store
    from compendium.storage.records import Chunk, Document, Entity

    url = f"sqlite:///{target}"
    if exists:
        store = await open_store(url)
        have = await store.count(Chunk)
        await store.close()
        if have == chunks:
            return url
        await asyncio.to_thread(remove_database, target)
    source = await open_store(source_url)
    store = await open_store(url)
    try:
        await copy_store(source, store)
        real = [c async for c in store.scan(Chunk)]
        entities = [e async for e in store.scan(Entity)]
        rng = random.Random(7)
        sentences = [s for c in real for s in c.text.split(". ") if len(s) > 30]  # type: ignore[attr-defined]
        missing = chunks - len(real)
        per_document = 8
        batch: list[Any] = []
        for i in range(missing):
            model = real[i % len(real)]
            document = f"synthetic-{i // per_document:06d}"
            if i % per_document == 0:
                batch.append(Document(id=document, path=f"synthetic/{document}.html", title=document))
            text = ". ".join(rng.sample(sentences, 6)) + "."
            batch.append(Chunk(id=f"syn{i:07d}", document_id=document, ordinal=i % per_document,
                               text=text, heading_path=[*model.heading_path[:1], f"Part {i}"],  # type: ignore[attr-defined]
                               tokens=len(text) // 4, content_hash=f"syn{i}"))
            if len(batch) >= 2000:
                await store.upsert(batch)
                batch = []
        # entities grow with the corpus: copies under new names, vectors shared
        grow = int(len(entities) * (chunks / max(1, len(real)) - 1))
        for i in range(grow):
            e = entities[i % len(entities)]
            batch.append(Entity(id=f"syn-e{i:07d}", name=f"{e.name} {i}", type=e.type,  # type: ignore[attr-defined]
                                category=e.category, description=e.description,  # type: ignore[attr-defined]
                                chunk_ids=[f"syn{rng.randrange(max(1, missing)):07d}"],
                                embedding=e.embedding))  # type: ignore[attr-defined]
            if len(batch) >= 2000:
                await store.upsert(batch)
                batch = []
        await store.upsert(batch)
    finally:
        await source.close()
        await store.close()
    return url


async def latency(settings: Any, url: str, questions: list[dict[str, Any]], rounds: int = 3) -> dict[str, Any]:
    import dataclasses

    from compendium.retrieval import Options, ensure_index, retrieve
    from compendium.retrieval.workspace import sources_for
    from compendium.storage.factory import open_store
    from compendium.storage.records import Chunk, Entity

    store = await open_store(url)
    try:
        scaled = dataclasses.replace(settings, store_url=url)
        async with sources_for(store, scaled) as src:
            started = time.perf_counter()
            await ensure_index(store, src.embedder)
            index_seconds = time.perf_counter() - started
            for item in questions[:5]:  # warm the caches (vector matrices, page cache)
                await retrieve(item["q"], store, embedder=src.embedder, options=Options())
            times = []
            load_before = os.getloadavg()[0]
            for _ in range(rounds):
                for item in questions:
                    t = time.perf_counter()
                    await retrieve(item["q"], store, embedder=src.embedder, options=Options())
                    times.append((time.perf_counter() - t) * 1000)
        times.sort()
        return {
            "chunks": await store.count(Chunk),
            "entities": await store.count(Entity),
            "index_seconds": index_seconds,
            "p50": statistics.median(times),
            "p95": times[int(0.95 * (len(times) - 1))],
            "calls": len(times),
            "load": (load_before + os.getloadavg()[0]) / 2,
        }
    finally:
        await store.close()


def report(result: dict[str, Any], scales: list[dict[str, Any]], questions: int,
           own: dict[str, Any] | None = None) -> str:
    other = (own or {}).get("recall", {})
    recall_table = "\n".join(
        f"| {name} | {value:.3f} | {other[name]:.3f} |" if name in other else f"| {name} | {value:.3f} | |"
        for name, value in result["recall"].items()
    )
    speed = "\n".join(
        f"| {s['chunks']:,} | {s['entities']:,} | {s['p50']:.1f} | {s['p95']:.1f} | {s['calls']} | {s['load']:.1f} | {s['index_seconds']:.0f} |"
        for s in scales
    ) or "| (not run) | | | | | | |"
    misses = "\n".join(f"- {m}" for m in result["misses"]) or "- none"
    got = result["recall"].get("retrieve (hybrid)", 0.0)
    bm25 = result["recall"].get("BM25 over chunks", 0.0)
    rankings = {n: v for n, v in result["recall"].items() if n.startswith("retrieve, ranking")}
    verdict = (
        f"retrieve {got:.3f}: {'meets' if got >= 0.85 else 'misses'} 0.85; "
        f"BM25 + 0.10 = {bm25 + 0.10:.3f}, {'met' if got >= bm25 + 0.10 else 'not met'} "
        f"(retrieve is {got - bm25:+.3f} over BM25). Entity rankings: "
        + ", ".join(f"{n.removeprefix('retrieve, ranking ')} {v:.3f}" for n, v in rankings.items())
        + "."
    )
    if other:
        verdict += (
            f" In the user's own words: BM25 {other.get('BM25 over chunks', 0):.3f}, retrieve "
            f"{other.get('retrieve (hybrid)', 0):.3f}, vectors {other.get('vector over chunks', 0):.3f}."
        )
    return f"""# Retrieval on the PostgreSQL 15 manual

Corpus: Debian's postgresql-doc-15 HTML manual, compiled offline ({result['documents']} documents,
{result['chunks']:,} chunks). {questions} questions with the pages that answer them
(benchmarks/retrieval_questions.yaml). Machine: {platform.machine()}, Python {platform.python_version()},
a 2-core machine shared with other work, so latencies are upper bounds.

## recall@5 at document level

| method | recall@5 | in the user's own words ({(own or {}).get("questions", 0)} questions) |
|---|---|---|
{recall_table}

Targets: retrieve ≥ 0.85 and ≥ BM25 + 0.10. {verdict}

Reading: the questions use the manual's own words (a user who read the table of contents),
so BM25 over chunks with heading paths is already strong and leaves less than 0.10 of
headroom; the offline embedder (hashed character n-grams) makes weak passage vectors, and
the offline compile's entities are coarse, so vectors and graph evidence are fused at low
weight and add about one question. The entity rankings change which entities and pages come
first, but hardly the documents of the passages; similarity × (1 + PageRank) is kept. In a
user's own words every method falls: offline there are no synonyms, and hashed n-gram
vectors do not carry meaning; an embedding endpoint and the LLM rewrite (both supported,
not measurable here without a network) are what would close that gap.

## retrieve latency, embedded SQLite store, offline

| chunks | entities | p50 ms | p95 ms | calls | load average (2 cores) | index build s |
|---|---|---|---|---|---|---|
{speed}

Target: p95 ≤ 200 ms at 100k chunks. The index build (chunk embeddings, PageRank) runs once
per compile, not per question.

## Questions retrieve (hybrid) did not fully answer in its first five documents

{misses}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="10000,100000", help="chunk counts to time retrieve at")
    parser.add_argument("--no-scale", action="store_true", help="quality only")
    parser.add_argument("--no-write", action="store_true", help="print, do not write the report")
    parser.add_argument("--no-quality", action="store_true", help="latency only (no report)")
    args = parser.parse_args()

    from compendium.operations import store_url
    from compendium.settings import load_settings

    questions = load_questions()
    workspace = compiled_workspace()
    settings = load_settings(workspace, env={})
    result = {"recall": {}, "misses": [], "documents": 0, "chunks": 0}
    own = None
    if not args.no_quality:
        result = asyncio.run(quality(settings, questions))
        own = asyncio.run(quality(settings, load_questions(OWN_WORDS)))
    for name, value in result["recall"].items():
        print(f"recall@5 {name:<40} {value:.3f}" + (f"   own words {own['recall'][name]:.3f}" if own else ""))
    scales = []
    if not args.no_scale:
        for count in (int(c) for c in args.scale.split(",") if c):
            target = BUILD / f"scaled-{count}.db"
            url = asyncio.run(scaled_store(store_url(settings), target, count, target.exists()))
            figures = asyncio.run(latency(settings, url, questions))
            print(f"{figures['chunks']:>7} chunks: p50 {figures['p50']:.1f} ms, p95 {figures['p95']:.1f} ms "
                  f"(index {figures['index_seconds']:.0f} s, load {figures['load']:.1f})")
            scales.append(figures)
    text = report(result, scales, len(questions), own)
    if not args.no_write and not args.no_quality:
        REPORT.write_text(text, encoding="utf-8")
        print(f"wrote {REPORT}")


if __name__ == "__main__":
    main()
