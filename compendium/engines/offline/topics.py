"""Names a topic (a community of entities) from its most important members, deterministically."""

from __future__ import annotations

import re
from collections import Counter

from ..tasks import TopicReply, TopicRequest
from .names import singular
from .words import GENERIC_HEADS

_MAX_LISTED = 5


def name_topic(request: TopicRequest) -> TopicReply:
    """Title from a head noun shared by several members ("Standby Servers") joined to the most
    central member outside that group, else from the one or two most central members.

    Central: named by most of the topic's claims (the claims that tie its members together);
    importance breaks ties. A list of three names is no title, so at most two are joined.
    """
    names = _unique(m.name.strip() for m in request.members if m.name.strip())
    if not names:
        return TopicReply(title="Untitled topic", summary="")
    central = _by_centrality(names, request.claims)
    title = _shared_head_title(central[:10]) or _join(central[:2])
    listed = names[:_MAX_LISTED]
    more = len(names) - len(listed)
    members = _join(listed) if more <= 0 else f"{', '.join(listed)} and {more} more"
    return TopicReply(title=title, summary=f"{title}: {members}.")


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
    outside = [n for n in names if n not in group]
    if outside and names.index(outside[0]) < 3:  # an important member outside the group leads
        return f"{outside[0]} and {phrase}"
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
