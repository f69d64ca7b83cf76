"""What a sentence of a chunk leans on besides the sentence before it: the example before it
that made up the names it speaks of, the code block whose prose it is, and the sentence its
list item finishes.

A page is assembled from sentences lifted out of their passages. "If the template context
contains a `current_name` variable, ..." reads only beside the code that made `current_name`
up, "We call the form's `is_valid()` method" only after the view it walks through, and "- Email
the package to a friend." only after "... you could now:". These are marks of how documents are
written (code, then the prose explaining it; a clause finished by a list), not of any one manual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..engines.offline.sentences import split_sentences
from ..ingest.examples import CODE_NAME
from ..storage.slugs import slugify

# A sentence that stops on a colon where its clause wants more: a modal, "to", an adverb of time.
_OPEN_CLAUSE = re.compile(
    r"\b(?:can|could|may|might|must|shall|should|will|would|to|now|then|also|either|just|simply|is|are|be)\s*:$",
    re.IGNORECASE,
)


@dataclass
class Leaning:
    """A chunk as its sentences' context: `text` and its reader's `blocks`, `flat` (its
    paragraphs' words single-spaced), where it starts in its document, the code names its
    section's examples made up (Chunk.examples), the slugs of the subjects with pages it
    names, and whether it starts in the paragraphs after a code block (Chunk.follows_code)."""

    text: str
    blocks: list[list]
    flat: str
    start: int
    examples: tuple = ()
    paged: frozenset[str] = field(default_factory=frozenset)
    follows_code: bool = False

    @cached_property
    def list_intros(self) -> tuple[tuple[int, int, int], ...]:
        """(start, end, intro) in `flat` of each list whose items finish the sentence before
        them, and where that sentence starts: it stops on a colon mid-clause ("... you could
        now:", "This lets you:"), so an item ("Email the package to a friend.") says half a thing
        without it. After a whole clause ("The options are these:") an item reads alone."""
        out = []
        previous: list = []
        run: list[list] = []
        for block in [*self.blocks, ["end", len(self.text), len(self.text)]]:
            if block and block[0] == "item" and len(block) >= 3:
                run.append(block)
                continue
            if run and previous and previous[0] == "paragraph":
                out.extend(self._items_after(previous, run))
            run = []
            if block and block[0] not in ("code", "table"):
                previous = block
        return tuple(out)

    def _items_after(self, paragraph: list, items: list[list]) -> list[tuple[int, int, int]]:
        """(start, end, intro) of each item of a list after `paragraph` that finishes its last
        sentence; none when that sentence is whole. An item opening with a code name ("`suspend()`
        the watch to pause it.", "`'version'`: a string ...") says what it is about itself."""
        intro = " ".join(self.text[paragraph[1]:paragraph[2]].split())
        at = self.flat.find(intro)
        if at < 0 or not _OPEN_CLAUSE.search(intro):
            return []
        last = split_sentences(intro)[-1:] or [intro]
        opening = at + intro.rfind(" ".join(last[0].split()))
        out = []
        begin = at
        for item in items:
            said = " ".join(self.text[item[1]:item[2]].split())
            begin = self.flat.find(said[:80], begin)
            if begin < 0:
                break
            if not said.lstrip("-*0123456789. ").startswith("`"):
                out.append((begin, begin + len(said), opening))
            begin += len(said)
        return out

    @cached_property
    def _after_code(self) -> tuple[tuple[int, int], ...]:
        """(start, end) in `flat` of the paragraphs after each code block, up to the next
        block of another kind: where prose explains the code it follows."""
        out = []
        follows = self.follows_code  # the code before the chunk's first paragraph is in the chunk before
        begin = 0
        for block in self.blocks:
            kind = block[0] if block else ""
            if kind == "code":
                follows = True
                continue
            if kind != "paragraph" or len(block) < 3:
                follows = False
                continue
            if follows:
                said = " ".join(self.text[block[1]:block[2]].split())
                at = self.flat.find(said[:80], begin)
                if at >= 0:
                    out.append((at, at + len(said)))
                    begin = at + len(said)
        return tuple(out)

    def after_code(self, position: int, text: str) -> list[tuple[int, int]]:
        """The paragraphs after a code block (start, end, as `position`) that `text`,
        found at `position` of the document, runs through."""
        return [(self.start + start, self.start + end)
                for start, end in self._through(self._after_code, position, text)]

    def intros(self, position: int, text: str) -> list[tuple[int, int, int]]:
        """The lists (start, end, intro, as `position`) that `text`, found at `position` of the
        document, runs through."""
        return [(self.start + start, self.start + end, self.start + intro)
                for start, end, intro in self._through(self.list_intros, position, text)]

    def _through(self, spans: tuple, position: int, text: str) -> list:
        """The spans (start, end, ...) in `flat` that `text`, found at `position`, runs through."""
        if not spans:
            return []
        at = position - self.start
        reach = at + len(" ".join(text.split()))
        return [span for span in spans if span[0] < reach and at < span[1]]

    def example_names(self, text: str) -> list[tuple[int, str]]:
        """(from where, as `position`; the name lowercased) for each code name of `text` that an
        example of its section made up (Chunk.examples), unless it is a subject with a page of
        its own. A sentence after the example naming `current_name` speaks of the example."""
        if not self._made_up:
            return []
        written = {m.strip().lower() for m in CODE_NAME.findall(text)}
        return [(where, name) for where, name in self._made_up if name in written]

    @cached_property
    def _made_up(self) -> tuple[tuple[int, str], ...]:
        """(where, as `position`; name) of the chunk's example names that have no page: worked
        out once for the chunk, however many of its sentences are offered to pages."""
        return tuple((self.start + len(" ".join(self.text[:offset].split())), name)
                     for name, offset in self.examples if slugify(name.strip("()")) not in self.paged)
