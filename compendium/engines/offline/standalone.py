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
# ("those PO files which are ...", "those who ...": the sentence says which ones itself)
_PLURAL_DEMONSTRATIVE = re.compile(r"\b(?:these|those)\b(?!(?:\s+[\w`'-]+){0,3}?\s+(?:which|who|whom|whose|where)\b)",
                                   re.IGNORECASE)
# "this" or "that" standing for a thing said before ("to override this.", "do just that.").
_INNER_ASIDE = re.compile(r"(?<=[\w,])\s*\([^()]*\)")
_PRONOUN_AT_STOP = re.compile(r"\b(?:this|that)(?:\s+(?:off|on|out|up|down|away|again))?\s*[.,;!?)]", re.IGNORECASE)
# A place in the text before the sentence, or a narrative step, that it refers to.
_PLACE_BEFORE = re.compile(  # (each alternative opens on a letter or a comma: the lookahead skips the rest fast)
    r"\b(?=[a-z,])(?:(?:shown|listed|described|mentioned|given|defined|seen)\s+(?:above|earlier)"
    r"|(?:see|from|in)\s+above|the\s+above|above\s+(?:example|code|command|list|table|snippet)"
    r"|(?:the|this|that)\s+(?:previous|preceding|last|earlier)\s+(?:step|section|example|chapter|command|case|one)\b"
    r"|(?:the|this|that)\s+(?:previous|preceding)\s+(?:page|paragraph|sentence|list|table|tutorial|part)"
    r"|earlier\s+(?:form|example|step|section)|our\s+(?:earlier|previous|first)"
    r"|aforementioned|(?:this|that|the\s+same)\s+example|in\s+(?:this|that)\s+(?:last\s+)?case"
    r"|the\s+other\s+way\s+round|as\s+before|as\s+above"
    r"|(?:listed|shown|highlighted|described|mentioned|given|noted|explained|discussed|stated|outlined|covered|introduced)\s+above"
    r"|in\s+this\s+regard"
    # "If none is found, ...", "If so, ...", "If not, ...": the search or the question told before
    r"|\bnone\s+(?:is|are|was|were|exists?|matches|match|applies|remains?)\b|^If\s+(?:so|not)\b"
    r"|this\s+(?:behaviou?r|flexibility|hope|approach|trick|technique|setup|situation|scenario)"
    # a narrative's step: "If you now build ...", "should now work", "will now be embedded"
    r"|(?:you|we)(?:\s+are|['’]re)?\s+now|(?:will|should|would)\s+now|^Now\s+the"
    # "... will then parse", "Sphinx then searches": the step after one told before
    r"|(?:will|would|should|can|must)\s+then|^[A-Z][\w.-]*\s+then\s+[a-z]+s"
    # "doing this often", "use that ID", "In that file": a thing named before
    r"|this\s+(?:often|again|regularly|yourself)|(?:^in|\buse|\bparse)\s+that\s+(?!is|are|was|the|a|an)[A-Za-z]+"
    r"|,\s+on\s+the\s+other\s+hand)\b",
    re.IGNORECASE,
)
# ... or after it: a list, example or code a page of lifted sentences does not carry. An opening
# may promise it ("The functions of this module share the following properties:"); a sentence
# in a page's body may not.
_PLACE_AFTER = re.compile(r"\b(?:as\s+follows|the\s+following|(?:shown|listed|described|given|highlighted)\s+below"
                          r"|here\s+(?:are|is))\b", re.IGNORECASE)
# What a page of lifted sentences never carries, whatever stands before: the example a sentence
# talks about ("In this example ...", "the example above"), and the voice of one author
# ("as I know of no way", "prompted for my email address").
_EXAMPLE = re.compile(r"\b(?:(?:this|these|the\s+above|the\s+following|the\s+previous)\s+examples?"
                      r"|examples?\s+(?:above|below|here)|in\s+the\s+example|our\s+examples?"
                      # a listing's lines ("The call to `setlocale` on line 7 ...")
                      r"|(?:on|in|at)\s+lines?\s+\d+)\b", re.IGNORECASE)
# "I" and "my" of the author; not a question's generic "I" ("How do I ...?"), not code (`I`)
_FIRST_PERSON = re.compile(r"(?<![\w/`])(?<!do\s)(?<!can\s)(?<!should\s)(?<!may\s)(?<!could\s)(?<!would\s)"
                           r"I(?![\w/'’`-])|\b(?:my|me|mine)\b")
# Openings that answer, continue or conclude what came before.
_CONTINUES = re.compile(
    r"^(?:(?:Well|Now|Again|Indeed|Rather|Alternatively)\b|Until\s+now|So\s+far|Up\s+to\s+now|Starting\s+from\s+here"
    r"|Of\s+course|That\s+said|Even\s+so|In\s+(?:that|this|those|these)\b"
    r"|(?:At|For|By|With|From|After|Before|Unlike)\s+(?:that|this|these|those)\b"
    # "For other repository hosts, ...", "In other words, ...": set against what was said before
    r"|(?:For|With|On|In|To)\s+(?:all\s+)?other\s+\w+|In\s+other\s+words\b"
    # "For example, ...": an example of what the sentence before said
    r"|For\s+(?:example|instance)\b|E\.\s?g\.)",
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
# "This document provides ...", "This tutorial walks you through ...": a text saying what it
# is itself, the authors' description of a document, not a pointer to a sentence before it
# (not its history: "This document was generated by ..." is a generator's footer).
ABOUT_ITSELF = re.compile(
    r"^(?:This|The\s+present)\s+(?:document|page|guide|tutorial|chapter|manual|article|howto|how-to|"
    r"appendix|book|reference|topic\s+guide)\b(?!\s+(?:was|were|has\s+been|had)\b)"
    # nor one whose object is the sentence before ("This chapter will answer it.")
    r"(?!(?:\s+[\w'’-]+){0,4}\s+(?:it|them|this|these|those)[.!?]?$)"
    # "Here you'll find short answers to ...": a document's own word on what it holds
    r"|^Here\s+you(?:['’]ll|\s+will|\s+can)\s+find\b"
)
# "This class ...", "These flags ...": a sentence about the thing its passage is about (an
# entry's term, a document's subject), not one leaning on the sentence before.
OWN_KIND = re.compile(
    r"^(?:This|These)\s+(?:class|classes|method|function|module|package|option|options|flag|flags|setting|"
    r"settings|command|field|attribute|property|event|hook|directive|role|builder|extension|variable|"
    r"interface|type|macro|program|service|view|widget|exception|error|decorator|filter|tag|value)\b(?!\s+(?:is|was)\s+(?:also|why))"
)
_ENTRY = re.compile(r"^(?:`[^`\n]{1,120}`|[\w$@<\[][\w.$@<>\[\]|/=-]*(?:\s[\w.$@<>\[\]|/=-]+){0,4}):\s")


@lru_cache(maxsize=65536)
def entry_label(text: str) -> int:
    """Where an entry's label ends ("`--keep`: ..." -> after ": "), 0 for a sentence without one.
    Cached, as never_alone: a page's writer asks both of a sentence several times."""
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
    # "(for that, see ...)" after a word of the sentence points into the sentence itself
    unbracketed = _INNER_ASIDE.sub("", body)
    return bool(after or _PLURAL_DEMONSTRATIVE.search(body) or _PRONOUN_AT_STOP.search(unbracketed)
                or _PLACE_BEFORE.search(body) or _same_way(body) or _CONTINUES.match(body)
                or (subjectless and _SUBJECTLESS.match(body) is not None))


# "You can install `setuptools` the same way.": the way told before; not when the sentence names
# what it compares with ("similar to the `gettext` function ... in the same way").
_SAME_WAY = re.compile(r"\bthe\s+same\s+way\b", re.IGNORECASE)
_COMPARED = re.compile(r"\b(?:similar|like|as\s+(?:the|a|an|in|for|with)|same\s+\w+\s+as)\b", re.IGNORECASE)


_SEE_ASIDE = re.compile(r"\(see\s[^()]*\)", re.IGNORECASE)


# A sentence that ends by opening what follows it ("... add the following to your config:").
_OPENS_WHAT_FOLLOWS = re.compile(r":\s*$")


@lru_cache(maxsize=65536)
def points_ahead(text: str) -> bool:
    """Does the sentence promise what comes after it in its passage ("add the following CSS.",
    "might be set as follows.", "... are highlighted below.", a closing colon)? On a page it
    reads only where that is shown right after it."""
    body = text.strip()
    return bool(_PLACE_AFTER.search(body[entry_label(body):]) or _OPENS_WHAT_FOLLOWS.search(body))


def _same_way(text: str) -> bool:
    return bool(_SAME_WAY.search(text)) and not _COMPARED.search(text)


# A sentence that only sends the reader elsewhere ("See Logging for details.", "For more details,
# see the Installation Guide.", "More information can be found in ..."): on a page of lifted
# sentences it points at nothing.
_ONLY_POINTS = re.compile(
    r"^(?:(?:For|To\s+learn)\s[^,.;:]{0,80},\s*)?(?:please\s+)?(?:see|refer\s+to|consult)\s"
    r"|^(?:More|Further|Additional)\s+(?:information|details)\b[^.]*\b(?:can\s+be\s+found|is\s+available)\b",
    re.IGNORECASE,
)


# A tutorial's narration to the reader following it ("you should now see ...", "Notice that ...",
# "Now try editing ...", "Take a moment to review ...", "Let's look at ...", "As you can see,
# ...", "In this tutorial we will ...", "For the rest of this tutorial ..."): a step of a
# walk-through the page does not retrace. ("... but you will see a warning." is what a program
# does, and "you should see git-restore(1)" a reference: they stay.)
_NARRATION = re.compile(
    r"\byou(?:'ll|’ll|\s+will|\s+should)\s+now\s+see\b|^Notice\s+(?:that|how)\b"
    r"|^(?:Now\s+|Next,?\s+)?[Tt]ry\s+(?:it|the|editing|running|adding|changing)\b|^Take\s+a\s+(?:moment|look)\b"
    r"|\byou\s+just\s+(?:built|created|made|wrote|added|ran)\b|^Go\s+ahead\b"
    r"|\blet['’]s\b(?!\s+(?:suppose|assume))|^As\s+you\s+(?:can\s+|may\s+have\s+|might\s+have\s+)?(?:see|saw|noticed?)\b"
    r"|^In\s+this\s+(?:section|step|lesson|tutorial),?\s+(?:you|we)\b"
    r"|^(?:In|For)\s+the\s+(?:next|following|previous|preceding)\s+(?:sections?|chapters?|parts?|steps?|lessons?|tutorials?)\b"
    r"|\b(?:remainder|rest)\s+of\s+(?:the|this)\s+(?:tutorial|guide|lesson)\b"
    r"|\b(?:move\s+on|proceed|go\s+on)\s+to\s+the\s+next\s+(?:step|section|part|lesson)\b",
    re.IGNORECASE,
)


def only_points(text: str) -> bool:
    """Whether the sentence only sends the reader elsewhere ("See Logging for details.")."""
    return bool(_ONLY_POINTS.match(text[entry_label(text):].lstrip()))


@lru_cache(maxsize=65536)
def never_alone(text: str) -> bool:
    """A sentence no page of lifted sentences can carry: it talks about an example the page does
    not show, speaks as one author, narrates a walk-through, or only points elsewhere."""
    body = _SEE_ASIDE.sub("", text[entry_label(text):])  # "(see Examples below ...)": a cross-reference
    return bool(_EXAMPLE.search(body) or _FIRST_PERSON.search(body) or only_points(text)
                or (_NARRATION.search(body) and not entry_label(text)))  # an entry's "Try to ..." is what it does


# A sentence that walks through the code just shown: the reader's steps in it ("We call the
# form's `is_valid()` method", "This time the form ...") or a part of it as the subject ("The
# constructor creates ...", "The final `return` handles ...", "The second line ...", "This
# command lets you check ..."). Advice or a need in the first person plural ("We recommend
# ...", "We might require ...") is not a step.
_WALKS_THROUGH_CODE = re.compile(
    r"^(?:(?:(?:Here|Then|Next|Now|First|Finally),?\s+)?we\s+(?!recommend|suggest|advise|encourage|strongly|also\s+recommend"
    r"|might|could|can|may|must|need|would|should|will|want|have\s+to)[a-z’']+\b|This\s+time\b|Here,\s"
    r"|The\s+(?:constructor|snippet|listing)\b|This\s+(?:command|line|call|snippet|listing|code|invocation)\s+(?!is\s+(?:also|why))"
    r"|The\s+(?:first|second|third|fourth|next|last|final)\s+(?:`|(?:line|statement|call|form|command|block|loop"
    r"|return|argument|parameter)s?\b))",
    re.IGNORECASE,
)


def narrates_code(sentence: str) -> bool:
    """Whether a sentence, found in the paragraphs after a code block, walks through that code."""
    return _WALKS_THROUGH_CODE.match(sentence) is not None
