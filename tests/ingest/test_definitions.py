"""Authored definitions are kept as data: a definition block opens with its term and records
the name it defines and that name's owner, in every format that has them."""

from __future__ import annotations

from compendium.ingest.chunking import chunk_document
from compendium.ingest.readers import read_document


def definitions(doc) -> list[tuple[str, str, str]]:
    """(text, term, scope) of each definition block."""
    return [(doc.text[b.start : b.end], b.term, b.scope) for b in doc.blocks if b.kind == "definition"]


def read(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_document(path)


# ---- HTML -----------------------------------------------------------------------------------

def test_html_definition_list_keeps_each_term_with_its_description(tmp_path):
    doc = read(tmp_path, "opts.html", """<html><body><h1>Options</h1><dl>
<dt>-n</dt><dt>--dry-run</dt><dd><p>Show what would be added.</p><p>Nothing is written.</p></dd>
<dt>Write-Ahead Log</dt><dd>A log of every change, written before the change.</dd>
<dt>Returns:</dt><dd>the number of files</dd>
<dt>layout</dt><dd><pre>a/\n  b</pre></dd>
</dl></body></html>""")
    assert definitions(doc) == [
        ("`-n, --dry-run`: Show what would be added.", "--dry-run", ""),
        ("Write-Ahead Log: A log of every change, written before the change.", "Write-Ahead Log", ""),
    ]
    text = [(b.kind, doc.text[b.start : b.end]) for b in doc.blocks]
    assert ("paragraph", "Nothing is written.") in text  # a later paragraph of the description
    assert ("paragraph", "Returns: the number of files") in text  # a field label is no term
    assert ("term", "layout") in text and ("code", "```\na/\n  b\n```") in text  # described by code only


def test_the_later_paragraphs_and_items_of_a_description_carry_its_term_and_nothing_after_it_does(tmp_path):
    doc = read(tmp_path, "api.html", """<html><body><h1>Responses</h1><dl>
<dt><code>set_cookie(key, max_age=None)</code></dt><dd><p>Sets a cookie.</p>
<ul><li><code>max_age</code> should be a number of seconds.</li></ul>
<p>Changed in 3.1: <code>samesite</code> was added.</p>
<dl><dt><code>key</code></dt><dd><p>The cookie's name.</p><p>It must be text.</p></dd></dl>
<p>Cookies are sent with the response.</p></dd>
<dt><code>delete_cookie(key)</code></dt><dd><p>Deletes the cookie.</p></dd>
</dl><p>Responses are made by views.</p></body></html>""")
    carried = [(b.kind, doc.text[b.start:b.end], b.term) for b in doc.blocks if b.kind != "heading"]
    assert carried == [
        ("definition", "`set_cookie(key, max_age=None)`: Sets a cookie.", "set_cookie"),
        ("item", "- `max_age` should be a number of seconds.", "set_cookie"),
        ("paragraph", "Changed in 3.1: `samesite` was added.", "set_cookie"),
        ("definition", "`key`: The cookie's name.", "key"),
        ("paragraph", "It must be text.", "key"),  # the inner entry's, not the outer one's
        ("paragraph", "Cookies are sent with the response.", "set_cookie"),  # back in the outer entry
        ("definition", "`delete_cookie(key)`: Deletes the cookie.", "delete_cookie"),
        ("paragraph", "Responses are made by views.", ""),  # after the list: no entry's
    ]


def test_an_empty_description_ends_its_item_so_the_next_terms_are_not_joined_to_it(tmp_path):
    doc = read(tmp_path, "index-all.html", """<html><body><h1>Index</h1><dl>
<dt><code>addArgument(String...)</code> - Method in interface ArgumentContainer</dt><dd>&nbsp;</dd>
<dt><code>getMaxNumArg()</code> - Method in interface Argument</dt><dd>&nbsp;</dd>
<dt><code>getPrefixChars()</code> - Method in class PrefixPattern</dt>
<dd><div class="block">Returns prefix characters.</div></dd>
</dl></body></html>""")
    described = [(t, term) for t, term, _ in definitions(doc)]
    assert len(described) == 1 and described[0][0].endswith(": Returns prefix characters.")
    assert "getMaxNumArg" not in described[0][0] and "addArgument" not in described[0][0]
    # texinfo writes a second name of one item (@itemx) after an empty description: still one item
    texinfo = read(tmp_path, "flags.html", """<html><body><h1>Flags</h1><dl>
<dt> <code>c-format</code></dt><dd><a name="IDX49"></a></dd>
<dt> <code>no-c-format</code></dt><dd><a name="IDX50"></a><p>These flags are added by xgettext.</p></dd>
</dl></body></html>""")
    assert definitions(texinfo) == [("`c-format`, `no-c-format`: These flags are added by xgettext.", "c-format", "")]
    # a description written as nothing at all (RDoc's constants) ends its item too
    rdoc = read(tmp_path, "Constants.html", """<html><body><h1>module Crates</h1><dl>
<dt id="DEFAULT_KEYS">DEFAULT_KEYS</dt><dd></dd>
<dt id="DEFAULT_NAME">DEFAULT_NAME</dt><dd> </dd>
<dt id="ListRx">ListRx</dt><dd><p>Matches a crate list entry.</p></dd>
</dl></body></html>""")
    assert [t for t, _, _ in definitions(rdoc)] == ["ListRx: Matches a crate list entry."]


def test_a_term_defined_under_each_of_several_sibling_sections_is_a_field_of_each(tmp_path):
    profiles = "".join(f"""<h3>15.5.{n} {language}</h3><dl>
<dt>setlocale</dt><dd><p>{how}</p></dd><dt>Extractor</dt><dd><p>xgettext</p></dd></dl>"""
                       for n, (language, how) in enumerate(
                           [("C", "Programmer must call it"), ("Python", "not used"), ("Java", "automatic")], 1))
    doc = read(tmp_path, "languages.html", f"""<html><body><h1>Other Languages</h1>
<h2>15.5 Individual Programming Languages</h2>{profiles}
<h2>15.6 Functions</h2><dl><dt>setlocale</dt><dd><p>Sets the current locale.</p></dd></dl></body></html>""")
    found = [(text, term, scope) for text, term, scope in definitions(doc) if term == "setlocale"]
    assert found == [
        ("setlocale: Programmer must call it", "setlocale", "15.5.1 C"),
        ("setlocale: not used", "setlocale", "15.5.2 Python"),
        ("setlocale: automatic", "setlocale", "15.5.3 Java"),
        ("setlocale: Sets the current locale.", "setlocale", ""),  # defined once there: a subject
    ]


def test_an_index_row_that_only_links_to_where_its_term_is_defines_nothing(tmp_path):
    doc = read(tmp_path, "option_index.html", """<html><body><h1>Option Index</h1><dl>
<dt>pack_size</dt><dd><p><a href="packer.html">The packer</a>, <a href="sealer.html#s2">The sealer
<small>[Private options]</small></a></p></dd>
<dt>seal_mode</dt><dd><p>The mode a crate is sealed in; see <a href="sealer.html">The sealer</a>.</p></dd>
</dl></body></html>""")
    # The first row says where pack_size is described; the second says what seal_mode is.
    assert [term for _text, term, _scope in definitions(doc)] == ["seal_mode"]
    assert "The packer" not in doc.text


def test_asciidoc_man_page_name_line_defines_the_command_and_owns_its_options(tmp_path):
    doc = read(tmp_path, "git-frob.html", """<html><head><title>git-frob(1)</title></head>
<body class="manpage"><div id="header"><h1>git-frob(1) Manual Page</h1><h2>NAME</h2>
<div class="sectionbody"><p>git-frob -
   Frobnicate the working tree</p></div></div>
<div id="content"><div class="sect1"><h2 id="_options">OPTIONS</h2><div class="sectionbody"><div class="dlist"><dl>
<dt class="hdlist1">-a</dt><dt class="hdlist1">--all</dt><dd><p>Frobnicate every file.</p></dd>
<dt class="hdlist1">&lt;pathspec&gt;&#8230;</dt><dd><p>Files to frobnicate.</p></dd>
</dl></div></div></div></div></body></html>""")
    assert definitions(doc) == [
        ("`git-frob`: Frobnicate the working tree", "git-frob", ""),
        ("`-a, --all`: Frobnicate every file.", "--all", "git-frob"),
        ("`<pathspec>…`: Files to frobnicate.", "<pathspec>…", "git-frob"),
    ]


def test_docbook_refentry_and_groff_name_lines(tmp_path):
    docbook = read(tmp_path, "app-frob.html", """<html><body><div class="refentry"><div class="refnamediv">
<h2><span class="refentrytitle"><span class="application">pg_frob</span></span></h2>
<p>pg_frob — copy a table into a frob file</p></div>
<div class="refsect1"><h2>Options</h2><div class="variablelist"><dl class="variablelist">
<dt><span class="term"><code class="option">-v</code><br></span><span class="term"><code class="option">--verbose</code></span></dt>
<dd><p>Say what is being done.</p></dd></dl></div></div></div></body></html>""")
    assert definitions(docbook) == [
        ("`pg_frob`: copy a table into a frob file", "pg_frob", ""),
        ("`-v, --verbose`: Say what is being done.", "--verbose", "pg_frob"),
    ]
    groff = read(tmp_path, "frob.1.html", """<html><body><h1 align="center">FROB</h1>
<h2>NAME <a name="NAME"></a></h2>
<p style="margin-left:11%; margin-top: 1em">frob -
prints frobs</p><h2>DESCRIPTION</h2><p>Frob prints.</p></body></html>""")
    assert definitions(groff) == [("`frob`: prints frobs", "frob", "")]


def test_sphinx_api_entries_keep_their_signature_name_and_owner(tmp_path):
    doc = read(tmp_path, "fields.html", """<html><body><h1>Model fields</h1>
<dl class="py class"><dt class="sig sig-object py" id="shop.models.Basket">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><code class="sig-name descname">
<span class="pre">Basket</span></code>(<em><span class="pre">**options</span></em>)<a class="reference internal" href="x">
<span class="viewcode-link"><span class="pre">[source]</span></span></a><a class="headerlink" href="#b">¶</a></dt>
<dd><p>A basket of items.</p></dd></dl>
<dl class="py attribute"><dt class="sig sig-object py" id="shop.models.Basket.size">
<code class="sig-prename descclassname"><span class="pre">Basket.</span></code><code class="sig-name descname">\
<span class="pre">size</span></code><a class="headerlink" href="#s">¶</a></dt><dd></dd></dl>
<p>How many items fit.</p>
<dl class="std option"><dt class="sig sig-object std" id="cmdoption-load-all">
<code class="sig-name descname"><span class="pre">--all</span></code><code class="sig-prename descclassname"></code>\
<code class="sig-prename descclassname"><span class="pre">,</span> </code><code class="sig-name descname">\
<span class="pre">-a</span></code></dt><dd></dd></dl>
<h2>Last</h2><p>Closing words.</p></body></html>""")
    assert definitions(doc) == [
        ("`class Basket(**options)`: A basket of items.", "Basket", "shop.models"),
        ("`Basket.size`: How many items fit.", "size", "Basket"),  # Sphinx writes the text after an empty dd
    ]
    # a term whose description never comes stays a term
    assert [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "term"] == ["--all, -a"]


def test_a_sphinx_option_s_argument_is_not_its_owner(tmp_path):
    # Sphinx writes an option's metavar after its name in the class it gives a member's owner
    # before it: "--null NULL" is ogrinspect's --null, not a member of something called NULL.
    doc = read(tmp_path, "commands.html", """<html><body><h1>Commands</h1><h2>ogrinspect</h2>
<dl class="std option"><dt class="sig sig-object std" id="cmdoption-ogrinspect-null">
<code class="sig-name descname"><span class="pre">--null</span></code><code class="sig-prename descclassname"> \
<span class="pre">NULL</span></code></dt>
<dd><p>Use a comma separated list of OGR field names.</p></dd></dl></body></html>""")
    assert definitions(doc) == [
        ("`--null NULL`: Use a comma separated list of OGR field names.", "--null", "ogrinspect")]


def test_javadoc_member_details_define_the_member_of_the_page_class(tmp_path):
    doc = read(tmp_path, "Strings.html", """<html><body><main><div class="header">
<h1 title="Class Strings" class="title">Class Strings</h1></div>
<section class="class-description"><div class="type-signature"><span class="modifiers">public class </span>\
<span class="element-name">Strings</span>
<span class="extends-implements">extends Object</span></div><div class="block"><p>Operations on strings.</p></div></section>
<ul class="member-list"><li><section class="detail" id="isEmpty(java.lang.CharSequence)"><h3>isEmpty</h3>
<div class="member-signature"><span class="modifiers">public static</span>&nbsp;<span class="return-type">boolean</span>
&nbsp;<span class="element-name">isEmpty</span><wbr><span class="parameters">(CharSequence&nbsp;cs)</span></div>
<div class="block"><p>Checks if a CharSequence is empty or null.</p><pre>Strings.isEmpty("") = true</pre></div>
<dl class="notes"><dt>Parameters:</dt><dd><code>cs</code> - the CharSequence to check</dd></dl>
</section></li></ul></main></body></html>""")
    generic = read(tmp_path, "Fn.html", """<html><body><h1 class="title">Interface Fn&lt;T,E extends Throwable&gt;</h1>
<section class="class-description"><div class="type-signature"><span class="modifiers">public interface </span>\
<span class="element-name">Fn&lt;T,E extends Throwable&gt;</span></div>\
<div class="block"><p>A function that may throw.</p></div></section></body></html>""")
    assert definitions(generic) == [("`Fn<T,E extends Throwable>`: A function that may throw.", "Fn", "")]
    assert definitions(doc) == [
        ("`Strings`: Operations on strings.", "Strings", ""),
        ("`isEmpty(CharSequence cs)`: Checks if a CharSequence is empty or null.",
         "isEmpty", "Strings"),
        ("`cs`: the CharSequence to check", "cs", "Strings"),  # a parameter: a member of the class
    ]


def test_texinfo_table_terms_lose_their_quotes_and_keep_every_option(tmp_path):
    doc = read(tmp_path, "invoking.html", """<html><body><h3>Input file location</h3><dl compact="compact">
<dt> &lsquo;<samp>-f <var>file</var></samp>&rsquo;</dt>
<dt> &lsquo;<samp>--files-from=<var>file</var></samp>&rsquo;</dt>
<dd><p>Read the names of the input files from <var>file</var>.</p></dd></dl></body></html>""")
    assert definitions(doc) == [
        ("`-f file, --files-from=file`: Read the names of the input files from file.", "--files-from", ""),
    ]


def test_values_listed_under_or_after_an_option_are_that_options_values(tmp_path):
    doc = read(tmp_path, "invoking.html", """<html><body><h3>Output details</h3><dl compact="compact">
<dt> &lsquo;<samp>--wrap-mode[=<var>TYPE</var>]</samp>&rsquo;</dt>
<dd><p>The supported values are:</p>
<dl compact="compact">
<dt> &lsquo;<samp>narrow</samp>&rsquo;</dt><dd><p>Break lines at 60 columns.</p></dd>
<dt> &lsquo;<samp>wide</samp>&rsquo;</dt><dd><p>Break lines at 120 columns.</p></dd>
</dl></dd>
<dt> &lsquo;<samp>--keep=<var>control</var></samp>&rsquo;</dt><dd><p>Keep a copy of the crate.</p></dd>
</dl>
<p>The keeping method may be chosen with the <code>--keep</code> option. Here are the values:</p>
<dl compact="compact">
<dt> &lsquo;<samp>none</samp>&rsquo;</dt><dt> &lsquo;<samp>off</samp>&rsquo;</dt><dd><p>Never keep a copy.</p></dd>
</dl>
<p>Crates listed here:</p>
<dl><dt>Shipping crate</dt><dd><p>A crate on its way.</p></dd></dl>
</body></html>""")
    scopes = {term: scope for _, term, scope in definitions(doc)}
    assert scopes["narrow"] == scopes["wide"] == "--wrap-mode"  # listed inside the option's text
    assert scopes["none"] == "--keep"  # announced as the option's values just before
    assert scopes["--wrap-mode"] == scopes["--keep"] == scopes["Shipping crate"] == ""  # no values: own terms


def test_a_groff_man_page_option_over_its_indented_text_is_a_definition_of_the_command(tmp_path):
    doc = read(tmp_path, "msgsort.1.html", """<html><body><h1 align="center">MSGSORT</h1>
<h2>NAME</h2><p style="margin-left:11%;">msgsort - sort a message catalog</p>
<h2>OPTIONS</h2>
<p style="margin-left:11%;"><b>-D</b>, <b>--directory</b>=<i>DIRECTORY</i></p>
<p style="margin-left:22%;">add DIRECTORY to list for input files search</p>
<p style="margin-left:11%; margin-top: 1em">If no input file is given, standard input is read.</p>
<p style="margin-left:11%; margin-top: 1em"><b>Output details: <br>--color</b></p>
<p style="margin-left:22%;">use colors always</p>
<p style="margin-left:11%;"><b>--strict</b></p><p style="margin-left:11%;"><b>--quiet</b></p>
<p style="margin-left:22%;">say nothing</p></body></html>""")
    assert definitions(doc) == [
        ("`msgsort`: sort a message catalog", "msgsort", ""),
        ("`-D, --directory=DIRECTORY`: add DIRECTORY to list for input files search", "--directory", "msgsort"),
        ("`--color`: use colors always", "--color", "msgsort"),
        ("`--quiet`: say nothing", "--quiet", "msgsort"),
    ]
    assert "If no input file is given, standard input is read." in doc.text
    assert "--strict" in doc.text  # an option no paragraph describes stays, as a term


def test_a_groff_man_pages_option_group_labels_head_their_options(tmp_path):
    # msgsort lists "-d DIRECTORY" under two modes: each stands under its own group label
    doc = read(tmp_path, "msgsort.1.html", """<html><body><h1>MSGSORT</h1>
<h2>NAME</h2><p style="margin-left:11%;">msgsort - sort a message catalog</p>
<h2>DESCRIPTION</h2>
<p style="margin-left:11%; margin-top: 1em"><b>Input file location:</b> <br><i>INPUTFILE</i> ...</p>
<p style="margin-left:22%;">input files</p>
<p style="margin-left:11%; margin-top: 1em"><b>Useful FILTER-OPTIONs when the FILTER is ’sed’: <br>-n</b>, <b>--quiet</b></p>
<p style="margin-left:22%;">suppress automatic printing of pattern space</p>
<p style="margin-left:11%; margin-top: 1em"><b>Operation mode: <br>-j</b>, <b>--java</b></p>
<p style="margin-left:22%;">Java mode: generate a Java ResourceBundle class</p>
<p style="margin-left:11%; margin-top: 1em"><b>Output file location in Java mode: <br>-d</b> <i>DIRECTORY</i></p>
<p style="margin-left:22%;">base directory of classes directory hierarchy</p>
<p style="margin-left:11%; margin-top: 1em"><b>Output file location in C# mode: <br>-d</b> <i>DIRECTORY</i></p>
<p style="margin-left:22%;">base directory for locale dependent .dll files</p>
<h2>AUTHOR</h2><p>Written by someone.</p></body></html>""")
    placed = [(text, b_path) for (text, _t, _s), b_path in zip(
        definitions(doc), [b.heading_path for b in doc.blocks if b.kind == "definition"], strict=True)]
    assert placed[1:] == [
        ("`INPUTFILE ...`: input files", ("MSGSORT", "DESCRIPTION", "Input file location")),
        ("`-n, --quiet`: suppress automatic printing of pattern space",
         ("MSGSORT", "DESCRIPTION", "Useful FILTER-OPTIONs when the FILTER is ’sed’")),
        ("`-j, --java`: Java mode: generate a Java ResourceBundle class", ("MSGSORT", "DESCRIPTION", "Operation mode")),
        ("`-d DIRECTORY`: base directory of classes directory hierarchy",
         ("MSGSORT", "DESCRIPTION", "Output file location in Java mode")),
        ("`-d DIRECTORY`: base directory for locale dependent .dll files",
         ("MSGSORT", "DESCRIPTION", "Output file location in C# mode")),
    ], placed
    assert doc.blocks[-1].heading_path == ("MSGSORT", "AUTHOR")
    assert ("`INPUTFILE ...`: input files", "INPUTFILE", "msgsort") in definitions(doc)  # the command's, no subject


def test_a_description_broken_into_two_paragraphs_mid_sentence_is_read_whole(tmp_path):
    # groff ends a paragraph where the source text had a blank line, even inside a sentence
    doc = read(tmp_path, "msgsort.1.html", """<html><body><h1>MSGSORT</h1>
<h2>NAME</h2><p style="margin-left:11%;">msgsort - sort a message catalog</p>
<h2>OPTIONS</h2>
<p style="margin-left:11%;"><b>--sentence-end</b>=<i>TYPE</i></p>
<p style="margin-left:22%;">type describing the end of sentence (single-space, which is the default,</p>
<p style="margin-left:22%; margin-top: 1em">or double-space)</p>
<p style="margin-left:11%; margin-top: 1em">Input is read from standard input (see above).</p>
<p style="margin-left:11%; margin-top: 1em">lowercase, but the paragraph before it was finished.</p>
</body></html>""")
    assert definitions(doc)[1] == (
        "`--sentence-end=TYPE`: type describing the end of sentence (single-space, which is the default, "
        "or double-space)", "--sentence-end", "msgsort")
    assert "\n\nlowercase, but the paragraph before it was finished." in doc.text


def test_a_sphinx_field_list_whose_colon_is_drawn_by_its_style_sheet_still_names_members(tmp_path):
    doc = read(tmp_path, "api.html", """<html><body><section><h1>Developer Interface</h1>
<dl class="py method"><dt class="sig sig-object py" id="requests.adapters.HTTPAdapter.init_poolmanager">
<span class="sig-name descname"><span class="pre">init_poolmanager</span></span><span class="sig-paren">(</span>\
<em class="sig-param">connections</em><span class="sig-paren">)</span></dt>
<dd><p>Initializes a pool manager.</p><dl class="field-list simple"><dt class="field-odd">Parameters</dt>
<dd class="field-odd"><ul class="simple"><li><p><strong>connections</strong> – The number of pools to cache.</p></li>
<li><p><strong>block</strong> – Block when no free connections are available.</p></li></ul></dd></dl></dd></dl>
</section></body></html>""")
    assert definitions(doc)[1:] == [
        ("`connections`: The number of pools to cache.", "connections", "requests.adapters.HTTPAdapter"),
        ("`block`: Block when no free connections are available.", "block", "requests.adapters.HTTPAdapter"),
    ]


def test_a_version_note_before_an_entrys_text_is_not_what_the_entry_is(tmp_path):
    doc = read(tmp_path, "utils.html", """<html><body><h1>Utilities</h1><dl class="py class">
<dt class="sig sig-object py" id="django.utils.functional.classproperty"><em class="property">class </em>\
<span class="sig-name descname">classproperty</span>(<em class="sig-param">method=None</em>)</dt>
<dd><div class="versionadded">
<span class="title">New in Django 3.1.</span> </div>
<p>Similar to <code>@classmethod</code>, the decorator turns a method into a class property.</p></dd></dl>
<dl class="py method"><dt class="sig sig-object py" id="HttpRequest.is_ajax"><span class="sig-name descname">is_ajax\
</span>()</dt><dd><div class="deprecated"><p><span class="versionmodified">Deprecated since version 3.1.</span></p>\
</div></dd></dl></body></html>""")
    assert definitions(doc)[0][0] == ("`class classproperty(method=None)`: Similar to `@classmethod`, the decorator "
                                      "turns a method into a class property.")
    assert not any("Deprecated since" in text for text, _term, _scope in definitions(doc))
    assert doc.text.index("turns a method into") < doc.text.index("New in Django 3.1.")


def test_texinfo_definition_commands_name_what_they_define(tmp_path):
    doc = read(tmp_path, "functions.html", """<html><body><h3>Library functions</h3>
<dl class="first-deffn"><dt class="deffn" id="index-frob_text"><span class="category-def">Function: </span>\
<span><strong class="def-name">frob_text</strong> <var class="def-var-arguments">(const char *text)</var></span></dt>
<dd><p>Frobs <var>text</var> in place.</p></dd></dl></body></html>""")
    assert definitions(doc) == [("`frob_text (const char *text)`: Frobs text in place.", "frob_text", "")]
    # texinfo 6's markup: the category in a span of its own, the name in bold, a "¶" anchor
    older = read(tmp_path, "ciphers.html", """<html><body><h3>Working with cipher handles</h3><dl class="def">
<dt id="index-gcry_005fcipher_005fclose"><span class="category">Function: </span><span><em>void</em> \
<strong>gcry_cipher_close</strong> <em>(gcry_cipher_hd_t <var>h</var>)</em><a href='#index-x' \
class='copiable-anchor'> &para;</a></span></dt>
<dd><p>This function releases the context created by <code>gcry_cipher_open</code>.</p></dd></dl></body></html>""")
    assert definitions(older) == [("`void gcry_cipher_close (gcry_cipher_hd_t h)`: This function releases the context "
                                   "created by `gcry_cipher_open`.", "gcry_cipher_close", "")]
    assert "¶" not in older.text
    # @defmacx: a second signature of the same description opens with its category too
    two = read(tmp_path, "macros.html", """<html><body><h3>Defining symbols</h3><dl class="def">
<dt id="index-DEFINE-1"><span class="category">Macro: </span><span><strong>DEFINE</strong> <em>(<var>variable</var>, <var>value</var>)</em></span></dt>
<dt id="index-DEFINE-2"><span class="category">Macro: </span><span><strong>DEFINE</strong> <em>(<var>variable</var>)</em></span></dt>
<dd><p>Define <var>variable</var> to <var>value</var>.</p></dd></dl></body></html>""")
    assert definitions(two) == [("`DEFINE (variable, value), DEFINE (variable)`: Define variable to value.", "DEFINE", "")]


def test_a_name_heading_is_defined_by_its_first_paragraph_after_its_field_lines(tmp_path):
    doc = read(tmp_path, "settings.html", """<html><body><h1>Settings</h1><h2>Core</h2>
<h3><code class="literal"><span class="pre">CACHE_TTL</span></code><a class="headerlink" href="#c">¶</a></h3>
<p>Default: <code>300</code></p><p>Seconds a cached page is kept.</p><p>Zero turns caching off.</p>
<h3>max_rows</h3><p>The largest result a query returns.</p>
<h3><code>limit</code></h3><p>The <code>limit</code> caps what a page shows.</p>
<h3><code>src_uri: str</code> <small><code>class-attribute</code></small></h3><p>Where the source lies.</p>
<h3>Introduction</h3><p>Plain headings define nothing.</p>
<h3>Version 2.1</h3><p>Nor do releases.</p></body></html>""")
    assert definitions(doc) == [
        ("`CACHE_TTL`: Seconds a cached page is kept.", "CACHE_TTL", "Core"),
        ("`max_rows`: The largest result a query returns.", "max_rows", "Core"),
        ("The `limit` caps what a page shows.", "limit", "Core"),  # it names its term already
        ("`src_uri: str class-attribute`: Where the source lies.", "src_uri", "Core"),
    ]
    assert "Default: `300`" in doc.text and "Zero turns caching off." in doc.text


def test_html_inline_code_holding_backticks_is_fenced_with_a_longer_run(tmp_path):
    doc = read(tmp_path, "code.html", "<html><body><p>Quote with <code>a`b</code>, match "
                                      "<code>|[^[:space:]]</code> or <code>`x</code>.</p></body></html>")
    assert doc.text == "Quote with ``a`b``, match `|[^[:space:]]` or `` `x ``."


# ---- reST -----------------------------------------------------------------------------------

REST = """Builders
========

.. program:: frob-build

.. option:: -b buildername

   Selects a builder.

.. class:: Frobber(site)

   A machine that frobs.

   .. attribute:: speed

      Frobs per second.

.. glossary::

   builder
      A class that turns documents into output.

-a, --all     Build all files.
-q            Be quiet.

:Author: Someone

``DEBUG``
---------

Default: ``False``

A boolean that turns on debug mode, as in ``a`b``.
"""


def test_rest_definition_option_and_field_lists_glossaries_and_object_descriptions(tmp_path):
    doc = read(tmp_path, "builders.rst", REST)
    assert definitions(doc) == [
        ("`-b buildername`: Selects a builder.", "-b", "frob-build"),
        ("`Frobber(site)`: A machine that frobs.", "Frobber", ""),
        ("`speed`: Frobs per second.", "speed", "Frobber"),
        ("builder: A class that turns documents into output.", "builder", ""),
        ("`-a, --all`: Build all files.", "--all", "frob-build"),
        ("`-q`: Be quiet.", "-q", "frob-build"),
        ("Author: Someone", "Author", ""),
        ("`DEBUG`: A boolean that turns on debug mode, as in ``a`b``.", "DEBUG", "Builders"),
    ]


def test_a_directives_options_belong_to_that_directive_and_are_named_without_their_type(tmp_path):
    doc = read(tmp_path, "domains.rst", """Aliasing
========

.. rst:directive:: .. c:alias:: name

   Insert one or more alias declarations.

   .. rst:directive:option:: maxdepth: int

      Insert nested declarations as well, up to the total depth given.

.. rst:directive:: .. cpp:alias:: name

   Insert one or more alias declarations of C++ entities.

   .. rst:directive:option:: maxdepth: int

      Insert nested declarations as well, up to the total depth given.
""")
    assert [(term, scope) for _text, term, scope in definitions(doc)] == [
        ("c:alias", ""), ("maxdepth", "c:alias"), ("cpp:alias", ""), ("maxdepth", "cpp:alias")]


def test_a_definition_list_inside_an_object_description_lists_that_objects_members(tmp_path):
    doc = read(tmp_path, "configuration.rst", """Options for crates
==================

.. confval:: crate_pages

   A list of tuples ``(startdoc, name, description)``, where the items are:

   *name*
     Name of the crate page.

   *description*
     Description of the crate page.

Crate kinds
-----------

*wooden*
  A crate of planks.
""")
    assert [(term, scope) for _text, term, scope in definitions(doc)] == [
        ("crate_pages", ""), ("name", "crate_pages"), ("description", "crate_pages"), ("wooden", "")]


def test_a_parameter_named_like_an_english_word_keeps_its_label_and_signatures_keep_their_quotes(tmp_path):
    doc = read(tmp_path, "responses.html", """<html><body><h1>Responses</h1>
<dl class="py class"><dt class="sig sig-object py" id="depot.Response">
<span class="sig-name descname">Response</span>(<em class="sig-param">content=b''</em>, <em class="sig-param">path='/'</em>)</dt>
<dd><p>A response of the depot.</p>
<dl><dt><code>status</code></dt><dd>The HTTP status code for the response.</dd>
<dt><code>charset</code></dt><dd>The charset in which the response will be encoded.</dd>
<dt><code>limit_0</code></dt><dd>The limit_0 caps the crates of one response.</dd></dl>
</dd></dl></body></html>""")
    texts = [text for text, _term, _scope in definitions(doc)]
    assert texts[0].startswith("`Response(content=b'', path='/')`: A response of the depot."), texts
    assert "`charset`: The charset in which the response will be encoded." in texts  # not run into `status`
    assert "The limit_0 caps the crates of one response." in texts  # an identifier it names needs no label


# ---- Markdown -------------------------------------------------------------------------------

MARKDOWN = """# Options

`--squash`
:   Produce the working tree and index state.

    Later paragraph.

Term two
: Short definition

Shown as code
:   ```
    x = 1
    ```

## `RETRIES`

Default: `3`

How often a failed call is tried again.
"""


def test_markdown_definition_lists_and_code_headings(tmp_path):
    doc = read(tmp_path, "options.md", MARKDOWN)
    assert definitions(doc) == [
        ("`--squash`: Produce the working tree and index state.", "--squash", ""),
        ("Term two: Short definition", "Term two", ""),
        ("`RETRIES`: How often a failed call is tried again.", "RETRIES", "Options"),
    ]
    text = [(b.kind, doc.text[b.start : b.end]) for b in doc.blocks]
    assert ("paragraph", "Later paragraph.") in text and ("term", "Shown as code") in text


# ---- chunks -----------------------------------------------------------------------------------

def test_chunks_record_each_definitions_term_and_scope(tmp_path):
    doc = read(tmp_path, "builders.rst", REST)
    chunk = chunk_document(doc, max_tokens=2000, overlap_tokens=0, document_id="d")[0]
    recorded = [b for b in chunk.blocks if b[0] == "definition"]
    assert recorded[0][3:] == ("-b", "frob-build")
    assert chunk.text[recorded[0][1] : recorded[0][2]] == "`-b buildername`: Selects a builder."
    assert all(len(b) == 3 for b in chunk.blocks if b[0] != "definition")


def test_sphinx_parameter_fields_are_members_of_their_signature_owner(tmp_path):
    doc = read(tmp_path, "api.html", """<html><body><h1>API</h1>
<dl class="py class"><dt class="sig sig-object py" id="shop.Basket">
<em class="property"><span class="pre">class</span> </em><span class="sig-prename descclassname">shop.</span>\
<span class="sig-name descname">Basket</span>(<em>size</em>)</dt>
<dd><p>A basket of items.</p>
<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>size</strong> (<em>Optional</em><em>[</em><em>int</em><em>]</em>) – how many items fit</p>
</dd></dl>
<dl class="py method"><dt class="sig sig-object py" id="shop.Basket.add">
<span class="sig-name descname">add</span>(<em>item</em>, <em>count</em>)</dt>
<dd><p>Put an item in the basket.</p>
<dl class="simple"><dt><code>str</code></dt><dd><p>An item is created with the string as its label.</p></dd></dl>
<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple">
<li><p><strong>item</strong> (<em>Any</em>) – what goes in</p></li>
<li><p><strong>count</strong> (<em>int</em>) – </p></li></ul></dd>
<dt class="field-even">Return type<span class="colon">:</span></dt><dd class="field-even"><p>None</p></dd>
</dl></dd></dl></dd></dl>
<dl class="py function"><dt class="sig sig-object py" id="shop.checkout">
<span class="sig-prename descclassname">shop.</span><span class="sig-name descname">checkout</span>(<em>basket</em>)</dt>
<dd><p>Pay for a basket.</p><dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>basket</strong> (<em>Basket</em>) – what is paid for</p></dd></dl></dd></dl>
</body></html>""")
    assert definitions(doc) == [
        ("`class shop.Basket(size)`: A basket of items.", "Basket", "shop"),
        ("`size`: how many items fit", "size", "Basket"),  # a class's parameter: the class's
        ("`add(item, count)`: Put an item in the basket.", "add", "shop.Basket"),
        ("`str`: An item is created with the string as its label.", "str", "shop.Basket"),  # a value it takes
        ("`item`: what goes in", "item", "shop.Basket"),  # a method's: its class's
        ("`shop.checkout(basket)`: Pay for a basket.", "checkout", "shop"),
        ("`basket`: what is paid for", "basket", "checkout"),  # a module's function: its own
    ]  # `count` says nothing: left out
    assert "Optional[int]" not in doc.text and "Return type: None" in doc.text


def test_a_javadoc_package_summary_defines_each_class_by_its_row_and_member_summaries_stay_out(tmp_path):
    doc = read(tmp_path, "package-summary.html", """<html><body><main>
<h1 class="title">Package org.example.concurrent</h1>
<div class="summary-table two-column-summary">
<div class="table-header col-first">Class</div><div class="table-header col-last">Description</div>
<div class="col-first even-row-color"><a href="ConstantInitializer.html">ConstantInitializer</a>&lt;T&gt;</div>
<div class="col-last even-row-color"><div class="block">A very simple implementation which always
 returns the same object.</div></div>
<div class="col-first odd-row-color"><a href="TimedSemaphore.html">TimedSemaphore</a></div>
<div class="col-last odd-row-color"><div class="block">A semaphore giving permits per time frame.</div></div>
</div>
<section class="constants-summary" id="enum-constant-summary"><h2>Enum Constant Summary</h2>
<div class="summary-table two-column-summary">
<div class="col-first even-row-color"><code>OPEN</code></div><div class="col-last even-row-color">The open state.</div>
</div></section>
</main></body></html>""")
    assert definitions(doc) == [
        ("`ConstantInitializer<T>`: A very simple implementation which always returns the same object.",
         "ConstantInitializer", ""),
        ("`TimedSemaphore`: A semaphore giving permits per time frame.", "TimedSemaphore", ""),
    ]  # the enum constants' summary repeats their details: left out, as the other member summaries
    assert "Description" not in doc.text and "OPEN" not in doc.text


def test_an_older_javadoc_member_is_defined_under_its_heading_after_its_signature_and_owns_its_parameters(tmp_path):
    doc = read(tmp_path, "ArgumentParsers.html", """<html><body><h1 class="title">Class ArgumentParsers</h1>
<div class="block">Factory class to create new ArgumentParser.</div>
<h3>Method Detail</h3>
<h4>newArgumentParser</h4>
<pre class="methodSignature">public static ArgumentParser newArgumentParser(String prog)</pre>
<div class="block">Creates ArgumentParser with given program name.</div>
<div class="block">This is equivalent with newArgumentParser(prog, true).</div>
<dl><dt><span class="paramLabel">Parameters:</span></dt><dd><code>prog</code> - The program name</dd></dl>
</body></html>""")
    assert definitions(doc) == [
        ("`newArgumentParser`: Creates ArgumentParser with given program name.", "newArgumentParser", "ArgumentParsers"),
        ("`prog`: The program name", "prog", "newArgumentParser"),
    ]
    # the member's later paragraph is more of its entry
    later = next(b for b in doc.blocks if doc.text[b.start:b.end].startswith("This is equivalent"))
    assert (later.kind, later.term, later.scope) == ("paragraph", "newArgumentParser", "ArgumentParsers")


def test_javadoc_notes_name_members_and_summaries_and_relations_are_left_out(tmp_path):
    doc = read(tmp_path, "Pair.html", """<html><body><main><div class="header">
<h1 title="Class Pair" class="title">Class Pair&lt;L,R&gt;</h1></div>
<section class="class-description"><dl class="notes"><dt>Type Parameters:</dt>
<dd><code>L</code> - the left element type</dd><dd><code>R</code> - the right element type</dd></dl>
<dl class="notes"><dt>Direct Known Subclasses:</dt><dd><code>MutablePair</code></dd></dl>
<div class="type-signature"><span class="modifiers">public abstract class </span>\
<span class="element-name">Pair&lt;L,R&gt;</span></div><div class="block"><p>A pair of two elements.</p></div>
</section>
<section class="summary"><section class="method-summary" id="method-summary"><h2>Method Summary</h2>
<div class="summary-table"><div class="col-first">L</div><div class="col-last">\
<div class="block">Gets the left element from this pair.</div></div></div></section></section>
<section class="details"><section class="detail" id="getLeft()"><h3>getLeft</h3>
<div class="member-signature"><span class="modifiers">public abstract</span> L <span class="element-name">\
getLeft</span>()</div><div class="block">Gets the left element from this pair.</div>
<dl class="notes"><dt>Returns:</dt><dd>the left element, may be null</dd></dl></section></section>
</main></body></html>""")
    assert definitions(doc) == [  # the type's own type parameters: named by its signature
        ("`Pair<L,R>`: A pair of two elements.", "Pair", ""),
        ("`getLeft()`: Gets the left element from this pair.", "getLeft", "Pair"),
    ]
    assert "Method Summary" not in doc.text and "Known Subclasses" not in doc.text and "Type Param" not in doc.text
    assert doc.text.count("Gets the left element") == 1
    assert "Returns: the left element, may be null" in doc.text


def test_a_javadoc_deprecation_notice_follows_the_text_it_stood_before(tmp_path):
    doc = read(tmp_path, "Matcher.html", """<html><body><main><div class="header">
<h1 title="Class Matcher" class="title">Class Matcher</h1></div>
<section class="class-description"><div class="type-signature"><span class="modifiers">public class </span>\
<span class="element-name">Matcher</span></div>
<div class="deprecation-block"><span class="deprecated-label">Deprecated.</span>
<div class="deprecation-comment">as of 3.6, use <code>Finder</code> instead</div></div>
<div class="block">A matcher of character runs.</div></section>
<section class="details"><section class="detail" id="comma()"><h3>comma</h3>
<div class="member-signature"><span class="modifiers">public static</span> Matcher <span class="element-name">\
comma</span>()</div><div class="deprecation-block"><span class="deprecated-label">Deprecated.</span></div>
<div class="block">Returns a matcher of the comma.</div></section>
<section class="detail" id="tab()"><h3>tab</h3><div class="member-signature">Matcher <span class="element-name">\
tab</span>()</div><div class="block"><span class="deprecatedLabel">Deprecated.</span></div>
<div class="block">Returns a matcher of the tab.</div></section></section></main></body></html>""")
    assert definitions(doc) == [
        ("`Matcher`: A matcher of character runs.", "Matcher", ""),
        ("`comma()`: Returns a matcher of the comma.", "comma", "Matcher"),
        ("`tab()`: Returns a matcher of the tab.", "tab", "Matcher"),
    ]
    text = doc.text
    assert text.index("A matcher of character runs.") < text.index("Deprecated. as of 3.6, use `Finder` instead")
    assert text.index("Returns a matcher of the comma.") < text.index("Deprecated.", text.index("comma()"))


def test_a_definition_list_of_short_codes_is_a_table_of_its_section(tmp_path):
    countries = "".join(f"<dt>&lsquo;<samp>{code}</samp>&rsquo;</dt><dd><p>{name}.</p></dd>" for code, name in (
        ("AD", "Andorra"), ("AE", "United Arab Emirates"), ("FK", "Falkland Islands"), ("PM", "Saint Pierre"),
        ("TT", "Trinidad and Tobago"), ("TV", "Tuvalu"), ("VA", "Holy See"), ("VC", "Saint Vincent")))
    doc = read(tmp_path, "codes.html", f"""<html><body><h1>Country Codes</h1>
<p>The standard defines two character codes for many countries.</p><dl compact>{countries}</dl>
<h2>Options</h2><dl><dt><code>--sort</code></dt><dd><p>Sort the output.</p></dd>
<dt><code>-o</code></dt><dd><p>Write to the file.</p></dd></dl></body></html>""")
    assert [d[1] for d in definitions(doc)] == ["--sort", "-o"]  # a short list of terms stays terms
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1 and ("TT", "Trinidad and Tobago.") in tables[0].rows
    assert tables[0].heading_path == ("Country Codes",)
    assert doc.text.count("Tuvalu") == 1


def test_groff_man_page_layouts_of_options_and_arguments_are_entries_of_the_command(tmp_path):
    # What groff -Thtml makes of a help2man page besides "option over indented text": a short
    # option in a layout table, an option run on after the description's sentence, options
    # whose argument is optional or whose name holds "+", and argument placeholders of the
    # SYNOPSIS over their description.
    doc = read(tmp_path, "gettext.1.html", """<html><body><h1>GETTEXT</h1>
<h2>NAME</h2><p style="margin-left:11%;">gettext - translate message</p>
<h2>SYNOPSIS</h2><p style="margin-left:11%;"><b>gettext</b> [<i>OPTION</i>] [[<i>TEXTDOMAIN</i>] <i>MSGID</i>]</p>
<h2>DESCRIPTION</h2>
<p style="margin-left:11%; margin-top: 1em">Display native language translation of a textual message. <b><br>
-d</b>, <b>--domain</b>=<i>TEXTDOMAIN</i></p>
<p style="margin-left:22%;">retrieve translated messages from TEXTDOMAIN</p>
<table width="100%" border="0"><tr valign="top"><td width="11%"></td><td width="3%"><p><b>-e</b></p></td>
<td width="8%"></td><td width="63%"><p>enable expansion of some escape sequences</p></td><td width="15%"></td></tr>
<tr valign="top"><td width="11%"></td><td width="3%"><p><b>-n</b></p></td>
<td width="8%"></td><td width="63%"><p>suppress trailing newline</p></td><td width="15%"></td></tr></table>
<p style="margin-left:11%;"><b>-C</b>, <b>--c++</b></p>
<p style="margin-left:22%;">shorthand for --language=C++</p>
<p style="margin-left:11%;"><b>-m</b>[<i>STRING</i>], <b>--msgstr-prefix</b>[=<i>STRING</i>]</p>
<p style="margin-left:22%;">use STRING or "" as prefix for msgstr values</p>
<p style="margin-left:11%; margin-top: 1em">[<i>TEXTDOMAIN</i>] <i>MSGID</i></p>
<p style="margin-left:22%;">retrieve translated message corresponding to MSGID from TEXTDOMAIN</p>
<p style="margin-left:11%; margin-top: 1em">NOTE</p>
<p style="margin-left:22%;">not an argument of the command.</p>
</body></html>""")
    assert definitions(doc)[1:] == [
        ("`-d, --domain=TEXTDOMAIN`: retrieve translated messages from TEXTDOMAIN", "--domain", "gettext"),
        ("`-e`: enable expansion of some escape sequences", "-e", "gettext"),
        ("`-n`: suppress trailing newline", "-n", "gettext"),
        ("`-C, --c++`: shorthand for --language=C++", "--c++", "gettext"),
        ("`-m[STRING], --msgstr-prefix[=STRING]`: use STRING or \"\" as prefix for msgstr values",
         "--msgstr-prefix", "gettext"),
        ("`[TEXTDOMAIN] MSGID`: retrieve translated message corresponding to MSGID from TEXTDOMAIN",
         "TEXTDOMAIN", "gettext"),
    ]
    assert "Display native language translation of a textual message.\n\n" in doc.text


def test_a_man_page_s_closing_paragraph_is_its_section_s_not_its_last_option_group_s(tmp_path):
    doc = read(tmp_path, "ngettext.1.html", """<html><body><h1>NGETTEXT</h1>
<h2>NAME</h2><p style="margin-left:11%;">ngettext - translate message and choose plural form</p>
<h2>DESCRIPTION</h2>
<p style="margin-left:11%; margin-top: 1em"><b>Output file location: <br>-o</b>, <b>--output</b>=<i>FILE</i></p>
<p style="margin-left:22%;">write output to specified file</p>
<p style="margin-left:11%; margin-top: 1em">If output file is -, output is written to standard output.</p>
<p style="margin-left:11%; margin-top: 1em"><b>Informative output: <br>-h</b>, <b>--help</b></p>
<p style="margin-left:22%;">display this help and exit</p>
<p style="margin-left:11%; margin-top: 1em">If the TEXTDOMAIN parameter is not given, the domain is determined
from the environment variable TEXTDOMAIN.</p>
<h2>AUTHOR</h2><p>Written by someone.</p></body></html>""")
    sections = {text.split(".")[0]: chunk.heading_path for chunk in chunk_document(doc, max_tokens=400, overlap_tokens=0)
                for text in chunk.text.split("\n\n")}
    assert sections["If output file is -, output is written to standard output"] == (
        "NGETTEXT", "DESCRIPTION", "Output file location")  # the group's note, as its label's words say
    assert sections["If the TEXTDOMAIN parameter is not given, the domain is determined from the environment "
                    "variable TEXTDOMAIN"] == ("NGETTEXT", "DESCRIPTION")
    assert sections["`-h, --help`: display this help and exit"] == ("NGETTEXT", "DESCRIPTION", "Informative output")


def test_a_label_over_a_predicate_is_a_description_not_a_field(tmp_path):
    doc = read(tmp_path, "msgfmt.1.html", """<html><body><h1>MSGFMT</h1>
<h2>NAME</h2><p style="margin-left:11%;">msgfmt - compile message catalog to binary format</p>
<h2>DESCRIPTION</h2>
<p style="margin-left:11%;"><b>--desktop</b></p>
<p style="margin-left:22%;">Desktop Entry mode: generate a .desktop file</p>
</body></html>""")
    assert definitions(doc)[1:] == [
        ("`--desktop`: Desktop Entry mode: generate a .desktop file", "--desktop", "msgfmt")]


def test_a_subcommand_written_with_its_arguments_is_code(tmp_path):
    from compendium.ingest.readers.definition_terms import code_like

    assert code_like("list [<log-options>]") and code_like("branch <branchname> [<stash>]")
    assert code_like("push [-p|--patch] [-S|--staged]")
    assert not code_like("Log file") and not code_like("Write-Ahead Log") and not code_like("clear")


def test_a_man_page_s_arguments_are_entries_of_the_command_where_it_describes_them(tmp_path):
    doc = read(tmp_path, "msgcmp.1.html", """<html><body><h1>MSGCMP</h1>
<h2>NAME</h2><p style="margin-left:11%;">msgcmp - compare message catalog and template</p>
<h2>SYNOPSIS</h2><p style="margin-left:11%;"><b>msgcmp</b> [<i>OPTION</i>] <i>def.po ref.pot</i></p>
<h2>DESCRIPTION</h2>
<p style="margin-left:11%;">Compare two Uniforum style .po files. The def.po file is an existing PO file with
the translations. The ref.pot file is the last created PO file. This is useful for checking.</p>
<p style="margin-left:11%; margin-top: 1em"><b>Input file location:</b></p>
<table width="100%" border="0"><tr valign="top"><td width="11%"></td><td width="9%"><p>def.po</p></td>
<td width="2%"></td><td width="18%"><p>translations</p></td><td width="60%"></td></tr></table>
<p style="margin-left:11%;">ref.pot</p><p style="margin-left:22%;">references to the sources</p>
<p style="margin-left:11%; margin-top: 1em"><b>Output file location in update mode:</b> The result is written
back to def.po. <b><br>--backup</b>=<i>CONTROL</i></p>
<p style="margin-left:22%;">make a backup of def.po</p>
</body></html>""")
    placed = [(doc.text[b.start:b.end], b.term, b.scope, b.heading_path[2:]) for b in doc.blocks
              if b.kind == "definition"][1:]
    assert placed == [
        ("The def.po file is an existing PO file with the translations.", "def.po", "msgcmp", ()),
        ("The ref.pot file is the last created PO file.", "ref.pot", "msgcmp", ()),
        ("`def.po`: translations", "def.po", "msgcmp", ("Input file location",)),
        ("`ref.pot`: references to the sources", "ref.pot", "msgcmp", ("Input file location",)),
        ("`--backup=CONTROL`: make a backup of def.po", "--backup", "msgcmp", ("Output file location in update mode",)),
    ]
    assert "Compare two Uniforum style .po files.\n\n" in doc.text
    assert "This is useful for checking." in doc.text
    assert "The result is written back to def.po.\n\n" in doc.text


def test_a_page_that_only_redirects_gives_no_passage(tmp_path):
    stub = read(tmp_path, "anchor.html", """<html><head><title>anchor (The Manual)</title>
<meta http-equiv="Refresh" content="0; url=Basics.html#anchor"></head>
<body><p>The node you are looking for is at <a href="Basics.html#anchor">anchor</a>.</p></body></html>""")
    assert stub.metadata["redirect"] == "Basics.html#anchor"
    assert chunk_document(stub, max_tokens=400, overlap_tokens=0) == []
    page = read(tmp_path, "Basics.html", """<html><head><meta http-equiv="Refresh" content="30; url=next.html"></head>
<body><h1>Basics</h1><p>""" + "A page that refreshes but holds a text of its own is read. " * 10 + "</p></body></html>")
    assert chunk_document(page, max_tokens=400, overlap_tokens=0)


def test_older_javadoc_layout_lists_are_no_lists_and_a_copied_description_has_no_label(tmp_path):
    doc = read(tmp_path, "TextNode.html", """<html><body><h2 title="Class TextNode">Class TextNode</h2>
<div class="description"><ul class="blockList"><li class="blockList"><pre>public class TextNode extends Node</pre>
<div class="block">A text node holds the characters between two tags.</div></li></ul></div>
<ul class="blockList"><li class="blockListLast"><h4>hasAttributes</h4><pre>public boolean hasAttributes()</pre>
<div class="block"><span class="descfrmTypeLabel">Description copied from class:&nbsp;<code><a href="Node.html">Node\
</a></code></span></div><div class="block">Check if this node has any attributes.</div></li></ul></body></html>""")
    assert "A text node holds the characters between two tags." in doc.text
    assert "- A text node" not in doc.text  # a block of the page, not a list's item
    assert "Description copied from" not in doc.text
    assert not any(b.kind == "item" for b in doc.blocks)


def test_older_javadoc_a_type_declaration_under_its_class_heading_is_the_class_entry(tmp_path):
    doc = read(tmp_path, "TextNode.html", """<html><body><div class="header"><h2 title="Class TextNode" class="title">\
Class TextNode</h2></div><div class="contentContainer"><ul class="inheritance"><li>java.lang.Object</li></ul>
<div class="description"><ul class="blockList"><li class="blockList"><hr><pre>public class \
<span class="typeNameLabel">TextNode</span>
extends <a href="Node.html">Node</a></pre><div class="block">A text node.</div></li></ul></div></div></body></html>""")
    assert ("`TextNode`: A text node.", "TextNode", "") in definitions(doc)
    # the same code under another heading, or a heading naming another type, defines nothing
    other = read(tmp_path, "Guide.html", """<html><body><h2>Writing nodes</h2><pre>public class TextNode extends Node</pre>
<p>A text node.</p></body></html>""")
    assert definitions(other) == []


def test_an_older_javadoc_member_named_by_a_plain_word_is_defined_and_owned_by_its_page_s_type(tmp_path):
    # a one-word member heading is a name where the code under it declares that name; the
    # owner is the type the page declares, though a heading of its description came between
    doc = read(tmp_path, "Selector.html", """<html><body><h2 title="Class Selector" class="title">Class Selector</h2>
<pre>public class Selector
extends java.lang.Object</pre>
<div class="block">CSS-like element selector.<h2>Selector syntax</h2><p>A selector is a chain of simple selectors.</p></div>
<h3>Constructor Detail</h3>
<h4>Selector</h4>
<pre class="methodSignature">public&nbsp;Selector&#8203;()</pre>
<div class="block">Create a new selector.</div>
<h3>Method Detail</h3>
<h4>select</h4>
<pre class="methodSignature">public static&nbsp;Elements&nbsp;select&#8203;(java.lang.String&nbsp;query)</pre>
<div class="block">Find elements matching selector.</div>
<dl><dt><span class="paramLabel">Parameters:</span></dt><dd><code>query</code> - CSS selector</dd></dl>
<h4>Summary</h4>
<pre>not a declaration of it</pre>
<p>Plain prose under a plain heading.</p>
</body></html>""")
    assert definitions(doc) == [
        ("`Selector`: CSS-like element selector.", "Selector", ""),
        ("`select`: Find elements matching selector.", "select", "Selector"),
        ("`query`: CSS selector", "query", "select"),
    ]  # the constructor defines no member, and "Summary" over other code is no name


def test_a_link_to_the_source_location_is_no_part_of_a_heading(tmp_path):
    # rustdoc and gi-docgen put "[src]" after a heading or a declaration
    doc = read(tmp_path, "method.Frob.get_serial.html", """<html><body><h1>Method Frob.get_serial</h1>
<h4 id="description">Description <a class="srclink" title="go to source location" href="https://x/f.c#L56">[src]</a></h4>
<p>Returns the current serial number of the frob.</p></body></html>""")
    assert [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "heading"] == ["Method Frob.get_serial",
                                                                                     "Description"]
