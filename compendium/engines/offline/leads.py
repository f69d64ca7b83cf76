"""The offline writer's lead: the sentence that best says what the subject is, and the tests a
sentence must pass to stand first or alone (it leans on no sentence before it, compares with
nothing, is no aside)."""

from __future__ import annotations

import re
from functools import lru_cache

from ..tasks import PageRequest
from .definitions import STRONG, WEAK
from .entry_labels import (
    ARGUMENTS,
    SIGNATURE_KIND,
    authored_entry,
    labels_subject,
    opens_on_condition,
    type_parts,
)
from .sentence_pool import _DEFINITION_OPENING, _WORD, _Sentence
from .standalone import ABOUT_ITSELF, OWN_KIND, entry_label, never_alone, points_ahead, points_back
from .subjects import release_notes

# Sentences leaning on the one before ("It ...", "This ...") read well only after it.
_ANAPHORA = re.compile(
    r"^(?:It|Its|This|These|That|Those|They|Their|Them|He|She|Such|Both|Here|There|Then|"
    r"Also|However|Otherwise|Instead|Therefore|Thus|Hence|Second|Third|Finally|Next|"
    r"But|And|Or|Nor|So|Yet|Moreover|Furthermore|Additionally|Besides|Likewise|Similarly|Still|Nevertheless|"
    r"Nonetheless|Meanwhile|Consequently|Accordingly|In\s+this\s+case|"
    # "In addition, ..." adds to what was said; "In addition to being able to ..., " says to what
    r"In\s+addition(?!\s+to\s+(?!(?:this|that|these|those|it|them)\b)\w)|"
    r"In\s+that\s+case|On\s+the\s+other\s+hand|As\s+a\s+result|For\s+this\s+reason|"
    r"(?:With|Without|From|For|By|In|On|To|Of|Through)\s+(?:it|them)(?=[\s,])"
    # "If that's not quite your style, ...": "that" standing for what was said before
    r"|(?:If|When|Since|Because|As|Although|While|Unless)\s+that(?=['’]s\b|\s+(?:is|was|isn['’]t|wasn['’]t)\b))\b"
)


# An aside the authors set apart ("Note: ...", "Note that ...", "Changed in version 3.8: ..."): it
# qualifies the subject, so it leads its page only when no other sentence can.
_ASIDE = re.compile(
    r"^(?:(?:Note|Notes|Warning|Caution|Tip|Hint|Important|Attention|Danger|See\s+also)\s*:|(?:Note|Notice)\s+that\b"
    r"|(?:New|Changed)\s+in\s+version\b|Deprecated\s+(?:since|in)\s+version\b|(?:Previously|Formerly),|In\s+(?:older|earlier|previous)\s+versions?\b)",
    re.IGNORECASE,
)


# A pronoun or demonstrative among a sentence's first words points back too ("If this option is
# given, ...", "Initially it returns ...", "Together they allow ..."), unless it is the "it" of
# "it is possible to ..." that points at nothing.
_POINTS_BACK = re.compile(r"^(?:\S+\s+){0,3}?(?P<word>this|these|those|it|its|they|them|their)\b", re.IGNORECASE)


# A possessive before any subject of the sentence ("In its get() method it returns ...",
# "For their part, ..."): whose is told before, not in the sentence.
_BEFORE_ANY_SUBJECT = re.compile(r"^(?:In|On|For|With|From|By|At|To|Through|Under|Within)\s+(?:its|their)\b")


# A possessive after a subject and its verb ("Applications can register their own actions ...",
# "Each app has its own ..."): the sentence's own subject, named before it.
_OWN_SUBJECTS = re.compile(r"^(?:[\w`'’.-]+\s+){1,2}(?:can|may|might|must|will|would|should|could|has|have|does|do)"
                           r"\s+(?:\w+\s+)?(?:its|their)\b", re.IGNORECASE)


_EMPTY_IT = re.compile(r"it\s+(?:is|was|(?:may|can|might|would|will)\s+be)\s+(?:\w+\s+){1,3}?(?:to|that)\b", re.IGNORECASE)


# A sentence opening by comparing with something ("Similar to `clock_gettime()` but ...", "Unlike
# `INHERITS`, the new table ..."): what it compares with is not what it is about.
_COMPARES = re.compile(
    r"^(?:Note:\s*)?(?:As\s+with|As\s+in|Just\s+as(?:\s+in|\s+with)?|Like|Unlike|Similar(?:ly)?\s+to|"
    r"Compared\s+(?:to|with)|In\s+contrast\s+to|Contrary\s+to|Same\s+as|Equivalent\s+to|Identical\s+to)\s"
    r"(?P<clause>(?:(?!\s(?:but|except|only|while|whereas)\b)[^,;:])*)"
)


# Sections that qualify a subject rather than say what it is: their sentences lead only after
# the same kind of sentence from anywhere else ("ALTER INDEX is a PostgreSQL extension", under
# "Compatibility", after "ALTER INDEX — change the definition of an index").
_QUALIFYING = frozenset({"compatibility", "notes", "note", "see also", "examples", "example", "history",
                         "caveats", "bugs", "deprecated", "portability"})


# Sections whose first sentence says what the document's subject is.
_DESCRIBING = frozenset({"description", "overview", "introduction", "name", "purpose", "summary",
                         "definition", "about", "basics", ""})


_CODE_MARKS = re.compile(r"[=;{}\[\]<>]|\(\(|--|\)\)")  # a sentence this full of them is code, not a lead


def _names(request: PageRequest) -> tuple[str, ...]:
    names = sorted(
        {n.strip() for n in (request.title, *request.aliases) if n.strip()}, key=len, reverse=True
    )
    return tuple(names) or (request.slug,)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class _NameMatcher:
    """Finds the subject's names in a sentence, case-insensitively, by plain string search:
    a regular expression per page cost more to compile than all its searches."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]):
        self.names = [n.lower() for n in names]  # longest first, as _names sorts them

    def opening(self, text: str) -> int | None:
        """Where the name ends when the sentence opens with it (after "The", "A", "An", and a
        backtick or star that must close after it: "`BEGIN` initiates ..."); else None."""
        lower = text.lower()
        if len(lower) != len(text):
            return None  # a letter whose lowercase is longer: positions would not match
        starts = [0]
        word = lower.split(None, 1)[0] if lower.strip() else ""
        if word in ("the", "a", "an") and lower[:1] == word[:1]:
            after = len(word)
            rest = len(lower) - len(lower[after:].lstrip())
            if rest > after:
                starts.insert(0, rest)
        for at in starts:
            mark = lower[at : at + 1] if lower[at : at + 1] in ("`", "*") else ""
            for with_mark in ((True, False) if mark else (False,)):
                begin = at + 1 if with_mark else at
                if with_mark and (kind := SIGNATURE_KIND.match(lower, begin)):
                    begin = kind.end()  # a signature's kind: "`class FileResponse(open_file, ...)`: ..."
                for name in self.names:
                    if not lower.startswith(name, begin):
                        continue
                    end = begin + len(name)
                    after_char = lower[end : end + 1]
                    if _is_word(name[-1]) and after_char and _is_word(after_char):
                        continue  # the name runs on into a longer word
                    if with_mark:
                        if lower[end : end + 1] == "<":  # its type parameters: "`Pair<L,R>`"
                            close = lower.find(">", end)
                            if close > 0 and lower[close + 1 : close + 2] == mark:
                                end = close + 1
                        elif lower[end : end + 1] == "(" and begin > at + 1:  # a class's signature: its arguments
                            close = lower.find(")" + mark, end)
                            if close > 0:
                                end = close + 1
                        if lower[end : end + 1] != mark:
                            continue
                        end += 1
                    return end
        return None

    def first(self, text: str) -> int:
        """Where the first whole-word mention of a name starts, or -1."""
        lower = text.lower()
        best = -1
        for name in self.names:
            at = lower.find(name)
            while at >= 0 and (best < 0 or at < best):
                before = lower[at - 1 : at] if at else ""
                after = lower[at + len(name) : at + len(name) + 1]
                if not (before and (_is_word(before) or before == "-")) and not (
                    after and (_is_word(after) or after == "-")
                ):
                    best = at
                    break
                at = lower.find(name, at + 1)
        return best


@lru_cache(maxsize=4096)
def _matcher(names: tuple[str, ...]) -> _NameMatcher:
    return _NameMatcher(names)


_SAID_OF = 3  # the tier of a sentence that only opens with the subject


def _choose_lead(
    request: PageRequest, pool: list[_Sentence]
) -> tuple[dict | None, list[_Sentence]]:
    """The sentence that best says what the subject is, never one leaning on another.

    In order: a sentence defining the subject ("X is a ...", "X, short for ...", "X — does
    ..."); the first sentence under a source heading named after the subject (a glossary
    entry, a reference page); a sentence opening with the subject; the description; a
    sentence naming it early; any plain sentence. A sentence opening with a connective
    ("Also", "However", "This") is never a lead; an aside ("Note: ...", "Changed in version
    3.8: ...") leads only when no other sentence can.
    """
    matcher = _matcher(_names(request))
    names = {n.lower().strip("`*") for n in _names(request)}
    described = " ".join(request.description.split())
    # "This extension allows you to ...", the document's own first word on its subject (MAP's
    # description), may lead though it opens with "This".
    usable = [s for s in pool if not s.on_example
              and (_may_lead(s.text) or (described and s.text in described and OWN_KIND.match(s.text)))
              and not _compares_with_subject(s.text, matcher) and not _history(s) and not _member_of_another(s, names)]
    # An aside, or a line that only repeats the title ("zoneinfo — IANA time zone support" atop
    # the page so titled), leads only when nothing else can.
    plain = [s for s in usable if not _ASIDE.match(s.text) and not _repeats_title(s, request.title)]
    lead, rest = _best_lead(request, pool, plain, matcher)
    if lead is None and len(plain) < len(usable):
        lead, rest = _best_lead(request, pool, usable, matcher)
    return lead, rest


def _member_of_another(s: _Sentence, names: set[str]) -> bool:
    """An entry ("`widgets`: An iterable ...") under a heading naming a code subject that is not
    this page's (`MultiWidget`): that owner's member, which shares the page's name only. It never
    says what this page's subject is."""
    entry = _DEFINITION_OPENING.match(s.text)
    heading = s.section.strip().strip("`*")
    if entry is None or not heading or _names_heading(heading.lower(), names):
        return False
    term = s.text[1:entry.end()].rstrip(": `").lower()
    if any(c in term for c in ". "):
        return False  # a qualified name ("`class views.edit.BaseDeleteView`: ...") names its own scope
    inner_capital = any(c.isupper() for c in heading[1:]) and not heading.isupper()
    return heading.lower() != term and " " not in heading and (inner_capital or any(c in heading for c in "_.:("))


def _repeats_title(s: _Sentence, title: str) -> bool:
    """Whether the sentence holds the title's words and nothing else (its length tells first)."""
    return abs(len(s.text) - len(title)) <= 16 and _WORD.findall(s.flat or s.text.lower()) == _WORD.findall(title.lower())


def _best_lead(
    request: PageRequest, pool: list[_Sentence], usable: list[_Sentence], matcher: _NameMatcher
) -> tuple[dict | None, list[_Sentence]]:
    names = {n.lower() for n in _names(request)}
    types = type_parts(_names(request))
    title = request.title.strip().lower()
    description = " ".join(request.description.split())
    # (tier, not an entry first, not titled, not an entry, -support, order, where the name ends, sentence)
    tiers: list[tuple] = []
    naming = []
    for s in usable:
        m = matcher.opening(s.text)
        # the authors' entry for the subject, its label a signature ("`atomic(using=None, ...)`: ...",
        # "`class storage.fallback.FallbackStorage`: ..."): its authored definition
        labelled = request.kind != "topic" and s.opens_entry and labels_subject(s.text, names, types) \
            and not points_ahead(s.text)
        if m is None and labelled:
            m = entry_label(s.text)
        authored, called = authored_entry(s.text, _names(request)) if labelled else (False, False)
        headed = s.opens_section and _heads_subject(s.section.lower().strip("`*"), names)
        own = any(_heads_subject(h, names) for h in s.headings)  # from the passage about the subject itself
        described = bool(description) and (s.text == description or s.text in description)
        if (m is not None and STRONG.match(s.text[m:])) or (authored and not called):
            # "X is a ...", "X refers to ...", "X — does ...", and the authors' entry for X, which
            # goes first among them (below) whether its label is the bare name or a class's or
            # a man page's ("`class storage.fallback.FallbackStorage`: ...", "`git-citool(1)`: ...")
            tier = 0.0
        elif labelled:
            # a function's entry ("`savepoint(using=None)`: ..."): its name is often also a word
            # of the prose, whose "A savepoint is a marker ..." says what the page's subject is
            tier = 0.3
        elif headed or (m is not None and own and s.opens_section and s.section.lower() in _DESCRIBING):
            tier = 0.4  # a glossary entry, a reference page's "Description": the authors' own opening
        elif described and (s.opens_section or request.kind != "topic"):
            # MAP's description is the authors' definition (a definition list's entry, a NAME
            # line, a glossary entry): it says what the subject is before any sentence merely
            # opening with it does.
            # Of its pieces (REDUCE joins the descriptions of several passages), the first
            # is the best ranked: the document's own opening before a member's entry.
            tier = (0.5 if not _ASIDE.match(s.text) else 1.0) + 0.1 * description.find(s.text) / len(description)
        elif m is not None and WEAK.match(s.text[m:]):
            tier = 1.5  # "X is removed ...": says what X does, not what it is
        elif described:
            tier = 2
        elif m is not None:
            tier = 3 if own and s.opens_section else 4
        else:
            found = matcher.first(s.text)
            if found >= 0 and _opens_sentence(s.text):
                naming.append((found, s))
            continue
        if s.section.lower().strip("`*: ") in _QUALIFYING:
            tier += 0.25
        # Of two alike, the one naming the subject by its title: "`Tokenizer`: Splits ..." over
        # "`Tokenizer()`: Constructs ..." of the same page.
        titled = m is not None and _opened_name(s.text[:m]) == title
        # Of two alike, the authors' entry for it ("`ConstantInitializer<T>`: A very simple
        # implementation ...", a definition list's) over a sentence of prose saying the same;
        # not an entry that only opens a list ("`ModelAdmin`: The following checks are ...:") or
        # a use of it ("`class ModelForm`: If you're building ...").
        entry = s.opens_entry and not points_ahead(s.text) and not opens_on_condition(s.text)
        # A class's, a setting's or a command's entry goes before prose naming the subject by its
        # title; a function's (its label a call with arguments) only after it (see tier 0.3).
        first = entry and not ARGUMENTS.search(s.text, 0, entry_label(s.text) or m or 0)
        tiers.append((tier, not first, not titled, not entry, -s.support, s.order, m, s))

    if tiers:
        tier, *_, opening, best = min(tiers, key=lambda t: t[:6])
        # A sentence only opening with a phrase ("The attacker chooses ...") says something of
        # it, not what it is; one opening with a name written as code ("`FETCH_HEAD` records
        # ...", "key_value_separator=<sep>: ...") says what that name does.
        said_of = tier >= _SAID_OF and "`" not in best.text[:opening or 0] and not entry_label(best.text)
        return _lead(best, said_of=said_of), [s for s in pool if s is not best]
    if description:
        for s in usable:
            if s.text == description or description in s.text:
                return _lead(s), [p for p in pool if p is not s]
        if not pool and not _leans_back(description):
            return {"text": description, "ref": None}, []
    if naming:
        best = min(naming, key=lambda x: (x[0] > 40, -x[1].support, x[0], x[1].order))[1]
        return _lead(best, passing=True), [s for s in pool if s is not best]
    plain = [s for s in usable if _opens_sentence(s.text)]
    if plain:
        # A topic's page opens on what its members share: a sentence naming its most central
        # member (its links come most central first) before any well-supported one.
        rank = _member_rank(request, plain) if request.kind == "topic" else {}
        # never a later sentence of a member's entry ("For an active superuser, this method will
        # always return True."): without the entry's first it says nothing of what
        best = min(plain, key=lambda s: (rank.get(s.order, len(request.links)), s.entry >= 0 and not s.opens_entry,
                                         -s.support, s.order))
        return _lead(best, passing=True), [s for s in pool if s is not best]
    return None, list(pool)


_OPENING_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)


def _opened_name(opening: str) -> str:
    """The name a sentence opens with, as matched (without article, code marks or type
    parameters), lowercase."""
    name = _OPENING_ARTICLE.sub("", opening.strip().strip("`*")).strip("`* ").lower()
    return name.split("<", 1)[0] if name.endswith(">") else name


def _member_rank(request: PageRequest, sentences: list[_Sentence]) -> dict[int, int]:
    """Sentence order -> index of the first (most central) member page it names."""
    matchers = [_matcher((link.title,)) for link in request.links]
    out: dict[int, int] = {}
    for s in sentences:
        for i, m in enumerate(matchers):
            if m.first(s.text) >= 0:
                out[s.order] = i
                break
    return out


def _compares_with_subject(text: str, matcher: _NameMatcher) -> bool:
    """Whether the sentence opens by comparing with the subject ("Similar to X, but ..."): it is
    about something else, so it never leads the subject's page."""
    compared = _COMPARES.match(text)
    if compared is None:
        return False
    at = matcher.first(text)
    return 0 <= at < compared.end("clause")


@lru_cache(maxsize=65536)
def _may_lead(text: str) -> bool:
    """Neither leaning on the sentence before nor full of code marks (cached: a sentence is in
    the pool of every page it is evidence for)."""
    return (not _leans_back(text) and not points_back(text, subjectless=False) and not never_alone(text)
            and len(_CODE_MARKS.findall(text, entry_label(text))) < 4)  # an entry's signature is its label


def _leans_back(text: str, possessive: bool = True) -> bool:
    """Whether the sentence points at one before it: a connective or pronoun opening it, or a
    pronoun among its first words other than an "it" that points at nothing. A definition's
    "This ..." after its term ("`BuildError`: This error may be raised ...") points at the term.
    Without `possessive`, a possessive among the first words ("`x` reads its settings ...") is
    its own subject's, not a pointer."""
    if _DEFINITION_OPENING.match(text) or entry_label(text) or ABOUT_ITSELF.match(text):
        return False
    if _ANAPHORA.match(text):
        return True
    pointing = _POINTS_BACK.match(text)
    if pointing is None:
        return False
    if pointing["word"].lower() in ("its", "their") and not _BEFORE_ANY_SUBJECT.match(text) and (
            not possessive or _OWN_SUBJECTS.search(text, 0, pointing.end("word"))):
        return False
    return pointing["word"].lower() != "it" or _EMPTY_IT.match(text, pointing.start("word")) is None


# "This class ...", "These flags ...": an entry's text naming the kind of thing it describes.
def _needs_before(text: str) -> bool:
    """Whether a sentence reads only after the one before it in its passage: standalone's
    signs, or _leans_back's less a possessive, unless it names the kind of thing its entry is."""
    return points_back(text) or (not OWN_KIND.match(text) and _leans_back(text, possessive=False))


def _opens_sentence(text: str) -> bool:
    """Starts like a sentence of its own (a capital or a quoted name), not mid-thought."""
    return text[:1].isupper() or text[:1] in "`*\"'“"


def _lead(s: _Sentence, passing: bool = False, said_of: bool = False) -> dict:
    """`passing`: the sentence only names the subject on the way to saying something else;
    `said_of`: it opens with the subject but does not say what the subject is."""
    return {"text": s.text, "ref": s.ref, "order": s.order, "chunk_id": s.chunk_id, "passing": passing,
            "said_of": said_of}


def _history(s: _Sentence) -> bool:
    """A sentence of release notes or a changelog: history of its subject, never what it is."""
    return release_notes(s.document, s.headings[1:])


# A heading naming its subject after the kind of thing it is ("Class Pair", "Module json").
_KIND_HEADING = re.compile(
    r"^(?:abstract\s+|final\s+)?(?:class|interface|enum|enum class|record|record class|exception|error|"
    r"annotation type|annotation interface|module|package|namespace|struct|union|function|macro|"
    r"program|command|variable|setting|option|directive|role)\s+`?(?P<name>[^\s`]+)`?$"
)


def _names_heading(heading: str, names: set[str]) -> bool:
    """Whether a lowercase heading is one of the subject's names, or one after its kind."""
    if heading in names or any(n.endswith("." + heading) for n in names):  # "Mixin" of "views.base.Mixin"
        return True
    kind = _KIND_HEADING.match(heading)
    return kind is not None and kind["name"].split("<", 1)[0] in names


# A heading naming its subject before the word for what it is ("StreamingHttpResponse objects",
# "Logger Objects", "QueryDict objects"): a reference's section on one class and its instances.
_OBJECTS_HEADING = re.compile(r"^`?(?P<name>[^\s`]+)`?\s+(?:objects?|instances?)$")


def _heads_subject(heading: str, names: set[str]) -> bool:
    """Whether a lowercase heading names the subject for its lead: one of its names, one after
    its kind, or one before "objects"."""
    if _names_heading(heading, names):
        return True
    objects = _OBJECTS_HEADING.match(heading)
    return objects is not None and objects["name"] in names
