"""An API reference compiled offline: a class page opens with the class, then each member's
section opens with what the member does, in the authors' order, whatever repeats around it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from compendium.engines.offline.entry_labels import labels_subject
from compendium.operations import compile_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Page
from compendium.workspace import add_documents, init_workspace

METHODS = [
    ("median", "Finds the middle value among comparable items."),
    ("firstNonNull", "Returns the first value that is not null."),
    ("compare", "Compares two values where either may be null."),
    ("requireNonEmpty", "Checks that a reference is neither null nor empty."),
    ("identity", "Returns the string the root class would produce for an object."),
    ("cloneIfPossible", "Clones an object when it can be cloned and returns it otherwise."),
    ("defaultIfNull", "Returns a default value when the given object is null."),
    ("allNull", "Tells whether every value given is null."),
]


def _member(name: str, text: str) -> str:
    # Every member repeats the same parameter and exception notes, as generated references do.
    return f"""<section class="detail" id="{name}(T)"><h3>{name}</h3>
<div class="member-signature"><span class="modifiers">public static</span> T <span class="element-name">{name}</span>\
(T&nbsp;value)</div><div class="deprecation-block"><span class="deprecated-label">Deprecated.</span></div>
<div class="block">{text} The {name} method never changes its argument.</div>
<dl class="notes"><dt>Type Parameters:</dt><dd><code>T</code> - the type of the value.</dd>
<dt>Throws:</dt><dd><code>NullPointerException</code> - if the value is <code>null</code>.</dd></dl></section>"""


def _class_page() -> str:
    members = "".join(_member(n, t) for n, t in METHODS)
    return f"""<html><head><title>Values</title></head><body><main><div class="header">
<h1 title="Class Values" class="title">Class Values</h1></div>
<section class="class-description"><div class="type-signature"><span class="modifiers">public class </span>\
<span class="element-name">Values</span></div>
<div class="block"><p>Operations on values that may be null.</p>
<p>The Values class handles null input gracefully. An exception is seldom thrown for a null input.
Each method documents its behavior in more detail.</p></div></section>
<section class="details"><h2>Method Details</h2>{members}</section></main></body></html>"""


def _compile(root: Path, files: dict[str, str] | None = None) -> dict[str, Page]:
    """The active pages, by title, of an offline compile of `files` (name -> HTML), by default
    the class page and a guide mentioning it."""
    if files is None:
        files = {"Values.html": _class_page(),
                 "Guide.html": "<html><body><h1>Guide</h1><p>The Values class is used throughout the guide. "
                               "Values checks arguments before they reach the store.</p></body></html>"}
    docs = root / "docs"
    docs.mkdir()
    for name, html in files.items():
        (docs / name).write_text(html, encoding="utf-8")
    workspace = init_workspace(root / "ws")
    add_documents(workspace, [docs])
    settings = load_settings(workspace, env={})

    async def go() -> dict[str, Page]:
        report = await compile_workspace(settings)
        assert report.status == "succeeded"
        async with opened_store(settings) as store:
            return {p.title: p async for p in store.scan(Page, {"status": "active"})}

    return asyncio.run(go())


def _sections(markdown: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif line.strip() and current:
            out[current].append(re.sub(r"\[\^\d+\]", "", line.strip()))
    return out


def test_a_class_page_leads_with_the_class_and_each_member_opens_with_what_it_does(tmp_path):
    pages = _compile(tmp_path)
    page = pages["Values"].markdown
    body = [line for line in page.split("\n\n") if line.strip()]
    assert body[1].startswith("`Values`: Operations on values that may be null.")
    # the rest of the class's own passage follows the lead, in the authors' order
    overview = " ".join(_sections(page).get("Overview", []))
    assert overview.index("handles null input gracefully") < overview.index("Each method documents")
    assert "Deprecated" not in body[1]
    members = {name: lines for name, lines in _sections(page).items() if name in dict(METHODS)}
    assert len(members) >= len(METHODS) // 2, page  # repeated notes never crowd the members out
    for name, lines in members.items():
        assert lines[0].startswith(f"`{name}(T value)`: {dict(METHODS)[name]}"), (name, lines)


def test_a_class_known_only_from_its_package_summary_has_a_page_led_by_that_row(tmp_path):
    summary = """<html><body><main>
<h1 class="title">Package org.example.concurrent</h1>
<p>Provides support classes for multi-threaded programming.</p>
<p><code>ConstantInitializer</code> is a very straightforward implementation of the <code>Initializer</code>
interface: An instance is passed an object when it is constructed.</p>
<div class="summary-table two-column-summary">
<div class="table-header col-first">Class</div><div class="table-header col-last">Description</div>
<div class="col-first even-row-color"><a href="ConstantInitializer.html">ConstantInitializer</a>&lt;T&gt;</div>
<div class="col-last even-row-color"><div class="block">A very simple implementation of the <code>Initializer</code>
 interface which always returns the same object.</div></div>
<div class="col-first odd-row-color"><a href="TimedSemaphore.html">TimedSemaphore</a></div>
<div class="col-last odd-row-color"><div class="block">A specialized semaphore implementation that provides a
 number of permits in a given time frame.</div></div>
</div></main></body></html>"""
    pages = _compile(tmp_path, {"package-summary.html": summary})
    # Its row is the authors' definition, written with its type parameters: it leads, before
    # the prose saying much the same.
    lead = [line for line in pages["ConstantInitializer"].markdown.split("\n\n") if line.strip()][1]
    assert lead.startswith("`ConstantInitializer<T>`: A very simple implementation"), lead
    assert "A specialized semaphore implementation" in pages["TimedSemaphore"].markdown


def test_a_macro_page_opens_with_its_entry_when_the_entry_names_it_by_its_signature(tmp_path):
    # texinfo's @defmac: the label is the macro's signature; its one-line description is the definition
    manual = """<html><head><title>Writing Testsuites</title></head><body><h3>Writing Testsuites</h3>
<dl class="def"><dt id="index-AT_005fINIT-1"><span class="category">Macro: </span><span><strong>AT_INIT</strong> \
<em>(<span class="roman">[</span><var>name</var><span class="roman">]</span>)</em></span></dt>
<dd><p>Initialize Autotest. Giving a <var>name</var> to the test suite is encouraged if your package includes \
several test suites.</p></dd></dl>
<p>The test suite runs AT_INIT first. AT_INIT is required in every test suite.</p></body></html>"""
    pages = _compile(tmp_path, {"testsuites.html": manual})
    lead = pages["AT_INIT"].markdown.split("\n\n")[1]
    assert lead.startswith("`AT_INIT ([name])`: Initialize Autotest.")


TRANSACTIONS = """<html><head><title>Transactions</title></head><body><h1>Transactions</h1>
<h2>Controlling transactions</h2>
<dl class="py function"><dt class="sig sig-object py" id="atomic"><span class="sig-name descname"><span class="pre">atomic</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">using</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">None</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">savepoint</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">True</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">durable</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">False</span></span></em><span class="sig-paren">)</span></dt>
<dd><p>Atomicity is the defining property of database transactions. It guarantees a block of code runs as one.</p></dd></dl>
<p><code>atomic</code> blocks can be nested. In this case, when an inner block completes successfully, its effects can still be rolled back.</p>
</body></html>
"""


def test_an_api_entry_leads_its_page_over_prose_naming_it(tmp_path):
    guide = ("<html><body><h1>Using transactions</h1><p><code>atomic</code> allows us to create a block of code "
             "within which the atomicity on the database is guaranteed. <code>atomic</code> blocks can be nested.</p>"
             "</body></html>")
    pages = _compile(tmp_path, {"transactions.html": TRANSACTIONS, "guide.html": guide})
    atomic = pages["atomic"].markdown.split("\n\n")[1]
    assert atomic.startswith("`atomic(using=None, savepoint=True, durable=False)`: Atomicity is the defining property")


def test_an_entry_names_its_subject_by_its_signature_but_a_constructor_does_not_name_its_class():
    assert labels_subject("`AT_INIT ([name])`: Initialize Autotest.", {"at_init"})
    assert labels_subject("`atomic(using=None, savepoint=True)`: Atomicity is ...", {"atomic()"})
    assert labels_subject("`class storage.fallback.FallbackStorage`: This class ...", {"fallbackstorage"})
    assert labels_subject("`class ModelForm(x)`: Builds a form from a model.", {"modelform"})
    assert not labels_subject("`EventListenerSupport(Class<L> listenerInterface)`: Creates ...", {"eventlistenersupport"})
    assert not labels_subject("AT_INIT is required in every test suite.", {"at_init"})
