"""Names a topic (a community of entities) from its most important members, deterministically."""

from __future__ import annotations

import re
from collections import Counter

from ..tasks import TopicReply, TopicRequest
from .names import singular
from .sentences import clean_heading
from .words import BOILERPLATE, GENERIC_HEADS

_MAX_LISTED = 5


_PILCROW = re.compile(r"\s*[¶#]+\s*$")
_SITE_SUFFIX = re.compile(r"\s+[—|–]\s+[^—|–]*\b(?:documentation|manual|docs|guide)\b[^—|–]*$", re.IGNORECASE)
_LABEL_PREFIX = re.compile(r"^(?:Chapter|Appendix|Part|Section)\s+[\dIVXA-Z]+(?:\.\d+)*\.?\s+")
_MAX_TITLE_WORDS = 8
# Headings that name a part of any document, not a subject.
_GENERIC_HEADINGS = frozenset(
    """synopsis contents functions classes constants exceptions methods attributes objects
    notes examples outputs inputs arguments fields columns commands
    """.split()
) | {"table of contents", "module contents", "see also", "further reading", "what's new"}


def name_topic(request: TopicRequest) -> TopicReply:
    """Title from what the documents call the subject: the source heading most of the central
    members sit under; else a head noun several members share ("Standby Servers"); else the
    most central member. Never a pair of keywords ("X and Y").

    Central: named by most of the topic's claims (the claims that tie its members together);
    importance breaks ties.
    """
    names = _unique(m.name.strip() for m in request.members if m.name.strip())
    if not names:
        return TopicReply(title="Untitled topic", summary="")
    central = _by_centrality(names, request.claims)
    taken = {t.lower() for t in request.taken_titles}
    title = (_heading_title(request.headings, len(names), taken) or _shared_head_title(central[:10])
             or central[0])
    if title.lower() in taken:  # another topic has this name: say which part of it this one is
        title = f"{title}: {next((n for n in central if n.lower() != title.lower()), central[0])}"
    listed = central[:_MAX_LISTED]
    more = len(names) - len(listed)
    members = _join(listed) if more <= 0 else f"{', '.join(listed)} and {more} more"
    return TopicReply(title=title, summary=f"{title}: {members}.")


def clean_topic_heading(heading: str) -> str:
    """A source heading as a title: no section number, pilcrow, site name or chapter label."""
    text = _PILCROW.sub("", " ".join(heading.split()))
    text = _SITE_SUFFIX.sub("", text)
    text = _LABEL_PREFIX.sub("", clean_heading(text)).strip().rstrip(":").strip()
    return text


def _heading_title(headings: list[tuple[str, int]], members: int, taken: set[str]) -> str:
    """The heading covering the most central members (at least two, and a third of them)."""
    needed = max(2, -(-members // 3))
    for heading, covered in headings:
        if covered < needed:
            break
        text = clean_topic_heading(heading)
        words = text.split()
        lower = text.lower()
        if not words or len(words) > _MAX_TITLE_WORDS or lower in taken:
            continue
        if lower in BOILERPLATE or lower in _GENERIC_HEADINGS or words[0].lower() in BOILERPLATE:
            continue
        if not any(c.isalpha() for c in text):
            continue
        return text
    return ""


def _shared_head_title(names: list[str]) -> str:
    heads: Counter[str] = Counter()
    for name in names:
        words = name.split()
        if len(words) > 1 and words[-1].isalpha():
            heads[singular(words[-1].lower())] += 1
    if not heads:
        return ""
    head, count = heads.most_common(1)[0]
    if count < 2 or head in GENERIC_HEADS:
        return ""
    group = [n for n in names if singular(n.split()[-1].lower()) == head and len(n.split()) > 1]
    phrase = _plural(_common_suffix(group))
    return phrase


def _common_suffix(group: list[str]) -> str:
    split = [[singular(w.lower()) for w in n.split()] for n in group]
    shortest = min(len(s) for s in split)
    size = 1
    while size < shortest and len({tuple(s[-size - 1 :]) for s in split}) == 1:
        size += 1
    words = group[0].split()[-size:]
    return " ".join(w if not w.islower() else w.capitalize() for w in words)


def _plural(phrase: str) -> str:
    words = phrase.split()
    last = singular(words[-1])
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return " ".join([*words[:-1], last])


def _by_centrality(names: list[str], claims: list[str]) -> list[str]:
    """Names ranked by how many claims mention them (word boundaries, any case), then given order."""
    lowered = [c.lower() for c in claims]

    def hits(name: str) -> int:
        pattern = re.compile(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])")
        return sum(1 for c in lowered if pattern.search(c))

    counts = {n: hits(n) for n in names}
    return sorted(names, key=lambda n: (-counts[n], names.index(n)))


def _join(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _unique(names) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out
