"""Does a sentence say what its citations' evidence says? A check by content words, per sentence.

Used on written pages (REFINE) and on answers (retrieval): every sentence must cite evidence,
and every evidence item it cites must share enough of the sentence's content words. A sentence
that fails is dropped (or sent back for a repair); a text keeps only its supported sentences.

The measure is deliberately plain (no model): the share of the sentence's content words that
occur in the cited evidence, after case folding and a light suffix fold, so "writes" meets
"written" and "pages" meets "page". Numbers and identifiers count as content words and must
match exactly after folding: a sentence that changes a number or a name loses support.

Words are not enough on their own: a cited item supports a sentence only when one of its
sentences says it, with the sentence's names and actor (statements.py): "The checkpointer
freezes tuples ..." shares every word but one with "Vacuum freezes a tuple ...".

Pure and dependency-free: any layer may import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .statements import NO_ANTECEDENT, statement_problem, subject_of
from .words import CITE, LINK, STOPWORDS, content_words, fold, overlap, split_sentences

# The share of a sentence's content words its evidence must hold. Measured on pages written by
# Qwen2.5-Coder 1.5B over the sample corpus (benchmarks/reports/real_model.md): sentences that
# restate their evidence score 0.6-1.0, sentences citing unrelated evidence 0.0-0.3.
SUPPORT_THRESHOLD = 0.5
# A sentence with fewer content words than this is a connective ("See also.") and is checked
# against the union of all its citations rather than each one.
MIN_CONTENT_WORDS = 2

__all__ = [
    "CITE", "MIN_CONTENT_WORDS", "RECITE_MARGIN", "RECITE_SHARE", "STOPWORDS", "SUPPORT_THRESHOLD",
    "SentenceCheck", "SupportReport", "check_text", "content_words", "fold", "overlap", "split_sentences",
    "supported_share",
]

_SEE_ALSO = re.compile(r"\b(?:see also|see|related|compare)\b:?", re.IGNORECASE)


@dataclass
class SentenceCheck:
    text: str
    cited: list[str]  # citation keys as written
    supported: list[str]  # of those, the ones whose evidence shares enough content words
    unknown: list[str]  # keys naming no evidence
    scores: dict[str, float] = field(default_factory=dict)
    recited: str = ""  # the key the sentence was moved to (recite_from), if it was
    # Keys whose evidence holds enough of the words but not as one statement with the sentence's
    # names and actor (statements.py), with why: not supported.
    misread: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.cited) and not self.unknown and len(self.supported) == len(self.cited)


@dataclass
class SupportReport:
    """A text's sentences, checked: what it says without support, and its kept text."""

    sentences: list[SentenceCheck] = field(default_factory=list)
    kept_text: str = ""
    repeated: list[str] = field(default_factory=list)  # paragraphs left out: said before on the page

    @property
    def citations(self) -> int:
        return sum(len(s.cited) for s in self.sentences)

    @property
    def supported_citations(self) -> int:
        return sum(len(s.supported) for s in self.sentences)

    @property
    def uncited(self) -> list[str]:
        return [s.text for s in self.sentences if not s.cited]

    @property
    def unsupported(self) -> list[SentenceCheck]:
        return [s for s in self.sentences if s.cited and not s.ok]

    @property
    def dropped(self) -> int:
        return sum(1 for s in self.sentences if not s.ok)

    @property
    def share(self) -> float:
        """Supported citations over all citations (1.0 for a text with none)."""
        return self.supported_citations / self.citations if self.citations else 1.0


def _is_prose(line: str) -> bool:
    """Whether a line is checked: not a heading, table, fence, tag, quote, rule or footnote
    definition ("[^1]: ..."). A line that opens with a marker and no colon is a sentence."""
    stripped = line.lstrip()
    return (bool(stripped) and not stripped.startswith(("#", "|", "```", "<", ">"))
            and not _FOOTNOTE_DEFINITION.match(stripped) and not set(stripped) <= set("-*_= "))


_FOOTNOTE_DEFINITION = re.compile(r"\[\^[^\]\s]+\]:")


_OPENING_MARKERS = re.compile(r"^(?:\[\^[^\]\s]+\](?!:)[ \t]*)+(?=\S)")


def check_text(
    text: str,
    evidence: Mapping[str, str] | Callable[[str], str | None],
    *,
    threshold: float = SUPPORT_THRESHOLD,
    keep_partial: bool = True,
    recite_from: Mapping[str, str] | None = None,
    code_from: Iterable[str] | None = None,
    once: bool = False,
) -> SupportReport:
    """Check every prose sentence of `text` against the evidence its [^key] markers name.

    `evidence` maps a citation key to the evidence text (or is a function doing so; None: no
    such evidence). A sentence is kept when it cites at least one item and every item it
    cites holds `threshold` of its content words; with `keep_partial`, a sentence some of
    whose citations hold is kept with only those (the others are taken off). With
    `recite_from` (key -> evidence text), a sentence none of whose citations holds it, but
    which one item restates (RECITE_SHARE of its words, the best by a margin), is kept citing
    that item instead: small models put the right sentence next to the wrong marker (the 1.5B
    model cited every item by the next one's number). Headings, tables,
    code and list markers stay as they are; a heading whose section lost everything goes. With
    `code_from` (the evidence texts), a code block none of them holds is dropped: a model put
    prose of its own in a fence, where no sentence is checked. With `once`, a paragraph or code block the
    page already said (its words, markers aside) is left out: a small model wrote one
    paragraph two and three times over, and one query twice.
    """
    look = evidence if callable(evidence) else evidence.get
    words_of: dict[str, set[str] | None] = {}

    def words(key: str) -> set[str] | None:
        if key not in words_of:
            found = look(key)
            words_of[key] = content_words(found) if found is not None else None
        return words_of[key]

    report = SupportReport()
    antecedent = NO_ANTECEDENT  # the subject a pronoun opening the next sentence stands for
    said: set[str] = set()
    out_lines: list[str] = []
    in_code = False
    sources = None if code_from is None else [" ".join(t.split()) for t in code_from]
    block: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            block.append(line)
            if not in_code:  # the block ends: kept when an evidence text holds its body
                body = " ".join(" ".join(block[1:-1]).split())
                repeated = once and body and f"```{body}" in said
                if repeated:
                    report.repeated.append(body)
                elif sources is None or not body or any(body in t for t in sources):
                    out_lines.extend(block)
                    if once and body:
                        said.add(f"```{body}")
                block = []
            continue
        if in_code:
            block.append(line)
            continue
        if not _is_prose(line):
            out_lines.append(line)
            continue
        prefix = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", line)
        lead = prefix.group(0) if prefix else ""
        kept: list[str] = []
        rest = line[len(lead):]
        opening = _OPENING_MARKERS.match(rest)
        parts = split_sentences(rest[opening.end():] if opening else rest)
        if opening and parts:
            # "- [^1] A WAL record describes ...": a small model copied the evidence lines'
            # layout, marker first; the marker closes the sentence it opened.
            parts[0] = _with_markers(parts[0], [m.group(1) for m in CITE.finditer(opening.group(0))])
        # A sentence with no marker of its own is answered for by the next marker of its
        # paragraph (a citation closing a run of sentences covers them): each is checked
        # against that evidence. Nothing after it in the paragraph: it cites nothing.
        following: list[list[str]] = []
        after: list[str] = []
        for raw in reversed(parts):
            own = list(dict.fromkeys(m.group(1) for m in CITE.finditer(raw)))
            after = own or after
            following.append(after)
        following.reverse()
        pending: list[tuple[int, list[str]]] = []  # kept sentences without a marker of their own
        for raw, inherited in zip(parts, following, strict=True):
            if not content_words(raw) and not CITE.search(raw):
                kept.append(raw)  # punctuation: nothing to check
                continue
            if not content_words(LINK.sub(" ", _SEE_ALSO.sub(" ", raw))) and LINK.search(raw):
                kept.append(raw)  # "See also [[a]], [[b]].": navigation, not a statement
                continue
            keys = list(dict.fromkeys(m.group(1) for m in CITE.finditer(raw))) or inherited
            sentence_words = content_words(raw)
            check = SentenceCheck(text=raw.strip(), cited=keys, supported=[], unknown=[])
            pooled: set[str] = set()
            for key in keys:
                held = words(key)
                if held is None:
                    check.unknown.append(key)
                    continue
                pooled |= held
                score = overlap(sentence_words, held)
                check.scores[key] = round(score, 3)
                if score < threshold:
                    continue
                evidence_text = look(key) or ""
                # A sentence its evidence holds word for word says what the evidence says: the
                # statement check is for a model's own wording ("This removes double buffering"
                # copied whole leans on its own passage, not on the page's sentence before).
                why = (statement_problem(raw, evidence_text, threshold, antecedent)
                       if len(sentence_words) >= MIN_CONTENT_WORDS and not _verbatim(raw, evidence_text) else None)
                if why:
                    check.misread[key] = why
                else:
                    check.supported.append(key)
            if len(sentence_words) < MIN_CONTENT_WORDS and keys and not check.unknown and pooled:
                check.supported = list(keys)  # a connective: its citations together suffice
            if not check.supported and recite_from and len(sentence_words) >= MIN_CONTENT_WORDS:
                better = _restating(raw, sentence_words, recite_from, words_of, threshold, antecedent)
                if better is not None:
                    raw = _with_markers(re.sub(r"[ \t]+(?=\s*$)", " ", CITE.sub("", raw)), [better])
                    check.recited = better
                    check.cited, check.supported, check.unknown = [better], [better], []
                    check.misread = {}
                    check.scores[better] = round(overlap(sentence_words, words_of[better] or set()), 3)
            report.sentences.append(check)
            if check.ok or (keep_partial and check.supported):
                # Keys naming no evidence are left for the caller to remove and count.
                bad = set(check.scores) - set(check.supported)
                text_kept = CITE.sub(lambda m, bad=bad: "" if m.group(1) in bad else m.group(0), raw) if bad else raw
                if not CITE.search(raw):
                    pending.append((len(kept), check.supported))  # answered for by a later marker
                else:
                    pending.clear()
                kept.append(text_kept)
                antecedent = subject_of(raw, antecedent) or antecedent
            elif pending:
                # A sentence of the run goes (the one carrying the marker, or one between): the
                # earlier ones get their markers written out, so each still cites its evidence
                # and no citation spans the gap.
                for at, keys_kept in pending:
                    kept[at] = _with_markers(kept[at], keys_kept)
                pending.clear()
        for at, keys_kept in pending:  # the paragraph ended with no kept marker after them
            kept[at] = _with_markers(kept[at], keys_kept)
        body = "".join(kept).strip()
        if body and once:
            words_said = " ".join(CITE.sub(" ", body).lower().split())
            if words_said in said:
                report.repeated.append(body)
                continue
            said.add(words_said)
        if body:
            out_lines.append(lead + body)
    out_lines.extend(block)  # a fence never closed: as it was
    report.kept_text = _drop_empty_headings("\n".join(out_lines))
    return report


RECITE_SHARE = 0.8  # of a sentence's content words one evidence item must hold to be cited instead
RECITE_MARGIN = 0.2  # over the next best item


def _restating(
    sentence: str, words: set[str], candidates: Mapping[str, str], cache: dict[str, set[str] | None], threshold: float,
    antecedent: str | None = None,
) -> str | None:
    """The one evidence key whose text restates the sentence (as one statement, with its names
    and actor), if there is one."""
    scored = []
    for key, text in candidates.items():
        if key not in cache or cache[key] is None:
            cache[key] = content_words(text)
        scored.append((overlap(words, cache[key] or set()), key))
    scored.sort(reverse=True)
    if not scored or scored[0][0] < RECITE_SHARE:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < RECITE_MARGIN:
        return None
    if statement_problem(sentence, candidates[scored[0][1]], threshold, antecedent):
        return None
    return scored[0][1]


def restating(sentence: str, candidates: Mapping[str, str], threshold: float = SUPPORT_THRESHOLD,
              antecedent: str | None = None) -> str | None:
    """The one key of `candidates` whose text restates `sentence` (RECITE_SHARE of its words,
    RECITE_MARGIN ahead of the next, and one statement with its names and actor), if any: the
    citation an uncited sentence of a model's reply is given."""
    return _restating(sentence, content_words(sentence), candidates, {}, threshold, antecedent)


def _verbatim(sentence: str, evidence: str) -> bool:
    """The sentence, markers aside, stands in the evidence word for word (spacing aside), and
    does not open with a personal pronoun: a copied "It is created when ..." still says it of
    whatever the page said before it, which the statement check compares."""
    said = " ".join(CITE.sub(" ", sentence).split()).rstrip(".!?")
    if _PERSONAL_OPENING.match(said):
        return False
    return len(said) >= 20 and said in " ".join(evidence.split())


_PERSONAL_OPENING = re.compile(r"^(?:it|its|they|their|them|he|his|she|her)\b", re.IGNORECASE)


def _with_markers(sentence: str, keys: list[str]) -> str:
    stripped = sentence.rstrip()
    return stripped + "".join(f"[^{k}]" for k in keys) + sentence[len(stripped):]


def _drop_empty_headings(text: str) -> str:
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    out: list[str] = []
    for i, block in enumerate(blocks):
        stripped = block.strip()
        heading = stripped.startswith("#") and "\n" not in stripped
        level = len(stripped) - len(stripped.lstrip("#"))
        nxt = blocks[i + 1].strip() if i + 1 < len(blocks) else ""
        next_level = len(nxt) - len(nxt.lstrip("#")) if nxt.startswith("#") else 0
        if heading and (not nxt or 0 < next_level <= level):
            continue
        out.append(block.strip("\n"))
    return "\n\n".join(out)


def supported_share(checks: Iterable[SentenceCheck]) -> float:
    checks = list(checks)
    cited = sum(len(c.cited) for c in checks)
    return sum(len(c.supported) for c in checks) / cited if cited else 1.0
