"""A question's key terms and the names it may mention: by rules offline, by one cached LLM call."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..storage.text import STOPWORDS, query_words

if TYPE_CHECKING:
    from .rewrite import QuestionRewrite

MAX_QUESTION_CHARS = 2000  # a question longer than this is cut: it bounds every lookup after it
MAX_NAMES = 8

_QUOTED = re.compile(r"[\"“'‘`]([^\"”'’`]{2,80})[\"”'’`]")
# Runs of capitalised words ("Write-Ahead Log", "Lumen Cloud"), acronyms (WAL, MVCC), identifiers
# (max_wal_size, pg_dump, CamelCase): the shapes names take in a question.
_CAPITAL_RUN = re.compile(r"\b[A-Z][\w-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w-]*)*")
_IDENTIFIER = re.compile(r"\b\w*(?:_\w+|[a-z][A-Z]\w*|\d\w*[a-zA-Z])\b")


@dataclass(slots=True)
class QuestionTerms:
    """What retrieval looks up: `words` for full text, `names` for entity names and aliases."""

    words: list[str]
    names: list[str] = field(default_factory=list)
    source: str = "rules"  # rules | llm

    def as_dict(self) -> dict[str, Any]:
        return {"words": self.words, "names": self.names, "source": self.source}


def clip_question(question: str) -> str:
    return " ".join(str(question).split())[:MAX_QUESTION_CHARS]


def rule_terms(question: str) -> QuestionTerms:
    """Words without question words; names from quotes, capitalised runs and identifiers."""
    text = clip_question(question)
    names: list[str] = []
    for match in _QUOTED.finditer(text):
        names.append(match.group(1).strip())
    for match in _CAPITAL_RUN.finditer(text):
        name = match.group(0).strip()
        first, *rest = name.split()
        if first.casefold() in STOPWORDS:  # "What", "How" open a question; they name nothing
            name = " ".join(rest)
        if name and name.casefold() not in STOPWORDS:
            names.append(name)
    names += [m.group(0) for m in _IDENTIFIER.finditer(text)]
    unique = list(dict.fromkeys(n for n in names if len(n) > 1))
    return QuestionTerms(words=query_words(text), names=unique[:MAX_NAMES])


def __getattr__(name: str) -> object:
    if name in ("QuestionRewrite", "REWRITE_SYSTEM", "REWRITE_PROMPT"):  # loaded with the LLM only
        from . import rewrite

        return getattr(rewrite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def llm_terms(question: str, client: Any) -> QuestionTerms:
    """One rewrite call (cached by the client under its request fingerprint), merged with the
    rules' terms so a terse reply never loses a word of the question."""
    from .rewrite import REWRITE_PROMPT, REWRITE_SYSTEM, QuestionRewrite

    text = clip_question(question)
    reply: QuestionRewrite = await client.complete_json(
        system=REWRITE_SYSTEM,
        prompt=REWRITE_PROMPT.format(question=text),
        reply_type=QuestionRewrite,
        schema_name="question_terms",
        temperature=0.0,
    )
    rules = rule_terms(text)
    names = [n.strip()[:120] for n in reply.names if n.strip()]
    words = query_words(" ".join([text, *reply.keywords[:10]]))
    return QuestionTerms(
        words=words,
        names=list(dict.fromkeys([*names, *rules.names]))[:MAX_NAMES],
        source="llm",
    )
