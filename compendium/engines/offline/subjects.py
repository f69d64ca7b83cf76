"""What a chunk's sentences are about: their scope's owner, the terms they define, and names that
can never be a subject.

A subject has a scope: an option, field or method the authors define in a list belongs to its
owner (the command, class or settings group the document is about), and a sentence defining
it is a fact of the owner's page, written with the member's name ("`--squash`: Produce ...").
"""

from __future__ import annotations

import re
from functools import lru_cache

from .words import FUNCTION_WORDS, WEAK_MODIFIERS

# A command-line option, alone or with its value or its other spellings ("-a, --all",
# "--[no-]squash", "--format=<format>", "+x").
_OPTION = re.compile(r"^[-+]{1,2}[\[\w]")
# A member of a scope written as code: a call ("abbreviate(String str, int maxWidth)"), a
# dotted or underscored identifier, a constant, camelCase.
_CALL = re.compile(r"^[A-Za-z_][\w.$]*\s*\(")
# A title's site or manual name after a separator ("File handling — Django 3.2 documentation",
# "Plugins - MkDocs", "StringUtils (Apache Commons Lang 3.12.0 API)"), and a man page's section
# ("git-rebase(1)").
_SITE_SUFFIX = re.compile(r"\s+(?:[—–|]|--?(?=\s))\s+[^—–|]*$")
_API_SUFFIX = re.compile(r"\s+\([^()]*\b(?:API|documentation|manual|docs?)\b[^()]*\)$", re.IGNORECASE)
_MAN_SECTION = re.compile(r"\(\d[a-z]*\)(?:\s+(?:Manual|Reference)\s+Page)?$", re.IGNORECASE)
_MAN_REFERENCE = re.compile(r"^([\w.+-]+)\(\d[a-z]*\)$")  # "git-add(1)": a man page, not a call
# A contraction or possessive written as a name ("I’d", "CC’d", "we'll").
_CONTRACTION = re.compile(r"[’'](?:d|ll|re|ve|m|s|t)$", re.IGNORECASE)
# Adjective and participle endings of a lone word or a hyphenated compound's last part
# ("X-provided", "Perl-compatible", "C-style", "noncumulative").
_ADJECTIVE_END = re.compile(
    r"(?:-(?:provided|based|compatible|style|like|specific|aware|safe|only|friendly|related|free|wide|level)"
    r"|[a-z]{3}(?:ible|ous|ful|less))$",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def owner_name(document_title: str) -> str:
    """The name a document is about, from its title: without the site's or manual's name and a
    man page's section ("git-rebase(1)" -> "git-rebase"). Empty for an empty title."""
    title = " ".join(document_title.split())
    for _ in range(2):
        title = _SITE_SUFFIX.sub("", title)
        title = _API_SUFFIX.sub("", title)
    title = _BOOK_PREFIX.sub("", title)
    return _SECTION_LABEL.sub("", _MAN_SECTION.sub("", title)).strip().rstrip(":").strip()


# A book's name before a numbered section's title ("GNU gettext utilities: 2. The User's View").
_BOOK_PREFIX = re.compile(r"^[^:]{1,80}:\s+(?=(?:[A-Z]|\d+)(?:\.\d+)*\.?\s)")
_SECTION_LABEL = re.compile(r"^(?:(?:Chapter|Appendix|Part)\s+[\dIVXA-Z]+(?:\.\d+)*\.?\s+|(?:[A-Z]\.|\d+\.)(?:\d+\.?)*\s+)")
# Release notes and changelogs, by their title or heading: "Django 1.11.4 release notes",
# "Changes in 2.3", "Version 1.7.1", "What's new in 3.11", "Changelog", "NEWS".
_RELEASE = re.compile(
    r"\b(?:release\s+notes?|releases?\s+\d|change\s*log|changes\s+(?:in|since|for)\s+(?:version\s+)?v?\d"
    # a heading that is a release's number alone ("v1.4.0", "2.0 (2020-01-01)"), not a
    # numbered section ("5.3 Working with cipher handles")
    r"|what[’']s\s+new|news\s+(?:for|in)\b|version\s+v?\d+\.\d+|^v?\d+\.\d+(?:\.\d+)*\s*(?:$|[(\[]|[-–—:]\s*\d))",
    re.IGNORECASE,
)


def release_notes(document_title: str, heading_path: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether a passage is a release note: its document's title, or a heading above it, names a
    release ("Django 1.11.4 release notes", "Changes in 7.2", "v1.4.0")."""
    return _names_release(document_title) or any(_names_release(h) for h in heading_path[:2])


@lru_cache(maxsize=65536)
def _names_release(title: str) -> bool:
    """(Cached: every sentence of a passage asks again of the same few titles and headings.)"""
    return bool(_RELEASE.search(title))


# A licence's own text ("GNU General Public License", "Apache License, Version 2.0"): terms of
# copying that the manual carries, never subjects of what it documents.
_LICENCE = re.compile(r"\b(?:public|documentation|software|open)\s+licen[cs]e\b|\blicen[cs]e,?\s+version\s+\d",
                      re.IGNORECASE)


def licence_text(document_title: str, heading_path: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether a passage is a licence's text: its document's title or a heading above it names one."""
    return bool(_LICENCE.search(document_title)) or any(_LICENCE.search(h) for h in heading_path)


def is_option(name: str) -> bool:
    """A command-line option ("--squash", "-a", "-a, --all")."""
    return bool(_OPTION.match(name.strip().strip(_QUOTES)))


# What a signature says before its name: a category label ("Function: ", texinfo), a kind
# keyword ("class", "exception", "static"), a return type; and after it: a source link.
_CATEGORY = re.compile(r"^[A-Z][a-z]+(?: [a-z]+)?:\s+")
_KIND = re.compile(r"^(?:(?:class|exception|function|method|attribute|data|property|classmethod|staticmethod|"
                   r"async|abstract|final|static|public|protected|private|module|struct|enum|interface|macro|"
                   r"var|const|type|def|field|constructor|deprecated)\s+)+")
_TYPE_KINDS = re.compile(r"^(?:[A-Z][a-z]+(?: [a-z]+)?:\s+)?(?:abstract\s+|final\s+|public\s+|static\s+)*"
                         r"(?:class|exception|interface|struct|enum|module)\s", re.IGNORECASE)
_SOURCE_LINK = re.compile(r"\s*(?:\[source\]|¶)+$")
_OPTION_TOKEN = re.compile(r"^--?[A-Za-z0-9]")
_TYPED_NAME = re.compile(r"^([A-Za-z_][\w.]*)\s*(?::\s|=)")
_QUOTES = "`*‘’'\"“” "
# (a hyphen may join its words: an event's "env-updated (app, env)")
_NAME_BEFORE_CALL = re.compile(r"([A-Za-z_$][\w$]*(?:-[A-Za-z_$][\w$]*)*(?:[.:][A-Za-z_$][\w$]*)*)\s*\(")


def _unmarked(term: str) -> str:
    """The term without code marks, quotes, a source link or annotations ("@Deprecated")."""
    text = _SOURCE_LINK.sub("", " ".join(term.split()))
    return _ANNOTATIONS.sub("", text.replace("`", "").strip(_QUOTES))


_ANNOTATIONS = re.compile(r"^(?:@[A-Za-z_][\w.]*(?:\([^)]*\))?\s+)+")


def man_page_name(name: str) -> str:
    """A name without what only qualifies it: a man page's section ("git-config(1)" ->
    "git-config"), a type's parameters ("FailableBiFunction<T,U,R,E>", or cut short at a
    space: "FailableBiFunction<T,U,R,E" -> "FailableBiFunction"); others as given."""
    found = _MAN_REFERENCE.match(name.strip("`*"))
    if found:
        return found.group(1)
    generic = _TYPE_PARAMETERS.match(name)
    return generic.group(1) if generic else name


_TYPE_PARAMETERS = re.compile(r"^([A-Za-z_$][\w$.]*)<[\w$.,?\s]*>?$")


@lru_cache(maxsize=65536)
def term_name(term: str) -> str:
    """The name a definition list's term gives: without its marks, category label, kind
    keyword, return type, arguments and source link, the first of several spellings ("-a,
    --all" -> "-a", "Function: const char * po_file_domains (po_file_t file)" ->
    "po_file_domains", "class HttpResponseRedirect[source]" -> "HttpResponseRedirect").
    Cached, as is_type, is_member and never_subject: a term is asked of by MAP, PLAN and REFINE."""
    inner = _unmarked(term).rstrip(".:;,").strip()
    reference = _MAN_REFERENCE.match(inner)
    if reference is not None:
        return reference.group(1)
    if is_option(inner) or inner[:1] in "<[{":
        return re.split(r",\s|\s\|\s", inner, maxsplit=1)[0].strip()
    labelled = _CATEGORY.match(inner) is not None
    declared_type = is_type(inner)
    inner = _KIND.sub("", _CATEGORY.sub("", inner))
    if declared_type and inner:  # "public class StringUtils extends Object": the type's name
        return re.split(r"[\s<(\[]", inner, maxsplit=1)[0]
    call = _NAME_BEFORE_CALL.search(inner)
    if call is not None:
        return call.group(1)
    typed = _TYPED_NAME.match(inner)
    if typed is not None:  # "is_section: bool = True", "timeout = 30": an attribute's signature
        return typed.group(1)
    if labelled and inner:
        return inner.split()[-1].strip("*&")  # "Variable: int po_x": the type goes before the name
    return man_page_name(re.split(r",\s|\s\|\s", inner, maxsplit=1)[0].strip())


@lru_cache(maxsize=65536)
def is_type(term: str) -> bool:
    """A class, exception, interface or module a signature declares: a subject of its own."""
    return bool(_TYPE_KINDS.match(_unmarked(term)))


@lru_cache(maxsize=65536)
def is_member(term: str) -> bool:
    """A defined term that is a member of its scope, not a subject of its own: an option, a
    placeholder, a call's signature, a dotted, underscored or camelCase identifier."""
    inner = _unmarked(term)
    if not inner or is_type(term):
        return False
    if inner[0] in "<[{" or re.search(r"<[^<>\s]+>|\{[^{}]*\|[^{}]*\}", inner):
        # a placeholder, a name with one or with a choice of values: "<repository>",
        # "filter.<driver>.clean", "option check-connectivity {true|false}"
        return True
    if not (inner[0].isalnum() or inner[0] in "_$@"):
        return True  # markup of a directive or role (".. note::"), a symbol
    if inner.endswith(("…", "...")):
        return True  # an argument a command takes one or more of ("file …", "INPUTFILE ...")
    if _MAN_REFERENCE.match(inner.rstrip(".:;, ")):
        return False  # a man page named in a list of commands: a subject of its own
    tokens = inner.split()
    if len(tokens) >= 2 and any(_OPTION_TOKEN.match(t) for t in tokens[1:]):
        return True  # a command's option ("findstatic --first")
    if len(tokens) >= 3 and any(any(c in t for c in "./=<>'\"*$~") for t in tokens[1:]):
        return True  # an example's command line ("git merge-file README.my README README.upstream")
    # An option, a call's signature, an attribute's ("meta: MutableMapping"). A bare identifier
    # (`max_wal_size`, `core.editor`) is a member only where a code name owns it (extract).
    return bool(is_option(inner) or _NAME_BEFORE_CALL.search(inner) or _TYPED_NAME.match(inner))


def scope_of(name: str) -> str:
    """The owner a dotted member name states ("HttpResponse.set_cookie" -> "HttpResponse"), or
    "" when it states none: a prefix naming a type (capitalised), not a module path."""
    head, dot, _tail = name.rpartition(".")
    if not dot or not head:
        return ""
    last = head.rpartition(".")[2]
    return last if last[:1].isupper() else ""


_VALUE_LITERALS = frozenset({"null", "nil", "none", "true", "false", "undefined", "nan", "nullptr"})


def value_literal(name: str) -> bool:
    """A language's literal value (`NULL`, `None`, `true`): a value things take, a subject only
    where the authors define it (a constants reference), never for being named."""
    return name.strip().strip("`*\"'").strip().lower() in _VALUE_LITERALS


_PLACEHOLDER = re.compile(r"<[^<>\s]+>")


@lru_cache(maxsize=65536)
def never_subject(name: str) -> bool:
    """A name that can never be a subject, whatever the text around it: a contraction, a single
    letter or digit, a number, an adjective or participle standing alone, an option."""
    text = name.strip().strip("`*\"'").strip()
    if len(text.removesuffix("()")) <= 1 or text.replace(".", "").replace(",", "").isdigit():
        return True
    if _CONTRACTION.search(text) or is_option(text) or text.lower() in FUNCTION_WORDS:
        return True
    words = text.split()
    if len(words) > 1 and any(is_option(w.strip("[](){}|.,;:…")) or _PLACEHOLDER.search(w) for w in words[1:]):
        return True  # a command line or a phrase around one: "form --missing", "optional argument <path>"
    if len(words) == 1 and text.isalpha() and text.islower() and len(text) <= 2:
        return True  # "a", "z", "ok"
    if len(words) > 1 and len(words[-1]) == 1 and words[-1].islower():
        return True  # a fragment ending in a letter: "just m"
    if len(words) == 1 and not any(c.isupper() for c in text[1:]) and "_" not in text and "`" not in name:
        if _ADJECTIVE_END.search(text) or text.lower() in WEAK_MODIFIERS:
            return True  # "configurable"; "Following is a basic example ...": a qualifier alone
    return False
