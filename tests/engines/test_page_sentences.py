"""Pages asked as JSON sentences with their evidence labels, through the scripted server and the
real openai client: what a small local model can write, rendered and checked by us."""

from __future__ import annotations

import json

import pytest

from compendium.engines.factory import build_engine
from compendium.engines.tasks import EvidenceItem, PageRequest
from compendium.engines.usage import UsageMeter
from compendium.errors import ReplyError
from compendium.storage.response_cache import StoreResponseCache
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for

from .conftest import cached_replies

TEMPLATE = Template(name="wiki")
EVIDENCE = [
    EvidenceItem(1, "Vacuum removes dead tuples from Lumen DB tables.", "k1", "Vacuum", ["What vacuum does"]),
    EvidenceItem(2, "Vacuum records each page's free space in the Free Space Map.", "k1", "Vacuum", ["What vacuum does"]),
    EvidenceItem(3, "A long-running transaction holds back the oldest snapshot.", "k2", "Vacuum", ["When vacuum stalls"]),
]
PAGE = PageRequest(slug="vacuum", title="Vacuum", kind="entity", description="", aliases=[], evidence=EVIDENCE, links=[])
# What Qwen2.5-Coder 1.5B wrote for such pages: prose of its own, no marker.
OWN_PROSE = ("Vacuum is a critical aspect of database management systems. It ensures that the database "
             "remains efficient. Regular maintenance is essential for performance. Administrators should "
             "schedule it carefully.")


def sentences(*items: tuple[str, list[str]]) -> str:
    return json.dumps({"sentences": [{"text": text, "cites": cites} for text, cites in items]})


@pytest.fixture
async def small(llm_server, store):
    """An engine over a model of small context, as a local 1.5B model is served."""
    built = build_engine(settings_for(llm_server, context_tokens=8192), TEMPLATE, usage=UsageMeter(),
                         cache=StoreResponseCache(store))
    yield built
    await built.close()


@pytest.fixture
async def large(llm_server, store):
    built = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter(), cache=StoreResponseCache(store))
    yield built
    await built.close()


async def test_a_small_model_is_asked_for_a_page_as_bounded_sentences_citing_only_the_labels_shown(small, llm_server):
    markdown = await small.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["text"] == 0 and llm_server.calls["page_sentences"] == 1
    request = llm_server.requests[0]
    schema = request.response_format["json_schema"]["schema"]["properties"]["sentences"]
    # Bounded, so a grammar cannot loop; a citation can only be a label the prompt shows.
    assert (schema["minItems"], schema["maxItems"]) == (3, 5)
    assert schema["items"]["properties"]["cites"]["items"]["enum"] == ["1", "2", "3"]
    assert schema["items"]["properties"]["text"]["maxLength"] > 0
    assert "[2] Vacuum records each page's free space in the Free Space Map." in request.prompt
    assert "(kind:" not in request.prompt
    # Rendered by us: markers after each stop, a paragraph per source.
    assert markdown == ("Vacuum removes dead tuples from Lumen DB tables.[^1] Vacuum records each page's free "
                        "space in the Free Space Map.[^2]\n\nA long-running transaction holds back the oldest snapshot.[^3]")


async def test_unsupported_sentences_are_dropped_and_the_page_stands_on_the_rest(small, llm_server, store):
    llm_server.responder = lambda request: sentences(
        ("Vacuum removes dead tuples from Lumen DB tables.", ["1"]),
        ("Vacuum is a critical aspect of database management systems.", ["1"]),
        ("Vacuum records each page's free space in the Free Space Map.", ["2"]),
        ("The checkpointer records each page's free space in the Free Space Map.", ["2"]),  # a swapped actor
        ("A long-running transaction holds back the oldest snapshot.", ["1"]),  # the wrong label
        ("removes dead tuples from Lumen DB tables.", ["1"]),  # a fragment of an item
        ("Vacuum records each page's free space in …", ["2"]),  # an excerpt's cut, copied
        ("For each page Vacuum does, in order:", ["2"]),  # a list announced, not given
        ("Vacuum removes dead tuples from Lumen DB tables.", ["1"]),  # said again
        ("<a sentence of the page>", ["1"]),  # the prompt's example
    )
    markdown = await small.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["page_sentences"] == 1
    assert "critical aspect" not in markdown and "checkpointer" not in markdown
    assert "Vacuum removes dead tuples from Lumen DB tables.[^1]" in markdown
    assert "Vacuum records each page's free space in the Free Space Map.[^2]" in markdown
    assert "A long-running transaction holds back the oldest snapshot.[^3]" in markdown  # re-cited
    assert markdown.count("removes dead tuples") == 1 and "<a sentence" not in markdown and "…" not in markdown and ":" not in markdown
    assert len(await cached_replies(store)) == 1


async def test_too_few_supported_sentences_are_asked_again_afresh_naming_what_failed(small, llm_server, store):
    replies = iter([
        sentences(("Vacuum removes dead tuples from Lumen DB tables.", ["1"]), (OWN_PROSE[:60] + ".", ["2"]),
                  ("Regular maintenance is essential for performance.", ["3"])),
        sentences(("Vacuum removes dead tuples from Lumen DB tables.", ["1"]),
                  ("Vacuum records each page's free space in the Free Space Map.", ["2"]),
                  ("A long-running transaction holds back the oldest snapshot.", ["3"])),
    ])
    llm_server.responder = lambda request: next(replies)
    markdown = await small.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["page_sentences"] == 2 and markdown.count("[^") == 3
    repair = llm_server.requests[1]
    # Asked afresh: the failed reply is not shown back (a small model shown it writes it again),
    # and the prompt names the sentences that failed.
    assert [m["role"] for m in repair.messages] == ["system", "user"] and repair.repair == ""
    assert "An earlier answer could not be used" in repair.prompt
    assert "1 of 3 sentences are supported" in repair.prompt and "Regular maintenance" in repair.prompt
    assert repair.temperature > llm_server.requests[0].temperature


async def test_a_page_whose_sentences_stay_unsupported_fails_naming_them_and_is_never_cached(small, llm_server, store):
    llm_server.responder = lambda request: sentences(
        ("Vacuum removes dead tuples from Lumen DB tables.", ["1"]),
        ("Vacuum is a critical aspect of database management systems.", ["1"]),
        ("Regular maintenance is essential for performance.", ["3"]))
    with pytest.raises(ReplyError) as caught:
        await small.write_page(PAGE, TEMPLATE)
    message = str(caught.value)
    assert "page 'vacuum', asked as sentences" in message
    assert "1 of 3 sentences are supported by the evidence they cite (3 needed)" in message
    assert "'Vacuum is a critical aspect of database management systems.'" in message
    assert llm_server.calls["page_sentences"] == 2 and await cached_replies(store) == []


async def test_a_page_whose_prose_stays_unusable_is_asked_as_sentences(large, llm_server):
    default = llm_server.responder
    llm_server.responder = lambda request: OWN_PROSE if request.schema_name is None else default(request)
    markdown = await large.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["text"] == 2 and llm_server.calls["page_sentences"] == 1
    assert "cites none of the evidence" in llm_server.requests[-1].prompt  # what the prose did wrong
    assert markdown.count("[^") == 3 and "critical aspect" not in markdown


async def test_a_large_model_writing_cited_prose_is_not_asked_for_sentences(large, llm_server):
    markdown = await large.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["text"] == 1 and llm_server.calls["page_sentences"] == 0
    assert "Vacuum removes dead tuples from Lumen DB tables. [^1]" in markdown


async def test_an_update_of_an_existing_page_is_not_asked_as_sentences(small, llm_server):
    update = PageRequest(slug="vacuum", title="Vacuum", kind="entity", description="", aliases=[],
                         evidence=EVIDENCE, links=[], existing_markdown="Vacuum removes dead tuples. [^1]")
    await small.write_page(update, TEMPLATE)
    assert llm_server.calls["text"] == 1 and llm_server.calls["page_sentences"] == 0


async def test_sentences_are_read_one_by_one_and_a_cut_copy_is_given_whole(small, llm_server):
    # What the 1.5B model wrote in a compile of the slice: a sentence twice in one item, one cut
    # on a word no sentence ends on, a copy cut mid-name, a section's heading alone, a copy
    # broken off inside a code mark, a clause copied without its opening, and a list run into a sentence.
    evidence = [
        EvidenceItem(1, "When a row is deleted, its TOAST chunks become dead tuples in the TOAST table and are "
                        "removed by Vacuum.", "k1", "TOAST", ["Interaction with updates and Vacuum"]),
        EvidenceItem(2, "Each table records the oldest unfrozen XID it may contain in its `relfrozenxid` field.",
                     "k2", "Transaction IDs", ["Freezing"]),
        EvidenceItem(3, "The B-tree index stores no visibility information.", "k3", "MVCC", ["MVCC and the engine"]),
        EvidenceItem(4, "Instead of updating a row in place, MVCC keeps several versions of it.", "k4", "MVCC", []),
        EvidenceItem(5, "A plain `VACUUM` works in phases: 1. **Heap scan.** Vacuum reads the table's Heap Files "
                        "page by page.", "k5", "Vacuum", ["What one Vacuum run does"]),
    ]
    page = PageRequest(slug="dead-tuples", title="dead tuples", kind="entity", description="", aliases=[],
                       evidence=evidence, links=[])
    llm_server.responder = lambda request: sentences(
        ("When a row is deleted, its TOAST chunks become dead tuples in the TOAST.", ["1"]),
        ("Each table records the oldest unfrozen XID it may contain in its`.", ["2"]),
        ("The B-tree index stores no visibility information. The B-tree index stores no visibility information. "
         "The B-tree index is used to.", ["3"]),
        ("MVCC and the engine.", ["3"]),
        ("MVCC keeps several versions of it.", ["1"]),  # its opening clause left out, and cited wrong
        ("[4] Instead of updating a row in place, MVCC keeps several versions of it.", ["4"]),  # a label copied: a repeat
        ("A plain `VACUUM` works in phases: 1. **Heap scan.** Vacuum reads the table's Heap Files page by page.",
         ["5"]),
    )
    markdown = await small.write_page(page, TEMPLATE)
    assert markdown == (
        "When a row is deleted, its TOAST chunks become dead tuples in the TOAST table and are removed by Vacuum.[^1]"
        "\n\nEach table records the oldest unfrozen XID it may contain in its `relfrozenxid` field.[^2]"
        "\n\nThe B-tree index stores no visibility information.[^3]"
        "\n\nInstead of updating a row in place, MVCC keeps several versions of it.[^4]"
        "\n\nVacuum reads the table's Heap Files page by page.[^5]")


TOAST_EVIDENCE = [
    EvidenceItem(1, "Every table that has at least one variable-length column gets its own TOAST table, created "
                    "automatically.", "k1", "TOAST: Storing Large Values", ["The TOAST table"]),
    EvidenceItem(2, "An out-of-line value is cut into chunks of just under 2 KB, so that four chunks fit on one page, "
                    "and each chunk is stored as a row of the TOAST table.", "k1", "TOAST: Storing Large Values",
                 ["The TOAST table"]),
    EvidenceItem(3, "Lumen then processes the row's variable-length columns, largest first, until the row fits under "
                    "`toast_tuple_target`, which defaults to the same 2032 bytes.", "k2", "TOAST: Storing Large Values",
                 ["When TOAST acts"]),
]
COLUMNS = PageRequest(slug="variable-length-columns", title="variable-length columns", kind="entity", description="",
                      aliases=[], evidence=TOAST_EVIDENCE, links=[])


async def test_a_sentence_joining_one_statements_subject_to_anothers_verb_is_not_published(small, llm_server):
    # What Qwen2.5-Coder 1.5B wrote on this page (benchmarks/reports/real_model.md): the columns
    # are not what is stored in the TOAST table (the chunks of a value too large are), nor cut up.
    # Every word of both is in the items they cite.
    llm_server.responder = lambda request: sentences(
        ("Variable-length columns are stored in a separate table called the TOAST table.", ["2"]),
        ("Every table that has at least one variable-length column gets its own TOAST table, created automatically.",
         ["1"]),
        ("Out-of-line values are cut into chunks of just under 2 KB.", ["2"]),
        ("Each chunk is stored as a row of the TOAST table.", ["2"]),
        ("Each variable-length column is cut up.", ["3"]),
        ("Lumen processes the row's variable-length columns, largest first, until the row fits under "
         "`toast_tuple_target`.", ["3"]),
    )
    markdown = await small.write_page(COLUMNS, TEMPLATE)
    assert llm_server.calls["page_sentences"] == 1
    assert "stored in a separate table" not in markdown and "cut up" not in markdown
    assert markdown == (
        "Every table that has at least one variable-length column gets its own TOAST table, created automatically.[^1] "
        "Out-of-line values are cut into chunks of just under 2 KB.[^2] Each chunk is stored as a row of the TOAST "
        "table.[^2]\n\nLumen processes the row's variable-length columns, largest first, until the row fits under "
        "`toast_tuple_target`.[^3]")
