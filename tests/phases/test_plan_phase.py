"""PLAN end to end: topics, page matching, stored plan; real SQLite, LLM engine, scripted server."""

from compendium.phases import plan as plan_phase
from compendium.phases.plan import load_plan
from compendium.storage.records import CacheEntry, Claim, Entity, Page, Relation, Topic
from compendium.templates.schema import Template

from .kb_seed import entity_id, knowledge_base

TEMPLATE = Template(name="t", plan={"topics": {"min_size": 3}})


async def topics_of(store):
    return sorted([t async for t in store.scan(Topic)], key=lambda t: t.slug)


async def test_topics_and_pages_are_planned_and_unchanged_topics_are_not_renamed(server, store, make_ctx):
    await store.upsert(knowledge_base())
    ctx = make_ctx(TEMPLATE)
    result = await plan_phase.run(TEMPLATE, ctx)
    topics = await topics_of(store)
    assert len(topics) == 2 and server.calls["topic"] == 2
    assert sorted(len(t.members) for t in topics) == [4, 4]
    assert result.details["candidates"] == 8 and result.details["topics"] == 2
    assert result.details["create"] == 10  # 8 subjects and 2 topics

    plans = ctx.state["plan"]
    by_subject = {p.subject_id: p for p in plans}
    ada = by_subject[entity_id("Ada Lovelace")]
    assert (ada.slug, ada.action, ada.kind) == ("ada-lovelace", "CREATE", "entity")
    topic_slug = next(t.slug for t in topics if entity_id("Ada Lovelace") in t.members)
    assert ada.links[0] == topic_slug and "charles-babbage" in ada.links and "mars" not in ada.links
    assert ada.claim_ids == [f"c-{entity_id('Ada Lovelace')}"]

    # The plan is stored, so REFINE can resume from it after a crash.
    stored = await store.get_one(CacheEntry, "plan:t")
    assert stored.namespace == "plan" and len(stored.value) == len(plans)
    ctx.state.clear()
    assert await load_plan(ctx, TEMPLATE) == plans

    # Same KB again: no topic is renamed, ids and slugs hold.
    server.reset()
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    assert server.calls["topic"] == 0
    assert [(t.id, t.slug, t.title) for t in await topics_of(store)] == [(t.id, t.slug, t.title) for t in topics]


async def test_a_topic_whose_membership_drifts_keeps_its_id_and_slug(server, store, make_ctx):
    await store.upsert(knowledge_base())
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    before = {t.slug: t for t in await topics_of(store)}
    # Pluto joins the planets.
    await store.upsert(knowledge_base(planets=["Mercury", "Venus", "Mars", "Jupiter", "Pluto"]))
    server.reset()
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    after = {t.slug: t for t in await topics_of(store)}
    assert set(after) == set(before)
    # Four of five members stayed: the topic is what its name says, so it is not named again.
    assert server.calls["topic"] == 0
    changed = [s for s in after if after[s].members != before[s].members]
    assert len(changed) == 1 and after[changed[0]].id == before[changed[0]].id
    assert after[changed[0]].title == before[changed[0]].title
    assert entity_id("Pluto") in after[changed[0]].members


async def test_a_drifted_topic_named_after_a_member_that_left_it_is_named_again(server, store, make_ctx):
    await store.upsert(knowledge_base(planets=["Mercury", "Venus", "Mars", "Jupiter", "Pluto"]))
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    planets = next(t for t in await topics_of(store) if entity_id("Mars") in t.members)
    # As a topic is stored when named like its member Mars, which has a page.
    planets.title, planets.summary, planets.page_subject = "Mars", "Mars: Mars and 4 more.", entity_id("Mars")
    await store.upsert([planets])
    await store.delete(Entity, {"id": [entity_id("Mars")]})  # Mars is gone from the KB
    server.reset()
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    after = next(t for t in await topics_of(store) if t.id == planets.id)
    assert entity_id("Mars") not in after.members and len(after.members) == 4  # 4 of 5 stayed
    assert server.calls["topic"] == 1 and after.title != "Mars"  # its name named what left
    assert after.slug == planets.slug


async def test_a_page_left_by_its_subject_moves_to_the_slug_of_the_subject_named_like_it(server, store, make_ctx):
    """A page's slug is its subject's (as a compile from scratch names it); a page no subject
    keeps, titled like a new subject (its name flipped, its id with it), is updated there."""
    await store.upsert(knowledge_base())
    ctx = make_ctx(Template(name="t", artifacts=["wiki_pages"]))
    await store.upsert([Page(id="lady-lovelace", slug="lady-lovelace", title="Ada Lovelace", subject_id="e-old",
                             summary="Ada Lovelace is described in the d1 notes.", status="active"),
                        Page(id="dodo", slug="dodo", title="Dodo", subject_id="e-dodo", status="active")])
    await plan_phase.run(ctx.template, ctx)
    plans = {p.slug: p for p in ctx.state["plan"]}
    ada = plans["ada-lovelace"]
    assert (ada.subject_id, ada.action, ada.moved_from) == (entity_id("Ada Lovelace"), "UPDATE", "lady-lovelace")
    assert plans["lady-lovelace"].action == "DELETE" and plans["dodo"].action == "DELETE"
    assert all(not p.moved_from for slug, p in plans.items() if slug != "ada-lovelace")
    assert server.calls["matches"] == 0
    assert await store.count(Topic) == 0  # topics are not built by this template


async def test_pages_of_vanished_subjects_are_deleted(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await store.upsert([Page(id="dodo", slug="dodo", title="Dodo", subject_id="e-dodo")])
    ctx = make_ctx(template)
    await plan_phase.run(template, ctx)
    actions = {p.slug: p.action for p in ctx.state["plan"]}
    assert actions["dodo"] == "DELETE"
    assert await store.count(Claim) == 8 and await store.count(Relation) == 12


async def test_a_topic_the_engine_failed_to_name_is_named_next_run(server, store, make_ctx):
    await store.upsert(knowledge_base())
    server.fail_next(1, "500")
    result = await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    assert result.details["topics"] == 2
    unnamed = [t for t in await topics_of(store) if not t.fingerprint]
    assert len(unnamed) == 1
    # The stand-in is the outline's title: every member sits under "Overview", which names no
    # subject, so the most important member names it; never "X and Y" of two members.
    assert unnamed[0].title in ("Ada Lovelace", "Mercury") and " and " not in unnamed[0].title
    server.reset()
    await plan_phase.run(TEMPLATE, make_ctx(TEMPLATE))
    assert server.calls["topic"] == 1
    renamed = {t.id: t for t in await topics_of(store)}[unnamed[0].id]
    assert renamed.fingerprint and renamed.slug == unnamed[0].slug and renamed.summary
