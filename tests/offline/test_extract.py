"""The offline MAP: what a user of the wiki sees come out of a chunk of real prose."""

from __future__ import annotations

import pytest

from compendium.engines.offline import OfflineEngine
from compendium.engines.offline.extract import extract_chunk
from compendium.engines.offline.sentences import sentences_of, split_sentences
from compendium.engines.tasks import ChunkInput, ExtractionBatch
from compendium.templates.schema import MapSettings, Template, TypeSpec

TEMPLATE = Template(
    name="docs",
    entity_types=[
        TypeSpec(name="technology"),
        TypeSpec(name="component"),
        TypeSpec(name="concept"),
        TypeSpec(name="setting", patterns=[r"^[a-z]+(_[a-z]+)+$"]),
    ],
    relation_types=[TypeSpec(name=n) for n in ("uses", "depends_on", "part_of", "related_to")],
)

STORAGE = """# Durability

Granite writes every change to the Write-Ahead Log (WAL) before it touches the data files, e.g. heap and index pages.
The WAL is a sequential record of every change made to the cluster.
A checkpoint is a point in the log at which all data files are known to be up to date.
The Shared Buffer Pool keeps recently used pages in memory. Granite uses the WAL for crash recovery.
The background writer flushes dirty pages from the Shared Buffer Pool to disk.

```sql
SELECT * FROM granite_stat_io;
```

| setting | default |
|---------|---------|
| wal_level | replica |

Note: the `granite_stat_io` view shows one row per backend process.
Streaming replication, also known as log shipping, sends WAL records to standby servers.
Version 15.2 of Granite made the checkpoint_interval setting reloadable without a restart.
Is the WAL always enabled?
"""


def run(text: str, template: Template = TEMPLATE, heading: list[str] | None = None):
    return extract_chunk(ChunkInput(label="c1", text=text, heading_path=heading or []), template)


def by_name(reply):
    return {e.name: e for e in reply.entities}


def test_named_entities_and_identifiers_are_found():
    entities = by_name(run(STORAGE))
    assert {"Write-Ahead Log", "Granite", "Shared Buffer Pool", "granite_stat_io"} <= set(entities)
    assert "checkpoint_interval" in entities


def test_types_come_from_template_patterns_first_then_one_default():
    entities = by_name(run(STORAGE))
    assert entities["checkpoint_interval"].type == "setting"  # the template's pattern wins
    # No pattern: one default type whatever the name's shape, so that REDUCE (which groups by
    # name and type) sees "LSN" alone and "Log Sequence Number (LSN)" as one thing.
    assert entities["Granite"].type == entities["Shared Buffer Pool"].type == "concept"
    alone = by_name(run("The LSN of a record grows with every write to the log."))
    both = by_name(run("A Log Sequence Number (LSN) names a position in the log of the server."))
    assert alone["LSN"].type == both["Log Sequence Number"].type


def test_aliases_from_parenthesised_acronym_and_also_known_as():
    reply = run(STORAGE)
    entities = by_name(reply)
    assert entities["Write-Ahead Log"].aliases == ["WAL"]
    assert "WAL" not in entities  # mentions of the acronym count for the long form
    names = {e.name: e.aliases for e in reply.entities}
    assert names["streaming replication"] == ["log shipping"]


def test_a_plain_word_after_or_is_an_alternative_not_an_alias():
    text = ("The `with_query` must be a `UNION` of two `SELECT` (or equivalent) commands. "
            "Granite Server (or Granite) keeps its pages in the Shared Buffer Pool.")
    entities = by_name(run(text))
    assert "equivalent" not in entities["SELECT"].aliases
    assert entities["Granite Server"].aliases == ["Granite"]  # a name after "or" is still an alias


def test_a_phrase_or_a_list_in_parentheses_is_no_alias():
    text = ("The most obvious case is when the user asks `git diff` (or its low level implementation, "
            "`git diff-files`) for the changes. "
            "The setting defaults to `slice` for `code-block` (i.e. for `<prefix>=pre`) since version 6. "
            "Setting `noteBgColor` (or `hintBgColor`, ...) triggers the complex box.")
    aliases = [a for e in run(text).entities for a in e.aliases]
    assert not [a for a in aliases if "," in a or "`" in a or a.split()[0] in ("its", "for")], aliases


def test_also_known_with_an_adverb_between():
    reply = run(
        "The Autovacuum Daemon, also known simply as autovacuum, is the background process "
        "that starts vacuum workers. The Background Writer, also commonly called the bgwriter, "
        "writes dirty pages."
    )
    names = {e.name: e.aliases for e in reply.entities}
    assert names["Autovacuum Daemon"] == ["autovacuum"]
    assert names["Background Writer"] == ["bgwriter"]


def test_acronym_before_its_expansion_and_short_for():
    reply = run(
        "Our planner relies on MVCC (multiversion concurrency control) for isolation. "
        "The CBO, short for Cost-Based Optimizer, picks the cheapest plan."
    )
    entities = by_name(reply)
    assert entities["multiversion concurrency control"].aliases == ["MVCC"]
    assert entities["Cost-Based Optimizer"].aliases == ["CBO"]


def test_descriptions_prefer_definitional_sentences():
    entities = by_name(run(STORAGE))
    assert entities["Write-Ahead Log"].description == (
        "The WAL is a sequential record of every change made to the cluster."
    )


def test_concepts_come_from_definitions():
    concepts = {c.term: c.definition for c in run(STORAGE).concepts}
    assert concepts["checkpoint"] == (
        "A checkpoint is a point in the log at which all data files are known to be up to date."
    )


def test_a_word_opening_a_clause_after_a_label_is_no_name():
    text = (
        "Changed in version 3.8: Similar to `bytes.hex()`, `memoryview.hex()` now supports separators.\n\n"
        "Note: Granite writes the log first. Every write in Granite goes through the log."
    )
    names = set(by_name(run(text)))
    assert "Similar" not in names and "Note" not in names
    assert "Granite" in names  # capitalised mid-sentence too: a name wherever it stands
    names = set(by_name(run("Changed in version 3.2: Added Windows support. The Windows installer sets PATH.")))
    assert "Windows" in names and "Added Windows" not in names


def test_a_phrase_cut_out_of_a_dotted_name_is_not_a_concept():
    text = (
        "The entry is a valid sys.path entry for the finder.\n\n"
        "Every valid sys.path entry is tried in turn. A path entry finder reads each path entry. A path entry names a directory."
    )
    terms = {c.term for c in run(text).concepts}
    assert "valid sys" not in terms and "path entry" in terms, terms


def test_a_phrase_cut_out_of_a_hyphened_compound_is_not_a_concept():
    text = (
        "Just-in-time compilation speeds up long queries.\n\n"
        "The planner decides whether just-in-time compilation pays. Point-in-time recovery replays the log."
    )
    terms = {c.term for c in run(text).concepts}
    assert "time compilation" not in terms and "time recovery" not in terms, terms


def test_the_tail_of_a_sentence_is_no_claim():
    text = (
        "The Granite Vacuum Daemon runs on every table.\n\n"
        "is compared to the number of tuples the Granite Vacuum Daemon inserted since the last run."
    )
    claims = [c.text for c in run(text).claims]
    assert claims == ["The Granite Vacuum Daemon runs on every table."], claims
    # A list item opening with an article is a statement of its own.
    item = "Every relation has forks:\n\n- the **Granite init fork**, used only by unlogged tables to reset them."
    assert [c.text for c in run(item).claims] == [
        "the **Granite init fork**, used only by unlogged tables to reset them."]


def test_a_bold_term_with_its_short_form_is_the_name_the_short_form_its_alias():
    text = (
        "The main parts are:\n\n- The **Write-Ahead Log (WAL)**, an append-only journal of every change.\n\n"
        "Granite flushes the Write-Ahead Log (WAL) at every commit."
    )
    names = set(by_name(run(text)))
    assert "Write-Ahead Log (WAL)" not in names and "Write-Ahead Log" in names, names


def test_a_quantity_is_not_a_concept():
    # Key phrases that recur only as measures: "million transactions", "kilobyte pages".
    text = (
        "Vacuum freezes a tuple once its age passes 50 million transactions.\n\n"
        "Warnings start 40 million transactions before wraparound. Heap pages hold 8 kilobyte pages of rows.\n\n"
        "An index is rebuilt when it holds 16 kilobyte pages of dead entries. The visibility map tracks frozen pages.\n\n"
        "The visibility map is read by every index scan. A prepared two-phase commit holds its locks.\n\n"
        "A coordinator ends each two-phase commit."
    )
    terms = {c.term for c in run(text).concepts}
    assert {"visibility map", "two-phase commit"} <= terms  # recurring phrases still are
    assert not {t for t in terms if "million" in t or "kilobyte" in t}, terms


def test_claims_are_verbatim_sentences_not_code_tables_headings_or_questions():
    reply = run(STORAGE)
    texts = [c.text for c in reply.claims]
    assert "The WAL is a sequential record of every change made to the cluster." in texts
    for text in texts:
        assert text in " ".join(STORAGE.split())  # verbatim after whitespace normalisation
        assert "SELECT" not in text and "|" not in text and not text.startswith("#")
        assert not text.endswith("?")
    claim = next(c for c in reply.claims if c.text.startswith("Granite uses the WAL"))
    assert claim.entities == ["Granite"]  # what it is about; the WAL is only mentioned (a link)


def test_relations_typed_by_cue_words_with_strength():
    text = (
        "Granite uses the Shared Buffer Pool for caching. "
        "Granite reads pages through the Shared Buffer Pool. "
        "The Shared Buffer Pool is part of Granite Server. "
        "Granite Server depends on Linux for memory mapping."
    )
    relations = {(r.source, r.target): r for r in run(text).relations}
    uses = relations[("Granite", "Shared Buffer Pool")]
    assert uses.type == "uses" and uses.strength == 2.0 and uses.description == "uses"
    assert relations[("Shared Buffer Pool", "Granite Server")].type == "part_of"
    assert relations[("Granite Server", "Linux")].type == "depends_on"


def test_relation_without_cue_falls_back_and_reversed_cue_flips_direction():
    text = (
        "Granite and Linux were tested together. The Shared Buffer Pool is used by Granite Server."
    )
    relations = {(r.source, r.target): r for r in run(text).relations}
    assert relations[("Granite", "Linux")].type == "related_to"
    assert relations[("Granite Server", "Shared Buffer Pool")].type == "uses"


def test_boilerplate_and_sentence_openers_are_not_entities():
    text = (
        "Note that Table 3 lists every option. However, the Example in Section 4.2 is outdated. "
        "See Also the Chapter on tuning. On Monday in January the Granite team met. "
        "Replication copies data. This works because replication is asynchronous."
    )
    names = set(by_name(run(text)))
    for word in (
        "Note",
        "Table",
        "Table 3",
        "However",
        "Example",
        "Section",
        "See Also",
        "Chapter",
        "Monday",
        "January",
        "Replication",
        "This",
        "The",
        "On",
    ):
        assert word not in names
    assert "Granite" in names


def test_max_items_per_chunk_is_respected():
    template = TEMPLATE.model_copy(update={"map": MapSettings(max_items_per_chunk=2)})
    reply = run(STORAGE, template)
    assert len(reply.entities) <= 2 and len(reply.claims) <= 2 and len(reply.relations) <= 2


def test_topics_from_heading_and_key_names():
    topics = [t.name for t in run(STORAGE, heading=["Server", "3.1. Durability"]).topics]
    assert topics[0] == "Durability"
    assert "Write-Ahead Log" in topics


def test_sentence_splitting_keeps_abbreviations_versions_and_code_together():
    text = "Use e.g. `pg.conf.sample` here. Version 15.2 fixed it, i.e. the crash. Dr. Smith agreed! Done."
    assert split_sentences(text) == [
        "Use e.g. `pg.conf.sample` here.",
        "Version 15.2 fixed it, i.e. the crash.",
        "Dr. Smith agreed!",
        "Done.",
    ]


def test_code_blocks_tables_and_headings_are_not_prose():
    sentences = [s.text for s in sentences_of(STORAGE)]
    assert not any("SELECT" in s or "wal_level" in s or s.startswith("#") for s in sentences)
    assert (
        sentences_of("    indented = code()\n    more()\n\nReal prose here.")[0].text
        == "Real prose here."
    )


def test_bad_template_pattern_is_a_clear_error():
    from compendium.errors import TemplateError

    bad = Template(name="bad", entity_types=[TypeSpec(name="thing", patterns=["(unclosed"])])
    with pytest.raises(TemplateError, match="thing"):
        run(STORAGE, bad)


def test_public_surface_is_the_engine_and_it_meets_the_protocol():
    import compendium.engines.offline as offline
    from compendium.engines.base import Engine

    assert offline.__all__ == ["OfflineEngine"]
    assert isinstance(OfflineEngine(), Engine)


async def test_engine_batch_labels_every_item_and_records_no_tokens():
    engine = OfflineEngine()
    batch = ExtractionBatch(
        chunks=[
            ChunkInput(label="c1", text=STORAGE),
            ChunkInput(label="c2", text="Granite uses Linux daily."),
        ]
    )
    reply = await engine.extract(batch, TEMPLATE)
    assert {e.chunk for e in reply.entities} == {"c1", "c2"}
    assert engine.usage.total_tokens == 0
    assert engine.name == "offline" and engine.model.startswith("offline-rules-")


def test_a_heading_that_reached_the_text_as_a_plain_line_is_no_name_and_no_claim():
    from compendium.engines.offline.extract import extract_chunk
    from compendium.engines.tasks import ChunkInput
    from compendium.templates.registry import load_template

    chunk = ChunkInput(
        "c1",
        "Return Value\n\nReturns status, either OK or ERROR.\n\nSee Also\n\nSPI_execute runs the plan.",
        ["SPI_cursor_open", "Return Value"],
        "SPI",
    )
    reply = extract_chunk(chunk, load_template("wiki"))
    names = {e.name for e in reply.entities}
    assert "Return Value" not in names and "See Also" not in names
    assert "SPI_execute" in names
    assert all("Return Value" not in c.text for c in reply.claims)


def _with_blocks(parts: list[tuple[str, str]], heading: list[str]) -> ChunkInput:
    """A chunk as the structure-faithful readers give it: text plus [kind, start, end] blocks."""
    text, blocks = "", []
    for kind, part in parts:
        if text:
            text += "\n\n"
        blocks.append([kind, len(text), len(text) + len(part)])
        text += part
    return ChunkInput(label="c1", text=text, heading_path=heading, blocks=blocks)


def test_inline_code_names_are_entities_and_code_fragments_are_not():
    text = (
        "The `pathlib` module offers classes representing filesystem paths for every platform. "
        "Unlike `os.path`, the `pathlib` module treats paths as objects. "
        "Call `Path.open()` with `mode='r'` or pass `--force` to `pathlib` helpers in `README.txt` files."
    )
    reply = run(text)
    names = {e.name for e in reply.entities} | {c.term for c in reply.concepts}
    assert {"pathlib", "os.path", "Path.open()"} <= names
    assert not names & {"mode='r'", "--force", "README.txt"}


def test_a_single_letter_in_inline_code_is_a_placeholder_not_an_entity():
    text = (
        "If `x` is a `float`, `round()` returns the nearest integer to `x`. "
        "Given classes `A` and `B`, `super()` looks up `f()` in the `__mro__` of `B`."
    )
    names = {e.name for e in run(text).entities}
    assert {"float", "round()", "super()", "__mro__"} <= names
    assert not names & {"x", "A", "B", "f()"}


def test_a_possessive_is_no_part_of_a_name():
    text = ("Unlike Java’s garbage collector, CPython counts references. "
            "Note that C’s `strlen()` stops at a null byte, as in Java.")
    names = {e.name for e in run(text).entities} | {c.term for c in run(text).concepts}
    assert "Java" in names and not {"Java’s", "C’s", "C"} & names


def test_a_definition_list_term_names_its_definition_and_its_acronym():
    chunk = _with_blocks(
        [("heading", "Acronyms"), ("term", "GIN"), ("definition", "Generalized Inverted Index"),
         ("term", "WAL"), ("definition", "Write-Ahead Log"),
         ("term", "decorator"), ("definition", "A function returning another function, usually applied as a wrapper.")],
        ["Acronyms"],
    )
    reply = extract_chunk(chunk, TEMPLATE)
    entities = {e.name: e for e in reply.entities}
    assert "GIN" in entities["Generalized Inverted Index"].aliases
    assert "WAL" in entities["Write-Ahead Log"].aliases
    concepts = {c.term: c for c in reply.concepts} | {e.name: e for e in reply.entities}
    assert concepts["decorator"].definition.startswith("A function returning another function")
    assert not any(c.text in ("GIN", "WAL", "decorator") for c in reply.claims)


def test_title_cased_terms_do_not_make_a_sentence_opening_word_a_name():
    chunk = _with_blocks(
        [("paragraph", "Partitioning refers to splitting one large table into smaller physical pieces. "
                       "Partitioning can help when a table is larger than memory."),
         ("term", "Range Partitioning"),
         ("definition", "The table is partitioned into ranges defined by a key column or set of columns.")],
        ["Overview"],
    )
    reply = extract_chunk(chunk, TEMPLATE)
    defined = {c.term: c.definition for c in reply.concepts} | {e.name: e.description for e in reply.entities}
    assert defined.get("partitioning", "").startswith("Partitioning refers to splitting")
    assert "Partitioning" not in defined


def test_a_sentence_shouted_in_capitals_names_nothing_and_names_beside_it_are_kept():
    text = ("THE UNIVERSITY OF CALIFORNIA SPECIFICALLY DISCLAIMS ANY WARRANTIES, INCLUDING, BUT NOT LIMITED TO, "
            "THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE.\n\n"
            "The University of California released POSTGRES under the BSD licence. Run VACUUM FULL ON A TABLE rarely.")
    names = {e.name for e in extract_chunk(ChunkInput(label="c1", text=text), TEMPLATE).entities}
    assert not any("WARRANT" in n or "INCLUDING" in n or "PURPOSE" in n for n in names), names
    assert {"University of California", "POSTGRES", "BSD"} <= names


def _chunk(text: str, title: str, blocks: list[list]) -> ChunkInput:
    return ChunkInput(label="c1", text=text, heading_path=["OPTIONS"], document_title=title, blocks=blocks)


def _definition_list(pairs: list[tuple[str, str]]) -> tuple[str, list[list]]:
    text, blocks = "", []
    for term, description in pairs:
        for kind, part in (("term", term), ("definition", description)):
            start = len(text)
            text += part
            blocks.append([kind, start, len(text)])
            text += "\n\n"
    return text, blocks


def test_an_option_is_a_fact_of_its_owner_and_never_a_subject_of_its_own():
    text, blocks = _definition_list([
        ("--squash", "Produce the working tree and index state as if a real merge happened."),
        ("--no-squash", "Perform the merge and commit the result, overriding the earlier option."),
        ("-a", "Show all the branches, both local and remote ones, in the listing."),
    ])
    reply = extract_chunk(_chunk(text, "git-merge(1)", blocks), TEMPLATE)
    names = {e.name for e in reply.entities} | {c.term for c in reply.concepts}
    assert not any(n.startswith("-") for n in names)
    assert all(c.entities == ["git-merge"] for c in reply.claims), reply.claims
    assert {c.text for c in reply.claims} >= {
        "Produce the working tree and index state as if a real merge happened.",
        "Perform the merge and commit the result, overriding the earlier option.",
    }


def test_a_glossary_entry_defines_its_own_subject():
    text, blocks = _definition_list([
        ("builder", "A class that takes parsed documents and performs an action on them."),
    ])
    reply = extract_chunk(_chunk(text, "Glossary", blocks), TEMPLATE)
    described = {c.term: c.definition for c in reply.concepts} | {e.name: e.description for e in reply.entities}
    assert described["builder"] == "A class that takes parsed documents and performs an action on them."
    assert [c.entities for c in reply.claims] == [["builder"]]


def test_contractions_single_letters_and_lone_adjectives_are_never_subjects():
    from compendium.engines.offline.subjects import never_subject

    for noise in ("I’d", "CC’d", "a", "z", "just m", "X-provided", "Perl-compatible", "dangerous", "-a"):
        assert never_subject(noise), noise
    for name in ("Git", "JSON", "table", "checkpoint", "Write-Ahead Log", "git-rebase"):
        assert not never_subject(name), name


def test_a_scope_owner_is_the_document_title_without_its_site_or_man_section():
    from compendium.engines.offline.subjects import owner_name, release_notes

    assert owner_name("git-rebase(1)") == "git-rebase"
    assert owner_name("StringUtils (Apache Commons Lang 3.12.0 API)") == "StringUtils"
    assert owner_name("Plugins - MkDocs") == "Plugins"
    assert owner_name("File handling — Django 3.2.25 documentation") == "File handling"
    assert owner_name("GNU gettext utilities: 2. The User's View") == "The User's View"
    assert owner_name("Chapter 3. The public interface to Linux-PAM") == "The public interface to Linux-PAM"
    assert owner_name("Appendix A. Glossary") == "Glossary"
    assert release_notes("Django 1.11.4 release notes — Django 3.2.25 documentation")
    assert release_notes("Manual", ["Changes in 1.7.1"]) and not release_notes("Getting Started - MkDocs")
    assert release_notes("Manual", ["v1.4.0"]) and release_notes("Manual", ["2.0 (2020-01-01)"])
    # a numbered section of a book is no release ("5.3 Working with cipher handles")
    assert not release_notes("Working with cipher handles (The Libgcrypt Reference Manual)",
                             ["5.3 Working with cipher handles"])


def test_release_notes_name_what_each_item_opens_with_and_define_nothing():
    text = ("`MultiPartParser` allowed directory-traversal via uploaded files with crafted names.\n\n"
            "Fixed a bug in Django 3.1 where the output was hidden on a test error or failure.")
    chunk = ChunkInput(label="c1", text=text, heading_path=["Bugfixes"],
                       document_title="Django 3.1.8 release notes — Django 3.2.25 documentation",
                       blocks=[["paragraph", 0, text.index("\n\n")], ["paragraph", text.index("Fixed"), len(text)]])
    reply = extract_chunk(chunk, TEMPLATE)
    assert reply.entities == [] and reply.concepts == [] and reply.topics == []
    assert [c.entities for c in reply.claims if c.text.startswith("`MultiPartParser`")] == [["MultiPartParser"]]
    assert all("release notes" not in " ".join(c.entities) for c in reply.claims)


def test_a_term_under_a_code_name_is_its_member_and_one_under_a_group_heading_is_a_subject():
    def about(text: str, heading: str, term: str, scope: str) -> list[str]:
        chunk = ChunkInput(label="c1", text=text, heading_path=["Reference", heading], document_title="Settings",
                           blocks=[["definition", 0, len(text), term, scope]])
        return next(c.entities for c in extract_chunk(chunk, TEMPLATE).claims)

    # a field of the class its section documents
    assert about("`hint`: A single-line string providing a hint for fixing the problem.", "CheckMessage",
                 "hint", "") == ["CheckMessage"]
    # the reader's scope, written like code
    assert about("`BACKEND`: The cache backend to use for the cache.", "CACHES", "BACKEND", "CACHES") == ["CACHES"]
    # a term with a heading of its own is a subject of its own, whatever group holds it
    assert about("`ALLOWED_HOSTS`: A list of strings representing the host names this site can serve.",
                 "ALLOWED_HOSTS", "ALLOWED_HOSTS", "Core Settings") == ["ALLOWED_HOSTS"]


def test_an_acronym_defined_in_a_list_is_a_subject_with_its_expansion_as_an_alias():
    text = "`GIN`: Generalized Inverted Index"
    chunk = ChunkInput(label="c1", text=text, heading_path=["Acronyms"], document_title="Appendix L. Acronyms",
                       blocks=[["definition", 0, len(text), "GIN", ""]])
    reply = extract_chunk(chunk, TEMPLATE)
    entity = next(e for e in reply.entities if "GIN" in (e.name, *e.aliases))
    assert {entity.name, *entity.aliases} >= {"GIN", "Generalized Inverted Index"}
    assert entity.description == text


def test_an_entry_that_only_points_at_another_defines_nothing(tmp_path):
    from compendium.ingest.chunking import chunk_document
    from compendium.ingest.readers import read_document

    path = tmp_path / "flags.html"
    path.write_text("""<html><body><h1>Flags of a catalog</h1><dl>
<dt><code>c-format</code>, <code>no-c-format</code></dt><dd><p>These flags mark a C format string,
so the checker compares its directives with the original's.</p></dd>
<dt><code>lua-format</code>, <code>no-lua-format</code></dt><dd><p>Likewise for Lua, see Lua Format Strings.</p></dd>
<dt><code>sh-format</code></dt><dd><p>Same as <code>c-format</code> for shell scripts.</p></dd></dl></body></html>""",
                    encoding="utf-8")
    doc = read_document(path)
    span = chunk_document(doc, max_tokens=400, overlap_tokens=40)[0]
    chunk = ChunkInput("c1", doc.text[span.start:span.end], list(span.heading_path), doc.title,
                       [list(b) for b in span.blocks])
    reply = extract_chunk(chunk, TEMPLATE)
    described = {e.name: e.description for e in reply.entities} | {c.term: c.definition for c in reply.concepts}
    assert described.get("c-format", "").startswith("`c-format`, `no-c-format`: These flags mark")
    assert not described.get("lua-format") and not described.get("sh-format")


def test_a_man_pages_see_also_section_says_nothing_about_its_command():
    said = "`msgsort` is documented in full as a Texinfo manual, kept beside this page."
    described = run(said, heading=["msgsort", "DESCRIPTION"])
    pointers = run(said, heading=["msgsort", "SEE ALSO"])
    assert described.claims
    assert pointers.claims == []


def test_a_literal_value_is_a_subject_only_where_the_authors_define_it():
    text = ("A `NULL` pointer for the dir_name parameter returns the binding associated with domain_name. "
            "A `NULL` return value from `bindtextdomain` indicates a failure.")
    reply = extract_chunk(ChunkInput(label="c1", text=text, heading_path=["bindtextdomain"]), TEMPLATE)
    names = {e.name for e in reply.entities} | {c.term for c in reply.concepts}
    assert not any(n.strip("`").lower() == "null" for n in names), names
    text, blocks = _definition_list([("None", "An object frequently used to represent the absence of a value.")])
    reply = extract_chunk(_chunk(text, "Built-in Constants", blocks), TEMPLATE)
    described = {c.term: c.definition for c in reply.concepts} | {e.name: e.description for e in reply.entities}
    assert described["None"] == "An object frequently used to represent the absence of a value."


def test_a_parameter_of_a_signature_is_its_function_s_and_never_a_subject():
    parts = [
        ("definition", "`HttpResponse.__init__(content=b'', charset=None, headers=None)`: Instantiates an "
                       "`HttpResponse` object with the given page content.", "__init__", "HttpResponse"),
        ("paragraph", "`headers` is a `dict` of HTTP headers for the response.", "", ""),
        ("paragraph", "The `headers` parameter was added.", "", ""),
        ("definition", "`HttpResponse.set_cookie(key, httponly=False)`: Sets a cookie.", "set_cookie", "HttpResponse"),
        ("paragraph", "HttpOnly is a flag included in a Set-Cookie HTTP response header.", "", ""),
    ]
    text, blocks = "", []
    for kind, part, term, scope in parts:
        start = len(text)
        text += part
        blocks.append([kind, start, len(text), term, scope] if term else [kind, start, len(text)])
        text += "\n\n"
    reply = extract_chunk(ChunkInput(label="c1", text=text, heading_path=["Methods"],
                                     document_title="Request and response objects", blocks=blocks), TEMPLATE)
    names = {e.name for e in reply.entities} | {c.term for c in reply.concepts}
    assert not {"headers", "charset", "content"} & {n.strip("`") for n in names}, names
    about = {c.text: c.entities for c in reply.claims}
    assert about["`headers` is a `dict` of HTTP headers for the response."] == ["HttpResponse"]
    assert about["The `headers` parameter was added."] == ["HttpResponse"]
    assert "HttpOnly" in names  # written as a name of its own, not as the parameter


def test_a_man_page_s_title_in_capitals_is_spelt_as_its_command():
    text = "When used with the -s option the program behaves like the echo command."
    reply = extract_chunk(ChunkInput(label="c1", text=text, heading_path=["NGETTEXT", "DESCRIPTION"],
                                     document_title="NGETTEXT"), TEMPLATE)
    names = {e.name for e in reply.entities} | {c.term for c in reply.concepts}
    assert "ngettext" in names and "NGETTEXT" not in names, names
    # a class page titled in capitals is not a man page
    text = "When used with a proxy the class connects through the proxy host."
    reply = extract_chunk(ChunkInput(label="c1", text=text, heading_path=["URL", "Method Details"],
                                     document_title="URL"), TEMPLATE)
    assert "URL" in {e.name for e in reply.entities} | {c.term for c in reply.concepts}


def test_the_values_an_option_takes_are_its_owners_facts_and_never_subjects(tmp_path):
    from compendium.ingest.chunking import chunk_document
    from compendium.ingest.readers import read_document

    path = tmp_path / "crater.html"
    path.write_text("""<html><head><title>crater</title></head><body><h1>crater</h1>
<p>The crater tool packs crates for shipping.</p><h2>Output details</h2><dl compact="compact">
<dt> &lsquo;<samp>--wrap-mode[=<var>TYPE</var>]</samp>&rsquo;</dt>
<dd><p>Set how labels wrap. The supported values are:</p>
<dl compact="compact">
<dt> &lsquo;<samp>narrow-wrap</samp>&rsquo;</dt><dd><p>Break label lines at sixty columns.</p></dd>
<dt> &lsquo;<samp>wide-wrap</samp>&rsquo;</dt><dd><p>Break label lines at one hundred and twenty columns.</p></dd>
</dl></dd></dl></body></html>""", encoding="utf-8")
    doc = read_document(path)
    span = next(s for s in chunk_document(doc, max_tokens=400, overlap_tokens=40) if "wrap" in doc.text[s.start:s.end])
    chunk = ChunkInput("c1", doc.text[span.start:span.end], list(span.heading_path), doc.title,
                       [list(b) for b in span.blocks])
    reply = extract_chunk(chunk, TEMPLATE)
    # named, so a link may point at them, but defined and described as nothing of their own
    assert not {c.term for c in reply.concepts} & {"narrow-wrap", "wide-wrap"}
    assert all(not e.description for e in reply.entities if e.name in ("narrow-wrap", "wide-wrap"))
    about = {c.text: c.entities for c in reply.claims}
    assert about["`narrow-wrap`: Break label lines at sixty columns."] == ["crater"]


def _definitions(entries: list[tuple[str, str]], heading: list[str], title: str) -> ChunkInput:
    """A chunk of definition entries as the readers give them: "term: text" with its term."""
    text, blocks = "", []
    for term, body in entries:
        if text:
            text += "\n\n"
        part = f"{term}: {body}"
        blocks.append(["definition", len(text), len(text) + len(part), term.strip("`"), ""])
        text += part
    return ChunkInput(label="c1", text=text, heading_path=heading, document_title=title, blocks=blocks)


def test_an_event_named_with_hyphens_is_named_whole():
    chunk = _definitions(
        [("`env-updated (app, env)`", "Emitted after reading all documents, when the environment is up to date."),
         ("`build-finished (app, exception)`", "Emitted when a build has finished, before Sphinx exits.")],
        ["Application API", "Sphinx core events"], "Application API")
    named = {c.entities[0] for c in extract_chunk(chunk, TEMPLATE).claims if c.text.startswith("`")}
    assert named == {"env-updated", "build-finished"}, named


def test_a_subcommand_described_by_what_it_does_belongs_to_its_command():
    chunk = _definitions(
        [("add", "Add notes for a given object (defaults to HEAD)."),
         ("edit", "Edit the notes for a given object (defaults to HEAD)."),
         ("merge", "Merge is the default subcommand of nothing at all.")],
        ["git-notes(1) Manual Page", "SUBCOMMANDS"], "git-notes(1)")
    owners = {c.text.split(":")[0]: c.entities for c in extract_chunk(chunk, TEMPLATE).claims}
    assert owners["add"] == owners["edit"] == ["git-notes"]  # what the command does, not subjects named "add"
    assert owners["merge"] == ["merge"]  # a description naming its term as a thing keeps it a subject


def test_a_phrase_around_an_option_or_a_placeholder_is_no_subject():
    text = ("The optional argument <path> is the relative location for the cloned submodule in the superproject. "
            "The form --missing=allow-any will allow object traversal to continue if a missing object is found.")
    reply = run(text, heading=["git-submodule(1) Manual Page", "OPTIONS"])
    named = {e.name for e in reply.entities} | {c.term for c in reply.concepts} | {n for c in reply.claims for n in c.entities}
    assert not [n for n in named if "<path>" in n or "--missing" in n], named
    from compendium.engines.offline.subjects import never_subject
    assert never_subject("deinit [-f|--force] (--all|[--] <path>…)")  # a synopsis, bracketed options and all


def test_a_command_described_by_its_name_as_an_inflected_verb_belongs_to_its_page():
    chunk = _definitions(
        [("push", "Pushes the given local commit or branch to the remote branch."),
         ("fetch", "Fetches the given object, writing the necessary objects to the database.")],
        ["gitremote-helpers(7) Manual Page", "COMMANDS"], "gitremote-helpers(7)")
    owners = {c.text.split(":")[0]: c.entities for c in extract_chunk(chunk, TEMPLATE).claims}
    assert owners["push"] == owners["fetch"] == ["gitremote-helpers"]


def test_please_names_nothing():
    reply = run("Please refer to the documentation of that command. Please use the option before enabling it.")
    assert not {e.name.lower() for e in reply.entities} | {c.term.lower() for c in reply.concepts}


def test_a_colophons_sections_give_no_fact_whatever_their_full_heading():
    for heading in ("Chapter 11. Author/acknowledgments", "Copyright information for this document", "See also"):
        text = ("Thanks are also due to Sun Microsystems, especially to Vipin Samar and Charlie Lai for their advice. "
                "The Open Software Foundation published the first specification of the framework in 1995.")
        reply = run(text, heading=[heading])
        assert not reply.claims, (heading, reply.claims)


def test_eg_without_inner_dots_ends_no_sentence():
    assert split_sentences('It is suffixed with "user" (eg. "1 user" or "10 users"). The next one.') == [
        'It is suffixed with "user" (eg. "1 user" or "10 users").', "The next one."]


def test_a_glossary_titled_in_words_keeps_its_entries_as_subjects():
    chunk = _definitions(
        [("Checkpointer (process)", "An auxiliary process that is responsible for executing checkpoints."),
         ("Sequence (relation)", "A type of relation that is used to generate values.")],
        ["Glossary"], "Appendix M. Glossary")
    owners = {c.text.split(" (")[0]: c.entities for c in extract_chunk(chunk, TEMPLATE).claims}
    assert owners == {"Checkpointer": ["Checkpointer"], "Sequence": ["Sequence"]}, owners


def test_a_glossary_entry_opening_with_its_plural_keeps_its_subject():
    chunk = _definitions([("Log file", "Log files contain human-readable text lines about events.")],
                         ["Glossary"], "Appendix M. Glossary")
    assert [c.entities for c in extract_chunk(chunk, TEMPLATE).claims] == [["Log file"]]


def test_an_api_sentence_saying_what_a_code_name_does_defines_it():
    entities = by_name(run("The `pam_start` function creates the PAM context and initiates the PAM transaction. "
                           "The `pam_fail` function is deprecated since version 2."))
    assert entities["pam_start"].description.startswith("The `pam_start` function creates")
    assert not entities["pam_fail"].description  # 'is deprecated' says nothing of what it does


def test_a_member_is_named_with_its_owner_and_same_named_members_of_two_types_stay_apart():
    def member_chunk(owner: str, member: str, text: str):
        blocks = []
        at = 0
        for part in text.split("\n\n"):
            block = ["definition", at, at + len(part)]
            if part.startswith(f"`{member}`"):
                block += [member, owner]
            elif part.startswith("`"):
                block += [part[1:part.index("`", 1)], member]
            blocks.append(block)
            at += len(part) + 2
        return ChunkInput("c1", text, [f"Class {owner}", "Method Detail", member], f"{owner} (API)", blocks)

    queue = extract_chunk(member_chunk("TokenQueue", "consumeToAny",
                                       "`consumeToAny`: Consumes to the first sequence provided.\n\n"
                                       "`seq`: any number of terminators to consume to."), TEMPLATE)
    reader = extract_chunk(member_chunk("CharacterReader", "consumeToAny",
                                        "`consumeToAny`: Read characters until the first delimiter.\n\n"
                                        "`chars`: delimiters to scan for."), TEMPLATE)
    assert "TokenQueue.consumeToAny" in {e.name for e in queue.entities}
    assert "CharacterReader.consumeToAny" in {e.name for e in reader.entities}
    assert "consumeToAny" not in {e.name for e in queue.entities + reader.entities}
    # the member's heading names it as a topic with its owner too
    assert "TokenQueue.consumeToAny" in {t.name for t in queue.topics}
    # a member spelled like a type of the chunk (`dataNodes` beside `DataNode`) is the member here
    nodes = extract_chunk(member_chunk("Elements", "dataNodes",
                                       "`dataNodes`: Get `DataNode` nodes of the selected elements."), TEMPLATE)
    assert "Elements.dataNodes" in {e.name for e in nodes.entities}
    assert "DataNode" not in {e.name for e in nodes.entities}
