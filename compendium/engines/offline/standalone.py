"""Whether a sentence lifted from its passage still reads alone.

A page is assembled from sentences of many passages; one that points at what its passage said
before it ("The price of this flexibility is ...", "You can use `--no-keep-index` to override
this.", "The setuptools docs referred to in the previous step ...") reads on a page only after
that sentence. These are signs of English prose, not of any one manual: a word that points
back, a place in the text ("above", "the following"), or a sentence with no subject of its own
whose subject was its entry's term ("Returns the ...", "Defaults to ...").
"""

from __future__ import annotations

import re
from functools import lru_cache

# "these files", "those options": a demonstrative of a plural always points somewhere.
_PLURAL_DEMONSTRATIVE = re.compile(r"\b(?:these|those)\b", re.IGNORECASE)
# "this" or "that" standing for a thing said before ("to override this.", "do just that.").
_PRONOUN_AT_STOP = re.compile(r"\b(?:this|that)(?:\s+(?:off|on|out|up|down|away|again))?\s*[.,;!?)]", re.IGNORECASE)
# A place in the text before the sentence, or a narrative step, that it refers to.
_PLACE_BEFORE = re.compile(
    r"\b(?:(?:shown|listed|described|mentioned|given|defined|seen)\s+(?:above|earlier)"
    r"|(?:see|from|in)\s+above|the\s+above|above\s+(?:example|code|command|list|table|snippet)"
    r"|(?:the|this|that)\s+(?:previous|preceding|last|earlier)\s+(?:step|section|example|chapter|command|case|one)\b"
    r"|(?:the|this|that)\s+(?:previous|preceding)\s+(?:page|paragraph|sentence|list|table|tutorial|part)"
    r"|earlier\s+(?:form|example|step|section)|our\s+(?:earlier|previous|first)"
    r"|aforementioned|(?:this|that|the\s+same)\s+example|in\s+(?:this|that)\s+(?:last\s+)?case"
    r"|the\s+other\s+way\s+round|as\s+before)\b",
    re.IGNORECASE,
)
# ... or after it: a list, example or code a page of lifted sentences does not carry. An opening
# may promise it ("The functions of this module share the following properties:"); a sentence
# in a page's body may not.
_PLACE_AFTER = re.compile(r"\b(?:as\s+follows|the\s+following|(?:shown|listed|described|given)\s+below)\b",
                          re.IGNORECASE)
# Openings that answer, continue or conclude what came before.
_CONTINUES = re.compile(
    r"^(?:Well|Now|Again|Indeed|Rather|Of\s+course|That\s+said|Even\s+so|In\s+(?:that|this|those|these)\b"
    r"|(?:At|For|By|With|From|After|Before|Unlike)\s+(?:that|this|these|those)\b)",
    re.IGNORECASE,
)
# A sentence whose subject was its entry's term: a verb opens it ("Returns the object ...",
# "Defaults to the configured upstream ...", "By default, returns False for ..."); a field's
# label ("Returns: the value") is not one.
_SUBJECTLESS = re.compile(
    r"^(?:By\s+default,\s*)?(?i:returns|accepts|takes|defaults\s+to|creates|specifies|contains|represents|"
    r"determines|controls|indicates|allows|enables|disables|causes|gets|sets|holds|stores|expects|requires)\b(?!:)"
)
# An entry's label, in code marks or plain ("`--keep`: ...", "receive-pack: This serves ..."): a
# name of a few tokens and a colon, no sentence before it.
_ENTRY = re.compile(r"^(?:`[^`\n]{1,120}`|[\w$@<\[][\w.$@<>\[\]|/=-]*(?:\s[\w.$@<>\[\]|/=-]+){0,4}):\s")


def entry_label(text: str) -> int:
    """Where an entry's label ends ("`--keep`: ..." -> after ": "), 0 for a sentence without one."""
    found = _ENTRY.match(text.strip())
    return found.end() if found else 0



@lru_cache(maxsize=65536)
def points_back(text: str, subjectless: bool = True) -> bool:
    """Does the sentence lean on what came before it in its passage, beyond its opening words
    (which the writer's _leans_back judges)? An entry's own "`term`: ..." sentence names what
    it is about, so its "this" is that term. `subjectless`: a sentence whose subject was its
    entry's term counts, and one promising a list or example to follow (not where it is read
    under that term or opens what it promises, as a page's lead does)."""
    body = text.strip()
    label = entry_label(body)
    after = subjectless and _PLACE_AFTER.search(body) is not None
    if label:
        return after or bool(_PLACE_BEFORE.search(body[label:]))
    return bool(after or _PLURAL_DEMONSTRATIVE.search(body) or _PRONOUN_AT_STOP.search(body)
                or _PLACE_BEFORE.search(body) or _CONTINUES.match(body)
                or (subjectless and _SUBJECTLESS.match(body) is not None))
