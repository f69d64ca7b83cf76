"""Aliases defined in the text: "Write-Ahead Log (WAL)", "X, also known as Y", "Y, short for X"."""

from __future__ import annotations

import re

from .names import Span, acronym_matches, is_acronym, name_key
from .sentences import Sentence
from .words import FUNCTION_WORDS, VERBS

_PAREN = re.compile(r"\(([^()]{1,80})\)")
_PAREN_CUE = re.compile(
    r"^(?:also\s+(?:[a-z]+ly\s+)?(?:called|known\s+(?:[a-z]+ly\s+)?as)|a\.?k\.?a\.?|or|formerly|i\.e\.,?)"
    r"\s+(?P<alias>.+)$"
)
# "also called", "also known (simply) as", "also commonly called", "a.k.a."
_ALSO = re.compile(
    r",?\s+(?:also\s+(?:[a-z]+ly\s+)?(?:called|known\s+(?:[a-z]+ly\s+)?as)|a\.k\.a\.|aka)\s+"
)
_SHORT_FOR = re.compile(r",?\s+(?:short\s+for|stands\s+for|an?\s+abbreviation\s+(?:of|for))\s+")
_WORDS_AFTER = re.compile(
    r"(?:the\s+|an?\s+)?(?P<words>[\w'’-]+(?:\s+[\w'’-]+){0,5}?)(?=\s*(?:[,.;:)]|$|\s+(?:is|are|and|or|which|that)\b))"
)
_DETERMINER = re.compile(r"^(?:the|a|an|The|A|An)\s+")
_EXPANSION_WORDS = 8
_LISTED_ACRONYM = re.compile(r"^(.{3,60}?),\s*([A-Z][A-Z0-9]{1,7}s?)$")
_GLOSSARY_LEAD = re.compile(r"^(?:the\s+|an?\s+)?(?P<words>[\w'’/-]+(?:\s+[\w'’/-]+){1,7}?)\s*(?:[,;:(.]|$)", re.IGNORECASE)
_CLAUSE_BEFORE = re.compile(r"(?:^|[,;:(]\s*)(?P<words>[\w'’-]+(?:\s+[\w'’-]+){0,4})\s*$")


def find_aliases(
    sentences: list[Sentence],
    spans: list[list[Span]],
    mid_caps: set[str] | frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Map from the key of every alias (and long form) to the key of its long form.

    Long forms that were not found as spans (lowercase expansions such as "multiversion
    concurrency control") are added to `spans` so later steps see them as names.
    """
    links: dict[str, str] = {}
    for i, sentence in enumerate(sentences):
        text = sentence.text
        if i + 1 < len(sentences) and _lone_acronym(sentence, spans[i]):
            _glossary_entry(sentence.text.strip(), sentences[i + 1], spans[i + 1], links)
        elif sentence.defines and sentence.position == 0:
            _definition_entry(sentence, spans[i], links)
        if "(" in text:
            for m in _PAREN.finditer(text):
                _paren_alias(text, m, spans[i], links)
        # (each pattern holds a word the text must hold: most sentences are passed over at once)
        for m in _ALSO.finditer(text) if "also" in text or "aka" in text or "a.k.a." in text else ():
            before = _span_ending(spans[i], m.start()) or _words_before(text, m.start(), spans[i])
            after = _span_or_words(text, m.end(), spans[i])
            if before is not None and after is not None:
                _link(links, long=before, short=after)
        for m in _SHORT_FOR.finditer(text) if "short" in text or "stands" in text or "abbreviation" in text else ():
            before = _span_ending(spans[i], m.start())
            after = _span_or_words(text, m.end(), spans[i])
            if before is not None and after is not None:
                _link(links, long=after, short=before)
        for span in spans[i]:
            _sentence_case(span, mid_caps)
    # follow chains (A -> B -> C) so every alias points at its final long form
    resolved: dict[str, str] = {}
    for key in links:
        target, hops = links[key], 0
        while target in links and links[target] != target and hops < 5:
            target, hops = links[target], hops + 1
        resolved[key] = target
    return resolved


def _lone_acronym(sentence: Sentence, spans: list[Span]) -> bool:
    """A block that is one acronym alone: a glossary's or definition list's term."""
    return (sentence.position == 0 and len(spans) == 1 and spans[0].kind == "acronym"
            and spans[0].text == sentence.text.strip())


def _glossary_entry(acronym: str, following: Sentence, spans: list[Span], links: dict[str, str]) -> None:
    """ "GIN" then a block opening "Generalized Inverted Index": the acronym's expansion, if its
    letters spell the acronym (the block may go on: "Data Definition Language, SQL commands")."""
    if following.position != 0:
        return
    m = _GLOSSARY_LEAD.match(following.text)
    if m is None:
        return
    words = m.group("words")
    head = words.rsplit(" ", 1)[0]
    # the entry's layout vouches for the pair, so a last word the acronym leaves out may stay
    # ("JIT" / "Just-in-Time compilation", "GIN" / "Generalized Inverted Index")
    if acronym_matches(acronym, words) or (" " in words and acronym_matches(acronym, head)):
        _link(links, long=_add_span(spans, words, m.start("words")), short=acronym)


_TERM_PREFIX = re.compile(r"^`?(?P<term>[^`:\n]{1,40})`?:\s+")


def _definition_entry(sentence: Sentence, spans: list[Span], links: dict[str, str]) -> None:
    """A definition block "`GIN`: Generalized Inverted Index ...", as the reader keeps a
    definition list's entry: the acronym's expansion opens its description."""
    prefix = _TERM_PREFIX.match(sentence.text)
    if prefix is None or not is_acronym(prefix.group("term").strip()):
        return
    acronym = prefix.group("term").strip()
    m = _GLOSSARY_LEAD.match(sentence.text[prefix.end():])
    if m is None:
        return
    words = m.group("words")
    head = words.rsplit(" ", 1)[0]
    if acronym_matches(acronym, words) or (" " in words and acronym_matches(acronym, head)):
        _link(links, long=_add_span(spans, words, prefix.end() + m.start("words")), short=acronym)


def _paren_alias(text: str, m: re.Match[str], spans: list[Span], links: dict[str, str]) -> None:
    inner = m.group(1).strip().strip("`\"'“”")
    cue = _PAREN_CUE.match(inner)
    if cue:
        before = _span_ending(spans, m.start())
        alias = cue.group("alias").strip().strip("`\"'“”")
        if _loose_alternative(cue.group(0), alias, m.group(1)) or not _reads_as_name(alias):
            return  # "two SELECT (or equivalent) commands": an alternative, not another name
        if before is not None and 0 < len(alias.split()) <= 6:
            _link(links, long=before, short=_add_span(spans, alias, m.start(1) + inner.find(alias)))
        return
    if is_acronym(inner):
        expansion = _expansion_before(text, m.start(), inner)
        if expansion is not None:
            start, words = expansion
            _link(links, long=_add_span(spans, words, start), short=inner)
            return
        before = _span_ending(spans, m.start())
        if before is not None and _loosely_abbreviates(inner, before.text):
            _link(links, long=before, short=inner)  # "Transaction ID (XID)"
        return
    listed = _LISTED_ACRONYM.match(inner)  # "(Multiversion Concurrency Control, MVCC)"
    if listed and acronym_matches(listed.group(2), listed.group(1)):
        start = m.start(1) + m.group(1).find(listed.group(1))
        _link(links, long=_add_span(spans, listed.group(1), start), short=listed.group(2))
        return
    before = _span_ending(spans, m.start())
    if before is not None and is_acronym(before.text) and acronym_matches(before.text, inner):
        _link(
            links, long=_add_span(spans, inner, m.start(1) + m.group(1).find(inner)), short=before
        )


def _reads_as_name(alias: str) -> bool:
    """A name, not a phrase or a list: no comma ("its low level implementation, `git diff-files`",
    "`hintBgColor`, ..."), no opening word that a name never opens with ("for `<prefix>=pre`"),
    and code marks, where there are any, round the whole of it."""
    if "," in alias or alias.split()[0].lower() in FUNCTION_WORDS:
        return False
    return "`" not in alias


def _loose_alternative(cue: str, alias: str, inner: str) -> bool:
    """After a bare "or", one plain lowercase word ("or equivalent", "or later", "or both") offers
    an alternative; a name there has capitals, digits or code marks ("or Postgres", "or `pg_ctl`")."""
    return (cue.lower().startswith("or") and " " not in alias and alias.isalpha() and alias.islower()
            and "`" not in inner)


def _expansion_before(text: str, paren_start: int, acronym: str) -> tuple[int, str] | None:
    """The shortest run of words just before the parenthesis that the acronym abbreviates."""
    head = text[:paren_start].rstrip()
    positions = [m.start() for m in re.finditer(r"\S+", head)][-_EXPANSION_WORDS:]
    # words giving exactly their initials win ("Serializable Snapshot Isolation" for SSI, not
    # "Snapshot Isolation"); otherwise the shortest run the looser rule accepts
    for strict in (True, False):
        for start in reversed(positions):
            words = _DETERMINER.sub("", head[start:])
            if strict and _initials(words) != acronym.rstrip("s").lower():
                continue
            if acronym_matches(acronym, words):
                return start + len(head[start:]) - len(words), words
    return None


def _loosely_abbreviates(acronym: str, name: str) -> bool:
    """A capitalised name of two to five words right before "(ACRONYM)" whose last word the
    acronym ends with: "Transaction ID (XID)", "Storage Area Network (SAN)"-like spellings."""
    words = name.split()
    if not 2 <= len(words) <= 5 or not all(w[:1].isupper() for w in words):
        return False
    short, last = acronym.rstrip("s").lower(), words[-1].lower()
    return short.endswith(last) or (len(short) >= 2 and short[-1] == last[0])


def _initials(words: str) -> str:
    return "".join(
        w[0] for w in re.split(r"[\s_/-]+", words.lower()) if w and w not in FUNCTION_WORDS
    )


def _words_before(text: str, position: int, spans: list[Span]) -> Span | None:
    """A short clause right before `position`, back to the previous punctuation mark."""
    m = _CLAUSE_BEFORE.search(text[:position])
    if m is None:
        return None
    words = m.group("words").split()
    # keep the trailing run of content words: "This is roll-forward recovery" -> "roll-forward recovery"
    keep = len(words)
    while keep > 0 and words[keep - 1].lower() not in FUNCTION_WORDS | VERBS:
        keep -= 1
    name = " ".join(words[keep:])
    if not name:
        return None
    return _add_span(spans, name, m.end("words") - len(name))


def _span_ending(spans: list[Span], position: int) -> Span | None:
    """The span that ends right before `position` (only spaces, quotes or a comma between)."""
    for span in spans:
        if 0 <= position - span.end <= 2:
            return span
    return None


def _span_or_words(text: str, position: int, spans: list[Span]) -> Span | None:
    for span in spans:
        if 0 <= span.start - position <= 4:
            return span
    m = _WORDS_AFTER.match(text, position)
    if m is None:
        return None
    return _add_span(spans, m.group("words"), m.start("words"))


def _add_span(spans: list[Span], text, start: int) -> Span:
    if isinstance(text, Span):
        return text
    text = text.strip().rstrip(".,:;").rstrip()
    end = start + len(text)
    for span in spans:
        if span.start == start and span.end == end:
            return span
    # the new long form replaces spans it overlaps (e.g. a part of a lowercase expansion)
    spans[:] = [s for s in spans if s.end <= start or s.start >= end]
    span = Span(start, end, text, "term" if text.islower() else "name")
    spans.append(span)
    spans.sort(key=lambda s: s.start)
    return span


def _sentence_case(span: Span, mid_caps: set[str] | frozenset[str]) -> None:
    """ "Multiversion concurrency control" opening a sentence is the lowercase term."""
    words = span.text.split()
    if span.start > 1 or len(words) < 2 or not words[0][1:].islower() or words[0] in mid_caps:
        return
    if words[0][:1].isupper() and all(w.islower() for w in words[1:]):
        span.text = span.text[0].lower() + span.text[1:]
        span.kind = "term"


def _link(links: dict[str, str], *, long: Span, short: Span | str) -> None:
    long_key = name_key(long.text)
    short_key = name_key(short.text if isinstance(short, Span) else short)
    if not long_key or not short_key or long_key == short_key:
        return
    links.setdefault(long_key, long_key)
    links[short_key] = long_key
