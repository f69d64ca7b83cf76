"""ask(): an answer from one retrieval, every sentence citing its evidence, as a stream of events.

Events, in order:
- {"type": "stage", "stage": "retrieve"}, then {"type": "stage", "stage": "answer", "engine":
  "llm" | "offline" | "none", "refs": {label: {kind, id}}};
- {"type": "note", "message"}: what the answer is (extractive) or what degraded (the model
  could not be reached);
- {"type": "delta", "text"}: the model's tokens as they arrive (with a model only);
- {"type": "sentence", "index", "text", "cites"}: a sentence that passed its check, sent as
  soon as it is complete: it cites labels of the evidence, and the evidence it cites holds
  enough of its content words (compendium/support.py);
- {"type": "retract", "text", "reason"}: a streamed sentence that failed its check or is cut off
  (it ends mid-phrase) or is part of one (citations.not_whole); a client
  showing tokens removes it, and it is not part of the answer;
- {"type": "final", "answer", "citations", "evidence", "engine", "notes"}, or {"type": "error",
  "message", "field"} in place of what could not be done.

The answer is the kept sentences. A sentence with no label, or whose labels do not hold it, is
given the label of the one item that restates it (citations.recited). A reply with no sentence
kept gets one repair request, asked as JSON sentences each with its labels (cited.py: a small
model leaves labels off prose, and repeats its prose when told so; an item of several
sentences gives each its labels, and a cut one is left out); a reply still without one is an
error. Only an answer whose every sentence passed
is cached (by endpoint, model and prompt): a rejected one never is. An empty knowledge base,
or evidence that shares no word with the question, answers that nothing in the knowledge base
answers it, without calling the model.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

from ..engines.offline.sentences import sentences_of
from ..errors import CompendiumError, EngineUnavailable, ReplyError
from ..fingerprint import fingerprint
from ..storage.base import Store
from ..storage.text import STOPWORDS, words
from .citations import (
    CITATION,
    SentenceCutter,
    answer_antecedent,
    cited_labels,
    not_whole,
    recited,
    sentence_problem,
    split_answer,
)
from .options import Options
from .retrieve import Retrieval, retrieve

EXTRACTIVE_SENTENCES = 3
ANSWER_TOKENS = 600
ANSWER_VERSION = 5  # of the prompts and checks: a cached answer of another version is not used
CACHE_KIND = "answer"
NOTHING = "Nothing in the knowledge base answers this."
EXTRACTIVE_NOTE = ("An extractive answer: no model is configured, so these are sentences quoted "
                   "from the best passages, each citing its source.")
UNREACHABLE_NOTE = ("The model could not be reached ({error}); this is the extractive answer "
                    "instead: sentences quoted from the best passages.")

ANSWER_SYSTEM = (
    "You answer questions from the evidence you are given and from nothing else. Every "
    "sentence of your answer says what one sentence of the evidence says, and ends with the "
    "labels of the evidence that supports it, in square brackets, such as [C1] or [C2, E1]. If "
    "the evidence does not answer the question, say so in one sentence citing the closest evidence."
)
ANSWER_PROMPT = """{context}
Question: {question}

Answer in at most {sentences} sentences of plain prose, citing labels from the evidence above."""

# ---- the model's answer, streamed ------------------------------------------------------------


async def model_tokens(client: Any, system: str, prompt: str, max_tokens: int) -> AsyncIterator[str]:
    """The reply's text as the endpoint streams it (stream=True), under the client's retries,
    limits and budget; the stream is closed however the caller stops reading. An endpoint that
    refuses to stream (a 400 naming it, as some local servers answer at once) is asked again
    without it, and its reply comes as one piece."""
    from ..engines.endpoint_failures import sdk_error
    from ..engines.openai_client import count_tokens

    messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    estimated = count_tokens(system) + count_tokens(prompt) if client.counts_ahead() else 0

    async def send() -> Any:
        return await client.sdk.chat.completions.create(
            model=client.model, messages=messages, temperature=0.0, max_tokens=max_tokens,
            stream=True, stream_options={"include_usage": True},
        )

    async def send_whole() -> Any:
        return await client.sdk.chat.completions.create(
            model=client.model, messages=messages, temperature=0.0, max_tokens=max_tokens,
        )

    said: list[str] = []
    used: dict[str, int] = {}
    with client.usage.reserve(estimated, max_tokens):
        stream = None
        try:
            try:
                stream = await client.call(send, estimated_tokens=estimated)
            except Exception as exc:
                if not sdk_error(exc, "BadRequestError") or "stream" not in str(exc).lower():
                    raise  # another fault of the request: asking without streaming would not mend it
            if stream is None:
                whole = await client.call(send_whole, estimated_tokens=estimated)
        except Exception as exc:
            if not sdk_error(exc):
                raise
            raise client.translate(exc) from exc
        if stream is None:
            text = (whole.choices[0].message.content or "") if whole.choices else ""
            if whole.usage is not None:
                used = {"prompt": whole.usage.prompt_tokens, "completion": whole.usage.completion_tokens}
            client.usage.record_llm(used.get("prompt") or estimated or count_tokens(system + prompt),
                                    used.get("completion") or count_tokens(text))
            if text:
                yield text
            return
        try:
            async for chunk in stream:
                if getattr(chunk, "usage", None) is not None:
                    used = {"prompt": chunk.usage.prompt_tokens, "completion": chunk.usage.completion_tokens}
                for choice in chunk.choices or ():
                    text = getattr(choice.delta, "content", None) if choice.delta else None
                    if text:
                        said.append(text)
                        yield text
        except Exception as exc:
            if not sdk_error(exc):
                raise
            raise client.translate(exc) from exc
        finally:
            with contextlib.suppress(Exception):
                await stream.close()
            client.usage.record_llm(used.get("prompt") or estimated or count_tokens(system + prompt),
                                    used.get("completion") or count_tokens("".join(said)))


def answer_key(client: Any, prompt: str) -> str:
    """An answer's cache key: the endpoint, the model and everything asked."""
    return fingerprint(CACHE_KIND, ANSWER_VERSION, client.base_url, client.model, ANSWER_SYSTEM, prompt,
                       ANSWER_TOKENS)


async def llm_answer(retrieval: Retrieval, client: Any) -> AsyncIterator[dict[str, Any]]:
    """Events of the model's answer: tokens, checked sentences, retractions; ends with
    {"type": "answer", "text", "cached"} or raises ReplyError when no sentence stood."""
    prompt = ANSWER_PROMPT.format(context=retrieval.context, question=retrieval.question, sentences=6)
    key = answer_key(client, prompt)
    cache = getattr(client, "cache", None)
    if cache is not None:
        cached = (await cache.get([key])).get(key)
        text = cached.get("answer") if isinstance(cached, dict) else None
        said = split_answer(text) if text else []
        if said and all(sentence_problem(s, retrieval, answer_antecedent(said[:n])) is None for n, s in enumerate(said)):
            client.usage.record_cached()
            for index, sentence in enumerate(split_answer(text)):
                yield {"type": "sentence", "index": index, "text": sentence, "cites": cited_labels(sentence)}
            yield {"type": "answer", "text": text, "cached": True}
            return
    problems: list[str] = []
    kept: list[str] = []
    retracted = 0
    cutter = SentenceCutter()
    tokens = model_tokens(client, ANSWER_SYSTEM, prompt, ANSWER_TOKENS)
    async with contextlib.aclosing(tokens):
        async for token in tokens:
            yield {"type": "delta", "text": token}
            for sentence in cutter.feed(token):
                event = _checked(sentence, retrieval, kept, problems)
                retracted += event["type"] == "retract"
                yield event
    for sentence in cutter.rest():
        event = _checked(sentence, retrieval, kept, problems)
        retracted += event["type"] == "retract"
        yield event
    if not kept:
        retracted = 0
        for event in await _repaired(retrieval, client, problems):
            retracted += event["type"] == "retract"
            if event["type"] == "sentence":
                event = _checked(event["text"], retrieval, kept, problems)
            yield event
    if kept:
        text = " ".join(kept)
        if not retracted and cache is not None:  # only an answer that passed whole
            await cache.put(CACHE_KIND, {key: {"answer": text}})
        yield {"type": "answer", "text": text, "cached": False}
        return
    raise ReplyError(
        "the model's answer is not cited as required, even after one repair: "
        + (problems[-1] if problems else "it was empty"),
        hint="try a stronger model",
        field="answer",
    )


async def _repaired(retrieval: Retrieval, client: Any, problems: list[str]) -> list[dict[str, Any]]:
    """The repair: the answer asked again as JSON sentences with their labels (cited.py). Each
    comes back as a "sentence" event to check, or a "retract" event when it was dropped before
    any check (the prompt's placeholder); a reply with no sentence standing is asked once more,
    hotter (complete_json's repair). [] when the model gave nothing usable."""
    from .cited import (
        MAX_SENTENCES,
        PLACEHOLDER,
        REPAIR_PROMPT,
        SCHEMA_NAME,
        CitedAnswer,
        as_sentences,
        cited_schema,
    )

    prompt = REPAIR_PROMPT.format(context=retrieval.context, question=retrieval.question,
                                  problems="\n".join(f"- {p}" for p in problems[-6:]) or "- it was empty",
                                  sentences=MAX_SENTENCES, placeholder=PLACEHOLDER)

    def standing(reply: CitedAnswer) -> str | None:
        said = [s for item in reply.sentences for s in as_sentences(item)[0]]
        if any(_standing(s, retrieval) for s in said):
            return None
        return "no sentence says what the evidence it cites says: " + "; ".join(
            repr(s[:120]) for s in said)[:600]

    try:
        reply = await client.complete_json(system=ANSWER_SYSTEM, prompt=prompt, reply_type=CitedAnswer,
                                           schema_name=SCHEMA_NAME, schema=cited_schema(sorted(retrieval.refs)),
                                           temperature=0.0, check=standing, max_tokens=ANSWER_TOKENS * 3 // 2)
    except ReplyError as exc:
        problems.append(str(exc))
        return []
    out: list[dict[str, Any]] = []
    for item in reply.sentences:
        kept, dropped = as_sentences(item)
        out.extend({"type": "sentence", "text": sentence} for sentence in kept)
        out.extend({"type": "retract", "text": piece, "reason": "not a whole sentence of the answer"}
                   for piece in dropped)
    return out


def _words_said(sentence: str) -> str:
    return " ".join(words(CITATION.sub(" ", sentence)))


def _standing(sentence: str, retrieval: Retrieval) -> bool:
    """Whether the sentence stands as it is or with the label of the one item restating it."""
    if sentence_problem(sentence, retrieval) is None:
        return True
    fixed = recited(sentence, retrieval)
    return fixed is not None and sentence_problem(fixed, retrieval) is None


def _checked(sentence: str, retrieval: Retrieval, kept: list[str], problems: list[str]) -> dict[str, Any]:
    broken = not_whole(sentence)
    if broken:  # the reply ran out of tokens mid-sentence, or a piece of one: never shown
        problems.append(f"{broken}: {sentence[:200]!r}")
        return {"type": "retract", "text": sentence, "reason": broken}
    said = _words_said(sentence)
    if said and any(_words_said(k) == said for k in kept):
        # a small model wrote one sentence three and four times over
        return {"type": "retract", "text": sentence, "reason": "the answer already says this"}
    antecedent = answer_antecedent(kept)  # what "It ..." stands for: the answer's sentences so far
    problem = sentence_problem(sentence, retrieval, antecedent)
    if problem is not None:
        # copied without its label, or with the wrong one: the one item that restates it
        fixed = recited(sentence, retrieval, antecedent)
        if fixed is not None and sentence_problem(fixed, retrieval, antecedent) is None:
            sentence, problem = fixed, None
    if problem is None:
        kept.append(sentence)
        return {"type": "sentence", "index": len(kept) - 1, "text": sentence, "cites": cited_labels(sentence)}
    problems.append(problem)
    return {"type": "retract", "text": sentence, "reason": problem}


# ---- the extractive answer -------------------------------------------------------------------

_DANGLING = frozenset({"with", "the", "a", "an", "to", "of", "by", "for", "from", "and", "or", "as",
                       "in", "on", "at", "into", "is", "are", "be", "use", "using", "run", "see"})


def _whole(sentence: str) -> bool:
    """A sentence that reads whole: a stop at its end, not after a word that needs more (a code
    span the reader left out: "you can undo it with.")."""
    stripped = sentence.rstrip()
    if stripped[-1:] not in (".", "!", "?") and not stripped.endswith(".)"):
        return False
    last = words(stripped)
    return bool(last) and last[-1] not in _DANGLING


def extractive_answer(retrieval: Retrieval, limit: int = EXTRACTIVE_SENTENCES) -> str:
    """The evidence sentences that best cover the question's words, each citing its item:
    passages, and the descriptions of the two best entities (which quote their passages)."""
    asked = {w for w in words(retrieval.question) if w not in STOPWORDS}
    if not asked:
        asked = set(words(retrieval.question))
    sources = [(ref, retrieval.chunks[int(ref[1:]) - 1]["text"]) for ref in retrieval.refs if ref[0] == "C"]
    definitions = [
        (ref, (sentences_of(retrieval.entities[int(ref[1:]) - 1].get("description", "")) or [None])[0])
        for ref in retrieval.refs if ref[0] == "E" and int(ref[1:]) <= 2
    ]
    sources[2:2] = [(ref, first.text) for ref, first in definitions if first is not None]
    seen_in: dict[str, int] = {}
    per_source = []
    for rank, (ref, text) in enumerate(sources):
        sentences = [s.text for s in sentences_of(text) if 20 <= len(s.text) <= 400 and _whole(s.text)]
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
    return " ".join(_cite(c[3], c[4]) for c in chosen)


def _cite(sentence: str, ref: str) -> str:
    """The sentence with its label before its stop, so the label cannot slide onto the next."""
    body = CITATION.sub("", sentence).strip()
    stop = ""
    while body and body[-1] in ".!?":
        stop, body = body[-1] + stop, body[:-1]
    return f"{body.rstrip()} [{ref}]{stop or '.'}"


def citations(retrieval: Retrieval, answer: str) -> list[dict[str, Any]]:
    """Each label the answer cites, resolved to the record it stands for."""
    out = []
    for label in cited_labels(answer):
        if label not in retrieval.refs:
            continue
        kind, record_id = retrieval.refs[label]
        item: dict[str, Any] = {"ref": label, "kind": kind, "id": record_id}
        index = int(label[1:]) - 1
        if kind == "chunk":
            chunk = retrieval.chunks[index]
            item.update(document=chunk["document"], heading_path=chunk["heading_path"],
                        chunk_id=chunk["chunk_id"])
        elif kind == "entity":
            item.update(name=retrieval.entities[index]["name"], page=retrieval.entities[index]["page"])
        elif kind == "page":
            item.update(title=retrieval.pages[index]["title"])
        elif kind == "topic":
            item.update(title=retrieval.topics[index]["title"])
        out.append(item)
    return out


def has_evidence(retrieval: Retrieval) -> bool:
    """Does any passage share a meaningful word of the question? (Vectors always return their
    nearest passages, however far: a question the knowledge base knows nothing of gets some.)"""
    asked = {w for w in words(retrieval.question) if w not in STOPWORDS}
    return any(asked & set(words(" ".join([*c["heading_path"], c["text"]]))) for c in retrieval.chunks)


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
    notes = list(retrieval.notes)
    refs = {label: {"kind": kind, "id": record_id} for label, (kind, record_id) in retrieval.refs.items()}
    if not has_evidence(retrieval):
        yield {"type": "stage", "stage": "answer", "engine": "none", "refs": refs}
        yield {"type": "sentence", "index": 0, "text": NOTHING, "cites": []}
        yield {"type": "final", "answer": NOTHING, "citations": [], "evidence": retrieval.as_dict(),
               "engine": "none", "notes": notes}
        return
    unreachable = retrieval.model_error
    engine = "llm" if llm is not None and not unreachable else "offline"
    yield {"type": "stage", "stage": "answer", "engine": engine, "refs": refs}
    text = ""
    if engine == "llm":
        events = llm_answer(retrieval, llm)
        try:
            async with contextlib.aclosing(events):
                async for event in events:
                    if event["type"] == "answer":
                        text = event["text"]
                    else:
                        yield event
        except EngineUnavailable as exc:
            unreachable = str(exc)
        except CompendiumError as exc:
            yield {"type": "error", "message": str(exc), "field": exc.field}
            return
    if not text:
        note = UNREACHABLE_NOTE.format(error=unreachable) if unreachable else EXTRACTIVE_NOTE
        notes.append(note)
        yield {"type": "note", "message": note}
        engine = "offline"
        text = extractive_answer(retrieval)
        for index, sentence in enumerate(split_answer(text)):
            yield {"type": "sentence", "index": index, "text": sentence, "cites": cited_labels(sentence)}
    yield {"type": "final", "answer": text, "citations": citations(retrieval, text),
           "evidence": retrieval.as_dict(), "engine": engine, "notes": notes}
