"""The offline page writer: every sentence comes from the evidence and carries its citation."""

from __future__ import annotations

import re

from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import EvidenceItem, LinkTarget, PageRequest
from compendium.templates.schema import RefineSettings, Template
from compendium.tokens import count_tokens

TEMPLATE = Template(name="docs")

EVIDENCE = [
    EvidenceItem(
        ref=1,
        text="Granite keeps recently used pages in the Shared Buffer Pool. The pool is sized at startup.",
        chunk_id="a",
        heading_path=["Memory"],
        about=["shared-buffer-pool", "granite"],
    ),
    EvidenceItem(
        ref=2,
        text="The Shared Buffer Pool is a region of memory that caches table and index pages.",
        chunk_id="b",
        heading_path=["Memory", "Buffers"],
        about=["shared-buffer-pool"],
    ),
    EvidenceItem(
        ref=3,
        text="The background writer flushes dirty pages from the Shared Buffer Pool to disk.",
        chunk_id="c",
        document="Server Processes",
        heading_path=["Background Processes"],
        about=["shared-buffer-pool", "background-writer"],
    ),
    EvidenceItem(
        ref=4,
        text="The background writer flushes the dirty pages from the Shared Buffer Pool to disk!",
        chunk_id="d",
        document="Tuning",  # the same fact in another document: a near-duplicate to fold
        heading_path=["Background Processes"],
        about=["shared-buffer-pool", "background-writer"],
    ),
    EvidenceItem(
        ref=5,
        text="The background writer sleeps between rounds to spare the Shared Buffer Pool.\n\n```\nbgwriter_delay = 200ms\n```",
        chunk_id="e",
        heading_path=["Background Processes"],
        about=["background-writer", "shared-buffer-pool"],
    ),
    EvidenceItem(
        ref=6,
        text="Checkpoints write every dirty buffer of the Shared Buffer Pool to the data files.",
        chunk_id="f",
        heading_path=["Introduction"],
        about=["shared-buffer-pool", "checkpoint"],
    ),
]

LINKS = [
    LinkTarget(slug="background-writer", title="Background Writer"),
    LinkTarget(slug="checkpoint", title="Checkpoint"),
    LinkTarget(slug="shared-buffer-pool", title="Shared Buffer Pool"),
]

CITED = re.compile(r"([^\n]*?[.!])\[\^(\d+)\]")


def request(**changes) -> PageRequest:
    fields = {
        "slug": "shared-buffer-pool",
        "title": "Shared Buffer Pool",
        "kind": "entity",
        "description": "A region of memory that caches pages.",
        "aliases": ["shared buffers", "Shared Buffer Pool"],
        "evidence": EVIDENCE,
        "links": LINKS,
    }
    fields.update(changes)
    return PageRequest(**fields)


async def write(req: PageRequest, template: Template = TEMPLATE) -> str:
    return await OfflineEngine().write_page(req, template)


def cited_sentences(page: str) -> list[tuple[str, int]]:
    """(sentence, ref) for every citation in the page."""
    out = []
    for line in page.splitlines():
        line = line.removeprefix("- ")  # a fact of the closing bullet list
        position = 0
        for m in CITED.finditer(line):
            out.append((line[position : m.end(1)].strip(), int(m.group(2))))
            position = m.end()
    return out


async def test_every_sentence_is_verbatim_evidence_with_its_own_citation():
    page = await write(request())
    cited = cited_sentences(page)
    assert len(cited) >= 4
    texts = {e.ref: " ".join(e.text.split()) for e in EVIDENCE}
    for sentence, ref in cited:
        assert sentence in texts[ref], (sentence, ref)


async def test_lead_is_the_definition_of_the_subject():
    page = await write(request())
    body = page.split("\n\n")
    assert body[0] == "# Shared Buffer Pool"
    assert body[1] == (
        "The Shared Buffer Pool is a region of memory that caches table and index pages.[^2]"
    )
    assert "*Also known as:* shared buffers" in page


async def test_near_duplicates_appear_once_citing_the_first():
    page = await write(request())
    assert page.count("flushes dirty pages from the Shared Buffer Pool to disk.[^3]") == 1
    assert "[^4]" not in page


def restating_request(*extra: EvidenceItem, documents=("Glossary", "Autovacuum")) -> PageRequest:
    """Two documents saying what the Autovacuum Daemon is in other words, the fuller one second."""
    evidence = [
        EvidenceItem(ref=1, text="The Autovacuum Daemon, also known simply as autovacuum, is the background "
                     "process that starts Vacuum on tables that need it.", chunk_id="glossary",
                     document=documents[0], heading_path=["Glossary"]),
        EvidenceItem(ref=2, text="The Autovacuum Daemon, also known simply as autovacuum, is the background "
                     "process in Lumen DB that decides when each table needs Vacuum or ANALYZE and starts "
                     "worker processes to do it. Autovacuum is enabled by default.", chunk_id="daemon",
                     document=documents[1], heading_path=["The Autovacuum Daemon"]),
        *extra,
    ]
    return request(slug="autovacuum-daemon", title="Autovacuum Daemon", aliases=["autovacuum"],
                   description="", evidence=evidence, links=[])


async def test_a_sentence_restating_another_in_other_words_appears_once_the_fuller_one_kept():
    page = await write(restating_request())
    assert page.count("also known simply as autovacuum") == 1
    assert "decides when each table needs Vacuum or ANALYZE" in page
    assert "starts Vacuum on tables that need it" not in page
    assert "Autovacuum is enabled by default.[^" in page


async def test_facts_that_share_words_but_say_different_things_are_all_kept():
    extra = [
        # other numbers are other facts
        EvidenceItem(ref=3, text="Each autovacuum worker sleeps 2 milliseconds after each round of cost-limited "
                     "work.", chunk_id="c"),
        EvidenceItem(ref=4, text="Each autovacuum worker sleeps 20 milliseconds after each round of cost-limited "
                     "work on Lumen Cloud.", chunk_id="d"),
        # a long list holds a short sentence's few words by chance
        EvidenceItem(ref=5, text="The `lumen_stat_user_tables` view shows, per table, counts of sequential and "
                     "index scans, rows inserted, updated and deleted, estimated live and dead tuples, and the "
                     "times of the last Vacuum, autovacuum, ANALYZE and autoanalyze.", chunk_id="e"),
        EvidenceItem(ref=6, text="A table with many sequential scans and many rows may be missing an index.",
                     chunk_id="f"),
    ]
    page = await write(restating_request(*extra))
    for item in extra:
        assert f"{item.text}[^" in page, item.text
    # Within one document such sentences are siblings of a reference ("Return the list of group
    # ids", "Set the list of group ids"): both stay.
    page = await write(restating_request(documents=("Autovacuum", "Autovacuum")))
    assert page.count("also known simply as autovacuum") == 2


async def test_sections_follow_source_headings_in_source_order_and_code_is_left_out():
    page = await write(request())
    headings = re.findall(r"^## (.+)$", page, flags=re.M)
    assert headings[0] == "Background Processes"  # the best supported source section first
    assert all(h.strip() and h.lower() not in ("introduction", "notes") for h in headings)
    assert "bgwriter_delay" not in page
    section = page.split("## Background Processes\n\n")[1].split("\n## ")[0]
    # one paragraph per source passage, in the order the source gives them
    assert section.index("flushes dirty pages") < section.index("sleeps between rounds")
    assert "\n\n" in section.strip()
    # a heading with a single sentence does not make a section of its own: it is a bullet
    assert "- Checkpoints write every dirty buffer" in page


async def test_a_passages_sentences_keep_the_passages_order_though_one_ranks_first():
    # The claim about the planner ranks first (it names the subject); the excerpt of the same
    # passage lists the stages in order: the page reads them in that order.
    stages = ("The parser checks the syntax.", "The rewriter expands views.",
              "The Query Planner turns the query tree into a plan tree.")
    evidence = [
        EvidenceItem(ref=1, text="The Query Planner is the part of the server that decides how a statement runs.",
                     chunk_id="p", heading_path=["The Query Planner"]),
        EvidenceItem(ref=2, text=stages[2], chunk_id="q", heading_path=["Query Planner", "From SQL to plan"]),
        EvidenceItem(ref=3, text="A statement passes through three stages before it runs:\n\n"
                     + "\n\n".join(f"{n}. {t}" for n, t in enumerate(stages, start=1)),
                     chunk_id="q", heading_path=["Query Planner", "From SQL to plan"], kind="excerpt"),
    ]
    page = await write(request(slug="query-planner", title="Query Planner", aliases=[], evidence=evidence))
    at = [page.index(t.rstrip(".")) for t in stages]
    assert at == sorted(at), page
    assert ": 1." not in page and "runs:" not in page  # the lead-in is not a sentence of its own


async def test_the_home_documents_sections_keep_the_authors_order_others_follow_by_support():
    # The guide's lead is in "Depot guide"; its sections are written install, then configure,
    # then ship. "Shipping" is said most often (three sources), yet keeps its place: a reader
    # follows the guide's steps. Another document's section comes after the guide's.
    def item(ref, text, chunk, heading, at, document="Depot guide", support=1):
        return EvidenceItem(ref=ref, text=text, chunk_id=chunk, document=document, heading_path=[heading],
                            support=support, position=at)
    evidence = [
        item(1, "The Depot is the store where crates wait for shipping.", "a", "Depot guide", 0),
        item(2, "Install the depot with the package manager of your system.", "b", "Installing", 100),
        item(3, "The depot reads its folder from the configuration file.", "b", "Installing", 160),
        item(4, "The depot configuration names the folder crates are kept in.", "c", "Configuring", 300),
        item(5, "Each depot rule names the crates it applies to.", "c", "Configuring", 360),
        item(6, "The depot ships crates in the order they arrived.", "d", "Shipping", 500, support=3),
        item(7, "The depot retries a shipment that failed once.", "d", "Shipping", 560, support=3),
        item(8, "The depot counts every crate it holds at midnight.", "e", "Reports", 40, "Reports", support=2),
        item(9, "The depot report lists each crate with its age.", "e", "Reports", 90, "Reports", support=2),
    ]
    page = await write(request(slug="depot", title="Depot", aliases=[], evidence=evidence, description=""))
    assert page.startswith("# Depot\n\nThe Depot is the store"), page
    headings = re.findall(r"^## (.+)$", page, flags=re.M)
    assert headings[:4] == ["Installing", "Configuring", "Shipping", "Reports"], page


async def test_a_passages_sentences_about_other_subjects_stay_off_the_page():
    # The passage around the planner's claim names the parser and the rewriter: outside the
    # planner's own section, those sentences are theirs, not the planner's.
    stages = ("The parser checks the syntax.", "The rewriter expands views.",
              "The Query Planner turns the query tree into a plan tree.")
    evidence = [
        EvidenceItem(ref=1, text="The Query Planner is the part of the server that decides how a statement runs.",
                     chunk_id="p", heading_path=["The Query Planner"]),
        EvidenceItem(ref=2, text=stages[2], chunk_id="q", heading_path=["From SQL to plan"]),
        EvidenceItem(ref=3, text="\n\n".join(stages), chunk_id="q", heading_path=["From SQL to plan"], kind="excerpt"),
    ]
    page = await write(request(slug="query-planner", title="Query Planner", aliases=[], evidence=evidence))
    assert stages[2].rstrip(".") in page
    assert "parser" not in page and "rewriter" not in page, page


async def test_a_sentence_comparing_with_the_subject_does_not_lead_its_page():
    # "As with SET, ..." is about REINDEX; on the SET page it may be a fact, not the lead.
    evidence = [
        EvidenceItem(ref=1, text="As with `SET`, a `REINDEX` might be needed to update the index entirely.",
                     chunk_id="a", heading_path=["Notes"]),
        EvidenceItem(ref=2, text="Run-time parameters of the session are changed with `SET` at any time.",
                     chunk_id="b", heading_path=["Configuration"]),
    ]
    page = await write(request(slug="set", title="SET", aliases=[], evidence=evidence))
    lead = page.split("\n\n")[1]
    assert lead.startswith("Run-time parameters of the session"), page
    assert "As with `SET`" in page  # still a fact of the page


async def test_an_aside_leads_its_page_only_when_no_other_sentence_can():
    # "Note: ..." and "Changed in version ...: ..." qualify the subject; they do not introduce it.
    evidence = [
        EvidenceItem(ref=1, text="Note: Unlike `iter()`, `aiter()` has no 2-argument variant.", chunk_id="a",
                     heading_path=["Built-in Functions"]),
        EvidenceItem(ref=2, text="Changed in version 3.10: `aiter()` accepts any asynchronous iterable.",
                     chunk_id="b", heading_path=["Built-in Functions"]),
        EvidenceItem(ref=3, text="Return an asynchronous iterator for an asynchronous iterable, as `aiter()` does.",
                     chunk_id="c", heading_path=["Built-in Functions"]),
    ]
    page = await write(request(slug="aiter", title="aiter()", aliases=[], evidence=evidence))
    assert page.split("\n\n")[1].startswith("Return an asynchronous iterator"), page
    assert "Note: Unlike" in page and "Changed in version 3.10" in page  # still facts of the page
    alone = await write(request(slug="aiter", title="aiter()", aliases=[], evidence=evidence[:1]))
    assert alone.split("\n\n")[1].startswith("Note: Unlike"), alone


async def test_a_definition_under_compatibility_leads_only_after_one_from_elsewhere():
    evidence = [
        EvidenceItem(ref=1, text="`ALTER INDEX` is a PostgreSQL extension.", chunk_id="a",
                     heading_path=["ALTER INDEX", "Compatibility"]),
        EvidenceItem(ref=2, text="ALTER INDEX — change the definition of an index.", chunk_id="b",
                     heading_path=["ALTER INDEX"]),
        EvidenceItem(ref=3, text="Nor does ALTER INDEX rebuild the index by itself.", chunk_id="c",
                     heading_path=["ALTER INDEX", "Notes"]),
    ]
    page = await write(request(slug="alter-index", title="ALTER INDEX", aliases=[], evidence=evidence))
    assert page.split("\n\n")[1].startswith("ALTER INDEX — change the definition"), page
    assert "is a PostgreSQL extension" in page  # still a fact of the page
    alone = await write(request(slug="alter-index", title="ALTER INDEX", aliases=[], evidence=[evidence[2]]))
    assert not alone.split("\n\n")[1].startswith("Nor does"), alone  # "Nor" leans on what came before


async def test_a_topic_page_with_no_line_saying_what_the_group_or_a_member_is_cites_nothing():
    # (a page citing nothing is withheld: its members stay in the index, reached by their links)
    evidence = [
        EvidenceItem(ref=1, text="Concurrent Execution", chunk_id="a", heading_path=["Concurrent Execution"]),
        EvidenceItem(ref=2, text="Permitted key expressions are restricted as described in the match statement.",
                     chunk_id="b", heading_path=["Patterns"]),
        EvidenceItem(ref=3, text="Permitted key expressions are restricted as described in the match statement.",
                     chunk_id="c", heading_path=["Patterns"]),  # the best supported sentence
        EvidenceItem(ref=4, text="A pool of worker threads runs calls asynchronously with `ThreadPoolExecutor`.",
                     chunk_id="d", heading_path=["concurrent.futures"]),
    ]
    links = [LinkTarget("threadpoolexecutor", "ThreadPoolExecutor"), LinkTarget("match", "match statement")]
    page = await write(request(slug="concurrent-execution", title="Concurrent Execution", kind="topic",
                               description="", aliases=[], evidence=evidence, links=links))
    assert "[^" not in page and "Permitted key expressions" not in page, page
    assert "[[threadpoolexecutor|ThreadPoolExecutor]]" in page and "[[match|match statement]]" in page


async def test_the_tail_of_a_sentence_cut_behind_a_formula_is_not_quoted():
    evidence = [
        EvidenceItem(ref=1, text="The Shared Buffer Pool is a cache of pages in memory.", chunk_id="a"),
        EvidenceItem(ref=2, text="is compared to the total number of pages read since the pool was last reset.",
                     chunk_id="b", heading_path=["Tuning"]),
        EvidenceItem(ref=3, text="shared_buffers sets the size of the Shared Buffer Pool at startup.", chunk_id="c",
                     heading_path=["Tuning"]),
    ]
    page = await write(request(evidence=evidence))
    assert "is compared to the total" not in page
    assert "shared_buffers sets the size" in page  # a lowercase name opens a sentence of its own


async def test_a_sentence_leaning_on_a_missing_one_is_left_out():
    evidence = [
        EvidenceItem(ref=1, text="The Shared Buffer Pool is a cache of pages in memory.", chunk_id="a"),
        EvidenceItem(ref=2, text="It is also flushed by the background writer at intervals.", chunk_id="b"),
    ]
    page = await write(request(evidence=evidence))
    assert "It is also flushed" not in page
    # "With it, ..." and "For this reason, ..." lean back as much as "It ..." does.
    evidence += [
        EvidenceItem(ref=3, text="With it, a reader never waits for the Shared Buffer Pool to fill.", chunk_id="c"),
        EvidenceItem(ref=4, text="For this reason, the Shared Buffer Pool is sized at startup.", chunk_id="d"),
    ]
    page = await write(request(evidence=evidence))
    assert "With it" not in page and "For this reason" not in page


async def test_what_follows_an_entry_shown_under_another_heading_is_not_shown_under_this_one():
    # Both commands list "`-c`: Select the crate." The page shows the row once, under depot-pack;
    # depot-ship's row is folded into it, so its "The crate is chosen by its label." has no label here.
    row = "`-c`: Select the crate."
    def item(ref, text, chunk, heading, at, elsewhere=()):
        return EvidenceItem(ref=ref, text=text, chunk_id=chunk, document="Depot tools", heading_path=[heading],
                            position=at, elsewhere=list(elsewhere))
    evidence = [
        item(1, "The Depot tools pack and ship crates.", "t", "Depot tools", 0),
        item(2, "The depot-pack command packs crates for shipping.", "p", "Invoking depot-pack", 100),
        item(3, row, "p", "Invoking depot-pack", 150, elsewhere=[("s", 400)]),
        item(4, "`-q`: Pack without a word.", "p", "Invoking depot-pack", 175),
        item(5, "The depot-ship command ships packed crates.", "s", "Invoking depot-ship", 350),
        item(6, "The crate is chosen by its label.", "s", "Invoking depot-ship", 400 + len(row) + 1),
        item(7, "`-n`: Ship nothing, only say what would be shipped.", "s", "Invoking depot-ship", 460),
    ]
    page = await write(request(slug="depot-tools", title="Depot tools", aliases=[], evidence=evidence, description=""))
    assert row in page and "Pack without a word." in page
    assert "The crate is chosen by its label." not in page, page
    assert "`-n`: Ship nothing" in page  # an entry of its own after the folded one
    # On the page of the option itself, the row is its lead: its text goes on after it either way.
    own = [item(1, row, "p", "Invoking depot-pack", 150, elsewhere=[("s", 400)]), evidence[5]]
    page = await write(request(slug="c", title="-c", aliases=[], evidence=own, description=""))
    assert "The crate is chosen by its label." in page, page


async def test_a_documents_own_this_extension_opening_leads_its_page_before_a_members_entry_or_history():
    # MAP's description joins what several passages say of the subject; its first piece, the
    # document's own opening, leads. "Previously, ..." is history and leads only when nothing can.
    opening = "This extension allows you to embed depot graphs in your documents."
    entry = "`graph`: Directive for embedding a single depot graph."
    history = "Previously, output always was PNG."
    evidence = [
        EvidenceItem(ref=1, text=history, chunk_id="h", heading_path=["depot_graph_format"], support=3),
        EvidenceItem(ref=2, text=entry, chunk_id="g", heading_path=["ext.depotgraph"], support=2),
        EvidenceItem(ref=3, text=opening, chunk_id="o", heading_path=["ext.depotgraph"]),
    ]
    req = request(slug="ext-depotgraph", title="ext.depotgraph", aliases=[], evidence=evidence,
                  description=f"{opening} {entry} {history}")
    page = await write(req)
    assert page.startswith(f"# ext.depotgraph\n\n{opening}"), page


async def test_a_note_after_the_second_copy_of_a_shared_sentence_keeps_its_antecedent():
    # Two overloads under one heading share "This packs a crate usable by `unpack()`."; the
    # page shows it once, from the first. The note after the second copy leans on it: shown.
    shared = "This packs a crate usable by `unpack()`."
    note = "Do not use this method for more than 64 crates in one depot."
    second = "`pack(Iterable crates)`: Packs the given crates."
    def item(ref, text, chunk, at, kind="claim"):
        return EvidenceItem(ref=ref, text=text, chunk_id=chunk, document="Packer", heading_path=["pack"],
                            position=at, kind=kind)
    evidence = [
        item(1, "The Packer packs crates for the depot.", "t", 0),
        item(2, "`pack(Crate... crates)`: Packs the given array of crates.", "a", 100),
        item(3, shared, "a", 158),
        item(4, second, "b", 300, "excerpt"),
        item(5, f"{second}\n\n{shared}\n\n{note}", "b", 300, "excerpt"),
        item(6, note, "b", 300 + len(second) + 1 + len(shared) + 1),
    ]
    page = await write(request(slug="packer", title="Packer", aliases=[], evidence=evidence, description=""))
    assert page.count(shared) == 1 and note in page, page


async def test_a_sentence_about_older_versions_leads_only_when_nothing_else_can():
    evidence = [
        EvidenceItem(ref=1, text="In older versions, crates were packed by hand.", chunk_id="h", support=3),
        EvidenceItem(ref=2, text="Crates are packed by a machine at night.", chunk_id="d"),
        EvidenceItem(ref=3, text="Each packed crate carries a label with its address.", chunk_id="e"),
    ]
    page = await write(request(slug="packing-guide", title="Packing guide", aliases=[], evidence=evidence,
                               description=""))
    assert page.startswith("# Packing guide\n\nCrates are packed by a machine at night."), page


async def test_related_links_only_from_request_links_without_self():
    page = await write(request())
    links = re.findall(r"\[\[([^\]|]+)\|([^\]]+)\]\]", page)
    assert links == [("background-writer", "Background Writer"), ("checkpoint", "Checkpoint")]


async def test_page_stays_within_its_token_budget():
    full = await write(request())
    small = await write(request(max_tokens=120))
    assert count_tokens(small) <= 120 < count_tokens(full)
    assert "[^2]" in small  # the lead survives the cut


async def test_no_evidence_gives_a_lead_only_page_with_the_description():
    page = await write(request(evidence=[], links=[]))
    assert (
        page
        == "# Shared Buffer Pool\n\nA region of memory that caches pages.\n\n*Also known as:* shared buffers\n"
    )
    assert "##" not in page


async def test_update_rebuilds_the_same_page_from_the_same_evidence():
    first = await write(request())
    again = await write(request(existing_markdown=first))
    assert again == first


async def test_template_page_layout_is_used():
    layout = "TITLE {{ title }}\n{% for s in sections %}{{ s.heading }}: {{ s.sentences | length }}\n{% endfor %}"
    template = Template(name="custom", refine=RefineSettings(page_template=layout))
    page = await write(request(), template)
    assert page.startswith("TITLE Shared Buffer Pool\n")
    assert "Background Processes: 2" in page  # refs 3 and 5; 4 folded into 3


async def test_a_subject_written_as_inline_code_still_leads_with_its_definition():
    evidence = [
        EvidenceItem(ref=1, text="`VACUUM FULL` can take much longer than a plain vacuum of the table.", chunk_id="a",
                     heading_path=["Notes"], about=["vacuum-full"]),
        EvidenceItem(ref=2, text="`VACUUM FULL` is a variant of vacuum that rewrites the whole table.", chunk_id="b",
                     heading_path=["Maintenance"], about=["vacuum-full"]),
    ]
    page = await write(request(slug="vacuum-full", title="VACUUM FULL", aliases=[], description="",
                               evidence=evidence, links=[]))
    body = page.split("# VACUUM FULL", 1)[1].strip()
    assert body.startswith("`VACUUM FULL` is a variant of vacuum")


async def test_a_reference_pages_purpose_line_leads_though_it_has_no_full_stop():
    evidence = [
        EvidenceItem(ref=1, text="Although `EXPLAIN` discards the output, the statement is executed.", chunk_id="a",
                     heading_path=["EXPLAIN", "Description"], about=[]),
        EvidenceItem(ref=2, text="EXPLAIN — show the execution plan of a statement", chunk_id="b",
                     heading_path=["EXPLAIN"], kind="excerpt", about=[]),
    ]
    page = await write(request(slug="explain", title="EXPLAIN", aliases=[], description="", evidence=evidence, links=[]))
    assert page.split("\n\n")[1] == "EXPLAIN — show the execution plan of a statement[^2]"


async def test_a_sentence_saying_what_the_subject_is_leads_over_one_saying_what_it_does():
    evidence = [
        EvidenceItem(ref=1, text="A comment is removed from the input stream before further syntax analysis.",
                     chunk_id="a", heading_path=["Lexical Structure"], support=3, about=[]),
        EvidenceItem(ref=2, text="A comment is a sequence of characters beginning with double dashes.",
                     chunk_id="b", heading_path=["Lexical Structure"], about=[]),
    ]
    page = await write(request(slug="comment", title="comment", aliases=[], description="", evidence=evidence, links=[]))
    assert page.split("\n\n")[1].startswith("A comment is a sequence of characters")


async def test_section_headings_drop_the_manuals_numbers_and_labels_but_not_to_a_bare_generic_word():
    glossary = [
        EvidenceItem(ref=i, text=text, chunk_id=f"g{i}", document=document, heading_path=path,
                     about=["shared-buffer-pool"])
        for i, (text, document, path) in enumerate([
            ("The Shared Buffer Pool holds copies of table pages in memory.", "Appendix M. Glossary",
             ["Appendix M. Glossary"]),
            ("Each backend reads pages through the Shared Buffer Pool.", "Appendix M. Glossary",
             ["Appendix M. Glossary"]),
            ("The Shared Buffer Pool is shared by every server process.", "13.1. Introduction", []),
            ("A full Shared Buffer Pool evicts the least recently used page.", "13.1. Introduction", []),
            ("Dirty pages stay in the Shared Buffer Pool until a checkpoint writes them.", "13.1. Introduction", []),
        ], start=1)
    ]
    headings = re.findall(r"^## (.+)$", await write(request(evidence=glossary)), flags=re.M)
    assert "Glossary" in headings and "Appendix M. Glossary" not in headings
    assert "13.1. Introduction" in headings and "Introduction" not in headings


async def test_a_topic_page_says_what_the_group_is_then_lists_its_members_with_what_each_is():
    evidence = [
        EvidenceItem(ref=1, text="Merge strategies decide how the histories of two branches are combined.",
                     chunk_id="a", heading_path=["Merge strategies"], kind="excerpt"),
        EvidenceItem(ref=2, text="The ort strategy is the default strategy when pulling or merging one branch.",
                     chunk_id="b", heading_path=["ort"]),
        EvidenceItem(ref=3, text="`octopus`: This resolves cases with more than two heads.", chunk_id="c",
                     heading_path=["octopus"]),
        EvidenceItem(ref=5, text="subtree runs after the others.", chunk_id="e", heading_path=["subtree"]),
        EvidenceItem(ref=4, text="Readers of the mailing list may remember a long thread about it.", chunk_id="d",
                     heading_path=["History"]),
    ]
    links = [LinkTarget("ort", "ort strategy"), LinkTarget("octopus", "octopus"), LinkTarget("subtree", "subtree")]
    page = await write(request(slug="merge-strategies", title="Merge strategies", kind="topic", description="",
                               aliases=[], evidence=evidence, links=links))
    assert page.split("\n\n")[1].startswith("Merge strategies decide how"), page
    assert "- [[ort|The ort strategy]] is the default strategy" in page
    assert "- [[octopus|`octopus`]]: This resolves cases" in page
    assert "mailing list" not in page  # no member's line, nothing the group is
    # a sentence opening with a member but not saying what it is: the member is a link only
    assert "runs after the others" not in page and "[[subtree|subtree]]" in page


async def test_release_notes_are_the_subjects_history_never_its_lead():
    evidence = [
        EvidenceItem(ref=1, text="`MultiPartParser` allowed directory-traversal via uploaded files.", chunk_id="n",
                     document="Django 3.1.8 release notes — Django 3.2.25 documentation", heading_path=["Bugfixes"]),
        EvidenceItem(ref=2, text="`MultiPartParser` parses multipart form data into files and fields.", chunk_id="r",
                     document="File uploads", heading_path=["Upload handlers"]),
    ]
    page = await write(request(slug="multipartparser", title="MultiPartParser", description="", aliases=[],
                               evidence=evidence, links=[]))
    assert page.split("\n\n")[1].startswith("`MultiPartParser` parses multipart form data"), page
    assert "## History\n\n- Django 3.1.8 release notes:\n  `MultiPartParser` allowed directory-traversal" in page


async def test_an_api_entrys_returns_line_saying_nothing_more_is_left_out_and_its_call_is_no_alias():
    evidence = [
        EvidenceItem(ref=1, text="`Matcher`: A matcher of character runs.", chunk_id="m",
                     document="Matcher", heading_path=["Class Matcher"]),
        EvidenceItem(ref=2, text="`comma()`: Returns a matcher which matches the comma character.\n\n"
                     "Returns: a matcher for a comma.", chunk_id="c", document="Matcher",
                     heading_path=["Class Matcher", "Method Details", "comma"], kind="excerpt"),
        EvidenceItem(ref=3, text="`split()`: Matches the characters a tokenizer splits on.\n\n"
                     "Returns: the split matcher, never null.", chunk_id="s", document="Matcher",
                     heading_path=["Class Matcher", "Method Details", "split"], kind="excerpt"),
    ]
    page = await write(request(slug="matcher", title="Matcher", description="", aliases=["Matcher()"],
                               evidence=evidence, links=[]))
    assert "Returns: a matcher for a comma" not in page, page  # the entry's text says it already
    assert "Returns: the split matcher, never null." in page  # says what the text does not
    assert "Also known as" not in page  # "Matcher()" is its constructor, not another name


async def test_the_section_named_after_the_subject_opens_its_page_whatever_its_letter_label():
    evidence = [
        EvidenceItem(ref=1, text="The ISO 3166 standard defines two character codes for many countries. "
                     "All abbreviations for countries used here should come from this standard.",
                     chunk_id="b", document="GNU manual: B. Country Codes", heading_path=["B. Country Codes"],
                     kind="excerpt"),
    ]
    page = await write(request(slug="country-codes", title="Country Codes", aliases=[], evidence=evidence, links=[],
                               description="All abbreviations for countries used here should come from this standard."))
    assert page.split("\n\n")[1].startswith("The ISO 3166 standard defines two character codes"), page


async def test_a_generic_class_leads_with_its_own_description_not_its_constructors():
    evidence = [
        EvidenceItem(ref=1, text="`MutablePair()`: Create a new pair instance of two nulls.", chunk_id="k",
                     document="MutablePair", heading_path=["Class MutablePair", "Constructor Details", "MutablePair"]),
        EvidenceItem(ref=2, text="`MutablePair<L,R>`: A mutable pair consisting of two elements.", chunk_id="c",
                     document="MutablePair", heading_path=["Class MutablePair<L,R>"]),
    ]
    page = await write(request(slug="mutablepair", title="MutablePair", description="", aliases=["MutablePair()"],
                               evidence=evidence, links=[]))
    assert page.split("\n\n")[1].startswith("`MutablePair<L,R>`: A mutable pair"), page


async def test_a_command_list_line_naming_the_command_with_its_man_section_repeats_its_name_line():
    evidence = [
        EvidenceItem(ref=1, text="`git-whatchanged`: Show logs with difference each commit introduces",
                     chunk_id="n", document="git-whatchanged(1)", heading_path=["NAME"]),
        EvidenceItem(ref=2, text="`git-whatchanged(1)`: Show logs with difference each commit introduces.",
                     chunk_id="g", document="git(1)", heading_path=["Ancillary Commands"]),
        EvidenceItem(ref=3, text="New users are encouraged to use git-log(1) instead of git-whatchanged.",
                     chunk_id="d", document="git-whatchanged(1)", heading_path=["DESCRIPTION"]),
    ]
    page = await write(request(slug="git-whatchanged", title="git-whatchanged", description="", aliases=[],
                               evidence=evidence, links=[]))
    assert page.count("Show logs with difference each commit introduces") == 1, page


async def test_an_entry_whose_term_is_one_word_starts_its_own_paragraph():
    # git-stash's subcommands: "clear" is a plain word, its entry still reads as an entry
    text = ("`pop [<stash>]`: Remove a single stashed state from the stash list. Applying the state can "
            "fail with conflicts.\n\nclear: Remove all the stash entries. Note that those entries will then "
            "be subject to pruning.")
    evidence = [EvidenceItem(ref=1, text=text, chunk_id="s", document="git-stash", heading_path=["COMMANDS"],
                             about=["git-stash"])]
    page = await write(request(slug="git-stash", title="git-stash", description="", aliases=[],
                               evidence=evidence, links=[]))
    assert "\n\nclear: Remove all the stash entries.[^1]" in page, page


async def test_passing_mentions_of_an_undefined_subject_make_no_page():
    passing = [EvidenceItem(ref=1, text="Some operating systems have `iconv` in the C library, for example glibc.",
                            chunk_id="a", heading_path=["Installation"], about=["operating-systems"])]
    page = await write(request(slug="operating-systems", title="operating systems", description="", aliases=[],
                               evidence=passing))
    assert not cited_sentences(page)  # a page citing nothing, which REFINE withholds
    defined = await write(request(slug="operating-systems", title="operating systems",
                                  description="Operating systems run programs.", aliases=[], evidence=passing))
    assert cited_sentences(defined)  # an authored description keeps the page


async def test_one_sentence_said_of_a_phrase_makes_no_page_one_about_a_code_name_does():
    # "What gets a page": a subject the authors never defined, said something of once, is a
    # link target only; a code name's one sentence says what that name does
    said = EvidenceItem(ref=1, text="The attacker chooses an object ID to steal and sends a ref to it.",
                        chunk_id="a", heading_path=["Security"], about=["attacker-chooses"])
    page = await write(request(slug="attacker-chooses", title="attacker chooses", description="", aliases=[],
                               evidence=[said], links=[]))
    assert "[^" not in page, page
    coded = EvidenceItem(ref=1, text="`FETCH_HEAD` records the branch which you fetched from a remote repository.",
                         chunk_id="a", heading_path=["Special refs"], about=["fetch-head"])
    page = await write(request(slug="fetch-head", title="FETCH_HEAD", description="", aliases=[],
                               evidence=[coded], links=[]))
    assert "records the branch which you fetched" in page

