"""What a chunk's layout says beside its sentences: headings that are section labels or purpose
lines, a glossary's term over its definition, the parameters of a signature."""

from __future__ import annotations

import re

from ..tasks import ChunkInput
from .definitions import purpose_name
from .names import Span, name_key
from .sentences import Sentence
from .words import BOILERPLATE, FUNCTION_WORDS, GENERIC_HEADS, VERBS

IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")
_GLOSSARY_DEFINITION = re.compile(r"^(?:An?|The|One|Any)\s+\w")
_SIGNATURE = re.compile(r"^`+([^`(]+)\(([^`)]*)\)`*")


def is_heading_line(text: str, heading_path: list[str]) -> bool:
    """A heading that reached the text as a plain line (HTML, PDF, DOCX): a section label, not
    prose, so its words are neither names nor claims ("Return Value", "See Also")."""
    line = text.strip()
    if line.endswith((".", "!", "?", ":", ";", ",")) or len(line.split()) > 8:
        return False
    return line.lower() in {h.strip().lower() for h in heading_path} or line.istitle()


def purpose_headings(chunk: ChunkInput) -> list[Sentence]:
    """The chunk's headings shaped as purpose lines ("json — JSON encoder and decoder"), read
    as sentences: the text holds them verbatim, so they can be cited."""
    out = []
    for kind, start, end, *_ in chunk.blocks or ():  # a definition adds its term and scope
        if kind == "heading":
            line = " ".join(chunk.text[start:end].split())
            if purpose_name(line):
                out.append(Sentence(line, -1, 0))
    return out


def with_purpose_name(spans: list[Span], name: str | None) -> list[Span]:
    """A purpose line names its subject before the dash, however it is written (`pathlib`)."""
    if not name:
        return spans
    inner = name.strip("`*")  # "`xml.dom.pulldom` — ...": the marks are markup
    if not inner or any(s.text == inner and s.start <= 1 for s in spans):
        return spans
    start = name.index(inner)
    kind = "code" if IDENTIFIER.fullmatch(inner) else "name"
    return [Span(start, start + len(inner), inner, kind), *[s for s in spans if s.start >= len(name)]]


def glossary_term(term: Sentence, following: Sentence) -> str | None:
    """The term of a glossary entry: a block of one to four plain words, no sentence of its
    own, followed by a block opening like a definition ("A ...", "The ...")."""
    text = term.text.strip().rstrip("¶").strip()  # Sphinx marks a glossary term's anchor with ¶
    words = text.split()
    if term.position != 0 or following.position != 0 or not 1 <= len(words) <= 4:
        return None
    if text[-1:] in ".!?:;," or not all(w.replace("-", "").replace("/", "").isalnum() for w in words):
        return None
    lowered = [w.lower() for w in words]
    if lowered[0] in FUNCTION_WORDS or lowered[-1] in FUNCTION_WORDS or " ".join(lowered) in BOILERPLATE:
        return None
    if any(w in VERBS for w in lowered) or lowered[-1] in GENERIC_HEADS:
        return None
    if len(following.text.split()) < 5 or not following.text[:1].isupper():
        return None
    if not (_GLOSSARY_DEFINITION.match(following.text) or text.islower()):
        return None  # a capitalised line over prose is as often a heading as a term
    return text


def signature_parameters(sentences: list[Sentence]) -> dict[str, tuple[str, str]]:
    """The parameters of the signatures that open the chunk's definition blocks
    ("`HttpResponse.__init__(content=b'', headers=None)`: ..."), by key: their owner (the
    block's scope, else the function itself) and their name as written. A name written
    otherwise ("HttpOnly" beside `httponly=False`) is a subject of its own."""
    out: dict[str, tuple[str, str]] = {}
    for sentence in sentences:
        match = _SIGNATURE.match(sentence.text) if sentence.defines and sentence.position == 0 else None
        if match is None:
            continue
        owner = sentence.scope or match[1].strip()
        for part in match[2].split(","):
            name = re.split(r"[=:]", part, maxsplit=1)[0].strip(" *")
            if name.isidentifier() and name not in ("self", "cls"):
                out.setdefault(name_key(name), (owner, name))
    return out
