"""Page titles apart: no two pages of a wiki carry one title."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .planning import Subject


def titles_apart(subjects: Sequence[Subject], overviews: Mapping[str, str] | None = None) -> None:
    """A topic named like an entity's page or like an earlier topic ("Storage Engine", the
    community around it or the document about it) is titled "… topic", or "… overview" for an
    outline node's overview (`overviews`: their subject id -> the title of the node above them);
    if that is taken too, the node above names it ("Special method names (Data model)"), and
    only then a number. Entities and concepts keep their names."""
    overviews = overviews or {}
    seen = {s.title.casefold() for s in subjects if s.kind != "topic"}
    for s in subjects:
        if s.kind != "topic":
            continue
        title = s.title
        if title.casefold() in seen:
            title = f"{s.title} {'overview' if s.id in overviews else 'topic'}"
        parent = overviews.get(s.id, "")
        if title.casefold() in seen and parent and parent.casefold() != s.title.casefold():
            title = f"{s.title} ({parent})"
        base, n = title, 1
        while title.casefold() in seen:
            n += 1
            title = f"{base} {n}"
        s.title = title
        seen.add(title.casefold())


def member_named_like(title: str, members: Sequence[str], pages: Mapping[str, str]) -> str:
    """The subject a community is named after, when it has a page of its own (`pages`:
    casefolded title -> subject id of every entity and concept page): that page is the topic's
    page, not a second page of the same name on the same subject ("WAL topic" beside "WAL").
    A member first; else any subject so titled (a community named after the document its
    members are defined in, "git-worktree", is that document's subject). Empty when none."""
    return pages.get(title.casefold(), "")


def page_titles(subjects: Sequence[Subject]) -> dict[str, str]:
    """Casefolded title -> subject id of every entity and concept page among `subjects` (the
    first of a title)."""
    found: dict[str, str] = {}
    for s in subjects:
        if s.kind != "topic":
            found.setdefault(s.title.casefold(), s.id)
    return found
