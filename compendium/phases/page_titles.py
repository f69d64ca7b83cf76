"""Page titles apart: no two pages of a wiki carry one title."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .planning import Subject


def titles_apart(subjects: Sequence[Subject], overviews: Collection[str] = ()) -> None:
    """A topic named like an entity's page or like an earlier topic ("Storage Engine", the
    community around it or the document about it) is titled "… topic", or "… overview" for an
    outline node's overview (`overviews`: their subject ids), numbered only if that is taken too.
    Entities and concepts keep their names."""
    seen = {s.title.casefold() for s in subjects if s.kind != "topic"}
    for s in subjects:
        if s.kind != "topic":
            continue
        title, n = s.title, 1
        if title.casefold() in seen:
            title = f"{s.title} {'overview' if s.id in overviews else 'topic'}"
        base = title
        while title.casefold() in seen:
            n += 1
            title = f"{base} {n}"
        s.title = title
        seen.add(title.casefold())
