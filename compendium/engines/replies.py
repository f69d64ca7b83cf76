"""Checks a model's reply before anything keeps it: chunk labels as models write them, page prose."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection, Iterable

# A label as models echo it back: "[c3]", "C3", "chunk c3", "Chunk 3", "c3:", "(c3)", "c3.", "#c3".
_LABEL = re.compile(
    r"""[\s\[\](){}<>#"'`*]*(?:chunk[\s_#:-]*)?(?P<letter>[a-z]?)[\s_-]?0*(?P<number>\d+)[\s\[\](){}<>"'`*.,:;!?]*""",
    re.IGNORECASE,
)
# A citation marker [^3] or [^chunk-id] (footnote definitions "[^3]:" are not citations).
_CITE = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_LINK = re.compile(r"\[\[[^\[\]\n]+\]\]")
_WORD = re.compile(r"[^\W\d_]{2,}")
_FENCED_JSON = re.compile(r"^```(?:json)?\s*\n[\[{]", re.IGNORECASE)
# How a refusal opens. Only the opening is read: a page may well quote "cannot" later on.
_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+(?:so\s+|very\s+)?sorry|sorry(?:[,.!]|\s+(?:but|i)\b)|i\s+apologi[sz]e|unfortunately,?\s+i\b|"
    r"i\s+(?:can(?:no|')?t|cannot|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|won'?t|"
    r"(?:do\s+not|don'?t)\s+have\s+(?:enough|access))|as\s+an\s+ai\b)",
    re.IGNORECASE,
)
MIN_PROSE_WORDS = 3
NO_CITATION = "the reply cites none of the evidence it was given"


def label_key(raw: str) -> str | None:
    """The canonical form of a chunk label ("c3"), or None when `raw` is not shaped like one."""
    found = _LABEL.fullmatch(raw or "")
    if found is None:
        return None
    return f"{found['letter'].lower() or 'c'}{int(found['number'])}"


class LabelReader:
    """Maps the labels a model wrote back to the labels of the batch it was given."""

    def __init__(self, labels: Iterable[str]):
        self.labels = list(labels)
        self._exact = {label: label for label in self.labels}
        self._by_key = {}
        for label in self.labels:
            key = label_key(label)
            if key is not None:
                self._by_key.setdefault(key, label)

    def read(self, raw: str) -> str | None:
        """The batch's label that `raw` names, or None when it names no chunk of the batch."""
        if not isinstance(raw, str):
            return None
        found = self._exact.get(raw) or self._exact.get(raw.strip())
        if found is not None:
            return found
        key = label_key(raw)
        return self._by_key.get(key) if key is not None else None


def unknown_labels(written: Iterable[str], labels: Iterable[str], *, distinct: bool = True) -> list[str]:
    """The labels in `written` that name no chunk of the batch, as written (each once, or
    once per item with distinct=False)."""
    reader = LabelReader(labels)
    names: dict[str, bool] = {}  # label as written -> names a chunk; a reply repeats its few labels
    lost = []
    for raw in written:
        if raw not in names:
            names[raw] = reader.read(raw) is not None
        if not names[raw]:
            lost.append(raw)
    return list(dict.fromkeys(lost)) if distinct else lost


def label_problem(written: list[str], labels: Collection[str]) -> str | None:
    """Why a MAP reply cannot be kept: more than half of its items name no chunk of the batch."""
    if not written:
        return None
    lost = unknown_labels(written, labels, distinct=False)
    if len(lost) * 2 <= len(written):
        return None
    shown = ", ".join(repr(x) for x in list(dict.fromkeys(lost))[:5])
    return (
        f"{len(lost)} of {len(written)} items name no chunk of this batch (for example {shown}). "
        f"The valid chunk labels are {', '.join(labels)}: set every item's \"chunk\" to one of them, "
        "exactly as written in the chunk headers."
    )


def page_problem(text: str, refs: Collection[str], *, finish_reason: str | None = None) -> str | None:
    """Why a written page cannot be published, or None when it can.

    A page is Markdown prose that cites at least one of `refs` (the evidence it was given, by
    ref number or chunk id); not empty, not JSON, not a refusal, not cut off at max_tokens.
    """
    if finish_reason == "length":
        return "the reply was cut off at the token limit (finish_reason: length)"
    body = (text or "").strip()
    if not body:
        return "the reply is empty"
    if _looks_like_json(body):
        return "the reply is JSON, not a Markdown page"
    if _REFUSAL.match(body):
        return f"the reply is a refusal, not a page: {body[:80]!r}"
    prose = _CITE.sub(" ", _LINK.sub(" x ", body))
    if len(list(itertools.islice(_WORD.finditer(prose), MIN_PROSE_WORDS))) < MIN_PROSE_WORDS:
        return "the reply has no prose"
    if refs:  # a page sent no evidence cannot be asked to cite it
        given = set(refs)
        if not any(m.group(1) in given for m in _CITE.finditer(body)):
            return NO_CITATION
    return None


def page_repair(problem: str, refs: Collection[str]) -> str:
    """The instruction sent after a page reply that failed `page_problem`."""
    shown = ", ".join(f"[^{r}]" for r in list(refs)[:8])
    return (
        f"That reply cannot be published: {problem}. Write the page again as Markdown prose, "
        f"following the instructions above, and cite the evidence after each sentence ({shown})."
    )


def _looks_like_json(body: str) -> bool:
    if _FENCED_JSON.match(body):
        return True
    if body[0] == "{":
        return True  # even cut off: no page starts with a brace
    if body[0] == "[" and not body.startswith(("[[", "[^")):
        try:
            json.loads(body)
        except ValueError:
            return bool(re.match(r"\[\s*[\[{\"]", body))
        return True
    return False


def usable_additions(
    items: Iterable[tuple[str, str]], refs: dict[str, Collection[str]]
) -> tuple[dict[str, str], dict[str, str]]:
    """The items of a grouped page update that can be kept, by page label, and why each other
    page has none: an item is kept when it names a page of the group (as models write labels)
    and passes `page_problem` against that page's own new evidence refs. A page's first usable
    item wins; one bad item costs only its own page."""
    reader = LabelReader(refs)
    kept: dict[str, str] = {}
    problems: dict[str, str] = {}
    for raw, text in items:
        label = reader.read(raw)
        if label is None or label in kept:
            continue
        problem = page_problem(text, refs[label])
        if problem is None:
            kept[label] = text.strip()
            problems.pop(label, None)
        else:
            problems.setdefault(label, problem)
    for label in refs:
        if label not in kept:
            problems.setdefault(label, "the reply has no item for this page")
    return kept, problems
