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
from .claim_index import ClaimIndex
from .claim_index_keys import defining_set, entity_set
from .page_moves import moved_from

CREATE, UPDATE, KEEP, DELETE = "CREATE", "UPDATE", "KEEP", "DELETE"
MAX_LINKS = 40
MAX_ENTITY_CLAIMS = 150
MAX_DEFINING_CLAIMS = 8  # an entity's authored definitions, offered before its other claims
MAX_TOPIC_CLAIMS = 60
# Page statuses a plan keeps track of: "withheld" pages were written without a cited fact and
# are not shown, but their evidence fingerprint spares writing them again.
SHOWN_OR_WITHHELD = ("active", "withheld")
_PLAIN_WORD = re.compile(r"[a-z]+")
_QUALIFIED_CODE = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(\))?")


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
    entities = list(entities)
    chosen = [
        e for e in entities
        if _earns_page(e, counts.get(e.id, 0), min_support, min_facts)
        and (e.id not in (common or ()) or e.id in (titles or {}))
    ]
    # An API's owner known by its qualified name only ("django.urls"); a type with a page of its
    # own under its short name ("MultiWidget" for django.forms.MultiWidget) gets no second one
    paged = {e.name.strip() for e in chosen}
    picked = {e.id for e in chosen}
    chosen += [e for e in entities if e.id not in picked and _owns_entries(e, counts.get(e.id, 0), min_support, min_facts)
               and _short_type(e.name) not in paged]
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


def _owns_entries(entity: Entity, facts: int, min_support: int, min_facts: int) -> bool:
    """A qualified code name ("django.urls", "django.core.files.storage.Storage") said something
    of in `min_support` passages: an API's own part, the owner its members' entries are written
    under, though one document holds them all (the offline engine's subjects)."""
    return (entity.engine == "offline" and not entity.description.strip()
            and _QUALIFIED_CODE.fullmatch(entity.name.strip()) is not None
            and _distinct_at_least(entity.chunk_ids, min_support) and facts >= min_facts)


def _short_type(name: str) -> str:
    """The type a qualified name ends with ("django.forms.MultiWidget" -> "MultiWidget"), "" for
    a module or a function (their short names are often words: "signals", "transaction")."""
    last = name.strip().removesuffix("()").rpartition(".")[2]
    return last if last[:1].isupper() and not name.strip().endswith("()") else ""


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
        list(links),  # in the order the writer is given them: the order is on the page
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
        sorted(claim_ids), sorted(relation_texts.items()), chunks, list(links),
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
    kb: KnowledgeView,
    topic_of: dict[str, list[str]],
    claim_ids: Mapping[str, list[str]],
    *,
    refine_fp: str,
    model: str,
    furniture: Mapping[str, Sequence[str]] | None = None,
) -> list[_Draft]:
    """Every subject's page (its slug: see page_slugs) with its claims, relations, links and
    evidence inputs; no fingerprint or action yet (see finish_plan).

    `topic_of` maps entity id -> the subjects whose
    pages are its topics' (a topic's id, or the member a topic is named like);
    `claim_ids` subject id -> its claims (see subject_claims); `furniture` chunk id -> the
    sentences (text keys) written in so many documents that its passages leave them out
    (see claim_index.REPEATED_IN).
    """
    slug_of = page_slugs(subjects)
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
        title_at = {slug_of[i]: titles[i] for i in link_ids}
        link_pairs = [(slug, title_at[slug]) for slug in links]
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


def page_slugs(subjects: Sequence[Subject]) -> dict[str, str]:
    """Subject id -> its page's slug, given in the subjects' order (most important first): a
    function of the subjects alone, never of the pages earlier compiles wrote, so a recompile
    names a page as a compile from scratch does (a subject whose title changed moves to the
    slug of its new title)."""
    taken: set[str] = set()
    return {s.id: unique_slug(s.title, s.type or s.kind, taken, key=s.id) for s in subjects}


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
    kb: KnowledgeView,
    previous: Mapping[str, PagePlan],
    *,
    refine_fp: str,
    model: str,
) -> list[PagePlan]:
    """The full plan: each draft with its evidence fingerprint (the previous plan's where its
    inputs are the same, else from the claims in `kb`, see claims_to_read) and action, plus
    DELETE for orphaned pages. The page at a subject's slug is its page when it is of the same
    kind (the slug is the title's: a topic whose members moved, with a new id, keeps its page);
    a page of another kind there is written anew. A subject whose page is elsewhere (its title
    changed) has it moved here and updated (see page_moves)."""
    by_slug = {p.slug: p for p in pages}
    kept = {d.plan.slug for d in drafts}
    homeless = [(d.plan, d.subject) for d in drafts
                if (page := by_slug.get(d.plan.slug)) is None or page.kind != d.plan.kind]
    moves = moved_from(homeless, pages, kept, previous)
    plans: list[PagePlan] = []
    for d in drafts:
        plan, s = d.plan, d.subject
        fp = _known(d, previous)
        if fp is None:
            fp = evidence_fingerprint(refine_fp, model, s, [kb.claims[c] for c in plan.claim_ids],
                                      d.relation_texts, d.link_pairs, plan.furniture)
        plan.evidence_fingerprint = fp
        page = by_slug.get(plan.slug)
        if plan.slug in moves:  # the page its subject had elsewhere is updated here
            plan.action, plan.moved_from = UPDATE, moves[plan.slug]
            plan.reason = f"moved from {plan.moved_from}"
        elif page is None or page.kind != plan.kind:
            plan.action, plan.reason = CREATE, "new subject"
        elif page.status in SHOWN_OR_WITHHELD and page.evidence_fingerprint == fp:
            plan.action, plan.reason = KEEP, "evidence unchanged"
        else:
            plan.action = UPDATE
            plan.reason = "evidence changed" if page.status == "active" else "subject returned"
        plans.append(plan)

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
    kb: KnowledgeView,
    topic_of: dict[str, list[str]],
    index: ClaimIndex,
    *,
    refine_fp: str,
    model: str,
) -> list[PagePlan]:
    """The plan in one go, from an index with every part in memory and `kb` holding every claim."""
    claim_ids = {s.id: subject_claims(s, index) for s in subjects}
    drafts = draft_plan(subjects, kb, topic_of, claim_ids, refine_fp=refine_fp, model=model)
    return finish_plan(drafts, pages, kb, {}, refine_fp=refine_fp, model=model)
