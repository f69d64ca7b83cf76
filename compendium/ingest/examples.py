"""The code names a document's examples made up: `current_name` in "If the template context
contains a `current_name` variable, ..." after a template that is the only place it comes from.

A name is made up by an example when a code block of its section writes it before any heading
or prose of the section does, and either the code declares it as a type (`class Person`: the
example's own, whatever else bears the name) or no other section's prose or headings name it.
A real API name (`DIRS`, `--track`, `SITE_ID`) is told somewhere else in its document; a
literal, a number or a syntax's `<placeholder>` is no one's invention. A sentence after the example naming one
speaks of what the reader of a page, which shows no code, never saw.
"""

from __future__ import annotations

import re

from .readers import Block

CODE_NAME = re.compile(r"`([^`\n]{1,80})`")


# Values any example writes before the prose names them: no example made them up.
_LITERALS = frozenset({"true", "false", "none", "null", "nil", "self", "this", "yes", "no", "off", "on"})


def example_key(written: str) -> str:
    """A code name as looked for in an example: lowercased, without a call's "()"; "" for one
    no example makes up (a literal, a number, a letter or two, a syntax's `<placeholder>`,
    which the prose after it defines)."""
    name = written.strip().lower()
    key = name[:-2] if name.endswith("()") else name
    if len(key) < 3 or key in _LITERALS or not any(c.isalpha() for c in key) or (key[0], key[-1]) == ("<", ">"):
        return ""
    return key


class DocumentExamples:
    """The names each section's examples made up, found for the chunks that name them."""

    def __init__(self, text: str, sections: list[list[Block]]):
        self.text = text
        self.sections = sections
        self._lower: dict[int, list[tuple[str, str, set[str]]]] = {}  # section -> its blocks' (kind, text, words)
        self._told: dict[str, int] | None = None  # a word of the prose -> how many sections' prose says it
        self._prose: list[set[str]] = []
        self._made: dict[tuple[int, str], int] = {}

    def made_up(self, index: int, start: int, end: int) -> tuple[tuple[str, int], ...]:
        """(name lowercased, where in the chunk `text[start:end]` of section `index` the example
        that made it up ends, 0 when before the chunk) for each code name the chunk names."""
        if not any(b.kind == "code" and b.start < end for b in self.sections[index]):
            return ()
        out = []
        for written in sorted(set(CODE_NAME.findall(self.text[start:end]))):
            key = example_key(written)
            made = self._made_at(index, key) if key else -1
            if 0 <= made < end:
                out.append((written.strip().lower(), max(0, made - start)))
        return tuple(out)

    def _made_at(self, index: int, key: str) -> int:
        """Where the code block of section `index` that made `key` up ends, -1 if none did."""
        found = self._made.get((index, key))
        if found is None:
            blocks = self._lower.get(index)
            if blocks is None:
                blocks = self._lower[index] = [(b.kind, self.text[b.start:b.end].lower(), _words(self.text[b.start:b.end]))
                                               for b in self.sections[index]]
            # a word for a word: `form.clean` is not in `form.cleaned_data`
            wordlike = _WORD.fullmatch(key) is not None
            first = next((i for i, (_kind, said, words) in enumerate(blocks) if (key in words if wordlike else key in said)),
                         -1)
            found = -1
            if first >= 0 and blocks[first][0] == "code" and (_defines(blocks[first][1], key)
                                                              or not self._told_elsewhere(index, key)):
                found = self.sections[index][first].end
            self._made[(index, key)] = found
        return found

    def _told_elsewhere(self, index: int, key: str) -> bool:
        """Whether the prose or headings of another section than `index` name `key`."""
        if self._told is None:
            self._told = {}
            for section in self.sections:
                words = set()
                for b in section:
                    if b.kind != "code":
                        words |= _words(self.text[b.start:b.end])
                self._prose.append(words)
                for word in words:
                    self._told[word] = self._told.get(word, 0) + 1
        if _WORD.fullmatch(key):
            return self._told.get(key, 0) > (key in self._prose[index])
        # a name of several words or marks ("{{ form }}", "200 ok"): looked for in the text itself
        return any(key in self.text[b.start:b.end].lower() for i, section in enumerate(self.sections) if i != index
                   for b in section if b.kind != "code")


def _defines(code: str, key: str) -> bool:
    """Whether lowercased `code` declares the type `key`. A function it defines may be a hook the
    framework calls (`def ready(self)`), and a name it assigns a setting (`DEBUG = False`): only
    a type the example declares is its own."""
    if _WORD.fullmatch(key) is None:
        return False
    name = re.escape(key)
    return re.search(rf"\b(?:class|interface|struct|enum)\s+{name}(?![\w.$-])", code) is not None


# A word of prose as a code name can be: `is_valid`, `site_id`, `--track`, `os.path`.
_WORD = re.compile(r"[\w$@-][\w$@.:/-]*")


def _words(text: str) -> set[str]:
    """The words of a block, lowercased, a dotted one or a path also in its parts ("form.is_valid"
    and "is_valid", "django-polls/docs" and "docs"), trailing punctuation off."""
    out = set()
    for word in _WORD.findall(text.lower()):
        word = word.rstrip(".:/-")
        out.add(word)
        if "." in word or "/" in word:  # "django-polls/docs" names `docs` too
            out.update(part for part in re.split(r"[./]", word) if part)
    return out
