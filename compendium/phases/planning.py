"""Plan decisions: which pages to create, update, keep or delete, and what each one covers."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..engines.offline.words import VERBS
from ..fingerprint import fingerprint, text_hash
from ..storage.plans import PagePlan, Subject, sorted_unique
from ..storage.records import Claim, Entity, Page, Relation
from ..storage.slugs import unique_slug
from ..templates.schema import PlanSettings
from .claim_index import ClaimIndex
from .claim_index_keys import defining_set, entity_set

CREATE, UPDATE, KEEP, DELETE = "CREATE", "UPDATE", "KEEP", "DELETE"
MAX_LINKS = 40
MAX_ENTITY_CLAIMS = 150
MAX_DEFINING_CLAIMS = 8  # an entity's authored definitions, offered before its other claims
MAX_TOPIC_CLAIMS = 60
# Page statuses a plan keeps track of: "withheld" pages were written without a cited fact and
# are not shown, but their evidence fingerprint spares writing them again.
SHOWN_OR_WITHHELD = ("active", "withheld")
_PLAIN_WORD = re.compile(r"[a-z]+")


def lowercase_titles(entities: Iterable[Entity], common: Collection[str], index: ClaimIndex) -> dict[str, str]:
    """Common-word subjects whose own claims write them in lowercase ("Iterator" in a heading,
    "an iterator" in the prose): id -> the lowercase spelling, the term's title. The other
    common-word subjects get no page."""
    return {e.id: e.name.strip().lower() for e in entities if e.id in common and index.written_lowercase(e.id)}


def entity_subjects(
    entities: Iterable[Entity],
    min_support: int,
    max_pages: int,
    facts: dict[str, int] | None = None,
    min_facts: int = 0,
    common: Collection[str] | None = None,
    titles: dict[str, str] | None = None,
) -> list[Subject]:
    """Entities and concepts seen in at least `min_support` chunks and named by at least
    `min_facts` claims (`facts`: entity id -> claims naming it), most important first.

    A page is written from its subject's own facts: a subject that no claim is about would
    get a page of links only. `common`: ids of subjects that are common words, not names
    (see common_word_subjects); `titles`: id -> title for those written in lowercase too,
    which keep their page under that title.
    """
    counts = facts or {}
    chosen = [
        e for e in entities
        if _earns_page(e, counts.get(e.id, 0), min_support, min_facts)
        and (e.id not in (common or ()) or e.id in (titles or {}))
    ]
    chosen.sort(key=lambda e: (-e.importance, -len(e.chunk_ids), e.id))
    return [
        Subject(
            id=e.id,
            title=(titles or {}).get(e.id, e.name),
            kind="concept" if e.category == "concept" else "entity",
            type=e.type,
            description=e.description,
            aliases=list(e.aliases),
            entity_ids=[e.id],
            chunk_ids=sorted_unique(e.chunk_ids),
            importance=e.importance,
        )
        for e in chosen[:max_pages]
    ]


def _earns_page(entity: Entity, facts: int, min_support: int, min_facts: int) -> bool:
    """Whether a subject gets a page: seen in `min_support` chunks and named by `min_facts` claims.

    The offline engine describes a subject only where the authors define it (a definition list's
    term, a glossary entry, a reference page's purpose line, a sentence defining it), and names
    in a claim only what the claim is about. So there a defined subject earns its page with one
    fact of its own, and one that is never defined must be what statements of two documents are
    about: a name met in one document only is a link target, not a page."""
    if entity.engine == "offline":
        if entity.description.strip():
            return facts >= 1
        name = entity.name.strip()
        if _PLAIN_WORD.fullmatch(name) or name.lower() in VERBS:
            # a lone common noun no one defines ("value", "user") is a word, not a name; so is a
            # verb that opens instructions ("Start the commit with ...", "Use ...")
            return False
        return (_distinct_at_least(entity.document_ids, 2) and _distinct_at_least(entity.chunk_ids, min_support)
                and facts >= min_facts)
    return _distinct_at_least(entity.chunk_ids, min_support) and (min_facts <= 0 or facts >= min_facts)


def _distinct_at_least(ids: Sequence[str], k: int) -> bool:
    """len(set(ids)) >= k, reading only as far as it takes (an entity's chunks run to 100k)."""
    if len(ids) < k:
        return False
    seen: set[str] = set()
    for i in ids:
        seen.add(i)
        if len(seen) >= k:
            return True
    return k <= 0


def common_word_subjects(index: ClaimIndex) -> set[str]:
    """Subjects named by one capitalised plain word ("Lock", "Support", "Finds") that none of
    their own claims capitalises inside a sentence: a word capitalised only where a sentence,
    heading or table cell begins is a common word, not a name. Read across every claim of the
    corpus that names the subject, not one chunk (counted as claims come and go: claim_index)."""
    return index.common_words()


def match_level(score: float, settings: PlanSettings) -> str:
    """'update' at or above the threshold, 'maybe' inside the band, else 'create'."""
    low, _high = settings.maybe_band
    if score >= settings.update_threshold:
        return "update"
    if score >= low:
        return "maybe"
    return "create"


def pick_knn_matches(
    hits: Sequence[tuple[str, str, float]], settings: PlanSettings
) -> tuple[dict[str, str], list[tuple[str, str, float]]]:
    """From (subject id, page slug, score) hits choose sure updates and questions to judge.

    Each page goes to at most one subject, the closest, so two subjects never share a page.
    """
    updates: dict[str, str] = {}
    maybes: list[tuple[str, str, float]] = []
    taken: set[str] = set()
    for sid, slug, score in sorted(hits, key=lambda h: (-h[2], h[0])):
        if slug in taken or sid in updates:
            continue
        level = match_level(score, settings)
        if level == "create":
            continue
        taken.add(slug)
        if level == "update":
            updates[sid] = slug
        else:
            maybes.append((sid, slug, score))
    return updates, maybes


def evidence_fingerprint(
    refine_fp: str,
    model: str,
    subject: Subject,
    claims: Sequence[Claim],
    relation_texts: dict[str, str],
    links: Sequence[tuple[str, str]],
    furniture: Sequence[str] = (),
) -> str:
    """Changes exactly when what the page would say changes."""
    return fingerprint(
        refine_fp,
        model,
        subject.title,
        subject.kind,
        sorted(subject.aliases),
        subject.description,
        sorted((c.id, c.text) for c in claims),
        sorted(relation_texts.items()),
        sorted(subject.chunk_ids),
        sorted(links),
        *([sorted(furniture)] if furniture else []),
    )


def evidence_inputs(
    refine_fp: str,
    model: str,
    subject: Subject,
    claim_ids: Sequence[str],
    relation_texts: dict[str, str],
    links: Sequence[tuple[str, str]],
    furniture: Sequence[str] = (),
) -> str:
    """What evidence_fingerprint reads, with each claim's id for the claim (an id is made from
    its chunk and text): equal inputs give the same fingerprint without reading a claim."""
    # The chunks go in as one digest: a subject's chunks run to 100k ids, encoded for every page.
    chunks = text_hash("\x1f".join(sorted(subject.chunk_ids)))
    return fingerprint(
        refine_fp, model, subject.title, subject.kind, sorted(subject.aliases), subject.description,
        sorted(claim_ids), sorted(relation_texts.items()), chunks, sorted(links),
        *([sorted(furniture)] if furniture else []),
    )


def relation_text(rel: Relation, names: dict[str, str]) -> str:
    src, dst = names.get(rel.source, rel.source), names.get(rel.target, rel.target)
    text = f"{src} {rel.type.replace('_', ' ')} {dst}"
    return f"{text}: {rel.description}" if rel.description else text


@dataclass
class KnowledgeView:
    """The parts of the canonical KB a plan reads, indexed for lookups; `claims` holds the claims
    read so far (all of them only when REDUCE handed them all), the rest are in the store."""

    names: dict[str, str]  # entity id -> name
    claims: dict[str, Claim]
    relations: dict[str, Relation]
    relations_by_entity: dict[str, list[str]]

    @classmethod
    def build(cls, entities: Iterable[Entity], relations: Iterable[Relation], claims: Iterable[Claim] = ()) -> KnowledgeView:
        by_rel: dict[str, list[str]] = defaultdict(list)
        rel_map: dict[str, Relation] = {}
        for r in relations:
            rel_map[r.id] = r
            by_rel[r.source].append(r.id)
            by_rel[r.target].append(r.id)
        return cls({e.id: e.name for e in entities}, {c.id: c for c in claims}, rel_map, by_rel)


def subject_claims(subject: Subject, index: ClaimIndex) -> list[str]:
    """The claims a subject's page is written from: an entity's first claims by id (the head
    parts of its set in memory: see subject_claim_parts); a topic's, those about most of its
    members, ties by id, sorted (its group counted for these members: see claim_index_store.regroup)."""
    if subject.kind == "topic":
        ranked = index.ranking(subject.id, MAX_TOPIC_CLAIMS)
        if ranked is None or index.members(subject.id) != sorted(set(subject.entity_ids)):
            raise ValueError(f"topic {subject.id!r} is not counted for its members: regroup it first")
        return sorted(ranked)
    defining = index.head(defining_set(subject.id), MAX_DEFINING_CLAIMS)
    return list(dict.fromkeys([*defining, *index.head(entity_set(subject.id), MAX_ENTITY_CLAIMS)]))


def subject_claim_parts(subject: Subject, index: ClaimIndex) -> list[str]:
    if subject.kind == "topic":
        return []
    return [*index.head_parts(defining_set(subject.id), MAX_DEFINING_CLAIMS),
            *index.head_parts(entity_set(subject.id), MAX_ENTITY_CLAIMS)]


@dataclass
class _Draft:
    plan: PagePlan
    subject: Subject
    relation_texts: dict[str, str]
    link_pairs: list[tuple[str, str]]


def draft_plan(
    subjects: Sequence[Subject],
    pages: Sequence[Page],
    matched: dict[str, str],
    kb: KnowledgeView,
    topic_of: dict[str, list[str]],
    claim_ids: Mapping[str, list[str]],
    *,
    refine_fp: str,
    model: str,
    furniture: Mapping[str, Sequence[str]] | None = None,
) -> list[_Draft]:
    """Every subject's page (kept slug if matched, else a new unique one) with its claims,
    relations, links and evidence inputs; no fingerprint or action yet (see finish_plan).

    `matched` maps subject id -> existing page slug; `topic_of` maps entity id -> the subjects whose
    pages are its topics' (a topic's id, or the member a topic is named like);
    `claim_ids` subject id -> its claims (see subject_claims); `furniture` chunk id -> the
    sentences (text keys) written in so many documents that its passages leave them out
    (see claim_index.REPEATED_IN).
    """
    taken = {p.slug for p in pages}
    slug_of: dict[str, str] = {}
    for s in subjects:
        if s.id in matched:
            slug_of[s.id] = matched[s.id]
    for s in subjects:
        if s.id not in slug_of:
            slug_of[s.id] = unique_slug(s.title, s.type or s.kind, taken, key=s.id)
    titles = {s.id: s.title for s in subjects}
    said: dict[str, str] = {}  # relation id -> its sentence: a relation is on both its ends' pages and topics'

    drafts: list[_Draft] = []
    for s in subjects:
        slug = slug_of[s.id]
        if s.kind == "topic":
            members = set(s.entity_ids)
            rel_ids = sorted(
                {rid for m in members for rid in kb.relations_by_entity.get(m, ())
                 if kb.relations[rid].source in members and kb.relations[rid].target in members}
            )
            link_ids = sorted((m for m in members if m in slug_of and m != s.id),
                              key=lambda m: (-len(kb.relations_by_entity.get(m, ())), m))
        else:
            rel_ids = sorted(kb.relations_by_entity.get(s.id, ()))
            strength: dict[str, int] = defaultdict(int)
            for rid in rel_ids:
                r = kb.relations[rid]
                other = r.target if r.source == s.id else r.source
                strength[other] += r.strength
            link_ids = sorted((o for o in strength if o in slug_of and o != s.id), key=lambda o: (-strength[o], o))
            link_ids = [*(t for t in topic_of.get(s.id, ()) if t in slug_of and t != s.id), *link_ids]
        links = list(dict.fromkeys(slug_of[i] for i in link_ids))[:MAX_LINKS]
        link_pairs = sorted(set((slug_of[i], titles[i]) for i in link_ids if slug_of[i] in links))
        rel_texts = {rid: said.get(rid) or said.setdefault(rid, relation_text(kb.relations[rid], kb.names))
                     for rid in rel_ids}
        ids = list(claim_ids.get(s.id, ()))
        skip = sorted({k for c in s.chunk_ids for k in furniture.get(c, ())}) if furniture else []
        plan = PagePlan(
            slug=slug, title=s.title, kind=s.kind, subject_id=s.id, action="", entity_ids=list(s.entity_ids),
            claim_ids=ids, relation_ids=rel_ids, chunk_ids=list(s.chunk_ids), links=links,
            description=s.description, aliases=list(s.aliases),
            inputs=evidence_inputs(refine_fp, model, s, ids, rel_texts, link_pairs, skip), furniture=skip,
        )
        drafts.append(_Draft(plan, s, rel_texts, link_pairs))
    return drafts


def claims_to_read(drafts: Sequence[_Draft], previous: Mapping[str, PagePlan]) -> list[str]:
    """The claims whose texts the fingerprints need: those of pages whose evidence inputs changed."""
    return list(dict.fromkeys(c for d in drafts if _known(d, previous) is None for c in d.plan.claim_ids))


def _known(draft: _Draft, previous: Mapping[str, PagePlan]) -> str | None:
    before = previous.get(draft.plan.subject_id)
    if before is not None and before.inputs and before.inputs == draft.plan.inputs and before.evidence_fingerprint:
        return before.evidence_fingerprint
    return None


def finish_plan(
    drafts: Sequence[_Draft],
    pages: Sequence[Page],
    matched: dict[str, str],
    reasons: dict[str, str],
    kb: KnowledgeView,
    previous: Mapping[str, PagePlan],
    *,
    refine_fp: str,
    model: str,
) -> list[PagePlan]:
    """The full plan: each draft with its evidence fingerprint (the previous plan's where its
    inputs are the same, else from the claims in `kb`, see claims_to_read) and action, plus
    DELETE for orphaned pages."""
    by_slug = {p.slug: p for p in pages}
    plans: list[PagePlan] = []
    for d in drafts:
        plan, s = d.plan, d.subject
        fp = _known(d, previous)
        if fp is None:
            fp = evidence_fingerprint(refine_fp, model, s, [kb.claims[c] for c in plan.claim_ids],
                                      d.relation_texts, d.link_pairs, plan.furniture)
        plan.evidence_fingerprint = fp
        page = by_slug.get(plan.slug) if s.id in matched else None
        if page is None:
            plan.action, plan.reason = CREATE, reasons.get(s.id, "new subject")
        elif page.status in SHOWN_OR_WITHHELD and page.evidence_fingerprint == fp:
            plan.action, plan.reason = KEEP, "evidence unchanged"
        else:
            plan.action = UPDATE
            plan.reason = reasons.get(s.id, "evidence changed" if page.status == "active" else "subject returned")
        plans.append(plan)

    kept = {d.plan.slug for d in drafts}
    for page in sorted(pages, key=lambda p: p.slug):
        if page.status in SHOWN_OR_WITHHELD and page.slug not in kept:
            plans.append(
                PagePlan(slug=page.slug, title=page.title, kind=page.kind, subject_id=page.subject_id,
                         action=DELETE, reason="subject no longer in the knowledge base")
            )
    return plans


def build_plan(
    subjects: Sequence[Subject],
    pages: Sequence[Page],
    matched: dict[str, str],
    reasons: dict[str, str],
    kb: KnowledgeView,
    topic_of: dict[str, list[str]],
    index: ClaimIndex,
    *,
    refine_fp: str,
    model: str,
) -> list[PagePlan]:
    """The plan in one go, from an index with every part in memory and `kb` holding every claim."""
    claim_ids = {s.id: subject_claims(s, index) for s in subjects}
    drafts = draft_plan(subjects, pages, matched, kb, topic_of, claim_ids, refine_fp=refine_fp, model=model)
    return finish_plan(drafts, pages, matched, reasons, kb, {}, refine_fp=refine_fp, model=model)


def match_by_subject(subjects: Sequence[Subject], pages: Sequence[Page]) -> dict[str, str]:
    """Subject id -> slug of the page already about it (an active page wins over a deleted one)."""
    wanted = {s.id for s in subjects}
    found: dict[str, Page] = {}
    for page in pages:
        if page.subject_id in wanted:
            prev = found.get(page.subject_id)
            if prev is None or (prev.status != "active" and page.status == "active"):
                found[page.subject_id] = page
    return {sid: p.slug for sid, p in found.items()}
