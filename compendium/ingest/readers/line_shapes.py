"""Lines whose shape says what they are: a man page's NAME line, its options and their group
labels, an entry's field lines, the notices between a term and its description."""

from __future__ import annotations

import re

# A man page's NAME line: "git-add - Add file contents to the index", "pg_dump — extract ...".
NAME_LINE = re.compile(r"(?P<names>\S.{0,120}?)\s+(?:-|--|\u2013|\u2014)\s+(?P<purpose>\S.*)")
# A notice standing between a term and its description: Javadoc's "Deprecated.", Sphinx's
# "New in version 3.1." / "Changed in Django 4.0: ..." / "Deprecated since version 2.0: ...".
NOTICE = re.compile(r"Deprecated(?:\.(?:\s|$)|\s+since\s)|(?:New|Changed)\s+in\s+(?:version\s+)?[\w.+-]{1,30}"
                    r"(?:\s+\d[\w.+-]*)?\s*[:.]")
HAS_LOWER = re.compile(r"[a-z]")
_OPTION = r"--?[A-Za-z0-9?<>][\w+-]*(?:\[?=[^\s,]+\]?|\[[^\s,\]]+\]|\s[A-Z][A-Z_]*)?"  # "--c++", "-m[STRING]"
_GROUP_LABEL = r"[A-Z][\w #+./'‘’-]{0,60}"
OPTION_PARAGRAPH = re.compile(
    # after a group label ("Output details: --color"), or after the sentence before the
    # options, when the renderer broke the line there ("Display ... message. -d, --domain=X")
    rf"(?:(?P<group>{_GROUP_LABEL}):\s+)?(?:(?P<sentence>[A-Z][^:]{{0,300}}?\.)\s+)?(?P<options>{_OPTION}(?:,\s*{_OPTION})*)"
    rf"|(?P<label>{_GROUP_LABEL}):\s+(?P<arguments>[\w.-]+\s\.\.\.)"  # "Input file location: filename.po ..."
)
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# "The def.po file is ...", "The FILE argument names ...": what an argument of the SYNOPSIS is
ARGUMENT_SENTENCE = re.compile(r"The (?P<name>[\w.-]+)(?: file| files| argument| parameter| operand)? "
                               r"(?:is|are|names?|gives?|specifies|must)\b")
OPTION_ENTRY = re.compile(rf"{_OPTION}(?:,\s*{_OPTION})*")
# A line of argument placeholders over their description ("[TEXTDOMAIN] MSGID"): each word is
# in the command's SYNOPSIS.
PLACEHOLDERS = re.compile(r"\[?[\w.-]+\]?(?:\s+\[?[\w.-]+\]?){0,3}")
LONE_LABEL = re.compile(rf"(?P<label>{_GROUP_LABEL}):")  # "Input file location:" over its entries
# A field line under a name heading, not its description: "Default: `False`", "Type: int".
_FIELD_LINE = re.compile(r"[A-Z][\w -]{0,30}:\s+\S.{0,80}")
_LABEL_WORD = re.compile(r"[A-Za-z]{4,}")


def label_words(text: str) -> set[str]:
    """The words of four letters or more a group label and its notes can share."""
    return {w.lower() for w in _LABEL_WORD.findall(text)}


def field_line(text: str) -> bool:
    """A field of an entry ("Default: `False`", "Availability: MariaDB, MySQL, Oracle"), not a
    description that opens with a label ("Java mode: generate a Java ResourceBundle class")."""
    if not _FIELD_LINE.fullmatch(text) or len(text.split()) > 8:
        return False
    label, value = text.split(":", 1)
    words = value.split()
    if len(label.split()) > 1 and len(words) >= 3 and words[0].islower() and words[1] in _ARTICLES:
        return False  # a predicate: "Desktop Entry mode: generate a .desktop file"
    return len(label.split()) == 1 or len(words) <= 4


_ARTICLES = frozenset({"a", "an", "the"})
# Words a label ("Input file location:") never opens with or holds: it names, it does not say.
_NOT_LABEL_OPENING = frozenset("a an the this these that those it its there here you we from to in on for with by at "
                               "of if when how what why where which as".split())
_NOT_LABEL_WORD = frozenset("is are was were has have had can will do does should must may".split())


def label_like(text: str) -> bool:
    """A group label of a few naming words ("Input file location:"), not the opening of a sentence."""
    words = text.rstrip(":").lower().split()
    return 0 < len(words) <= 6 and words[0] not in _NOT_LABEL_OPENING and not _NOT_LABEL_WORD.intersection(words)
