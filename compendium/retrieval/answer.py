"""ask(): an answer from one retrieval whose every sentence cites its evidence, as a stream of events.

Events, in order: {"type": "stage", "stage": "retrieve"}, {"type": "stage", "stage": "answer",
"refs": {label: {kind, id}}}, then {"type": "delta", "text"} per sentence, then {"type": "final", "answer",
"citations", "evidence"}; or {"type": "error", "message"} in place of what could not be done.
A model's reply is checked before any of it is sent: sentences without a citation, or citing
a label the context does not hold, get one repair request; a reply still wrong is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator
from typing import Any

from ..engines.offline.sentences import sentences_of
from ..errors import CompendiumError, ReplyError
from ..storage.base import Store
from ..storage.text import STOPWORDS, words
from .retrieve import Options, Retrieval, retrieve

_CITATION = re.compile(r"\[((?:[ERPTC]\d+)(?:\s*[,;]\s*[ERPTC]\d+)*)\]")
_LABEL = re.compile(r"[ERPTC]\d+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=\])\s+(?=[A-Z])")
EXTRACTIVE_SENTENCES = 3
ANSWER_TOKENS = 600

ANSWER_SYSTEM = (
    "You answer questions from the evidence you are given and from nothing else. Every "
    "sentence of your answer ends with the labels of the evidence that supports it, in square "
    "brackets, such as [C1] or [C2, E1]. If the evidence does not answer the question, say so "
    "in one sentence citing the closest evidence."
)
ANSWER_PROMPT = """{context}
Question: {question}

Answer in at most {sentences} sentences of plain prose, citing labels from the evidence above."""
REPAIR_PROMPT = """Your answer broke the citation rule:
{problems}
Write the answer again. Every sentence must end with one or more labels from the evidence,
such as [C1], and cite no other label."""


def split_answer(text: str) -> list[str]:
    """Sentences of an answer; a citation written after the full stop stays with its sentence."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    out: list[str] = []
    for part in parts:
        if out and _CITATION.fullmatch(part.rstrip(".")):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def citation_problems(text: str, allowed: set[str]) -> list[str]:
    """What is wrong with an answer's citations (nothing: a valid answer)."""
    sentences = split_answer(text)
    if not sentences:
        return ["the answer is empty"]
    problems = []
    for sentence in sentences:
        cited = [label for group in _CITATION.findall(sentence) for label in _LABEL.findall(group)]
        if not cited:
            problems.append(f"- this sentence cites nothing: {sentence[:200]!r}")
        unknown = [c for c in cited if c not in allowed]
        if unknown:
            problems.append(f"- this sentence cites {', '.join(unknown)}, not in the evidence: {sentence[:200]!r}")
    return problems


def cited_labels(text: str) -> list[str]:
    return list(dict.fromkeys(
        label for group in _CITATION.findall(text) for label in _LABEL.findall(group)
    ))


async def llm_answer(retrieval: Retrieval, client: Any) -> str:
    """One call with the context; one repair when a sentence is uncited or cites what is not there."""
    allowed = set(retrieval.refs)
    prompt = ANSWER_PROMPT.format(context=retrieval.context, question=retrieval.question,
                                  sentences=6)
    reply = await client.complete_text(system=ANSWER_SYSTEM, prompt=prompt, temperature=0.0,
                                       max_tokens=ANSWER_TOKENS)
    problems = citation_problems(reply, allowed)
    if not problems:
        return reply.strip()
    repair = (f"{prompt}\n\nYour previous answer:\n{reply}\n\n"
              + REPAIR_PROMPT.format(problems="\n".join(problems)))
    again = await client.complete_text(system=ANSWER_SYSTEM, prompt=repair, temperature=0.0,
                                       max_tokens=ANSWER_TOKENS)
    still = citation_problems(again, allowed)
    if still:
        raise ReplyError(
            "the model's answer is not cited as required, even after one repair: " + still[0][2:],
            hint="try a stronger model",
            field="answer",
        )
    return again.strip()


def extractive_answer(retrieval: Retrieval, limit: int = EXTRACTIVE_SENTENCES) -> str:
    """The evidence sentences that best cover the question's words, each citing its item:
    passages, and the descriptions of the two best entities (which quote their passages)."""
    asked = {w for w in words(retrieval.question) if w not in STOPWORDS}
    if not asked:
        asked = set(words(retrieval.question))
    # Passages first: they are the sources. An entity's opening sentence (a definition) comes
    # after the two best passages.
    sources = [(ref, retrieval.chunks[int(ref[1:]) - 1]["text"]) for ref in retrieval.refs if ref[0] == "C"]
    definitions = [
        (ref, (sentences_of(retrieval.entities[int(ref[1:]) - 1].get("description", "")) or [None])[0])
        for ref in retrieval.refs if ref[0] == "E" and int(ref[1:]) <= 2
    ]
    sources[2:2] = [(ref, first.text) for ref, first in definitions if first is not None]
    seen_in: dict[str, int] = {}
    per_source = []
    for rank, (ref, text) in enumerate(sources):
        # only whole sentences: a heading line has no full stop, and a sentence ending in ":"
        # introduces a list it does not hold
        sentences = [s.text for s in sentences_of(text)
                     if 20 <= len(s.text) <= 400 and s.text.rstrip()[-1:] in (".", "!", "?", ")")]
        per_source.append((rank, ref, sentences))
        for sentence in sentences:
            for w in set(words(sentence)) & asked:
                seen_in[w] = seen_in.get(w, 0) + 1
    total = max(1, sum(len(s) for _, _, s in per_source))
    candidates: list[tuple[float, int, int, str, str]] = []
    for rank, ref, sentences in per_source:
        for position, sentence in enumerate(sentences):
            present = set(words(sentence)) & asked
            if not present:
                continue
            # rarer question words count more; better-ranked evidence and opening sentences
            # (where a passage or description says what its subject is) a little more
            score = sum(math.log(1 + total / seen_in[w]) for w in present) / (1 + 0.15 * rank)
            if position == 0:
                score *= 1.3
            candidates.append((score, rank, position, sentence, ref))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    chosen, texts = [], set()
    for candidate in candidates:
        key = " ".join(words(candidate[3]))
        if key in texts:
            continue
        texts.add(key)
        chosen.append(candidate)
        if len(chosen) >= limit:
            break
    chosen.sort(key=lambda c: (c[1], c[2]))  # in reading order
    return " ".join(f"{_without_end_citations(c[3])} [{c[4]}]" for c in chosen)


def _without_end_citations(sentence: str) -> str:
    return _CITATION.sub("", sentence).strip()


def citations(retrieval: Retrieval, answer: str) -> list[dict[str, Any]]:
    """Each label the answer cites, resolved to the record it stands for."""
    out = []
    for label in cited_labels(answer):
        kind, record_id = retrieval.refs[label]
        item: dict[str, Any] = {"ref": label, "kind": kind, "id": record_id}
        index = int(label[1:]) - 1
        if kind == "chunk":
            chunk = retrieval.chunks[index]
            item.update(document=chunk["document"], heading_path=chunk["heading_path"])
        elif kind == "entity":
            item.update(name=retrieval.entities[index]["name"], page=retrieval.entities[index]["page"])
        elif kind == "page":
            item.update(title=retrieval.pages[index]["title"])
        elif kind == "topic":
            item.update(title=retrieval.topics[index]["title"])
        out.append(item)
    return out


async def ask(
    question: str,
    store: Store,
    *,
    embedder: Any,
    passages: Any | None = None,
    llm: Any | None = None,
    options: Options | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The answer to `question` as a stream of events (see the module docstring)."""
    yield {"type": "stage", "stage": "retrieve"}
    try:
        retrieval = await retrieve(question, store, embedder=embedder, passages=passages, llm=llm,
                                   options=options)
    except CompendiumError as exc:
        yield {"type": "error", "message": str(exc), "field": exc.field}
        return
    # the labels the answer may cite, so a client can link citations while the text streams
    refs = {label: {"kind": kind, "id": record_id} for label, (kind, record_id) in retrieval.refs.items()}
    yield {"type": "stage", "stage": "answer", "engine": "llm" if llm is not None else "offline",
           "refs": refs}
    try:
        if llm is not None:
            text = await llm_answer(retrieval, llm)
        else:
            text = extractive_answer(retrieval)
    except CompendiumError as exc:
        yield {"type": "error", "message": str(exc), "field": exc.field}
        return
    if not text:
        text = ""
    for sentence in split_answer(text):
        yield {"type": "delta", "text": sentence + " "}
    yield {"type": "final", "answer": text, "citations": citations(retrieval, text),
           "evidence": retrieval.as_dict()}
