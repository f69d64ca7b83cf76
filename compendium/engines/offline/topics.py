"""Names a topic (a community of entities) from its most important members, deterministically."""

from __future__ import annotations

import re

from ...titles import (
    PART_HEADINGS,
    TOPIC_HEADING_SHARE,
    names_a_subject,
    title_from_members,
)
from ..tasks import TopicReply, TopicRequest
from .sentences import without_label
from .subjects import owner_name
from .whole_words import has_word
from .words import BOILERPLATE

_MAX_LISTED = 5


_PILCROW = re.compile(r"\s*[¶#]+\s*$")
_SITE_SUFFIX = re.compile(r"\s+[—|–]\s+[^—|–]*\b(?:documentation|manual|docs|guide)\b[^—|–]*$", re.IGNORECASE)
_MAX_TITLE_WORDS = 8
_HUB_CLAIMS = 4  # claims a topic needs before one member may name it by the claims alone
_HUB_SHARE = 0.75  # of its claims naming that member


def name_topic(request: TopicRequest) -> TopicReply:
    """Title by the outline's rule: the source heading most of the central members sit under,
    else the most central member. Never a pair of keywords ("X and Y").

    Central: named by most of the topic's claims (the claims that tie its members together);
    importance breaks ties.
    """
    names = _unique(m.name.strip() for m in request.members if m.name.strip())
    if not names:
        return TopicReply(title="Untitled topic", summary="")
    central, hits = _by_centrality(names, request.claims)
    # A parameter or a value ("src", "null") may be central, but it names no group of pages.
    central = [n for n in central if names_a_subject(n)] + [n for n in central if not names_a_subject(n)]
    taken = {t.lower() for t in request.taken_titles}
    claims = len(request.claims)
    if claims >= _HUB_CLAIMS and hits[central[0]] >= _HUB_SHARE * claims and central[0].lower() not in taken:
        # One member named by nearly every claim that ties the community together is what it is
        # about ("WAL" in 8 of 8), whatever heading a third of its members sit under.
        title = central[0]
    else:
        headings = [(clean_topic_heading(h), n) for h, n in request.headings]
        title = title_from_members(headings, central, len(names), lambda h: _usable_heading(h, taken),
                                   share=TOPIC_HEADING_SHARE)
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
    text = without_label(owner_name(text)).rstrip(":").strip()
    return text


def _usable_heading(text: str, taken: set[str]) -> bool:
    """A heading that names a subject: short, not boilerplate ("Notes", "See also"), not taken."""
    words = text.split()
    lower = text.lower()
    if not words or len(words) > _MAX_TITLE_WORDS or lower in taken:
        return False
    if lower in BOILERPLATE or lower in PART_HEADINGS or words[0].lower() in BOILERPLATE:
        return False
    return any(c.isalpha() for c in text)


def _by_centrality(names: list[str], claims: list[str]) -> tuple[list[str], dict[str, int]]:
    """Names ranked by how many claims mention them (word boundaries, any case), then given
    order; and each name's count."""
    lowered = [c.lower() for c in claims]

    def hits(name: str) -> int:
        word = name.lower()
        return sum(1 for c in lowered if has_word(c, word))

    counts = {n: hits(n) for n in names}
    return sorted(names, key=lambda n: (-counts[n], names.index(n))), counts


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
