"""Evidence packs: most supported first, merged duplicates, excerpts, and a hard token budget."""

from compendium.engines.offline.sentences import sentences_of
from compendium.phases.evidence import (
    Source,
    Statement,
    build_evidence,
    estimate_tokens,
    rank_evidence,
)
from compendium.phases.excerpts import excerpt_around


def sources():
    return {
        "k1": Source("k1", "Intro text. Ada Lovelace wrote notes on the engine. More.", "Notes", ["G"], ["ada"]),
        "k2": Source("k2", "Babbage designed it.", "Letters"),
    }


def test_duplicates_merge_and_the_best_supported_comes_first():
    statements = [
        Statement("Ada wrote a program.", ["k1"], ["ada"]),
        Statement("Babbage built engines.", ["k2"]),
        Statement("ada  wrote a program.", ["k2"]),
        Statement("From a chunk we do not have.", ["k9"]),
    ]
    pack = build_evidence(statements, sources(), ["Ada Lovelace"], budget=1000)
    assert [i.ref for i in pack] == list(range(1, len(pack) + 1))
    first = pack[0]
    assert (first.text, first.support, first.chunk_id, first.document) == ("Ada wrote a program.", 2, "k1", "Notes")
    texts = [i.text for i in pack]
    assert "From a chunk we do not have." not in texts
    # k1's excerpt starts at the sentence that mentions the subject.
    assert "Ada Lovelace wrote notes on the engine. More." in texts


def test_the_budget_is_never_exceeded_and_smaller_items_fill_the_gap():
    long_claim = Statement("word " * 200, ["k1"])
    short = Statement("Short fact.", ["k2"])
    pack = build_evidence([long_claim, long_claim, short], sources(), [], budget=60)
    assert sum(estimate_tokens(i.text) + 8 for i in pack) <= 60
    assert "Short fact." in [i.text for i in pack]
    assert build_evidence([short], sources(), [], budget=1) == []


def test_excerpt_is_cut_to_a_window():
    text = "x " * 500
    excerpt = excerpt_around(text, ["nothing"], words=10)
    assert excerpt.endswith("…") and len(excerpt.split()) == 11
    assert excerpt_around("   ", ["a"]) == ""


def test_excerpts_of_chunks_holding_more_of_the_page_claims_come_first():
    srcs = {"k1": Source("k1", "One passage."), "k2": Source("k2", "Another passage.")}
    statements = [Statement("A.", ["k2"]), Statement("B.", ["k2"]), Statement("C.", ["k1"])]
    pack = build_evidence(statements, srcs, [], budget=1000)
    excerpts = [i.chunk_id for i in pack if i.text.endswith("passage.")]
    assert excerpts == ["k2", "k1"]
    assert {i.text for i in pack[:3]} == {"A.", "B.", "C."}  # claims before excerpts at equal support


def test_an_excerpt_never_glues_a_heading_to_the_paragraph_after_it():
    text = (
        "Arguments\n\nThe TriggerData object passed to a trigger handler.\n\n"
        "Return Value\n\nReturns OK when the trigger data was registered.\n\nNotes\n\nSee also SPI_connect."
    )
    excerpt = excerpt_around(text, ["trigger data"], words=40)
    assert excerpt == "Returns OK when the trigger data was registered."
    # From the mention's sentence on, through following prose paragraphs only, kept apart.
    assert excerpt_around("Intro line here. The WAL records changes.\n\nIt is flushed at commit.", ["WAL"]) == (
        "The WAL records changes.\n\nIt is flushed at commit."
    )


def test_an_excerpt_keeps_a_list_item_apart_from_the_sentence_before_it():
    text = (
        "A statement passes through four stages before it runs:\n\n"
        "1. The parser checks the syntax and produces a parse tree.\n\n"
        "2. The analyser resolves table and column names against the catalog and produces a query tree."
    )
    excerpt = excerpt_around(text, ["four stages"], words=24)
    assert excerpt == (
        "A statement passes through four stages before it runs:\n\n"
        "1. The parser checks the syntax and produces a parse tree.\n\n2. The analyser resolves …"
    )
    # Read back as sentences, the item's number is not the end of the lead-in.
    assert [s.text for s in sentences_of(excerpt)] == [
        "A statement passes through four stages before it runs:",
        "The parser checks the syntax and produces a parse tree.",
        "The analyser resolves …",
    ]


def test_a_mention_in_a_heading_starts_the_excerpt_at_the_paragraph_under_it():
    text = "Write-Ahead Log\n\nEvery change is logged before the page is written.\n\nSee Also\n\nCheckpoints."
    assert excerpt_around(text, ["Write-Ahead Log"]) == "Every change is logged before the page is written."


def test_an_excerpt_never_runs_from_a_prose_paragraph_into_a_term_the_reader_marked():
    text = "The default value is off.\n\n`wal_compression` (`enum`)\n\nThis parameter enables compression."
    term = text.index("`wal")
    blocks = [["paragraph", 0, 25], ["term", term, term + 26], ["definition", term + 28, len(text)]]
    # By shape alone the term ends with ")" and reads as prose, so it was glued to the paragraph.
    assert "wal_compression" in excerpt_around(text, ["default value"], words=40)
    assert excerpt_around(text, ["default value"], words=40, blocks=blocks) == "The default value is off."


def test_a_sentence_defining_the_subject_comes_first_whatever_its_support():
    statements = [
        Statement("Ada Lovelace wrote notes on the engine.", ["k1", "k2"]),
        Statement("Ada Lovelace is a mathematician of the nineteenth century.", ["k1"]),
    ]
    pack = build_evidence(statements, sources(), ["Ada Lovelace"], budget=1000)
    assert pack[0].text == "Ada Lovelace is a mathematician of the nineteenth century."


def test_a_reference_pages_purpose_line_is_its_excerpt():
    text = "EXPLAIN\n\nEXPLAIN — show the execution plan of a statement"
    blocks = [["heading", 0, 7], ["paragraph", 9, len(text)]]
    assert excerpt_around(text, ["EXPLAIN"], blocks=blocks) == "EXPLAIN — show the execution plan of a statement"


def test_no_item_names_its_own_page_and_shared_sources_are_left_as_they_are():
    shared = {"k1": Source("k1", "Ada Lovelace wrote notes. Babbage read them.", "Notes", ["G"], ["ada", "babbage"])}
    statements = [Statement("Ada wrote notes.", ["k1"], ["ada", "babbage"])]
    for own, other in (("ada", "babbage"), ("babbage", "ada")):
        ranked = rank_evidence(statements, shared, ["Ada Lovelace"], own=own)
        assert [i.about for i in ranked] == [[other], [other]]  # the claim, then the excerpt
    assert shared["k1"].about == ["ada", "babbage"] and statements[0].about == ["ada", "babbage"]


def test_an_excerpt_starts_at_a_sentence_never_inside_a_directive_written_as_code():
    text = "New in version 7.1. `.. py:data:: name`: Describes global data in a module. It is read once."
    assert excerpt_around(text, ["py:data"]) == "`.. py:data:: name`: Describes global data in a module. It is read once."
    assert excerpt_around("A crate is a box. The depot role names it.", ["depot"]) == "The depot role names it."


def test_a_claim_past_an_entry_s_first_sentence_knows_where_its_entry_starts_and_is_not_published_without_it():
    import asyncio

    from compendium.engines.offline import OfflineEngine
    from compendium.engines.tasks import PageRequest
    from compendium.templates.schema import Template

    apply = "`--apply`: Use applying strategies to rebase (calling `git-am` internally)."
    empty = ("`--empty={drop,keep,ask}`: How to handle commits that become empty. "
             "With drop (the default), commits that become empty are dropped.")
    text = f"{apply}\n\n{empty}"
    blocks = [["definition", 0, len(apply), "--apply", "git-rebase"],
              ["definition", len(apply) + 2, len(text), "--empty", "git-rebase"]]
    source = {"c": Source("c", text, "git-rebase", ["OPTIONS"], blocks=blocks)}
    later = "With drop (the default), commits that become empty are dropped."
    ranked = rank_evidence([Statement(apply, ["c"]), Statement(later, ["c"])], source, ["git-rebase"])
    by_text = {i.text: i for i in ranked if i.kind == "claim"}
    assert by_text[apply].entry_at(by_text[apply].position) == (-1, "")  # an entry's own first sentence
    # where --empty's entry starts
    assert by_text[later].entry_at(by_text[later].position) == (by_text[apply].position + len(apply) + 1, "--empty")
    # Offered without --empty's first sentence, the later one says nothing of what: left out.
    claims = [by_text[apply], by_text[later]]
    for n, item in enumerate(claims, start=1):
        item.ref = n
    page = asyncio.run(OfflineEngine().write_page(PageRequest(
        slug="git-rebase", title="git-rebase", kind="entity", description="Reapply commits on top of another base tip",
        aliases=[], evidence=claims,
        links=[]), Template(name="wiki")))
    assert "Use applying strategies" in page and "With drop" not in page


def test_the_opening_of_the_section_named_after_the_page_is_offered_first_though_it_holds_no_claim():
    opening = ("Custom Lookups\n\nDjango offers a wide variety of built-in lookups for filtering. "
               "This documentation explains how to write custom lookups.")
    example = "A lookup example\n\nLet's start with a small custom lookup. We will write a lookup `ne`."
    sources = {
        "open": Source("open", opening, "Custom Lookups", ["Custom Lookups"],
                       blocks=[["heading", 0, 14], ["paragraph", 16, len(opening)]]),
        "ex": Source("ex", example, "Custom Lookups", ["Custom Lookups", "A lookup example"],
                     blocks=[["heading", 0, 16], ["paragraph", 18, len(example)]]),
    }
    claims = [Statement(f"The custom lookup above is great, fact {n}.", ["ex"]) for n in range(30)]
    ranked = rank_evidence(claims, sources, ["Custom Lookups", "custom lookup"])
    # The document's first paragraph under its title leads what is offered, before thirty claims
    # of a later section; the later section's excerpt stays behind them.
    assert ranked[0].kind == "excerpt" and ranked[0].text.startswith("Django offers a wide variety")
    assert [i.kind for i in ranked[1:31]] == ["claim"] * 30
    # A passage under another heading that holds no claim of the page is about something else.
    other = {**sources, "x": Source("x", "Other\n\nCustom lookups are mentioned here.", "Other", ["Other"],
                                    blocks=[["heading", 0, 5], ["paragraph", 7, 41]])}
    assert "x" not in {i.chunk_id for i in rank_evidence(claims, other, ["Custom Lookups"])}
    # An API reference heads its subject's section with its kind: "Class Widget" opens Widget's.
    widget = "Class Widget\n\n`Widget`: A thing on the screen."
    api = {"w": Source("w", widget, "Widget", ["Class Widget"], blocks=[["heading", 0, 12], ["paragraph", 14, len(widget)]]),
           "ex": sources["ex"]}
    assert rank_evidence(claims, api, ["Widget"])[0].text == "`Widget`: A thing on the screen."
    # A book's chapter is numbered: "13. The Maintainer's View" opens the page "The Maintainer's View".
    chapter = "13. The Maintainer's View\n\nThe maintainer of a package has many responsibilities."
    book = {"c": Source("c", chapter, "The Maintainer's View", ["13. The Maintainer's View"],
                        blocks=[["heading", 0, 25], ["paragraph", 27, len(chapter)]]), "ex": sources["ex"]}
    assert rank_evidence(claims, book, ["The Maintainer's View"])[0].text.startswith("The maintainer of a package")
    # An overview's own passages are offered whether or not they hold a claim about a member.
    assert "x" in {i.chunk_id for i in rank_evidence(claims, other, ["Custom Lookups"], openings={"x"})}


def test_two_sentences_opening_alike_are_placed_where_each_stands():
    text = ("builddir: The directory that build data and static files should be placed in. "
            "This should be used when creating a WebSupport object that will be used to build data.\n\n"
            "datadir: The directory that the web support data is in. "
            "This should be used when creating a WebSupport object that will be used to retrieve data.")
    build = "This should be used when creating a WebSupport object that will be used to build data."
    retrieve = "This should be used when creating a WebSupport object that will be used to retrieve data."
    items = rank_evidence([Statement(retrieve, ["k"]), Statement(build, ["k"])],
                          {"k": Source("k", text, "WebSupport API")}, ["WebSupport"])
    at = {i.text: i.position for i in items if i.kind == "claim"}
    assert at[build] < text.index("datadir") < at[retrieve]


def test_the_later_paragraphs_of_an_entry_stand_only_with_its_first_sentence_or_on_its_own_page():
    import asyncio

    from compendium.engines.offline import OfflineEngine
    from compendium.engines.tasks import PageRequest
    from compendium.templates.schema import Template

    setdefault = "`HttpResponse.setdefault(header, value)`: Sets a header unless it has already been set."
    set_cookie = "`HttpResponse.set_cookie(key, max_age=None)`: Sets a cookie."
    max_age = "- `max_age` should be an integer number of seconds, or `None` if the cookie lasts a session."
    expires = "- If `expires` is not specified, it will be calculated from `max_age` when the cookie is set."
    text = "\n\n".join([setdefault, set_cookie, max_age, expires])
    at = [text.index(part) for part in (setdefault, set_cookie, max_age, expires)]
    blocks = [["definition", at[0], at[0] + len(setdefault), "setdefault", "HttpResponse"],
              ["definition", at[1], at[1] + len(set_cookie), "set_cookie", "HttpResponse"],
              ["item", at[2], at[2] + len(max_age), "set_cookie", "HttpResponse"],
              ["item", at[3], at[3] + len(expires), "set_cookie", "HttpResponse"]]
    source = {"c": Source("c", text, "Request and response objects", ["Methods"], blocks=blocks)}
    # The pool meets the later item first: it must still be judged after the one before it.
    claims = [Statement(s.lstrip("- "), ["c"]) for s in (expires, setdefault, max_age)]

    def page(title: str) -> str:
        ranked = [i for i in rank_evidence(claims, source, [title]) if i.kind == "claim"]
        for n, item in enumerate(ranked, start=1):
            item.ref = n
        request = PageRequest(slug=title.lower(), title=title, kind="entity", description="", aliases=[],
                              evidence=ranked, links=[])
        return asyncio.run(OfflineEngine().write_page(request, Template(name="wiki")))

    # Shown without set_cookie's own first sentence, its items would read as setdefault's.
    response = page("HttpResponse")
    assert "Sets a header unless" in response
    assert "max_age` should be" not in response and "will be calculated" not in response
    # On set_cookie's own page its title says whose they are.
    cookie = page("set_cookie")
    assert "max_age` should be" in cookie and "will be calculated" in cookie


def test_a_command_s_own_option_entries_come_before_its_other_facts():
    # git-config's page: its options' entries, routed to it, before prose said in several passages
    chunks = {k: Source(k, "Text.", "git-config", ["git-config", "OPTIONS"]) for k in ("k1", "k2", "k3")}
    statements = [
        Statement("Config files are read in a fixed order.", ["k1", "k2"]),
        Statement("`--show-scope`: Augment the output with the scope of that value.", ["k3"]),
        Statement("Only one key is supported: the first.", ["k3"]),  # a colon in prose is no entry
    ]
    ranked = [i.text for i in rank_evidence(statements, chunks, ["git-config"]) if i.kind == "claim"]
    assert ranked == ["`--show-scope`: Augment the output with the scope of that value.",
                      "Config files are read in a fixed order.", "Only one key is supported: the first."]
