"""Prompt cost: what each phase's prompts spend, fixed against variable, and MAP's recall.

A corpus is compiled through the scripted server (in this process, no latency) with the
default `wiki` template; every chat request it receives is kept and split line by line:

- variable: the data of the call (a MAP chunk's heading path and text; a page's subject,
  evidence, links and existing text; the pairs, descriptions, members and questions of a
  judgment);
- framing: what is said once per item of data (fence tags, `[^n]` markers, source labels);
- fixed: the rest (system message, instructions, type lists, field lists, example).

Repeated text is what a prompt says twice: a data line or sentence already given earlier
in the same prompt, and a source label repeated on consecutive evidence lines.

Recall on gold items: each stored chunk is shown alone to the scripted server's extractor
in a reference prompt (the template's types, the chunk under its heading path); the entity
names (with their types) and claim sentences it finds are the gold items, and recall is
the share of them in the extracts the compile stored. On the sample corpus also the names
of samples/expected.yaml (entities that deserve a page, and every name of a merge group).

    python -m benchmarks.prompt_cost [--corpus sample|synthetic] [--documents 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PHASES = {"extraction": "map", "pairs": "reduce", "description": "reduce", "matches": "plan",
          "topic": "plan", None: "refine", "page_additions": "refine"}
_FENCE = re.compile(r"^</?(chunks?|evidence|page)\b[^>]*>$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_EVIDENCE = re.compile(r"^(\[\^\d+\] \(([^)]*)\) )(.*)$")  # an item with its source on its line
_ITEM = re.compile(r"^(\[\^\d+\] )()(.*)$")  # an item under a "Source: ..." line


def tokens(text: str) -> int:
    from compendium.tokens import count_tokens

    return int(count_tokens(text)) if text else 0


def split_prompt(schema: str | None, system: str, prompt: str) -> dict[str, int]:
    """Tokens of one request by part: fixed, framing, variable, and the repeats inside it."""
    parts: dict[str, list[str]] = defaultdict(list)
    parts["fixed"].append(system)
    inside = False  # within a fence: data
    in_links = False
    seen_lines: set[str] = set()
    seen_sentences: set[str] = set()
    last_source = None
    repeated_lines: list[str] = []
    repeated_sentences: list[str] = []
    repeated_sources: list[str] = []

    def data(line: str) -> None:
        parts["variable"].append(line)
        key = " ".join(line.split()).casefold()
        if len(key) > 20 and key in seen_lines:
            repeated_lines.append(line)
            return
        seen_lines.add(key)
        for s in _SENTENCE.split(line):
            skey = " ".join(s.split()).casefold()
            if len(skey) > 30 and skey in seen_sentences:
                repeated_sentences.append(s)
            seen_sentences.add(skey)

    for n, line in enumerate(prompt.splitlines()):
        stripped = line.strip()
        if _FENCE.match(stripped):
            parts["framing"].append(line)
            inside = not stripped.startswith("</")
            continue
        if schema == "extraction":
            if inside or stripped.startswith("### ["):
                data(line)
            else:
                parts["fixed"].append(line)
            continue
        if schema in (None, "page_additions"):
            if stripped.startswith("Source: "):
                parts["framing"].append(line)
                continue
            evidence = _EVIDENCE.match(stripped) or _ITEM.match(stripped)
            if evidence:
                parts["framing"].append(evidence.group(1))
                data(evidence.group(3))
                if evidence.group(2) and evidence.group(2) == last_source:
                    repeated_sources.append(f"({evidence.group(2)})")
                last_source = evidence.group(2)
                continue
            if stripped.startswith("Pages you may link"):
                in_links = True
                parts["fixed"].append("Pages you may link:")
                rest = stripped.split(":", 1)[1]
                if rest.strip():
                    parts["variable"].append(rest)
                continue
            if inside or (in_links and stripped.startswith("[[")):
                data(line)
                continue
            in_links = False
            if (n == 0 and schema is None) or stripped.startswith(("What it is about:", "### [", "About:", "Sections:")):
                parts["variable"].append(line)
                continue
            parts["fixed"].append(line)
            continue
        # judgments, summaries and topics: their data lines
        if re.match(r"^(\[[pq]\d+\]|A:|B:|Candidate:|Page:|  A says:|  B says:|- )", line):
            data(line)
        elif schema in ("description", "topic") and n == 0:
            parts["variable"].append(line)  # names the thing
        else:
            parts["fixed"].append(line)
    out = {k: tokens("\n".join(v)) for k, v in parts.items()}
    out["repeated_lines"] = tokens("\n".join(repeated_lines))
    out["repeated_sentences"] = tokens("\n".join(repeated_sentences))
    out["repeated_sources"] = tokens("\n".join(repeated_sources))
    return out


def phase_table(requests: list[Any]) -> dict[str, dict[str, Any]]:
    """Per phase and per schema: calls, prompt tokens (as the server counted) and the split."""
    out: dict[str, dict[str, Any]] = {}
    for r in requests:
        counted = sum(tokens(str(m.get("content", ""))) for m in r.messages)
        split = split_prompt(r.schema_name, r.system, r.prompt)
        extra = counted - tokens(r.system) - tokens(r.prompt)  # repairs, an appended schema
        for key in (PHASES.get(r.schema_name, "other"), f"{PHASES.get(r.schema_name, 'other')}:{r.schema_name or 'page'}"):
            row = out.setdefault(key, Counter())
            row["calls"] += 1
            row["prompt_tokens"] += counted
            row["repairs_and_schema"] += max(0, extra)
            for k, v in split.items():
                row[k] += v
    return {k: dict(v) for k, v in out.items()}


def gold_items(chunks: list[Any], documents: dict[str, str], template: Any) -> dict[str, set[tuple[str, ...]]]:
    """What the scripted extractor finds in each chunk shown alone, in a reference prompt."""
    from compendium.engines.prompt_text import chunk_header
    from compendium.engines.tasks import ChunkInput
    from tests.support.llm_responder import extract

    types = "".join(f"- {t.name}: {t.description}\n" for t in template.entity_types)
    relations = "".join(f"- {t.name}: {t.description}\n" for t in template.relation_types)
    entities: set[tuple[str, ...]] = set()
    claims: set[tuple[str, ...]] = set()
    for c in chunks:
        header = chunk_header(ChunkInput(label="c1", text=c.text, heading_path=list(c.heading_path),
                                         document_title=documents.get(c.document_id, "")))
        reply = extract(f"Entity types (only these names):\n{types}\nRelation types (only these names):\n"
                        f"{relations}\n### [c1] {header}\n{c.text.strip()}\n")
        entities |= {(c.id, norm(e["name"]), e["type"]) for e in reply["entities"]}
        claims |= {(c.id, norm(x["text"])) for x in reply["claims"]}
    return {"entities": entities, "claims": claims}


def norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def recall(chunks: list[Any], extracts: list[Any], documents: dict[str, str], template: Any,
           expected: Path | None) -> dict[str, Any]:
    gold = gold_items(chunks, documents, template)
    found_entities = {(x.chunk_id, norm(e.get("name", "")), e.get("type", "")) for x in extracts for e in x.entities}
    found_names = {(chunk, name) for chunk, name, _type in found_entities}
    found_claims = {(x.chunk_id, norm(c.get("text", ""))) for x in extracts for c in x.claims}
    out: dict[str, Any] = {
        "gold_entities": len(gold["entities"]),
        "entities_found": len(gold["entities"] & found_entities),
        "entity_names_found": len({(c, n) for c, n, _t in gold["entities"]} & found_names),
        "gold_claims": len(gold["claims"]),
        "claims_found": len(gold["claims"] & found_claims),
        "extracted_entities": len(found_entities),
        "extracted_claims": len(found_claims),
    }
    if expected is not None and expected.exists():
        import yaml

        data = yaml.safe_load(expected.read_text(encoding="utf-8"))
        names = {norm(n) for n in data.get("entities", [])} | {norm(n) for g in data.get("merged", []) for n in g}
        all_names = {norm(n) for x in extracts for e in x.entities for n in [e.get("name", ""), *(e.get("aliases") or [])]}
        out["expected_names"] = len(names)
        out["expected_found"] = len(names & all_names)
        out["expected_missing"] = sorted(names - all_names)
    return out


async def _compile(workspace: Path, base_url: str) -> tuple[dict[str, Any], list[Any], list[Any], dict[str, str], Any]:
    from compendium.operations import compile_workspace, opened_store, resolve_template
    from compendium.settings import load_settings
    from compendium.storage.records import Chunk, Document, Extract

    env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat",
           "COMPENDIUM_LLM_HEDGE": "false"}
    settings = load_settings(workspace, env=env)
    report = await compile_workspace(settings)
    async with opened_store(settings) as store:
        chunks = [c async for c in store.scan(Chunk)]  # type: ignore[attr-defined]
        extracts = [x async for x in store.scan(Extract)]  # type: ignore[attr-defined]
        documents = {d.id: getattr(d, "title", "") async for d in store.scan(Document)}  # type: ignore[attr-defined]
    return report.as_dict(settings.llm), chunks, extracts, documents, resolve_template(settings, None)


def run(corpus: str, documents: int) -> dict[str, Any]:
    from compendium.workspace import init_workspace
    from tests.support.llm_server import LLMServer

    root = Path(tempfile.mkdtemp(prefix="compendium-prompts-"))
    try:
        workspace = init_workspace(root / "ws")
        if corpus == "sample":
            shutil.copytree(REPO / "samples" / "corpus", workspace / "documents" / "corpus")
        else:
            from benchmarks.corpus import generate_corpus

            generate_corpus(workspace / "documents" / "synthetic", documents)
        with LLMServer() as server:
            report, chunks, extracts, docs, template = asyncio.run(_compile(workspace, server.base_url))
            requests = list(server.requests)
            server_prompt_tokens = server.prompt_tokens
        corpus_tokens = sum(c.tokens for c in chunks)
        phases = phase_table(requests)
        expected = REPO / "samples" / "expected.yaml" if corpus == "sample" else None
        return {
            "corpus": corpus, "chunks": len(chunks), "corpus_tokens": corpus_tokens,
            "calls": len(requests), "prompt_tokens": server_prompt_tokens,
            "per_corpus_token": server_prompt_tokens / max(corpus_tokens, 1),
            "map_per_corpus_token": phases.get("map", {}).get("prompt_tokens", 0) / max(corpus_tokens, 1),
            "phases": phases,
            "recall": recall(chunks, extracts, docs, template, expected),
            "pages": report.get("pages", {}),
            "counts": report.get("counts", {}),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(result: dict[str, Any]) -> str:
    ct = result["corpus_tokens"]
    lines = [f"corpus {result['corpus']}: {result['chunks']} chunks, {ct} chunk tokens; {result['calls']} chat calls, "
             f"{result['prompt_tokens']} prompt tokens = {result['per_corpus_token']:.3f} per corpus token "
             f"(MAP {result['map_per_corpus_token']:.3f})",
             "", "| phase | calls | prompt tokens | per corpus token | fixed | framing | variable | fixed/call | "
             "repeated lines | repeated sentences | repeated sources | repairs/schema |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, p in sorted(result["phases"].items(), key=lambda kv: (kv[0].split(":")[0], ":" in kv[0], kv[0])):
        lines.append(
            f"| {name} | {p['calls']} | {p['prompt_tokens']} | {p['prompt_tokens'] / max(ct, 1):.3f} | "
            f"{p.get('fixed', 0)} | {p.get('framing', 0)} | {p.get('variable', 0)} | "
            f"{p.get('fixed', 0) / max(p['calls'], 1):.0f} | {p.get('repeated_lines', 0)} | "
            f"{p.get('repeated_sentences', 0)} | {p.get('repeated_sources', 0)} | {p.get('repairs_and_schema', 0)} |")
    r = result["recall"]
    lines += ["", f"gold entities {r['entities_found']}/{r['gold_entities']} "
              f"(names {r['entity_names_found']}), gold claims {r['claims_found']}/{r['gold_claims']}; "
              f"extracted {r['extracted_entities']} entities, {r['extracted_claims']} claims"]
    if "expected_names" in r:
        lines.append(f"expected.yaml names extracted: {r['expected_found']}/{r['expected_names']} "
                     f"(missing: {', '.join(r['expected_missing']) or 'none'})")
    lines.append(f"counts {result['counts']}; pages {result['pages']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["sample", "synthetic"], default="sample")
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    result = run(args.corpus, args.documents)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=list), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
