"""Which subjects each sentence of a chunk is about: the term a definition block defines (or
its owner, for a member), the name a sentence opens with, the subject its section is home to."""

from __future__ import annotations

import re
from functools import lru_cache

from ..tasks import ChunkInput
from .chunk_layout import IDENTIFIER
from .chunk_names import Item
from .names import is_acronym, name_key
from .phrases import Mention
from .sentences import Sentence, clean_heading, without_label
from .standalone import ABOUT_ITSELF, OWN_KIND
from .subjects import (
    is_member,
    is_option,
    is_type,
    never_subject,
    owner_name,
    release_notes,
    scope_of,
    term_name,
)

_SUBJECT_OFFSET = 12  # characters allowed before a subject ("The ", "An ", "**")
# What may stand before a sentence's grammatical subject: an article or determiner, markup.
_BEFORE_SUBJECT = re.compile(r"^(?:(?:the|a|an|this|each|every|all|both|only|any|some|no)\s+)?[`*\"'“(]*$", re.IGNORECASE)
_PREPOSITIONS = frozenset("of for to with in on from by at as into than".split())
_PARAMETER_OPENING = re.compile(r"^(?:The\s+)?`+\**([A-Za-z_]\w*)`+")
# The sections of a man page ("NAME", "SYNOPSIS", "DESCRIPTION", ...), as man(7) lists them.
_MAN_SECTIONS = frozenset({"name", "synopsis", "description", "options", "exit status", "return value", "errors",
                           "environment", "files", "see also", "bugs", "author", "authors", "examples", "notes",
                           "reporting bugs", "copyright", "commands"})


def _man_page_spelling(owner: str, heading_path: list[str]) -> str:
    """A man page's title in capitals ("NGETTEXT") names a command or function written in small
    letters, as its NAME line has it: the chunks without that line spell it the same."""
    if owner.isupper() and re.fullmatch(r"[A-Z][A-Z0-9_.+-]*", owner) and any(
            h.strip().lower() in _MAN_SECTIONS for h in heading_path[1:]):
        return owner.lower()
    return owner


def _own_function(sentence: Sentence, chunk: ChunkInput, term: str, owner: str) -> bool:
    """A function's signature defined where nothing written as code owns it (a C API's
    "`gcry_error_t gcry_cipher_open (...)`: This function creates ..." in a chapter titled
    "Working with cipher handles"): a subject of its own, not a member of the chapter."""
    return (not sentence.scope and "(" in sentence.defines and sentence.defines.rstrip().endswith(")")
            and not _code_owner(sentence, chunk, term) and not _written_as_code(owner))


def _written_as_code(name: str) -> bool:
    """A name only code has: one token with an underscore, a dot or colon, or a capital inside
    ("StringUtils", "gcry_cipher_hd_t"); a document's plain title ("Glossary") is none."""
    return bool(name) and IDENTIFIER.fullmatch(name) is not None and (
        any(c in name for c in "_.:") or any(c.isupper() for c in name[1:]))


def _subject_of(sentence: Sentence, found: list[Mention]) -> str | None:
    """The key of the sentence's grammatical subject: the name it opens with, after at most an
    article or determiner ("The `-s` option ..." is about what follows "The")."""
    if not found:
        return None
    first = min(found, key=lambda m: m.start)
    if first.start > _SUBJECT_OFFSET or not _BEFORE_SUBJECT.match(sentence.text[: first.start]):
        return None
    after = sentence.text[first.end : first.end + 2]
    if after.startswith(("’s", "'s")):
        return None  # "Git's object store ...": the possessor is not the subject
    following = sentence.text[first.end :].split(None, 1)
    if following and following[0].lower() in _PREPOSITIONS:
        return None  # "A `dict` of values ...": the name qualifies the subject, it is not it
    return first.key


def subjects_by_sentence(
    chunk: ChunkInput,
    items: dict[str, Item],
    sentences: list[Sentence],
    mentions: list[list[Mention]],
    alias_of: dict[str, str],
    claim_like: list[bool],
    parameters: dict[str, tuple[str, str]],
) -> list[list[str]]:
    """For each sentence, the keys of the subjects it is about: the term a definition block
    defines (its owner's, for a member such as an option or a method), the subject the
    sentence opens with, and the subject whose home the section is (the heading naming it, or
    the document's own subject). A release note is about what it opens with only."""
    owner = _man_page_spelling(owner_name(chunk.document_title), chunk.heading_path)
    owner_key = name_key(owner) if owner and not never_subject(owner) else ""
    owner_key = alias_of.get(owner_key, owner_key)
    notes = release_notes(chunk.document_title, chunk.heading_path)
    out: list[list[str]] = []
    member_of: dict[str, str] = {}  # key of a member defined here -> key of its owner
    for i, sentence in enumerate(sentences):
        keys: list[str] = []
        section = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
        if sentence.term or _furniture(section):
            out.append(keys)  # a term line; a colophon's copyright, credits or bug address
            continue
        if sentence.defines:
            term = term_name(sentence.defines)
            if owner_key and name_key(term) == owner_key:
                # The document's own subject defined (a man page's NAME line): its definition.
                if owner_key not in items:
                    items[owner_key] = Item(owner_key, owner, "code" if IDENTIFIER.fullmatch(owner) else "name", i)
                if not items[owner_key].definition and sentence.position == 0:
                    items[owner_key].definition = sentence.text
                    if items[owner_key].name.isupper() and not term.isupper():
                        items[owner_key].name = term  # a title in capitals ("MSGCONV"): its NAME line's spelling
                keys.append(owner_key)
            elif is_option(sentence.scope) and not _headed_by(sentence, chunk, term):
                # a value an option takes ("--sentence-end"'s `double-space`): never a subject,
                # it is said of whatever the option belongs to
                if value_owner := member_of.get(name_key(sentence.scope)) or owner_key:
                    keys.append(value_owner)
                    member_of[name_key(term)] = value_owner
            elif not is_type(sentence.defines) and not _own_function(sentence, chunk, term, owner) and (
                    bool(_code_owner(sentence, chunk, term)) or _record_field(sentence, chunk) or (
                    not _headed_by(sentence, chunk, term) and not _expanded(term, alias_of) and (
                        is_member(sentence.defines)
                        or (owner_key and _PLAIN_TERM.match(term) and not _defines_a_thing(sentence, term))))):
                scope = (_code_owner(sentence, chunk, term) or (clean_heading(sentence.scope) if _record_field(sentence, chunk) else "")
                         or sentence.scope or scope_of(term))
                if scope and not never_subject(scope):
                    key = alias_of.get(name_key(scope), name_key(scope))
                    if key not in items:
                        items[key] = Item(key, scope, "code", i)
                    keys.append(key)
                elif owner_key:
                    keys.append(owner_key)
                if keys and name_key(term):
                    member_of[name_key(term)] = keys[-1]  # its section's other sentences are the owner's too
            elif term and not never_subject(term):
                key = alias_of.get(name_key(term), name_key(term))
                if key:
                    item = items.get(key)
                    if item is None:
                        item = items[key] = Item(key, term, "defined", i)
                    if not item.definition and sentence.position == 0 and not _describes_by_reference(sentence.text):
                        item.definition = sentence.text
                    keys.append(key)
        subject = None if sentence.defines else _subject_of(sentence, mentions[i])
        if subject is None and not sentence.defines and (opening := _PARAMETER_OPENING.match(sentence.text)):
            # "`headers` is a `dict` of ...", "The `headers` parameter was added.": its function's
            owner, name = parameters.get(name_key(opening[1]), ("", ""))
            if owner and name == opening[1] and not never_subject(owner):
                subject = alias_of.get(name_key(owner), name_key(owner))
                if subject not in items:
                    items[subject] = Item(subject, owner, "code", i)
        if subject and subject not in keys:
            keys.append(subject)
        if notes:
            out.append(keys[:1])  # a release note is history of what it opens with, nothing more
            continue
        heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
        home = alias_of.get(name_key(heading), name_key(heading)) if heading else ""
        home = member_of.get(home, home)
        if home and home in items and not sentence.defines and not never_subject(items[home].name):
            if home not in keys:
                keys.append(home)
        elif owner_key and not keys and claim_like[i]:
            keys.append(owner_key)  # a sentence of the document about nothing else is its subject's
        out.append(keys)
    if owner_key and owner_key not in items and any(owner_key in keys for keys in out):
        kind = "code" if IDENTIFIER.fullmatch(owner) else "name"
        items[owner_key] = Item(owner_key, owner, kind, 0)
    if owner_key in items and not items[owner_key].definition:
        # A document's title names what its authors define there: its introduction, or the
        # section describing it, says what it is where no sentence defines it.
        path = chunk.heading_path
        top = not path or clean_heading(path[-1]).lower() in _DESCRIBING or (
            len(path) == 1 and name_key(owner_name(path[0])) == owner_key)
        # The document saying what it is itself ("This article describes ...") first, else
        # its first sentence that stands alone.
        candidates = [i for i, keys in enumerate(out) if top and owner_key in keys and claim_like[i] and (
            not sentence_leans(sentences[i]) or OWN_KIND.match(sentences[i].text))]
        chosen = next((i for i in candidates if ABOUT_ITSELF.match(sentences[i].text)
                       and not _WHOLE_WORK.match(sentences[i].text)), candidates[0] if candidates else None)
        if chosen is not None:
            items[owner_key].definition = sentences[chosen].text
    for i, keys in enumerate(out):
        for key in keys:
            item = items.get(key)
            if item is not None and (not item.sentences or item.sentences[-1] != i) and i not in item.sentences:
                item.sentences.append(i)
                item.sentences.sort()
                item.first = min(item.first, i)
    return out


# How a description of a thing opens: an article or determiner ("A class that ...", "The
# default ..."), where an option's, a value's or a subcommand's opens with what it does
# ("Remove a matching credential", "Generate a diff ...", "This option forces ...").
_THING_OPENING = re.compile(r"^(?:`[^`]+`:\s+)?(?:an?|the|one|any|each|every|some)\s", re.IGNORECASE)


def _defines_a_thing(sentence: Sentence, term: str) -> bool:
    """Whether a definition block describes its term as a thing of its own (a glossary entry),
    not as a member of the document's subject: it opens with an article, or with the term."""
    text = sentence.text
    if _THING_OPENING.match(text):
        return True
    opening = _TERM_OPENING.match(text)
    if opening is not None:  # "`term`: description", "term: description": what follows says
        text = text[opening.end():]
        if _THING_OPENING.match(text):
            return True
    body = text.lstrip("`*")
    if not term or not body.lower().startswith(term.lower()):
        return False
    # "merge: Merge is ..." is the thing; "add: Add notes for ...", "edit: Edit the notes ..." tell
    # what a subcommand does, its own name as the verb
    rest = body[len(term):]
    verb = _VERB_ENDING.match(rest)  # "list: Lists the refs ...": the term as a verb, inflected
    if verb is None:
        return True  # a longer word the term only begins ("addr: Address of ...")
    after = rest[verb.end():]
    if verb.group(0) and not _OBJECT_OPENING.match(after):
        return True  # its plural as the subject: "Log file: Log files contain human-readable text ..."
    return bool(_NAMED_AS_SUBJECT.match(after))


# What opens a verb's object ("Lists the refs", "Pushes `HEAD`"): after a plural noun a verb would.
_OBJECT_OPENING = re.compile(r"\s+(?:(?:the|a|an|all|each|every|any|one|some|its|their|this|that|these|those|"
                             r"to|for|from|in|on|with|by)\b|[`\"'“])", re.IGNORECASE)


_VERB_ENDING = re.compile(r"(?:e?s|ed|ing)?(?=\s)")
_NAMED_AS_SUBJECT = re.compile(r"\s*(?:[,(:;—–]|(?:is|are|was|were|refers|means|denotes|stands|names|represents)\b)")
_TERM_OPENING = re.compile(r"^(?:`+[^`]+`+|[^\s:`][^:`]{0,80}?):\s+")
# A description that only points at another entry ("Likewise for Lua, see ...", "Same as
# `--quiet`"): the term is a member of the list it stands in, not a subject defined here.
_BY_REFERENCE = re.compile(r"^(?:Likewise|Similarly|Ditto|Idem|Same\s+as|As\s+above|As\s+for|See\s+above|"
                           r"Alias\s+(?:for|of)|Synonym\s+(?:for|of))\b", re.IGNORECASE)


def _describes_by_reference(text: str) -> bool:
    at = text.find(": ", 0, 160)  # after the term, however many names it lists
    return bool(_BY_REFERENCE.match(text[at + 2 :] if at >= 0 else text))


# A document's furniture, the same in every page of a manual: its copyright and licence, its
# authors and credits, where to report bugs, where else to read. No sentence there is a fact of a subject, and the
# people it names are not subjects (the judging rules' "people's names from credits").
_FURNITURE = frozenset({"copyright", "license", "licence", "licensing", "author", "authors", "credits",
                        "acknowledgements", "acknowledgments", "reporting bugs", "colophon", "thanks",
                        "see also"})  # (a man page's pointers to other pages and manuals)


@lru_cache(maxsize=4096)
def _furniture(section: str) -> bool:
    """A colophon's section by its heading or the heading's first word ("Copyright information for
    this document", "Author/acknowledgments", "See also"). Cached: asked of every sentence."""
    lower = without_label(section).lower().rstrip(":").strip()
    first = re.split(r"[^a-z]+", lower, maxsplit=1)[0]
    return lower in _FURNITURE or first in _FURNITURE or lower.startswith("see also")


# Sections whose first sentence says what the document's subject is (a man page's
# "DESCRIPTION" opens on how it is used: its NAME line says what it is).
_DESCRIBING = frozenset({"overview", "introduction", "name", "purpose", "summary", "about"})
_LEANS = re.compile(r"^(?:It|Its|This|These|That|Those|They|Otherwise|However|But|And|Or|So|Also|Then)\b")


# "This manual is free documentation.": said in any of its chapters, of the whole work.
_WHOLE_WORK = re.compile(r"^(?:This|The\s+present)\s+(?:manual|book)\b")


def sentence_leans(sentence: Sentence) -> bool:
    """A sentence that leans on the one before ("It ...", "Otherwise ..."): no description alone.
    "This document ..." says what its document is."""
    return bool(_LEANS.match(sentence.text)) and not ABOUT_ITSELF.match(sentence.text)


# A term of plain words ("list", "erase", "merge backend"): described by what it does, it is a
# subcommand or value of the document's subject; an identifier (`max_wal_size`) names a thing.
_PLAIN_TERM = re.compile(r"^[A-Za-z][a-z]*(?: [a-z]+){0,3}$")
_CODE_NAME = re.compile(r"^[A-Za-z_][\w.:$-]*(?:\(\))?$")


def _record_field(sentence: Sentence, chunk: ChunkInput) -> bool:
    """A field of the record its section describes: the reader scopes a term defined under
    several sibling sections ("setlocale: automatic" under each language) to its own section."""
    heading = sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else "")
    return bool(sentence.scope) and bool(heading) and clean_heading(sentence.scope) == clean_heading(heading)


def _code_owner(sentence: Sentence, chunk: ChunkInput, term: str) -> str:
    """The code name a definition list's term is a member of: the scope the reader gives (one
    token), or the heading above it when written like code ("CheckMessage" over its `hint`,
    "CACHES" over its `BACKEND`). A group heading ("Core Settings", "Glossary") owns nothing:
    its terms are subjects of their own."""
    heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
    for owner, given in ((sentence.scope, True), (heading, False)):
        owner = owner.strip().strip("`")
        if not owner or not _CODE_NAME.match(owner) or name_key(owner) == name_key(term):
            continue
        camel = any(c.isupper() for c in owner[1:]) and not owner.isupper()
        if given or camel or any(c in owner for c in "_.:("):
            # The reader's scope of one token is a code name ("Conversion", the class of its
            # methods); a heading is one only when written like code (a heading in capitals
            # is a man page's section: "OPTIONS").
            return owner
    return ""


def _headed_by(sentence: Sentence, chunk: ChunkInput, term: str) -> bool:
    """Whether the authors gave the term a heading of its own (a reference heading: Django's
    `ALLOWED_HOSTS` under "Core Settings"): a subject with its own section, whatever its shape."""
    heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
    return bool(term) and name_key(heading.strip("`")) == name_key(term)


def _expanded(term: str, alias_of: dict[str, str]) -> bool:
    """An acronym whose definition spells it out ("`GIN`: Generalized Inverted Index"): a
    subject of its own. A code list's entry ("`MO`: Macao") spells nothing: a value."""
    if not is_acronym(term):
        return False
    key = name_key(term)
    return alias_of.get(key, key) != key
