"""An answer's citations: its sentences cut (as a stream arrives, too), the evidence labels each
cites, and whether the evidence a sentence cites says what the sentence says."""

from __future__ import annotations

import re
from collections.abc import Container

from ..statements import NO_ANTECEDENT, statement_problem, subject_of
from ..storage.text import words
from ..support import MIN_CONTENT_WORDS, SUPPORT_THRESHOLD, content_words, overlap, restating
from ..words import not_after_abbreviation
from .retrieve import Retrieval

_GROUP = r"\[(?:[ERPTC]\d+)(?:\s*[,;]\s*[ERPTC]\d+)*\]"
CITATION = re.compile(r"\[((?:[ERPTC]\d+)(?:\s*[,;]\s*[ERPTC]\d+)*)\]")
_LABEL = re.compile(r"[ERPTC]\d+")
_SENTENCE_END = re.compile(r"(?<=[.!?])" + not_after_abbreviation(r"\.") + r"\s+(?=\S)|(?<=\])\s+(?=[A-Z])")
# Where a sentence of a streamed reply ends: citations and a stop, as soon as a space follows;
# else its stop and any citations after it, or citations with no stop, once what follows opens
# another sentence (a citation may still come after a bare stop).
_BOUNDARY = re.compile(
    rf"{_GROUP}[.!?](?=\s)|(?:{not_after_abbreviation()}[.!?](?:\s*{_GROUP})*|{_GROUP})(?=\s+[\"'“(A-Z0-9`*_])"
)


def split_answer(text: str) -> list[str]:
    """Sentences of an answer; a citation written after the full stop stays with its sentence."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    out: list[str] = []
    for part in parts:
        if out and CITATION.fullmatch(part.rstrip(".")):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


# Words a sentence cannot end on: it was cut off ("... shows the `backend_xmin` of every [C1].").
_UNFINISHED = frozenset("a an the of to by for from with and or nor but in on at into onto than as every each "
                        "its their whose".split())


def not_whole(sentence: str) -> str | None:
    """Why the text is not a whole sentence of an answer (None: it is): it stops mid-phrase (its
    last word, citations aside, needs more after it, or it ends on a comma, colon or semicolon),
    or it opens in lowercase, the rest of a sentence or an item of a list ("a replication slot
    whose consumer has stopped")."""
    bare = CITATION.sub(" ", sentence).strip().rstrip(".!?").rstrip()
    last = words(bare)
    if not bare or bare[-1] in ",:;" or (last and last[-1] in _UNFINISHED):
        return "the sentence is cut off"
    if bare[0].islower():
        return "this is part of a sentence, not a whole one"
    return None


def cited_labels(text: str) -> list[str]:
    return list(dict.fromkeys(
        label for group in CITATION.findall(text) for label in _LABEL.findall(group)
    ))


def evidence_text(retrieval: Retrieval, label: str) -> str:
    """What the item a label stands for says (a passage's text, an entity's description...)."""
    kind, _ = retrieval.refs[label]
    index = int(label[1:]) - 1
    if kind == "chunk":
        item = retrieval.chunks[index]
        return "\n".join([*item["heading_path"], item["text"]])  # a heading is no part of the first sentence
    if kind == "entity":
        item = retrieval.entities[index]
        return f"{item['name']} {item.get('description', '')}"
    if kind == "relation":
        item = retrieval.relations[index]
        return f"{item['source_name']} {item['type']} {item['target_name']} {item.get('description', '')}"
    item = (retrieval.pages if kind == "page" else retrieval.topics)[index]
    return f"{item['title']} {item.get('summary', '')}"


def sentence_problem(sentence: str, retrieval: Retrieval, antecedent: str | None = None) -> str | None:
    """Why a sentence cannot stand (None: it can): it cites nothing, cites a label the context
    does not hold, its cited evidence holds too few of its content words, or holds them but not
    as one statement with the sentence's names and actor (statements.statement_problem; a
    pronoun subject read as `antecedent`, the answer's sentences before it: answer_antecedent)."""
    cited = cited_labels(sentence)
    problem = _label_problem(sentence, cited, retrieval.refs)
    if problem:
        return problem
    bare = CITATION.sub(" ", sentence)
    if _said(bare) in _titles(retrieval):
        return f"this is a heading or a name of the evidence, not a sentence: {sentence[:200]!r}"
    said = content_words(bare)
    if len(said) >= MIN_CONTENT_WORDS:
        texts = [evidence_text(retrieval, c) for c in cited]
        held = set().union(*(content_words(t) for t in texts))
        if overlap(said, held) < SUPPORT_THRESHOLD:
            return f"this sentence says what {', '.join(cited)} does not: {sentence[:200]!r}"
        # Each cited item on lines of its own: its sentences are statements, never run together.
        why = statement_problem(bare, "\n".join(texts), SUPPORT_THRESHOLD, antecedent)
        if why:
            return f"this sentence says what {', '.join(cited)} does not ({why}): {sentence[:200]!r}"
    return None


def answer_antecedent(kept: list[str]) -> str:
    """What a pronoun opening the answer's next sentence stands for: the subject of the last of
    `kept` that has one (statements.subject_of); NO_ANTECEDENT before any."""
    found = NO_ANTECEDENT
    for sentence in kept:
        found = subject_of(CITATION.sub(" ", sentence), found) or found
    return found


def _said(text: str) -> str:
    """A text's words, lowercased and space-joined, for telling the same words apart from marks."""
    return " ".join(words(text))


def _titles(retrieval: Retrieval) -> set[str]:
    """The headings of the passages (alone and as their path) and the names and titles of the
    other items: what a small model copies as a "sentence" and its label then "supports"
    ("The price of MVCC [C1]."). Each as _said gives it."""
    out = set()
    for chunk in retrieval.chunks:
        path = list(chunk.get("heading_path") or [])
        out.update(_said(h) for h in path)
        out.update(_said(" ".join(path[i:])) for i in range(len(path)))
    out.update(_said(e["name"]) for e in retrieval.entities)
    out.update(_said(p["title"]) for p in retrieval.pages)
    out.update(_said(t["title"]) for t in retrieval.topics)
    return out - {""}


def recited(sentence: str, retrieval: Retrieval, antecedent: str | None = None) -> str | None:
    """The sentence, its labels (if any) replaced by the label of an item that restates it
    ("... [C2]"), as a page's sentence gets the item it restates; None when none does. The one
    passage that restates it, by a margin over the others (support.restating); else the other
    item (an entity's description, a page's summary) that holds most of its words and restates
    it: two such items often say the same. A small model copies its evidence and leaves the
    labels off, or puts the next one."""
    bare = " ".join(CITATION.sub(" ", sentence).split())
    chunks: dict[str, str] = {}
    others: dict[str, str] = {}
    for label, (kind, _) in retrieval.refs.items():
        (chunks if kind == "chunk" else others)[label] = evidence_text(retrieval, label)
    label = restating(bare, chunks, antecedent=antecedent) if chunks else None
    if label is None:
        said = content_words(bare)
        ranked = sorted(others, key=lambda item: -overlap(said, others[item]))
        label = next((item for item in ranked if restating(bare, {item: others[item]}, antecedent=antecedent)), None)
    if label is None:
        return None
    stop = ""
    while bare and bare[-1] in ".!?":
        stop, bare = bare[-1] + stop, bare[:-1]
    return f"{bare.rstrip()} [{label}]{stop}"


def citation_problems(text: str, allowed: set[str]) -> list[str]:
    """What is wrong with an answer's citations, by labels alone (nothing: a valid answer)."""
    sentences = split_answer(text)
    if not sentences:
        return ["the answer is empty"]
    problems = [_label_problem(sentence, cited_labels(sentence), allowed) for sentence in sentences]
    return [f"- {problem}" for problem in problems if problem]


def _label_problem(sentence: str, cited: list[str], allowed: Container[str]) -> str | None:
    """Why a sentence's labels cannot stand: it cites none, or one the evidence does not hold."""
    if not cited:
        return f"this sentence cites nothing: {sentence[:200]!r}"
    unknown = [c for c in cited if c not in allowed]
    if unknown:
        return f"this sentence cites {', '.join(unknown)}, not in the evidence: {sentence[:200]!r}"
    return None


class SentenceCutter:
    """Cuts a stream of text into sentences as soon as each one is complete."""

    def __init__(self) -> None:
        self.buffer = ""

    def feed(self, text: str) -> list[str]:
        self.buffer += text
        out = []
        while (match := _BOUNDARY.search(self.buffer)) is not None:
            out.append(self.buffer[: match.end()].strip())
            self.buffer = self.buffer[match.end():]
        return [s for s in out if s]

    def rest(self) -> list[str]:
        rest, self.buffer = self.buffer.strip(), ""
        return split_answer(rest) if rest else []
