"""How untrusted text enters a prompt: fenced under a key of its own, look-alike tags made
harmless, its source said as a path."""

from __future__ import annotations

import re

from ..fingerprint import text_hash
from .tasks import ChunkInput

SEPARATOR = " › "
_SPACE = re.compile(r"\s+")


def fence_key(*texts: str) -> str:
    """A delimiter key for one call: a hash of the untrusted texts it fences. A text cannot
    hold the key of the fence around it (it would have to contain its own hash), and the key
    differs between calls that carry different texts."""
    return text_hash("\0".join(texts))[:8]


# Tags a document could write to look like our fences; made harmless inside fenced text.
_TAG = re.compile(r"<(/?)(chunks?|evidence|page|data)\b", re.IGNORECASE)
_FORGED_HEADER = re.compile(r"^(\s*#+[ \t]*)\[([^\]\n]{1,12})\]", re.MULTILINE)  # "### [c2] ..."


def as_data(text: str) -> str:
    """Untrusted text as it goes inside a fence: no tag that looks like ours, no citation
    marker a writer could mistake for one of the evidence refs."""
    text = _TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text).replace("[^", "[ ^")
    return _FORGED_HEADER.sub(r"\1(\2)", text) if "[" in text else text


def chunk_header(chunk: ChunkInput) -> str:
    """How a chunk is introduced to the model: `Document title › Heading › Path`.

    A part equal to the one before it is said once: a document's first heading is usually
    its title, and repeating it costs tokens in every chunk of every batch.
    """
    return source_path(chunk.document_title, *chunk.heading_path) or "(untitled)"


def chunk_body(chunk: ChunkInput) -> str:
    """A chunk's text as a MAP prompt gives it: without a first line that only repeats the
    heading its header ends with (every chunk of the sample corpus opens with its heading)."""
    text = chunk.text.strip()
    first, newline, rest = text.partition("\n")
    heading = (chunk.heading_path or [chunk.document_title])[-1]
    if newline and rest.strip() and heading and folded(first.lstrip("#").strip()) == folded(heading):
        return rest.strip()
    return text


def source_path(*parts: str) -> str:
    """`Document › Heading › Path`, a part equal to the one before it said once."""
    kept: list[str] = []
    for part in parts:
        if part and part.strip() and (not kept or part.strip().casefold() != kept[-1].strip().casefold()):
            kept.append(part)
    return SEPARATOR.join(kept)


def folded(text: str) -> str:
    """The text as texts are compared: white space folded to one space, case folded."""
    return _SPACE.sub(" ", text).strip().casefold()
