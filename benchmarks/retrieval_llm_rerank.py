"""The LLM rerank (`retrieve --rerank llm`) against the offline ranking, on a compiled manual of
benchmarks/retrieval.py and a real OpenAI-compatible endpoint (slow on a small local model, so
a few questions at a time).

Both rankings start from the same fused order (the question's own words, as offline): the
model only reorders its first passages, as `retrieve` does. Per question: the rank of the first
answering passage before and after, the call's seconds, and any note (a failed call keeps the
order). Figures are recall@5 and MRR@10 over the questions run.

    python -m benchmarks.retrieval_llm_rerank --manual borg --first 10 \
        --base-url http://127.0.0.1:8083/v1 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import time
from typing import Any

from benchmarks.retrieval import BUILD, DEPTH, answered, question_set, scores


async def run(manual: str, first: int, skip: int, base_url: str, model: str, wait: float,
              moved: bool = False) -> list[dict[str, Any]]:
    from compendium.operations import opened_store
    from compendium.retrieval import Options, retrieve
    from compendium.retrieval.llm_rerank import passage_source, reranked
    from compendium.retrieval.passages import _capped
    from compendium.retrieval.workspace import sources_for
    from compendium.settings import LLMSettings, load_settings

    offline = load_settings(BUILD / manual, env={})
    online = dataclasses.replace(offline, llm=LLMSettings(
        base_url=base_url, api_key="local", model=model, timeout=wait, max_retries=1, max_concurrency=1,
        hedge=False))
    rows = []
    async with opened_store(offline) as store, sources_for(store, offline) as src, \
            sources_for(store, online) as remote:
        for item in question_set(manual)["questions"][skip:]:
            if len(rows) >= first:
                break
            fused = await retrieve(item["q"], store, embedder=src.embedder, passages=src.passages,
                                   options=Options(top_k=50))
            order = [c["chunk_id"] for c in fused.chunks]
            by_id = {c["chunk_id"]: c for c in fused.chunks}
            if moved and scores(answered([by_id[i]["document"] for i in order[:DEPTH]], item["docs"]))[2] in (0.0, 1.0):
                continue  # only questions the rerank can move: answered 2nd to 10th
            texts = {i: (passage_source(c["document"], c["heading_path"]), c["text"]) for i, c in by_id.items()}
            notes: list[str] = []
            started = time.perf_counter()
            after = await reranked(remote.llm, item["q"], order, texts, notes)
            seconds = time.perf_counter() - started
            after = _capped(after, {i: by_id[i]["document"] for i in after}, Options().per_document)
            before_hits = answered([by_id[i]["document"] for i in order[:DEPTH]], item["docs"])
            after_hits = answered([by_id[i]["document"] for i in after[:DEPTH]], item["docs"])
            row = {"q": item["q"], "before": scores(before_hits), "after": scores(after_hits),
                   "seconds": round(seconds, 1), "notes": notes}
            print(json.dumps(row, ensure_ascii=False), flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manual", default="borg")
    parser.add_argument("--first", type=int, default=10, help="questions, in the set's order")
    parser.add_argument("--skip", type=int, default=0, help="questions skipped first")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--timeout", type=float, default=1500.0)
    parser.add_argument("--moved", action="store_true",
                        help="only questions first answered 2nd to 10th offline (what a rerank can move)")
    args = parser.parse_args()
    rows = asyncio.run(run(args.manual, args.first, args.skip, args.base_url, args.model, args.timeout,
                           args.moved))
    for label in ("before", "after"):
        r5 = statistics.fmean(r[label][0] for r in rows)
        mrr = statistics.fmean(r[label][2] for r in rows)
        print(f"{label}: recall@5 {r5:.3f}, MRR@10 {mrr:.3f} over {len(rows)} questions")
    print(f"failed calls: {sum(1 for r in rows if r['notes'])}; median call "
          f"{statistics.median(r['seconds'] for r in rows):.0f} s")


if __name__ == "__main__":
    main()
