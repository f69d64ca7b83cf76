"""The repair of an answer none of whose sentences stood: asked again as JSON sentences, each
with the labels of its evidence. Loaded only when a model answers (pydantic is not an offline
question's cost).

A small local model copies passages and leaves their labels off, and at temperature 0 the same
prompt with its problems listed brings the same prose back (measured on a 1.5B model: word for
word). As JSON, a label is a field: a server that enforces the schema cannot leave it out, and
only the context's labels can be written. The sentences are then checked like streamed ones.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..engines.tasks import SENTENCE_CHARS, Reply, bound
from ..words import split_sentences
from .citations import not_whole

MAX_SENTENCES = 6
MAX_LABELS = 3
PLACEHOLDER = "<a sentence of the answer>"
SCHEMA_NAME = "cited_answer"

REPAIR_PROMPT = """{context}
Question: {question}

Your answer could not be used:
{problems}

Answer again as JSON: at most {sentences} sentences, each saying what one sentence of the
evidence says, with the labels of the evidence that says it:
{{"sentences": [{{"text": "{placeholder}", "cites": ["C1"]}}]}}"""


class CitedSentence(Reply):
    text: str = Field(json_schema_extra=bound(chars=SENTENCE_CHARS))
    cites: list[str] = Field(default_factory=list, json_schema_extra=bound(items=MAX_LABELS))


class CitedAnswer(Reply):
    sentences: list[CitedSentence] = Field(default_factory=list, json_schema_extra=bound(items=MAX_SENTENCES))


def cited_schema(labels: list[str]) -> dict[str, Any]:
    """The reply's schema with the context's labels as the only values a citation may take."""
    return {
        "type": "object", "additionalProperties": False, "required": ["sentences"],
        "properties": {"sentences": {
            "type": "array", "minItems": 1, "maxItems": MAX_SENTENCES,
            "items": {
                "type": "object", "additionalProperties": False, "required": ["text", "cites"],
                "properties": {
                    "text": {"type": "string", "maxLength": SENTENCE_CHARS},
                    "cites": {"type": "array", "minItems": 1, "maxItems": MAX_LABELS,
                              "items": {"type": "string", "enum": labels}},
                },
            },
        }},
    }


def as_sentences(item: CitedSentence) -> tuple[list[str], list[str]]:
    """The item as an answer's sentences, each with the item's labels before its stop ("... [C1,
    E2]."), and the pieces left out. A small model writes several sentences in one item, and a
    grammar cuts its text at the schema's length ("... shows the `backend_xmin` of every"): each
    sentence is one of the answer's, and a cut one or a piece of one is left out (not_whole). The prompt's
    placeholder copied back, or a text with no words, gives none."""
    body = " ".join(item.text.split())
    if not any(ch.isalpha() for ch in body) or body == PLACEHOLDER:
        return [], [item.text] if item.text.strip() else []
    labels = list(dict.fromkeys(label.strip() for label in item.cites if label.strip()))
    pieces = split_sentences(body)
    kept: list[str] = []
    dropped: list[str] = []
    for at, piece in enumerate(pieces):
        filled = at == len(pieces) - 1 and len(item.text) >= SENTENCE_CHARS - 1
        if not_whole(piece) or (filled and piece.rstrip()[-1:] not in ".!?"):
            dropped.append(piece)  # the grammar stopped it at the schema's length, or it ends mid-phrase
        else:
            kept.append(_labelled(piece, labels))
    return kept, dropped


def _labelled(piece: str, labels: list[str]) -> str:
    body, stop = piece.strip(), ""
    while body and body[-1] in ".!?":
        stop, body = body[-1] + stop, body[:-1]
    return f"{body.rstrip()} [{', '.join(labels)}]{stop or '.'}" if labels else f"{body.rstrip()}{stop or '.'}"
