"""A shallow reading of an English sentence: its tokens, names and stems, and the subject, verb
and object of each of its clauses.

The grammar is shallow general English, read from closed-class words (determiners, pronouns,
auxiliaries, prepositions, conjunctions) and verb endings: no tagger, no domain words. Where a
word may be a plural noun or a verb ("Vacuum removes dead tuples", "Dead tuples take space"),
both readings are kept and any that holds is enough; the evidence is read the same way, so a
phrase misread is misread alike on both sides. Where no subject is found (a pronoun, a
fragment) or the verb is a copula ("X is the Y that ..."), the statement check asks
only for the names and the one statement (statements.py).

Pure and dependency-free; it reads words by words.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .words import CITE, LINK, MD_LINK, STOPWORDS, content_words, fold

# A code span, a word (identifiers and hyphenated words whole) or a clause mark.
_TOKEN = re.compile(r"`[^`\n]+`|[^\W_]+(?:[_.'’-][^\W_]+)*|[,;:()—–]", re.UNICODE)
# A bold lead-in that names an item of a list ("**Heap scan.** Vacuum reads ..."): no part of the sentence.
_LABEL = re.compile(r"^[\s*+-]*(?:\*\*|__)[^*_\n]{1,80}?[.:!?](?:\*\*|__)\s*")

_AUX = frozenset(
    """is are was were be been being am has have had do does did can cannot could will would may might
    must shall should isn't aren't wasn't weren't doesn't don't didn't won't can't couldn't shouldn't
    hasn't haven't hadn't wouldn't""".split()
)
_BE = frozenset("is are was were be been being am isn't aren't wasn't weren't".split())
_ADVERBS = frozenset(
    """also often always never only still then now usually already not just even rarely sometimes
    typically generally again thus therefore first later instead merely simply soon
    itself themselves""".split()  # "is itself stored": the intensive pronoun stands where an adverb does
)
_DETERMINERS = frozenset(
    """the a an this that these those its their his her our your my each every all both some any no
    many most several few such another other either neither much more less""".split()
)
_PRONOUNS = frozenset("it they he she we you i".split())
_DEMONSTRATIVES = frozenset("this that these those".split())
_PREPOSITIONS = frozenset(
    """of in on at by for with without from to into onto over under between among through during
    before after about against per via within across behind beyond like unlike than as until since
    upon toward towards off out up down near around along despite except""".split()
)
_SUBORDINATORS = frozenset(
    "when whenever if unless although though because since while whereas once after before until as where so whether".split()
)
_RELATIVES = frozenset("that which who whom whose where".split())
_CONJUNCTIONS = frozenset("and or but nor yet".split())
_CLOSED = _AUX | _ADVERBS | _DETERMINERS | _PRONOUNS | _PREPOSITIONS | _SUBORDINATORS | _RELATIVES | _CONJUNCTIONS
# Irregular past participles: "is kept", "are written", "was set".
_PARTICIPLES = frozenset(
    """known made written kept set held built run done seen given taken shown found read sent put left
    lost chosen driven frozen broken begun become brought caught fed got gotten hidden laid led meant
    paid said sold shut spent split struck sought told thought understood won cut let spread bound
    dealt drawn grown hung heard hurt met overwritten rewritten thrown undone withdrawn""".split()
)
# Participles whose subject does what follows "to": "X is used to remove Y" says X removes Y.
_CONTROL = frozenset("used designed meant intended needed required built configured allowed expected supposed".split())
_MAX_SUBJECT = 6  # content tokens a subject noun phrase may run to before the reading gives up
_MAX_READINGS = 3
# A sentence is read by its first tokens: the reading scans a clause from each clause start, so
# a run-on "sentence" from a reply must not cost its length squared.
_MAX_TOKENS = 200


@dataclass(frozen=True)
class Token:
    text: str
    kind: str  # "code" | "name" (a capitalised term, an acronym) | "word" | "number" | "mark"

    @property
    def low(self) -> str:
        return self.text.casefold()


@dataclass
class Clause:
    """One reading of a clause: its subject, and what its verb does."""

    subject: list[Token]  # the subject noun phrase's content tokens (head last); empty: none found
    action: str = ""  # the folded verb that says what is done ("freez"); "": no verb found, or a copula
    pronoun: bool = False  # the subject is a pronoun ("it", "this")
    passive: bool = False  # "X is kept ..."
    agent: list[Token] = field(default_factory=list)  # "... by Y" of a passive
    verb_at: int = -1  # where the verb starts
    object: str = ""  # the folded head of what the verb acts on ("Vacuum removes dead tuples": "tupl")
    recipient: str = ""  # the folded head after "to" ("assigns a number to a transaction": "transaction")


def plain(text: str) -> str:
    """The text as read: citation markers out, links as their text."""
    text = CITE.sub(" ", text)
    text = LINK.sub(lambda m: f" {m.group(2) or m.group(1)} ", text)
    return MD_LINK.sub(lambda m: f" {m.group(1)} ", text)


def tokens(sentence: str) -> list[Token]:
    """A sentence's tokens; capitalised words in a run make one name ("Free Space Map")."""
    raw = _TOKEN.findall(_LABEL.sub("", plain(sentence)))[:_MAX_TOKENS]
    out: list[Token] = []
    opening = True  # the next word opens the sentence (or follows ":"): its capital says nothing
    for i, text in enumerate(raw):
        if text.startswith("`"):
            out.append(Token(text.strip("`").strip(), "code"))
        elif not text[0].isalnum():
            out.append(Token(text, "mark"))
            opening = text == ":"
            continue
        elif any(ch.isdigit() for ch in text) and not any(ch.isalpha() for ch in text):
            out.append(Token(text, "number"))
        elif _is_name(text) and text.casefold() not in _CLOSED and not (opening and _opens_as_word(text, raw[i + 1] if i + 1 < len(raw) else "")):
            if out and out[-1].kind == "name" and raw[i - 1][0].isalnum() and not out[-1].text.endswith(("'s", "’s")):
                out[-1] = Token(f"{out[-1].text} {text}", "name")
            else:
                out.append(Token(text, "name"))
        else:
            out.append(Token(text, "word"))
        opening = False
    return out


def _is_name(word: str) -> bool:
    return word[0].isupper() or any(ch.isupper() for ch in word[1:]) or "_" in word


def _opens_as_word(word: str, following: str) -> bool:
    """A capitalised first word is a name only when the next one is capitalised too ("Free Space
    Map"), or it is an acronym ("WAL") or has inner capitals ("LumenDB")."""
    if (word.isupper() and len(word) > 1) or any(ch.isupper() for ch in word[1:]):
        return False
    return not following[:1].isupper()


def stem(word: str) -> str:
    """A folded word as this check compares it: support.fold leaves "tuple" and "page" whole but
    takes "tuples" to "tupl" and "pages" to "pag"; a final "e" goes too, so both forms meet."""
    folded, before = fold(word), word
    while folded != before:  # to a fixed point: "processes" and its fold "process" meet at "proces"
        folded, before = fold(folded), folded
    return folded[:-1] if folded.endswith("e") and len(folded) >= 4 and folded.isalpha() else folded


_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS)


def stems(text: str) -> set[str]:
    """The stems of a text's content words ("pages" is a stopword like "page")."""
    return {stem(w) for w in content_words(text)} - _STOP_STEMS


def fold_phrase(text: str) -> str:
    parts = [p for p in re.split(r"[^\w]+|_", text.casefold()) if len(p) > 1 and p not in STOPWORDS]
    return " ".join(s for s in (stem(p) for p in parts) if s not in _STOP_STEMS)


def _plain_word(token: Token | None) -> bool:
    return token is not None and token.kind == "word" and token.low not in _CLOSED and not _adverb(token)


def _verbish(token: Token) -> bool:
    """A lowercase word that may be a finite verb after a noun: "freezes", "recorded"."""
    w = token.low
    if not _plain_word(token) or len(w) <= 3:
        return False
    return (w.endswith("s") and not w.endswith(("ss", "us", "is", "ous"))) or w.endswith("ed")


def _plural(token: Token) -> bool:
    w = token.text.casefold()
    return w.endswith("s") and not w.endswith(("ss", "us", "is", "'s", "’s")) and len(w) > 3


def _adverb(token: Token) -> bool:
    return token.kind == "word" and (token.low in _ADVERBS or (token.low.endswith("ly") and len(token.low) > 4))


def read_clause(toks: list[Token], start: int = 0, *, inner: bool = False) -> list[Clause]:
    """Readings of the clause starting at `start`: its subject and verb (a shallow reading; a
    word that may be a plural noun or a verb gives one reading each way). In an `inner` clause
    (after a comma, a conjunction, "that") a verb may come first: "..., and updates X"."""
    i, n = start, len(toks)
    while i < n and (_adverb(toks[i]) or toks[i].low in _CONJUNCTIONS):
        i += 1
    if inner and i < n and (_verbish(toks[i]) or (_plain_word(toks[i]) and i + 1 < n and toks[i + 1].low in _DETERMINERS)):
        return [_verb(toks, [], i)]
    if i < n and toks[i].kind == "word":
        nxt = toks[i + 1] if i + 1 < n else None
        if toks[i].low in _PRONOUNS or (
            toks[i].low in _DEMONSTRATIVES and (nxt is None or nxt.kind == "mark" or nxt.low in _AUX or _verbish(nxt) or _adverb(nxt))
        ):
            return [_verb(toks, [], i + 1, pronoun=True)]
    subject: list[Token] = []
    head_done = False
    out: list[Clause] = []
    j = i
    relative = False  # in a relative clause of the subject ("Every table that has ... gets ...")
    while j < n and len(out) < _MAX_READINGS:
        t = toks[j]
        w = t.low
        if t.kind == "mark":
            if t.text == "(" and subject:  # "Multi-Version Concurrency Control (MVCC) keeps ..."
                j = next((k for k in range(j, n) if toks[k].text == ")"), n) + 1
                continue
            break
        if t.kind == "word":
            if w in _AUX or (subject and _adverb(t)):
                out.append(_verb(toks, subject, j))
                if relative and w in _AUX:
                    relative = False  # the relative clause's verb: the main one may follow
                    j += 1
                    continue
                break
            if w in _DETERMINERS and not (subject and w in _RELATIVES):  # "Every transaction that ...": a relative
                if subject and not head_done and _plain_word(subject[-1]):
                    out.append(_verb(toks, subject[:-1], j - 1))  # "Backends write the page"
                    break
                j += 1
                continue
            if w in _PREPOSITIONS or w in _RELATIVES:
                relative = relative or (bool(subject) and w in _RELATIVES)
                head_done = head_done or bool(subject)  # "the number of dead tuples": the head is "number"
                j += 1
                continue
            if w in _CONJUNCTIONS:
                j += 1
                continue
            if w in _PRONOUNS:  # "On each page it prunes ...": what came before was a phrase of place
                out.append(_verb(toks, [], j + 1, pronoun=True))
                break
            if subject and not head_done and _participle_phrase(toks, j):
                head_done = True  # "the WAL records describing its change have been flushed"
                j += 1
                continue
            if subject and _verbish(t) and not _noun_before_verb(toks, j):
                out.append(_verb(toks, subject, j))
                if not _plain_word(toks[j + 1] if j + 1 < n else None):
                    break  # "records each page", "freezes `xmin`": a verb for sure
            elif subject and not head_done and _plural(subject[-1]) and _plain_word(t):
                out.append(_verb(toks, subject, j))  # "Records reach disk"
                break
        if not head_done:
            subject.append(t)
            if len(subject) > _MAX_SUBJECT:
                break
        j += 1
    return out or [Clause(subject)]


def _participle_phrase(toks: list[Token], j: int) -> bool:
    """An -ing word after a noun that opens a phrase of its own ("records describing its
    change", "entries pointing to dead tuples"): it ends the subject's head. Before an
    auxiliary it is the head itself ("the string encoding is ...")."""
    w = toks[j].low
    nxt = toks[j + 1] if j + 1 < len(toks) else None
    return (w.endswith("ing") and len(w) > 5 and _plain_word(toks[j]) and nxt is not None
            and (nxt.kind in ("name", "code") or nxt.low in _DETERMINERS or nxt.low in _PREPOSITIONS))


def _noun_before_verb(toks: list[Token], j: int) -> bool:
    """An -s word followed by an auxiliary or an adverb is the noun ("WAL records are ...")."""
    nxt = toks[j + 1] if j + 1 < len(toks) else None
    return nxt is not None and nxt.kind == "word" and (nxt.low in _AUX or _adverb(nxt))


def _verb(toks: list[Token], subject: list[Token], j: int, *, pronoun: bool = False) -> Clause:
    """The clause whose verb starts at `j`: passive ("is kept ... by Y"), a copula ("is the Y":
    no action) or active, and the word that says what is done."""
    clause = Clause(list(subject), pronoun=pronoun, verb_at=j)
    k = j
    while k < len(toks) and (toks[k].low in _AUX or _adverb(toks[k])):
        k += 1
    after = toks[k] if k < len(toks) else None
    if after is not None and after.low == "to" and k > j and _plain_word(toks[k + 1] if k + 1 < len(toks) else None):
        k += 1  # "recovery has to replay the WAL"
        after = toks[k]
    if not _plain_word(after):
        return clause  # "X is the Y", "X is `on`": a definition, read both ways; or no verb after all
    assert after is not None
    if k > j and any(toks[m].low in _BE or toks[m].low in ("get", "gets", "got") for m in range(j, k)) and (
        after.low.endswith(("ed", "en")) or after.low in _PARTICIPLES
    ):
        if after.low in _CONTROL and k + 2 < len(toks) and toks[k + 1].low == "to" and _plain_word(toks[k + 2]):
            clause.action = stem(toks[k + 2].low)  # "X is used to remove Y": X removes Y
            clause.object = _object(toks, k + 3)
            return clause
        clause.passive = True
        by = next((m for m in range(k + 1, len(toks)) if toks[m].low == "by"), None)
        if by is not None:
            clause.agent = read_clause(toks, by + 1)[0].subject
    else:
        clause.object = _object(toks, k + 1)
        clause.recipient = _recipient(toks, k + 1)
    clause.action = stem(after.low)
    return clause


def _recipient(toks: list[Token], k: int) -> str:
    """The head after a "to" that follows a verb's object ("assigns the number to a transaction"):
    what a passive may name as its subject ("a transaction is assigned a number"). Not a "to"
    of a phrase of the object's own ("removes the entries pointing to dead tuples")."""
    m = k
    while m < len(toks) and toks[m].kind == "word" and (toks[m].low in _DETERMINERS or _adverb(toks[m])):
        m += 1
    while m < len(toks) and toks[m].low != "to" and (toks[m].kind in ("name", "code", "number") or _plain_word(toks[m])):
        if _participle_phrase(toks, m):
            return ""
        m += 1
    return _object(toks, m + 1) if m < len(toks) and toks[m].low == "to" else ""


def _object(toks: list[Token], k: int) -> str:
    """The head of the noun phrase at `k` (determiners and adverbs skipped): what a verb acts on."""
    while k < len(toks) and toks[k].kind == "word" and (toks[k].low in _DETERMINERS or _adverb(toks[k])):
        k += 1
    head = ""
    while k < len(toks) and (toks[k].kind in ("name", "code", "number") or _plain_word(toks[k])):
        if head and _participle_phrase(toks, k):
            break  # "removes the entries pointing to ...": the entries are removed
        head = fold_phrase(toks[k].text) or head
        k += 1
    return head


def subject_phrase(subject: list[Token]) -> str:
    return fold_phrase(" ".join(t.text for t in subject))


def subject_head(subject: list[Token]) -> str:
    """The folded head of a subject: its last content token (a name as a whole)."""
    for t in reversed(subject):
        folded = fold_phrase(t.text)
        if folded:
            return folded
    return ""


def clause_starts(toks: list[Token]) -> list[int]:
    starts = [0]
    for k, t in enumerate(toks):
        if (t.kind == "mark" and t.text in ",;:—–(") or t.low in _RELATIVES or t.low in _SUBORDINATORS or t.low in _CONJUNCTIONS:
            starts.append(k + 1)
    return starts


def main_clause(toks: list[Token]) -> list[Clause]:
    """The main clause: after an opening adverbial ("When X, Y does Z"; "In Lumen DB, ...")."""
    at = 0
    for _ in range(3):
        first = toks[at] if at < len(toks) else None
        if first is None or first.kind != "word":
            break
        if not (first.low in _SUBORDINATORS or first.low in _PREPOSITIONS or first.low in _RELATIVES or _adverb(first)):
            break
        comma = next((k for k in range(at, len(toks)) if toks[k].text == ","), None)
        # "On each page it prunes ...": the clause starts at a pronoun before any comma
        pronoun = next((k for k in range(at, min(len(toks), at + 8, comma if comma is not None else len(toks)))
                        if toks[k].low in _PRONOUNS), None)
        if pronoun is not None:
            return read_clause(toks, pronoun)
        if comma is None:
            return [Clause([])]
        at = comma + 1
    return read_clause(toks, at)
