"""A guide's example compiled offline: the sentences that speak of what its code made up stay
with the code in the source, never on a page that cannot show the code."""

from __future__ import annotations

import asyncio
from pathlib import Path

from compendium.operations import compile_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Page
from compendium.workspace import add_documents, init_workspace

GUIDE = """# Working with forms

This guide shows how a view renders a form and reads what the browser sends back.

## The work that needs to be done

A form's `action` attribute names the URL the browser sends the data to.

```html
<form action="/your-name/" method="post">
    <input id="your_name" type="text" name="your_name" value="{{ current_name }}">
    <input type="submit" value="OK">
</form>
```

If the template context contains a `current_name` variable, that pre-fills the `your_name` field.
The `action` attribute accepts a relative URL as well as an absolute one.

## The view

```python
def get_name(request):
    if request.method == "POST":
        form = NameForm(request.POST)
        if form.check_and_clean():
            return HttpResponseRedirect("/thanks/")
```

We call the form's `check_and_clean()` method before reading the data.

## Sharing the form

A finished form can be shared with other projects. If this were not an exercise, you could now:

- Email the form module to a friend.
- Upload the form module on your website.

A form module uploaded to a package index can be installed by anyone.
"""


def _pages(root: Path, name: str = "forms.md", text: str = GUIDE) -> list[Page]:
    docs = root / "docs"
    docs.mkdir()
    (docs / name).write_text(text, encoding="utf-8")
    workspace = init_workspace(root / "ws")
    add_documents(workspace, [docs])
    settings = load_settings(workspace, env={})

    async def go() -> list[Page]:
        report = await compile_workspace(settings)
        assert report.status == "succeeded"
        async with opened_store(settings) as store:
            return [p async for p in store.scan(Page, {"status": "active"})]

    return asyncio.run(go())


def test_sentences_about_an_examples_own_names_are_not_lifted_onto_pages(tmp_path):
    published = "\n".join(p.markdown for p in _pages(tmp_path))
    # what the guide tells in prose is published
    assert "attribute names the URL the browser sends the data to" in published
    # what speaks of the example's own names (`current_name`, `check_and_clean()`) is not
    assert "pre-fills" not in published
    assert "We call the form" not in published


def test_a_lists_items_are_published_only_after_the_sentence_they_continue(tmp_path):
    published = "\n".join(p.markdown for p in _pages(tmp_path))
    assert "can be installed by anyone" in published
    for item in ("Email the form module to a friend.", "Upload the form module on your website."):
        assert item not in published or "you could now:" in published


WALKTHROUGH = """# Validating forms

A form validates what the browser sent before a view uses it.

## `is_valid()`

The `is_valid()` method runs every field's validators and returns whether all of them passed.

## A view that validates

```python
def get_name(request):
    form = NameForm(request.POST)
    if form.is_valid():
        return HttpResponseRedirect("/thanks/")
```

We call the form's `is_valid()` method before reading any data. The constructor creates one bound form.
"""


def test_sentences_walking_through_code_stay_with_it_even_when_they_name_real_api(tmp_path):
    published = "\n".join(p.markdown for p in _pages(tmp_path, "validating.md", WALKTHROUGH))
    # the section telling what `is_valid()` is stays published
    assert "runs every field's validators" in published
    # the walk-through of the code (its steps, a part of it as subject) does not
    assert "We call the form" not in published
    assert "The constructor creates" not in published
