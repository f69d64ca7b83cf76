"""Pages whose subject moved to another slug: the page it had is updated under the new slug,
not written anew (what a page says is planned from the KB alone; this only spares the cost)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..storage.plans import PagePlan, Subject
from ..storage.records import Page

SAME_MEMBERS = 0.5  # a topic page whose members mostly stayed is the same topic under a new name
SAME_CLAIMS = 0.5  # share of a plan's claims its old page was written from, below which writing it anew costs less


def moved_from(
    wanted: Sequence[tuple[PagePlan, Subject]],
    pages: Iterable[Page],
    kept: set[str],
    previous: Mapping[str, PagePlan],
) -> dict[str, str]:
    """New slug -> the active page its subject had before, for the plans in `wanted` (those
    with no page of their kind at their slug). A page qualifies when no plan keeps its slug
    (`kept`) and it is of the same kind and: about the same subject (a title changed); or, for
    an entity, titled like one of the subject's names (an acronym became the name, a new id);
    or, for a topic, holding mostly the same members by `previous` (subject id -> last plan).
    Each page moves once, the first asker in the plan's order taking it; another subject's page
    only when most of the plan's claims are those it was written from (an update sends the page
    with its evidence, so one that is mostly new costs more than writing it anew)."""
    left = {p.slug: p for p in pages if p.status == "active" and p.slug not in kept}
    if not left:
        return {}
    by_subject = {(p.subject_id, p.kind): p.slug for p in left.values()}
    by_title = {(p.title.casefold(), p.kind): p.slug for p in left.values()}
    before = {plan.slug: plan for plan in previous.values() if plan.slug in left}
    members = {slug: set(plan.entity_ids) for slug, plan in before.items() if plan.kind == "topic"}
    taken: set[str] = set()
    out: dict[str, str] = {}
    for plan, subject in wanted:
        found = by_subject.get((subject.id, plan.kind))
        same = found is not None  # its own page: merged into as if its slug had not moved
        if found is None and plan.kind != "topic":
            found = next((by_title[key] for name in [subject.title, *subject.aliases]
                          if (key := (name.casefold(), plan.kind)) in by_title and by_title[key] not in taken), None)
        if found is None and plan.kind == "topic":
            now = set(plan.entity_ids)
            scored = sorted((-len(now & m) / len(now | m), slug) for slug, m in members.items()
                            if slug not in taken and now | m)
            if scored and -scored[0][0] >= SAME_MEMBERS:
                found = scored[0][1]
        if found is not None and found not in taken and (same or _mostly_said(plan, before.get(found))):
            taken.add(found)
            out[plan.slug] = found
    return out


def _mostly_said(plan: PagePlan, before: PagePlan | None) -> bool:
    if before is None:  # no plan says what it was written from
        return True
    now = set(plan.claim_ids)
    return not now or len(now & set(before.claim_ids)) / len(now) >= SAME_CLAIMS
