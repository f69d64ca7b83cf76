"""The outline tree: known communities found, the authors' folders honoured, bounds kept, titles
that name subjects, ids and titles stable when one document comes or goes."""

from __future__ import annotations

from compendium.outline import Leaf, OutlineLimits, OutlineNode, build_outline
from compendium.outline.placement import SourceDocument, SourcePassage, Structure, place
from compendium.titles import clean_heading, is_keyword_pair

from .graphs import cliques, leaves_of


def _nodes(roots):
    return [n for r in roots for n, _d in r.walk()]


def test_a_graph_of_six_dense_groups_gives_six_root_topics_each_one_group():
    groups, edges = cliques(6, 20)
    roots = build_outline(leaves_of(groups), edges)
    assert sorted(sorted(r.all_subjects()) for r in roots) == sorted(sorted(g) for g in groups)
    # Same input, same tree.
    again = build_outline(list(reversed(leaves_of(groups))), list(reversed(edges)))
    assert [r.to_dict() for r in again] == [r.to_dict() for r in roots]


def test_a_large_graph_keeps_at_most_twelve_roots_fan_out_fifty_and_pages_two_levels_down():
    groups, edges = cliques(60, 50)
    leaves = leaves_of(groups)
    roots = build_outline(leaves, edges)
    assert 5 <= len(roots) <= 12
    for node, depth in (pair for r in roots for pair in r.walk()):
        assert len(node.children) + len(node.subjects) <= 50, node.title
        assert depth <= 2 or not node.subjects
    placed = [s for r in roots for s in r.all_subjects()]
    assert sorted(placed) == sorted(lf.id for lf in leaves)  # every page once
    # Subtopics keep the planted groups whole: each is one community, never a mix.
    subtopics = [c for r in roots for c in r.children]
    assert all(len({s[:3] for s in c.all_subjects()}) == 1 for c in subtopics)


def test_folders_come_before_communities_even_when_the_graph_says_otherwise():
    groups, edges = cliques(3, 12)
    # Each folder holds half of two graph communities: the folders must win.
    folders = {"guide": "Guide", "reference": "Reference"}
    paths = {}
    for g, group in enumerate(groups):
        for i, s in enumerate(group):
            folder = "guide" if (g + i) % 2 else "reference"
            paths[s] = [(f"dir:{folder}", folders[folder]), (f"doc:{folder}/{g}.md", f"Chapter {g} page")]
    roots = build_outline(leaves_of(groups, paths), edges)
    assert sorted(r.title for r in roots) == ["Guide", "Reference"]
    for root in roots:
        folder = root.title.lower()
        assert all(paths[s][0][0] == f"dir:{folder}" for s in root.all_subjects())


def test_a_table_of_contents_gives_the_roots_in_its_own_order():
    home = SourceDocument("d0", "html/index.html", "Manual", (
        (1, "tutorial.html"), (2, "start.html"),
        (1, "sql.html"), (2, "syntax.html"), (2, "ddl.html#top"),
        (1, "admin.html"), (2, "setup.html"), (1, "https://example.org/x.html")))
    documents = [
        home,
        SourceDocument("d1", "html/tutorial.html", "Part I. Tutorial"),
        SourceDocument("d2", "html/start.html", "1. Getting Started"),
        SourceDocument("d3", "html/sql.html", "Part II. The SQL Language"),
        SourceDocument("d4", "html/syntax.html", "4. SQL Syntax"),
        SourceDocument("d5", "html/ddl.html", "Chapter 5. Data Definition", ((1, "ddl-basics.html"),)),
        SourceDocument("d6", "html/ddl-basics.html", "5.1. Table Basics"),
        SourceDocument("d7", "html/admin.html", "Part III. Server Administration"),
        SourceDocument("d8", "html/setup.html", "18. Server Setup"),
    ]
    docs = ["d2", "d4", "d5", "d6", "d8"]
    passages = {f"c{i}": SourcePassage(f"c{i}", docs[i % 5], i, ()) for i in range(50)}
    subjects = {f"s{i}": [f"c{i}"] for i in range(50)}
    structure = Structure(documents)
    # The chapter's own TOC places its sections under it, inside the part.
    assert [t for _k, t in structure.segments("d6", ())] == ["The SQL Language", "Data Definition", "Table Basics"]
    leaves = place(subjects, {s: f"Subject {s}" for s in subjects}, {}, passages, structure)
    roots = build_outline(leaves, [], limits=OutlineLimits(max_share=1.0))  # 50 pages: no share to keep
    assert [r.title for r in roots] == ["Tutorial", "The SQL Language", "Server Administration"]
    assert len(roots[1].all_subjects()) == 30


def test_a_big_flat_folder_is_grouped_by_file_family_named_by_the_family_file():
    documents = [SourceDocument("ddl", "html/ddl.html", "Chapter 5. Data Definition")]
    documents += [SourceDocument(f"ddl{i}", f"html/ddl-part{i:02d}.html", f"5.{i}. Part {i}") for i in range(30)]
    documents += [SourceDocument(f"sql{i}", f"html/sql-cmd{i:02d}.html", f"CMD {i}") for i in range(30)]
    structure = Structure(documents, fan_out=50)
    assert structure.segments("ddl3", ())[-2:] == [("family:html/ddl", "Data Definition"),
                                                   ("doc:html/ddl-part03.html", "Part 3")]
    assert structure.segments("sql1", ())[-2][1] == "SQL"  # no family file: the prefix itself


def test_a_part_heading_of_a_document_makes_no_node_of_its_own():
    # A reference page's "Description" is about the page's command, not a subject of its own.
    documents = [SourceDocument("sel", "ref/select.html", "SELECT"), SourceDocument("wal", "ref/wal.html", "WAL")]
    structure = Structure(documents)
    assert [t for _k, t in structure.segments("sel", ("SELECT", "Description"))] == ["REF", "SELECT"]
    assert [t for _k, t in structure.segments("sel", ("SELECT", "Parameters", "FROM"))] == ["REF", "SELECT"]
    assert [t for _k, t in structure.segments("sel", ("SELECT", "Tip"))] == ["REF", "SELECT"]  # an admonition
    assert [t for _k, t in structure.segments("wal", ("WAL", "WAL buffers"))] == ["REF", "WAL", "WAL buffers"]


def test_pages_the_toc_misses_make_no_root_named_after_the_folder_of_every_document():
    documents = [
        SourceDocument("home", "docs/index.html", "Manual", ((1, "tutorial.html"),)),
        SourceDocument("tut", "docs/tutorial.html", "Part I. Tutorial"),
        SourceDocument("lone", "docs/extra/notes.html", "Release Notes"),
    ]
    structure = Structure(documents)
    assert [t for _k, t in structure.segments("lone", ())] == ["Extra", "Release Notes"]  # not under "Manual"
    # Without a TOC the folders are the whole structure, as they were.
    plain = Structure([SourceDocument("a", "docs/a.md", "A"), SourceDocument("b", "docs/b/c.md", "C")])
    assert [t for _k, t in plain.segments("b", ())] == ["Docs", "B", "C"]


def test_pages_no_toc_lists_hang_under_the_page_they_link_up_to_present_or_not():
    documents = [
        SourceDocument("sql", "html/sql.html", "Part II. The SQL Language", (), ("index.html", "PostgreSQL Documentation")),
        SourceDocument("ddl", "html/ddl.html", "Chapter 5. Data Definition", (), ("sql.html", "Part II. The SQL Language")),
        SourceDocument("basics", "html/ddl-basics.html", "5.1. Table Basics", (), ("ddl.html", "Chapter 5. Data Definition")),
        # Its chapter is not in the knowledge base: the link's title names the part it sits in.
        SourceDocument("intro", "html/mvcc-intro.html", "13.1. Introduction", (), ("mvcc.html", "Chapter 13. Concurrency Control")),
        SourceDocument("iso", "html/transaction-iso.html", "13.2. Transaction Isolation", (), ("mvcc.html", "Chapter 13. Concurrency Control")),
        SourceDocument("os", "html/library/os.html", "os", (), ("index.html", "The Python Standard Library")),
    ]
    structure = Structure(documents)
    assert [t for _k, t in structure.segments("basics", ())] == ["The SQL Language", "Data Definition", "Table Basics"]
    assert structure.segments("intro", ()) == [("doc:html/mvcc.html", "Concurrency Control"),
                                               ("doc:html/mvcc-intro.html", "Introduction")]
    assert structure.segments("iso", ())[0] == structure.segments("intro", ())[0]
    # A missing index page stands for its folder, under the title its pages give it.
    assert [t for _k, t in structure.segments("os", ())] == ["The Python Standard Library", "os"]
    # The manual's home page makes no node: its parts are the roots.
    assert [t for _k, t in structure.segments("sql", ())] == ["The SQL Language"]


def test_a_top_page_that_links_up_to_nothing_is_a_part_not_the_home():
    documents = [
        SourceDocument("home", "html/contents.html", "Contents", (
            (1, "tutorial/index.html"), (2, "tutorial/intro.html"), (1, "library/index.html"), (2, "library/os.html"))),
        SourceDocument("tut", "html/tutorial/index.html", "The Tutorial"),
        SourceDocument("intro", "html/tutorial/intro.html", "1. Introduction"),
        SourceDocument("lib", "html/library/index.html", "The Library"),
        SourceDocument("os", "html/library/os.html", "os"),
        # No TOC lists the legacy guide; its index page links up to nothing, its chapters up to it.
        SourceDocument("legacy", "html/distutils/index.html", "Distributing (Legacy)", ((1, "setup.html"),)),
        SourceDocument("setup", "html/distutils/setup.html", "2. Writing the Setup Script", (),
                       ("index.html", "Distributing (Legacy)")),
        SourceDocument("ext", "html/distutils/ext.html", "3. Extending", (), ("index.html", "Distributing (Legacy)")),
    ]
    structure = Structure(documents)
    assert [t for _k, t in structure.segments("os", ())] == ["The Library", "os"]  # the home makes no node
    assert [t for _k, t in structure.segments("setup", ())] == ["Distributing (Legacy)", "Writing the Setup Script"]
    assert structure.segments("legacy", ()) == [("doc:html/distutils/index.html", "Distributing (Legacy)")]
    assert structure.segments("ext", ())[0] == structure.segments("legacy", ())[0]
    # The home lists every part: a subject it names sits where the rest of the manual names it.
    passages = {"c1": SourcePassage("c1", "home", 0, ()), "c2": SourcePassage("c2", "home", 1, ()),
                "c3": SourcePassage("c3", "os", 0, ())}
    leaves = place({"listed": ["c1", "c2", "c3"], "only": ["c1"]}, {"listed": "getcwd()", "only": "Contents"},
                   {}, passages, structure)
    where = {leaf.id: [t for _k, t in leaf.path] for leaf in leaves}
    assert where == {"listed": ["The Library", "os"], "only": ["Contents"]}


def test_a_node_named_after_its_largest_part_lists_that_parts_chapters_not_a_child_of_its_own_name():
    groups, edges = cliques(5, 12)
    paths = {}
    for g, group in enumerate(groups):
        for s in group:  # four chapters of one part, and a small chapter of another part
            paths[s] = ([("doc:sp.html", "Server Programming"), (f"doc:ch{g}.html", f"Chapter {g}")] if g < 4
                        else [("doc:other.html", "Other Part"), ("doc:ch4.html", "Chapter 4")])
    limits = OutlineLimits(min_roots=1, max_roots=1, leaf_pages=10)
    roots = build_outline(leaves_of(groups, paths), edges, limits=limits)
    assert [r.title for r in roots] == ["Server Programming"]
    assert sorted(c.title for c in roots[0].children) == ["Chapter 0", "Chapter 1", "Chapter 2", "Chapter 3", "Other Part"]


def test_the_pages_of_a_chapters_own_index_page_are_its_pages_not_a_child_named_after_one():
    groups, edges = cliques(5, 10)
    paths = {s: [("doc:types.html", "Data Types")] for s in groups[0]}  # the chapter's index page
    for g, title in ((1, "heapq"), (2, "bisect")):
        paths.update({s: [("doc:types.html", "Data Types"), (f"doc:{title}.html", title)] for s in groups[g]})
    for g, title in ((3, "re"), (4, "string")):
        paths.update({s: [("doc:text.html", "Text Processing"), (f"doc:{title}.html", title)] for s in groups[g]})
    # Data Types holds 60% of these 50 pages: without a share cap it stays one root.
    roots = build_outline(leaves_of(groups, paths), edges, limits=OutlineLimits(min_roots=1, leaf_pages=10, max_share=1.0))
    chapter = next(r for r in roots if r.title == "Data Types")
    assert sorted(c.title for c in chapter.children) == ["bisect", "heapq"]
    assert sorted(chapter.subjects) == sorted(groups[0])


def test_a_community_named_like_a_document_elsewhere_is_the_one_named_with_its_parent():
    groups, edges = cliques(4, 12)

    def outline(doc_title):
        paths = {}
        for g, part in ((0, "Part A"), (1, "Part B")):
            for i, s in enumerate(groups[g]):  # each part: two documents of six subjects
                doc = (f"doc:{g}{i // 6}.html", doc_title if (g, i // 6) == (0, 0) else f"Module {g}{i // 6}")
                paths[s] = [("doc:lib.html", "Library"), (f"doc:{part}.html", part), doc]
        # (the other two groups sit in no part of the authors: communities split them)
        return build_outline(leaves_of(groups, paths), edges, limits=OutlineLimits(min_roots=1, leaf_pages=8, max_share=1.0))

    loose = next(r for r in outline("Module 00") if r.title != "Library")
    community = loose.children[0].title  # named after its central member, a level above the documents
    roots = outline(community)  # a document of Part A titled like that member
    named = {n.title: n.key for n in _nodes(roots)}
    assert named[community] == "doc:00.html"
    parent = next(r for r in roots if r.title != "Library").title
    assert named[f"{community} ({parent})"] == ""


def test_a_node_titled_like_a_part_of_any_document_is_named_with_its_parent():
    groups, edges = cliques(4, 12)
    chapters = ["Concurrency Control", "Concurrency Control", "Server Setup", "Server Setup"]
    docs = ["Introduction", "Transaction Isolation", "Introduction", "Creating a Cluster"]  # as Structure cleans them
    paths = {s: [(f"doc:{chapters[g]}.html", chapters[g]), (f"doc:{g}.html", docs[g])]
             for g, group in enumerate(groups) for s in group}
    roots = build_outline(leaves_of(groups, paths), edges,  # two chapters of half the pages each: no share cap
                          limits=OutlineLimits(min_roots=1, leaf_pages=12, max_share=1.0))
    titles = sorted(n.title for n in _nodes(roots))
    assert titles == ["Concurrency Control", "Creating a Cluster", "Introduction (Concurrency Control)",
                      "Introduction (Server Setup)", "Server Setup", "Transaction Isolation"]


def test_a_title_a_node_nearer_the_top_has_is_named_with_its_parent():
    groups, edges = cliques(3, 12)
    paths = {s: [(f"doc:{g}.html", title)] for g, title in enumerate(["Write-Ahead Log", "Server Configuration"])
             for s in groups[g]}
    paths.update({s: [("doc:1.html", "Server Configuration"), ("doc:2.html", "Write-Ahead Log")] for s in groups[2]})
    roots = build_outline(leaves_of(groups, paths), edges,  # two chapters of half the pages each: no share cap
                          limits=OutlineLimits(min_roots=1, leaf_pages=12, max_share=1.0))
    titles = [n.title for n in _nodes(roots)]
    assert [t for t in titles if "Write-Ahead" in t] == ["Write-Ahead Log", "Write-Ahead Log (Server Configuration)"]
    assert len(set(titles)) == len(titles)


def test_titles_never_pair_two_member_names():
    groups, edges = cliques(40, 30, bridges=4)
    leaves = leaves_of(groups)
    names = {lf.title for lf in leaves}
    roots = build_outline(leaves, edges)
    for node in _nodes(roots):
        assert node.title and not is_keyword_pair(node.title, names)
        assert " and " not in node.title
    assert is_keyword_pair("Subject 0-1 and Subject 2-3", names)
    assert clean_heading("Chapter 5. Data Definition") == "Data Definition"
    assert clean_heading("5.4. Constraints") == "Constraints"
    assert clean_heading("F.2. amcheck") == "amcheck" and clean_heading("III. Server Administration") == "Server Administration"
    assert clean_heading("Appendix F. Additional Supplied Modules") == "Additional Supplied Modules"
    assert clean_heading("Part A: Basics") == "Basics" and clean_heading("Section a new approach") == "Section a new approach"


def _moves(before, after):
    where_b = {s: n.id for n in _nodes(before) for s in n.subjects}
    where_a = {s: n.id for n in _nodes(after) for s in n.subjects}
    return sum(1 for s in where_b.keys() & where_a.keys() if where_b[s] != where_a[s])


def test_one_document_added_or_removed_moves_few_pages_and_keeps_ids_and_titles():
    groups, edges = cliques(40, 30, bridges=2)
    leaves = leaves_of(groups)
    first = build_outline(leaves, edges)
    # A new document: five new subjects tied into group 7.
    new = [Leaf(f"new{i}", f"New subject {i}", 1.0, [], (10_000 + i,)) for i in range(5)]
    grown_edges = [*edges, *((f"new{i}", groups[7][i], 3.0) for i in range(5))]
    grown = build_outline([*leaves, *new], grown_edges, previous=first)
    assert _moves(first, grown) <= 0.02 * len(leaves)
    ids_before = {n.id: n.title for n in _nodes(first)}
    ids_after = {n.id: n.title for n in _nodes(grown)}
    assert len(ids_before.keys() & ids_after.keys()) >= 0.9 * len(ids_before)
    assert all(ids_after[i] == t for i, t in ids_before.items() if i in ids_after)
    # A document removed: group 3 loses five subjects.
    gone = set(groups[3][:5])
    shrunk = build_outline([lf for lf in leaves if lf.id not in gone],
                           [e for e in edges if e[0] not in gone and e[1] not in gone], previous=first)
    assert _moves(first, shrunk) <= 0.02 * len(leaves)
    after = {n.id: n.title for n in _nodes(shrunk)}
    assert len(ids_before.keys() & after.keys()) >= 0.9 * len(ids_before)


def test_every_page_is_in_the_tree_after_an_add_even_one_tied_to_nothing():
    """A new document's subjects that no relation ties to the others (a lone function of a new
    module page) still get a place; so do those tied in, and every old one."""
    groups, edges = cliques(40, 30, bridges=2)
    leaves = leaves_of(groups)
    first = build_outline(leaves, edges)
    lone = [Leaf(f"lone{i}", f"Lone subject {i}", 1.0, [], (20_000 + i,)) for i in range(2)]
    tied = [Leaf(f"new{i}", f"New subject {i}", 1.0, [], (10_000 + i,)) for i in range(3)]
    grown_edges = [*edges, *((f"new{i}", groups[7][i], 3.0) for i in range(3))]
    grown = build_outline([*leaves, *tied, *lone], grown_edges, previous=first)
    listed = [s for n in _nodes(grown) for s in n.subjects]
    assert sorted(listed) == sorted(lf.id for lf in [*leaves, *tied, *lone])  # each once


def test_limits_are_settings():
    groups, edges = cliques(10, 10)
    roots = build_outline(leaves_of(groups), edges, limits=OutlineLimits(max_roots=3, leaf_pages=20, fan_out=20))
    assert len(roots) <= 3
    assert all(len(n.children) + len(n.subjects) <= 20 for n in _nodes(roots))


def test_a_node_titled_like_its_parent_is_named_with_the_nearest_ancestor_of_another_title():
    from compendium.outline.node_names import name_parts_with_their_parent

    child = OutlineNode(id="c", title="xmlrpc.client", key="", subjects=["s1", "s2"])
    parent = OutlineNode(id="p", title="xmlrpc.client", key="doc:lib/index.html#own", children=[child])
    root = OutlineNode(id="r", title="The Python Standard Library", key="doc:lib/index.html", children=[parent])
    name_parts_with_their_parent([root])
    assert (parent.title, child.title) == ("xmlrpc.client", "xmlrpc.client (The Python Standard Library)")


def test_subtopics_stay_when_their_node_shrinks_a_little_below_a_leafs_size():
    # A chapter holds a document of four sections (52 pages: past a leaf, so opened into its
    # sections) and a small one. One page less would fit a leaf; as one, every page would move.
    groups, edges = cliques(7, 13)
    groups[4] = groups[4][:10]
    paths = {}
    for g, group in enumerate(groups):
        for s in group:
            paths[s] = ([("doc:net.html", "Internet"), ("doc:req.html", "urllib.request"), (f"heading:req.html#{g}", f"Section {g}")]
                        if g < 4 else [("doc:net.html", "Internet"), ("doc:http.html", "http")] if g == 4
                        else [("doc:text.html", "Text"), (f"doc:t{g}.html", f"Text {g}")])
    fewer = [groups[0][:-1], groups[1][:-1], *groups[2:]]  # the document now has 50 pages
    for depth in (3, 2):  # its sections under the document's node, or (no room) under the chapter
        limits = OutlineLimits(min_roots=1, leaf_pages=50, max_depth=depth, max_share=1.0)
        first = build_outline(leaves_of(groups, paths), edges, limits=limits)
        again = build_outline(leaves_of(fewer, paths), edges, limits=limits, previous=first)
        fresh = build_outline(leaves_of(fewer, paths), edges, limits=limits)
        sections = {n.id for r in first for n, _d in r.walk() if n.title.startswith("Section")}
        assert len(sections) == 4
        assert sections <= {n.id for r in again for n, _d in r.walk()}, depth  # no page moved
        assert not sections & {n.id for r in fresh for n, _d in r.walk()}, depth  # from scratch: one leaf


def test_a_root_past_a_quarter_of_the_pages_is_opened_into_the_authors_parts():
    groups, edges = cliques(8, 40)
    # One part holds six documents (75% of the pages); two other parts hold one each.
    paths = {s: [("dir:big", "Commands"), (f"doc:{g}.html", f"cmd-{g}")] for g in range(6) for s in groups[g]}
    paths.update({s: [(f"dir:other{g}", f"Part {'AB'[g - 6]}")] for g in (6, 7) for s in groups[g]})
    roots = build_outline(leaves_of(groups, paths), edges)
    total = sum(len(g) for g in groups)
    assert all(len(r.all_subjects()) <= 0.25 * total for r in roots)
    assert sorted(r.title for r in roots) == sorted([*(f"cmd-{g}" for g in range(6)), "Part A", "Part B"])
    # A root that one document fills is cut into runs of its sections in reading order, each named
    # by the document with its first and last section: a document's headings never name a root alone.
    groups = [g[:25] for g in groups[:7]] + [groups[7]]
    total = sum(len(g) for g in groups)
    one = {s: [("doc:manual.html", "Manual"), (f"heading:manual.html#{g}", f"Section {g}")] for g in range(7)
           for s in groups[g]}
    one.update({s: [("doc:notes.html", "Notes on the manual")] for s in groups[7]})
    roots = build_outline(leaves_of(groups, one), edges)
    assert [r.title for r in roots] == ["Manual (Section 0 – Section 1)", "Manual (Section 2 – Section 3)",
                                        "Manual (Section 4 – Section 5)", "Manual (Section 6)", "Notes on the manual"]
    assert all(len(r.all_subjects()) <= 0.25 * total for r in roots)
    # Sections stay whole, in the document's order.
    section = {s: g for g in range(7) for s in groups[g]}
    run_of = {section[s]: r.id for r in roots for s in r.all_subjects() if s in section}
    assert all(run_of[section[s]] == r.id for r in roots for s in r.all_subjects() if s in section)
    assert [run_of[g] for g in range(7)] == sorted((run_of[g] for g in range(7)), key=[r.id for r in roots].index)
    # A few pages fewer keep every section in the run it was in, past the cap by a margin.
    fewer = [g[:-5] if i == 2 else g for i, g in enumerate(groups)]
    again = build_outline(leaves_of(fewer, one), edges, previous=roots)
    assert all(run_of[section[s]] == r.id for r in again for s in r.all_subjects() if s in section)


def test_release_notes_are_listed_newest_version_first():
    from compendium.outline.tree import by_version as _by_version

    nodes = [OutlineNode(id=t, title=t) for t in
             ("Version 1.1 (2020-02-22)", "Version 1.10.0 (2022-09-27)", "Version 0.16 (2016-11-04)", "Version 1.2")]
    assert [n.title for n in _by_version(nodes)] == [
        "Version 1.10.0 (2022-09-27)", "Version 1.2", "Version 1.1 (2020-02-22)", "Version 0.16 (2016-11-04)"]
    plain = [OutlineNode(id=t, title=t) for t in ("Tutorial", "Reference", "Version 2.0")]
    assert _by_version(plain) == plain  # not a list of versions: the authors' order stands


def test_a_part_of_documents_past_its_share_is_cut_into_runs_not_lifted_as_one_page_roots():
    # 24 man pages of a page each, grouped by their kind, beside four chapters of ten pages.
    leaves = [Leaf(f"c{i}", f"cmd-{i:02}", 1.0, [("kind:Commands", "Commands"), (f"doc:cmd-{i:02}.1.html", f"cmd-{i:02}")],
                   (i,)) for i in range(24)]
    leaves += [Leaf(f"p{c}-{i}", f"Chapter {c} page {i}", 1.0, [(f"doc:ch{c}.html", f"Chapter {c}")], (100 + 10 * c + i,))
               for c in range(4) for i in range(10)]
    roots = build_outline(leaves, [])
    commands = [r for r in roots if r.title.startswith("Commands")]
    assert [r.title for r in commands] == ["Commands (cmd-00 – cmd-11)", "Commands (cmd-12 – cmd-23)"]
    assert sorted(s for r in commands for s in r.all_subjects()) == sorted(f"c{i}" for i in range(24))
    assert all(len(r.all_subjects()) <= 0.25 * len(leaves) for r in roots)
    assert not any(r.title.startswith("cmd-") for r in roots)


def _settings(count: int, skip: int | None = None) -> list[Leaf]:
    """A reference page under a part of the manual: `count` settings in one flat section, A to Z."""
    names = [f"SETTING_{i:03}" for i in range(count) if i != skip]
    settings = [Leaf(n, n, 1.0, [("dir:ref", "API Reference"), ("doc:ref/settings.html", "Settings"),
                                 ("heading:ref/settings.html#Core settings", "Core settings")], (i,))
                for i, n in enumerate(names)]
    auth = [Leaf(f"AUTH_{i}", f"AUTH_{i}", 1.0, [("dir:ref", "API Reference"), ("doc:ref/settings.html", "Settings"),
                                                 ("heading:ref/settings.html#Auth", "Auth")], (200 + i,))
            for i in range(10)]
    guide = [Leaf(f"g{i}", f"Guide page {i}", 1.0, [("doc:tutorial.html", "Tutorial")], (300 + i,)) for i in range(30)]
    return settings + auth + guide


def test_a_flat_section_too_big_for_one_node_is_cut_in_its_reading_order_not_named_after_a_member():
    leaves = _settings(120)
    # The graph ties settings across the alphabet: its communities are not the authors' runs.
    edges = [(f"SETTING_{i:03}", f"SETTING_{(i + 40) % 120:03}", 3.0) for i in range(120)]
    roots = build_outline(leaves, edges, limits=OutlineLimits(min_roots=1, max_share=1.0))
    below = [n for n in _nodes(roots) if n.subjects and n.title.startswith("Core settings (")]
    assert [n.title for n in below] == ["Core settings (SETTING_000 – SETTING_039)",
                                        "Core settings (SETTING_040 – SETTING_079)",
                                        "Core settings (SETTING_080 – SETTING_119)"]
    assert [s for n in below for s in n.subjects] == [lf.id for lf in leaves[:120]]  # the authors' order
    assert not any(n.title in {lf.title for lf in leaves} for n in _nodes(roots))


def test_one_setting_more_in_a_section_cut_into_runs_moves_no_other_setting():
    limits = OutlineLimits(min_roots=1, max_share=1.0)
    before = build_outline(_settings(120, skip=60), [], limits=limits)
    after = build_outline(_settings(120), [], limits=limits, previous=before)

    def where(roots):
        return {s: n.id for r in roots for n, _d in r.walk() for s in n.subjects}

    was, now = where(before), where(after)
    assert [s for s in was if was[s] != now[s]] == []
    assert now["SETTING_060"] == now["SETTING_059"]  # the new one joins the run of the one before it


def _chapters() -> list[Leaf]:
    """Four guide chapters of 150 pages each after the reference page: the rest of the manual."""
    return [Leaf(f"ch{c}-{i}", f"Chapter {c} page {i}", 1.0, [(f"doc:ch{c}.html", f"Chapter {c}")], (1000 + 200 * c + i,))
            for c in range(4) for i in range(150)]


def test_a_section_cut_across_runs_keeps_its_title_in_each_run_not_a_members_name():
    # A reference page past its share of the manual: its first section alone is bigger than a run.
    sections = (("General configuration", 250), ("Options for HTML output", 30), ("Options for LaTeX output", 30))
    leaves, n = [], 0
    for heading, size in sections:
        for i in range(size):
            name = f"{heading.split()[-2].lower()}_setting_{i:03}"
            leaves.append(Leaf(name, name, 1.0, [("doc:conf.html", "Configuration"),
                                                 (f"heading:conf.html#{heading}", heading)], (n,)))
            n += 1
    leaves += _chapters()
    edges = [(leaves[i].id, leaves[(i + 77) % 310].id, 2.0) for i in range(310)]  # ties across the sections
    roots = build_outline(leaves, edges)
    runs = [r for r in roots if r.title.startswith("Configuration (")]
    assert len(runs) == 2
    titles = {leaf.title for leaf in leaves}
    below = [n for r in runs for n, d in r.walk() if d > 1]
    assert below and not any(n.title in titles for n in below)  # no node named after a setting
    # The section's pages in each run sit under its title there, and name the runs.
    assert all(any(n.title.startswith("General configuration") for n, _d in r.walk()) for r in runs)
    assert [r.title for r in runs] == ["Configuration (General configuration)",
                                       "Configuration (General configuration – Options for LaTeX output)"]


def test_a_section_whose_pages_interleave_with_anothers_is_cut_whole_into_its_run():
    # Two sections of a reference page whose pages alternate in blocks in reading order: one run
    # each, named after it, not two runs named after their first and last pages.
    leaves, n = [], 0
    for block in range(8):
        heading = ("Options for HTML output", "General configuration")[block % 2]
        for i in range(30):
            name = f"setting_{block}_{i:02}"
            leaves.append(Leaf(name, name, 1.0, [("doc:conf.html", "Configuration"),
                                                 (f"heading:conf.html#{heading}", heading)], (n,)))
            n += 1
    leaves += _chapters()
    roots = build_outline(leaves, [])
    runs = [r for r in roots if r.title.startswith("Configuration (")]
    assert [r.title for r in runs] == ["Configuration (Options for HTML output)", "Configuration (General configuration)"]
    html = {leaf.id for leaf in leaves if leaf.path[-1][1] == "Options for HTML output"}
    assert set(runs[0].all_subjects()) == html


def test_a_subject_with_a_section_of_its_own_sits_there_not_where_it_is_most_mentioned():
    documents = [SourceDocument("howto", "howto/csv.html", "Outputting CSV"),
                 SourceDocument("ref", "ref/builtins.html", "Built-in filters"),
                 SourceDocument("set", "ref/settings.html", "Settings")]
    passages = {
        "m1": SourcePassage("m1", "howto", 1, ("Outputting CSV", "Using the template system")),
        "m2": SourcePassage("m2", "howto", 2, ("Outputting CSV", "Using the template system")),
        "own": SourcePassage("own", "ref", 7, ("Built-in filters", "addslashes")),
        "caps": SourcePassage("caps", "set", 3, ("Settings", "CACHES")),
        "c1": SourcePassage("c1", "howto", 4, ("Outputting CSV", "Caches")),
        "c2": SourcePassage("c2", "howto", 5, ("Outputting CSV", "Caches")),
    }
    subjects = {"f": ["m1", "m2", "own"], "t": ["caps", "c1", "c2"]}
    leaves = {leaf.id: leaf for leaf in place(subjects, {"f": "addslashes", "t": "caches"}, {}, passages,
                                               Structure(documents))}
    # The filter is mentioned twice in the how-to and defined once, under its own heading.
    assert ("doc:ref/builtins.html", "Built-in filters") in leaves["f"].path
    # "CACHES", a setting's heading, is not the section of "caches": most mentions decide.
    assert ("doc:howto/csv.html", "Outputting CSV") in leaves["t"].path


def test_a_page_in_a_subfolder_of_a_part_whose_index_page_the_toc_lists_sits_under_that_index_page():
    documents = [
        SourceDocument("home", "docs/index.html", "Manual", ((1, "ref/index.html"),)),
        SourceDocument("ref", "docs/ref/index.html", "API Reference", ((1, "contrib/index.html"),)),
        SourceDocument("contrib", "docs/ref/contrib/index.html", "contrib packages", ((1, "sites.html"),)),
        SourceDocument("sites", "docs/ref/contrib/sites.html", "The sites framework"),
        # Not listed by the contents: a page of a subfolder of the part, and one of a folder beside it.
        SourceDocument("measure", "docs/ref/contrib/gis/measure.html", "Measurement Objects"),
        SourceDocument("other", "docs/topics/other/page.html", "Other page"),
    ]
    structure = Structure(documents)
    contrib = ("doc:docs/ref/contrib/index.html", "contrib packages")
    assert contrib in structure.segments("sites", ())
    below = structure.segments("measure", ())
    # Under the part's own index page, not under a second node of the folder "ref/contrib" with its title.
    assert contrib in below and ("dir:docs/ref/contrib", "contrib packages") not in below
    assert [t for _k, t in below][-2:] == ["GIS", "Measurement Objects"]
    assert [t for _k, t in structure.segments("other", ())] == ["Topics", "Other", "Other page"]


def test_a_documents_sole_top_heading_is_the_document_and_its_sections_are_its_parts():
    # Every passage of the plugins page sits under its h1 ("MkDocs Plugins"), which is not its title.
    documents = [SourceDocument("plug", "dev/plugins.html", "Plugins")]
    passages = {
        "p1": SourcePassage("p1", "plug", 1, ("MkDocs Plugins", "Events", "Global Events")),
        "p2": SourcePassage("p2", "plug", 2, ("MkDocs Plugins", "Entry Point")),
    }
    leaves = {leaf.id: leaf for leaf in place({"a": ["p1"], "b": ["p2"]}, {"a": "on_config", "b": "entry_points"},
                                               {}, passages, Structure(documents))}
    assert leaves["a"].path[-1] == ("heading:dev/plugins.html#Events", "Events")
    assert [t for _k, t in leaves["a"].sections] == ["Global Events"]
    assert leaves["b"].path[-1] == ("heading:dev/plugins.html#Entry Point", "Entry Point")


def test_a_section_past_a_run_is_cut_between_its_own_sections_which_name_the_runs():
    # A reference page past its share: one section ("Events") holds most of it, in four sections.
    leaves, n = [], 0
    for heading, inner, size in (("Developing", "", 10), ("Events", "One-time Events", 60), ("Events", "Page Events", 60),
                                 ("Events", "Template Events", 60), ("Events", "Global Events", 60),
                                 ("Entry Point", "", 10)):
        for i in range(size):
            name = f"{inner or heading} {i}"
            leaves.append(Leaf(name, name, 1.0, [("doc:plugins.html", "Plugins"),
                                                 (f"heading:plugins.html#{heading}", heading)], (n,),
                               [(f"subsection:plugins.html#{heading}#{inner}", inner)] if inner else [],
                               (0, n)))
            n += 1
    leaves += _chapters()
    roots = build_outline(leaves, [])
    runs = [r for r in roots if r.title.startswith("Plugins (")]
    assert [r.title for r in runs] == ["Plugins (Developing – Page Events)", "Plugins (Template Events – Entry Point)"]
    total = len(leaves)
    assert all(len(r.all_subjects()) <= 0.25 * total for r in runs)
    # Each of the authors' sections is whole in one run.
    run_of = {s: r.id for r in runs for s in r.all_subjects()}
    assert all(len({run_of[lf.id] for lf in leaves if lf.sections == s.sections and lf.path == s.path}) == 1
               for s in leaves if s.id in run_of)


def _listing(*hrefs: str) -> tuple[tuple[str, int, str, str], ...]:
    return tuple(("a", 1, h, h.rsplit("/", 1)[-1]) for h in hrefs)


def test_a_packages_own_contents_page_and_the_home_pages_subjects_sit_in_the_manuals_tree():
    # The home lists six packages; one package's summary lists too few classes to be contents,
    # and its "Uses of" page, a contents page of its own, lists them.
    packages = [f"p{i}/package-summary.html" for i in range(6)]
    documents = [SourceDocument("home", "lib/package-summary.html", "lib", links=_listing(*(f"{p}" for p in packages)))]
    documents += [SourceDocument(f"s{i}", f"lib/{p}", f"lib.p{i}", links=_listing("A.html", "B.html") if i == 0 else ())
                  for i, p in enumerate(packages)]
    documents += [SourceDocument("use", "lib/p0/package-use.html", "Uses of Package lib.p0",
                                 links=_listing("A.html", "B.html", "C.html", "D.html", "E.html")),
                  *(SourceDocument(c, f"lib/p0/{c}.html", f"Class {c}") for c in "ABCDE")]
    structure = Structure(documents)
    p0 = ("doc:lib/p0/package-summary.html", "lib.p0")
    # Under its package in the home's tree, not under a root "Uses of Package lib.p0".
    assert structure.segments("A", ())[:2] == [("doc:lib/package-summary.html", "lib"), p0]
    # A subject told of only on the home page sits with the home's own pages, not under its folders.
    assert structure.segments("home", ("Character handling",))[0][0].startswith("doc:lib/package-summary.html")
