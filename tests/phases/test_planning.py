"""Plan decisions: subjects, slugs, links, claims and the CREATE/UPDATE/KEEP/DELETE of each page."""

from dataclasses import replace

from compendium.phases.claim_index import built_index
from compendium.phases.planning import (
    KnowledgeView,
    PagePlan,
    Subject,
    build_plan,
    entity_subjects,
)
from compendium.storage.records import Claim, Entity, Page, Relation

from .golden_files import load


def plan_from(golden, pages):
    entities = [Entity(**e) for e in golden["entities"]]
    claims = [Claim(**c) for c in golden["claims"]]
    kb = KnowledgeView.build(entities, [Relation(**r) for r in golden["relations"]], claims)
    index = built_index(claims, entities)
    subjects = entity_subjects(entities, golden["min_support"], golden["max_pages"])
    topic_of = {}
    for t in golden["topics"]:
        subjects.append(Subject(id=t["id"], title=t["title"], kind="topic", description=t["summary"], entity_ids=t["members"]))
        for m in t["members"]:
            topic_of.setdefault(m, []).append(t["id"])
        index.count_group(t["id"], t["members"])
    return build_plan(subjects, pages, kb, topic_of, index, refine_fp="r", model="m")


def summary(plans):
    return [
        [p.slug, p.action, p.kind, p.subject_id, p.links, p.claim_ids, p.relation_ids]
        for p in plans
    ]


def test_plan_golden():
    golden = load("plan_pages")
    pages = [Page(**p) for p in golden["pages"]]
    plans = plan_from(golden, pages)
    assert summary(plans) == golden["expected"]
    assert all(p.evidence_fingerprint for p in plans if p.action != "DELETE")


def test_unchanged_evidence_is_kept_and_a_change_updates():
    golden = load("plan_pages")
    pages = [Page(**p) for p in golden["pages"]]
    first = {p.slug: p for p in plan_from(golden, pages)}
    pages = [replace(p, evidence_fingerprint=first[p.slug].evidence_fingerprint) if p.slug in first else p
             for p in pages]
    second = {p.slug: p for p in plan_from(golden, pages)}
    assert second["ada-lovelace"].action == "KEEP"
    assert second["early-computing"].action == "KEEP"
    # A new claim about Babbage changes his page and no other.
    golden["claims"].append({"id": "c9", "text": "Babbage was British.", "chunk_id": "k2", "entity_ids": ["e-bab"]})
    written = [*pages, *(Page(id=p.slug, slug=p.slug, kind=p.kind, subject_id=p.subject_id,
                              evidence_fingerprint=p.evidence_fingerprint)
                        for p in first.values() if p.action == "CREATE")]
    third = {p.slug: p.action for p in plan_from(golden, written)}
    assert third["charles-babbage"] == "UPDATE"
    assert third["ada-lovelace"] == "KEEP" and third["analytical-engine"] == "KEEP"
    # The topic covers claims of all its members, so it changes too.
    assert third["early-computing"] == "UPDATE"


def test_plan_entries_round_trip_through_dicts():
    golden = load("plan_pages")
    plans = plan_from(golden, [Page(**p) for p in golden["pages"]])
    assert [PagePlan.from_dict(p.to_dict()) for p in plans] == plans


def test_slugs_are_the_subjects_own_whatever_pages_there_were():
    """A slug is a function of the subjects: one a deleted page held goes to the subject that
    now asks for it, as a compile from scratch would give it; the same title twice gets the type."""
    golden = load("plan_pages")
    with_pages = {p.subject_id: p.slug for p in plan_from(golden, [Page(**p) for p in golden["pages"]])
                  if p.action != "DELETE"}
    assert with_pages == {p.subject_id: p.slug for p in plan_from(golden, [])}
    assert with_pages["e-mp"] == "mercury" and with_pages["e-me"] == "mercury-element"


def test_a_common_word_capitalised_only_where_sentences_begin_gets_no_page():
    from compendium.phases.planning import common_word_subjects
    from compendium.storage.records import Claim, Entity

    lock = Entity(id="e-lock", name="Lock", chunk_ids=["k1", "k2"])
    python = Entity(id="e-py", name="Python", chunk_ids=["k1", "k2"])
    claims = [
        Claim(id="c1", text="Lock acquires the lock before the table is read.", entity_ids=["e-lock"]),
        Claim(id="c2", text="Lock waits until the holder of the lock releases it.", entity_ids=["e-lock"]),
        Claim(id="c3", text="Python runs the script.", entity_ids=["e-py"]),
        Claim(id="c4", text="Scripts written in Python run unchanged.", entity_ids=["e-py"]),
    ]
    assert common_word_subjects(built_index(claims, [lock, python])) == {"e-lock"}
    subjects = entity_subjects([lock, python], 2, 10, {"e-lock": 2, "e-py": 2}, 1, {"e-lock"})
    assert [s.title for s in subjects] == ["Python"]


def test_a_common_word_the_prose_writes_in_lowercase_keeps_its_page_under_that_title():
    from compendium.phases.planning import common_word_subjects, lowercase_titles
    from compendium.storage.records import Claim, Entity

    iterator = Entity(id="e-it", name="Iterator", chunk_ids=["k1", "k2"])
    claims = [
        Claim(id="c1", text="Iterator objects support two methods.", entity_ids=["e-it"]),
        Claim(id="c2", text="An iterator is an object representing a stream of data.", entity_ids=["e-it"]),
    ]
    index = built_index(claims, [iterator])
    common = common_word_subjects(index)
    titles = lowercase_titles([iterator], common, index)
    assert titles == {"e-it": "iterator"}
    subjects = entity_subjects([iterator], 2, 10, {"e-it": 2}, 1, common, titles)
    assert [s.title for s in subjects] == ["iterator"]


def test_a_qualified_code_name_its_members_are_written_under_gets_a_page_from_one_document():
    # django.urls' reference: one document whose functions' entries are all facts of the module
    module = Entity(id="e-mod", name="django.urls", engine="offline", chunk_ids=["k1", "k2", "k3"],
                    document_ids=["d1"] * 3)
    call = Entity(id="e-call", name="transaction.atomic()", engine="offline", chunk_ids=["k1", "k2"],
                  document_ids=["d1", "d1"])
    phrase = Entity(id="e-phrase", name="URL patterns", engine="offline", chunk_ids=["k1", "k2", "k3"],
                    document_ids=["d1"] * 3)
    plain = Entity(id="e-plain", name="urls", engine="offline", chunk_ids=["k1", "k2"], document_ids=["d1", "d1"])
    facts = {"e-mod": 4, "e-call": 2, "e-phrase": 4, "e-plain": 3}
    subjects = entity_subjects([module, call, phrase, plain], 2, 10, facts, 2)
    assert sorted(s.title for s in subjects) == ["django.urls", "transaction.atomic()"]
    # said something of once, it is still a link target
    assert entity_subjects([module], 2, 10, {"e-mod": 1}, 2) == []
    # a class with a page under its short name gets no second page under its qualified one
    widget = Entity(id="e-w", name="MultiWidget", engine="offline", description="A widget of widgets.",
                    chunk_ids=["k4"], document_ids=["d2"])
    qualified = Entity(id="e-qw", name="django.forms.MultiWidget", engine="offline", chunk_ids=["k1", "k2"],
                       document_ids=["d1", "d1"])
    subjects = entity_subjects([widget, qualified], 2, 10, {"e-w": 1, "e-qw": 3}, 2)
    assert [s.title for s in subjects] == ["MultiWidget"]
