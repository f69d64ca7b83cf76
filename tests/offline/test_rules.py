"""REDUCE and PLAN by string rules, extractive description merging and topic naming."""

from __future__ import annotations

import pytest

from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import (
    DescriptionRequest,
    EntitySketch,
    MatchQuestion,
    PairQuestion,
    TopicRequest,
)
from compendium.templates.schema import Template

TEMPLATE = Template(name="docs")


def sketch(name: str, type_: str = "technology", aliases: list[str] | None = None) -> EntitySketch:
    return EntitySketch(name=name, type=type_, aliases=aliases or [])


SAME = [
    ("acronym", sketch("WAL"), sketch("Write-Ahead Log")),
    ("acronym with stop words", sketch("DBA"), sketch("Database of Administrators")),
    ("acronym, letters inside words", sketch("MVCC"), sketch("multiversion concurrency control")),
    ("plural", sketch("Standby Server"), sketch("standby servers")),
    ("case and hyphens", sketch("write ahead log"), sketch("Write-Ahead Log")),
    ("doubled letter", sketch("Postgres"), sketch("Postgress")),
    (
        "token set",
        sketch("Granite Shared Buffer Pool Manager"),
        sketch("Shared Buffer Pool Manager Granite"),
    ),
    ("alias", sketch("Write-Ahead Logging", aliases=["WAL"]), sketch("WAL")),
    ("generic type", sketch("Vacuum", "concept"), sketch("vacuum", "component")),
    ("underscores inside a name separate words", sketch("max_wal_size"), sketch("max wal size")),
]

DIFFERENT = [
    ("version digits", sketch("PostgreSQL 14"), sketch("PostgreSQL 15")),
    ("digit only on one side", sketch("Python 3"), sketch("Python")),
    ("acronym of other words", sketch("WAL"), sketch("Wide Area Link Layer Protocol")),
    ("subset below 0.8", sketch("Buffer Pool"), sketch("Shared Buffer Pool")),
    ("edit distance 2", sketch("Granite"), sketch("Granola")),
    ("short names", sketch("Go"), sketch("Io")),
    ("types disagree", sketch("Mercury", "person"), sketch("Mercury", "technology")),
    # False merges seen on the most visible pages of a real manual: never one thing.
    ("NULL is no REAL", sketch("NULL"), sketch("REAL")),
    ("VACUUM is no AUTOVACUUM", sketch("VACUUM"), sketch("AUTOVACUUM")),
    ("SELECT is no 'other'", sketch("SELECT", "concept"), sketch("other", "concept")),
    ("a modifier word makes another thing", sketch("Relational Database Management System"),
     sketch("Object-Relational Database Management System")),
    ("one letter apart keywords", sketch("ALTER ROLE"), sketch("ALTER RULE")),
    ("one letter apart identifiers", sketch("pg_stat_user_tables"), sketch("pg_stat_user_table5")),
    ("a dunder method is not the builtin", sketch("__abs__()"), sketch("abs()")),
    ("a private name is not the public one", sketch("_exit()"), sketch("exit()", aliases=["sys.exit()"])),
    ("an option is not the function", sketch("--version"), sketch("version()")),
    ("an identifier's words in another order", sketch("update_wrapper()"), sketch("WRAPPER_UPDATES")),
    ("a class is not the collection class", sketch("depot.crates.Crate"), sketch("depot.crates.Crates")),
    ("a domain's setting is not the general one", sketch("c_max_line_length"), sketch("max_line_length")),
    ("one name in two owners", sketch("forms.CharField"), sketch("models.CharField")),
]


@pytest.mark.parametrize(("rule", "a", "b"), SAME, ids=[r for r, _, _ in SAME])
async def test_pairs_judged_same(rule, a, b):
    engine = OfflineEngine()
    answer = await engine.judge_pairs([PairQuestion(label="p1", a=a, b=b)], TEMPLATE)
    assert answer == {"p1": True}, rule


@pytest.mark.parametrize(("rule", "a", "b"), DIFFERENT, ids=[r for r, _, _ in DIFFERENT])
async def test_pairs_judged_different(rule, a, b):
    engine = OfflineEngine()
    answer = await engine.judge_pairs([PairQuestion(label="p1", a=a, b=b)], TEMPLATE)
    assert answer == {"p1": False}, rule


async def test_matches_compare_candidate_with_page_title():
    questions = [
        MatchQuestion(
            label="q1", candidate=sketch("WAL"), page_title="Write-Ahead Log", page_summary=""
        ),
        MatchQuestion(
            label="q2", candidate=sketch("WAL"), page_title="Checkpoints", page_summary=""
        ),
    ]
    assert await OfflineEngine().judge_matches(questions, TEMPLATE) == {"q1": True, "q2": False}


async def test_summary_merges_descriptions_without_repeats_within_max_chars():
    request = DescriptionRequest(
        name="Write-Ahead Log",
        type="technology",
        descriptions=[
            "Granite flushes the log at commit. The Write-Ahead Log is a journal of every change.",
            "The Write-Ahead Log is a journal of every single change.",
            "Granite flushes the log at commit!",
            "Archived segments of the log allow point-in-time recovery.",
        ],
        max_chars=150,
    )
    text = await OfflineEngine().summarize(request, TEMPLATE)
    assert text.startswith("The Write-Ahead Log is a journal of every change.")
    assert len(text) <= 150
    assert text.count("flushes the log") == 1
    sources = " ".join(request.descriptions)
    for sentence in text.replace("! ", "!\n").replace(". ", ".\n").splitlines():
        assert sentence in sources


async def test_summary_cuts_a_single_long_sentence_at_a_word():
    request = DescriptionRequest(
        name="X", type="", descriptions=["word " * 50 + "end."], max_chars=80
    )
    text = await OfflineEngine().summarize(request, TEMPLATE)
    assert 0 < len(text) <= 80 and text.endswith("word")


async def test_topic_title_is_a_member_not_a_made_up_plural_or_a_pair_of_keywords():
    members = [
        sketch("Replication"),
        sketch("Hot Standby Server"),
        sketch("Warm Standby Server"),
        sketch("WAL"),
    ]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members), TEMPLATE)
    assert reply.title == "Replication"  # not "Standby Servers", not "Replication and Hot Standby Server"
    assert "Hot Standby Server" in reply.summary and "WAL" in reply.summary
    # A heading made of two member names is a keyword pair, not what the group is about.
    pair = [("Replication and WAL", 4), ("Overview", 4)]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, headings=pair), TEMPLATE)
    assert reply.title == "Replication"


async def test_topic_title_is_the_heading_most_central_members_sit_under():
    members = [sketch("VACUUM"), sketch("autovacuum"), sketch("visibility map"), sketch("FREEZE")]
    headings = [("Chapter 25. Routine Database Maintenance Tasks", 3), ("25.1.5. Preventing Transaction ID "
                "Wraparound Failures ¶", 2), ("Description", 4)]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, headings=headings), TEMPLATE)
    assert reply.title == "Routine Database Maintenance Tasks"
    site = [("3. Data model — Python 3.11.2 documentation", 3)]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, headings=site), TEMPLATE)
    assert reply.title == "Data model"
    lonely = [("Parallel Query", 1)]  # a heading over one member says nothing of the others
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, headings=lonely), TEMPLATE)
    assert reply.title == "VACUUM"


async def test_topic_title_from_top_names_and_deterministic():
    members = [sketch("Vacuum"), sketch("Autovacuum Launcher"), sketch("Visibility Map")]
    engine = OfflineEngine()
    first = await engine.name_topic(TopicRequest(members=members), TEMPLATE)
    second = await engine.name_topic(TopicRequest(members=members), TEMPLATE)
    assert first == second
    assert first.title == "Vacuum"  # the central member, never a pair of keywords


async def test_topic_title_names_the_members_its_claims_are_about():
    members = [sketch("Lumen"), sketch("Page Cache"), sketch("Buffer Pool"), sketch("KB")]
    claims = [
        "The Buffer Pool sits above the Page Cache.",
        "A page evicted from the Buffer Pool can be read back from the Page Cache.",
        "The Buffer Pool holds 8 KB pages.",
        "Lumen sizes the Buffer Pool with shared_buffers.",
    ]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, claims=claims), TEMPLATE)
    assert reply.title == "Buffer Pool"


async def test_a_member_named_by_nearly_every_claim_names_the_topic_over_a_shared_heading():
    # A third of the members sit under a monitoring chapter; the claims tying them are about WAL.
    members = [sketch(n) for n in ("WAL", "LSN", "wal_buffers", "Checkpointer", "segment files", "standby")]
    claims = [
        "Every change is written to the WAL before the data page.",
        "The WAL is divided into segment files.",
        "An LSN is a position in the WAL.",
        "wal_buffers sets the memory the WAL is staged in.",
        "The Checkpointer decides which WAL segment files can be recycled.",
    ]
    headings = [("Monitoring with System Views", 2), ("Write-Ahead Log", 1)]
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, claims=claims, headings=headings),
                                             TEMPLATE)
    assert reply.title == "WAL"
    # Too few claims to tell: the heading most of the central members sit under names the topic.
    reply = await OfflineEngine().name_topic(TopicRequest(members=members, claims=claims[:2] + claims[4:],
                                                          headings=headings), TEMPLATE)
    assert reply.title == "Monitoring with System Views"
