"""How much one call may carry on a model: MAP batches, replies and pages sized to its context,
and less asked of a model of small context."""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from typing import Any

from ..templates.schema import Template
from .openai_client import OpenAIClient
from .reply_schema import strict_schema
from .tasks import ITEMS_PER_CHUNK, ExtractionReply

# MAP batch sizing on a model of known context: what one chunk's reply costs until replies
# are measured (Qwen2.5-Coder 1.5B over the sample corpus wrote 150-450 tokens per chunk).
REPLY_TOKENS_PER_CHUNK = 250
MAP_PROMPT_OVERHEAD = 1200  # tokens of the MAP prompt besides its chunks (rules, types, example)
MAX_LIST_ITEMS = 12  # items per list per chunk a prompt asks for at most
SMALL_CONTEXT = 16384  # tokens of context up to which a model is served as a small one
SMALL_MODEL_ITEMS = 4


def lean(client: OpenAIClient) -> bool:
    """A model of small context is asked for claims and entity names only: on a CPU it writes
    2-10 tokens a second, and relations, concepts, descriptions and topics cost three
    quarters of a full reply (REDUCE and PLAN work from claims and names; relations are
    then only the co-mentions REDUCE finds)."""
    context = client.context_tokens
    return bool(context and context <= SMALL_CONTEXT)


def list_items(client: OpenAIClient) -> int:
    """Items per list per chunk a MAP prompt asks for at most: fewer on a model of small
    context (a 1.5B model writes 2-10 tokens a second; every item costs ~40 of them)."""
    context = client.context_tokens
    return SMALL_MODEL_ITEMS if context and context <= SMALL_CONTEXT else MAX_LIST_ITEMS


def map_limits(client: OpenAIClient, template: Template) -> tuple[int, int, int | None]:
    """(chunks, chunk tokens, reply tokens) of one MAP batch on this model. With the
    model's context known: replies measured so far (else REPLY_TOKENS_PER_CHUNK) say how
    many chunks one reply holds within the reply cap (a quarter of the context, at most
    llm.max_reply_tokens), and the rest of the context bounds the chunks' tokens; the
    template's limits bound both. Unknown context: the template's limits, as they are."""
    chunks, tokens = template.map.batch_chunks, template.map.batch_tokens
    context = client.context_tokens
    if not context:
        return chunks, tokens, None
    cap = max(256, min(client.max_reply_tokens, context // 4))
    measured = client.reply_tokens.get("extraction:per_chunk") or []
    per_chunk = max(sum(measured) / len(measured), 64.0) if measured else float(REPLY_TOKENS_PER_CHUNK)
    fit = max(1, int(cap * 0.6 / per_chunk))  # room for a reply half as long again as usual
    room = max(256, context - cap - MAP_PROMPT_OVERHEAD)
    return min(chunks, fit), min(tokens, room), cap


def page_limits(client: OpenAIClient, template: Template) -> tuple[int, int]:
    """(evidence tokens, page tokens) of one page on this model: the template's, and with
    the model's context known at most a quarter of it for evidence and an eighth for the page."""
    budget, page = template.refine.context_budget, template.refine.max_page_tokens
    context = client.context_tokens
    if not context:
        return budget, page
    return min(budget, max(512, context // 4)), min(page, max(256, context // 8))


def map_schema(client: OpenAIClient, labels: Sequence[str], wordy: bool = False,
               prose: Collection[str] = ()) -> dict[str, Any]:
    """The extraction schema for a batch of chunks `labels`, its lists bounded for the batch.
    For chunks of prose (`wordy`: the batch; `prose`: the labels of such chunks) it asks for at
    least one claim and one entity: under a grammar a small model otherwise closes every list
    at once (measured), and prose always states some. A model of small context is asked for
    the lean reply grouped by chunk (grouped_schema)."""
    if lean(client):
        return grouped_schema(labels, prose)
    schema = copy.deepcopy(strict_schema(ExtractionReply))
    per_chunk_cap = min(list_items(client), MAX_LIST_ITEMS)
    for kind, per_chunk in ITEMS_PER_CHUNK.items():
        schema["properties"][kind]["maxItems"] = min(per_chunk, per_chunk_cap) * max(1, len(labels))
    if wordy:
        for kind in ("claims", "entities"):
            schema["properties"][kind]["minItems"] = 1
    return schema


def grouped_schema(labels: Sequence[str], prose: Collection[str] = ()) -> dict[str, Any]:
    """The lean reply: one object per chunk, in the batch's order, each with its own claims and
    entity names (by name and type), at most SMALL_MODEL_ITEMS of each; claims first (a grammar
    writes properties in order, and pages are written from claims). Asked for flat lists
    bounded per batch, the 1.5B model spent the bound on a batch's first chunks: 3 of the
    slice's 8 batches filled it there and left their last chunk nothing. Under a grammar each
    chunk now gets its turn. The reply is read back as flat lists (ExtractionReply)."""
    defs = strict_schema(ExtractionReply)["$defs"]
    claim = copy.deepcopy(defs["ClaimItem"])
    entity = copy.deepcopy(defs["EntityItem"])
    claim["properties"] = {k: claim["properties"][k] for k in ("text", "entities")}
    entity["properties"] = {k: entity["properties"][k] for k in ("name", "type")}
    for item in (claim, entity):
        item["required"] = list(item["properties"])

    def group(label: str) -> dict[str, Any]:
        lists = {kind: {"type": "array", "items": item, "maxItems": SMALL_MODEL_ITEMS}
                 for kind, item in (("claims", claim), ("entities", entity))}
        if label in prose:
            for bounded in lists.values():
                bounded["minItems"] = 1
        return {"type": "object", "properties": lists, "required": list(lists), "additionalProperties": False}

    return {"type": "object", "properties": {label: group(label) for label in labels},
            "required": list(labels), "additionalProperties": False}
