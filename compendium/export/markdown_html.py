"""Page Markdown to safe HTML: [[wikilinks]] become relative links, [^n] become footnotes, nh3 cleans it all."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

Resolve = Callable[[str], "tuple[str, str] | None"]
"""slug -> (href, title) of an exported page, or None when the slug is not exported."""

Cite = Callable[[str, str, str], "tuple[str, str, str] | None"]
"""(footnote label, its definition, the sentence citing it) -> (href, title, safe HTML of
the footnote item) of the source passage, or None to render the footnote as written."""

_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^([^\]\s]+)\]:[ \t]*(.*)$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")

# Raw HTML in pages is never trusted: markdown-it escapes it (html=False) and nh3 removes
# anything that got through anyway. Only these tags and attributes survive.
_TAGS = set(nh3.ALLOWED_TAGS) | {"section"}
_ATTRIBUTES = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"id", "class"},
    "a": {"href", "title"},
    "code": {"class"},
}


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.inline.ruler.before("link", "footnote_ref", _footnote_ref)
    return md


def _wikilink(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2)
    inner = src[start + 2 : end] if end >= 0 else ""
    if not inner.strip() or "\n" in inner or "[" in inner:
        return False
    if not silent:
        target, _, label = inner.partition("|")
        target, label = target.strip(), label.strip()
        found = state.env["resolve"](target)
        if found is None:
            token = state.push("text", "", 0)
            token.content = label or target
        else:
            href, title = found
            token = state.push("link_open", "a", 1)
            token.attrs = {"href": href, "class": "wikilink"}
            state.push("text", "", 0).content = label or title
            state.push("link_close", "a", -1)
    state.pos = end + 2
    return True


def _footnote_ref(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    if not src.startswith("[^", start):
        return False
    end = src.find("]", start + 2)
    label = src[start + 2 : end] if end >= 0 else ""
    notes: dict[str, int] = state.env["footnotes"]
    if not label or label not in notes:
        return False
    if not silent:
        anchor = _anchor(label)
        href, title = f"#fn-{anchor}", ""
        cite = state.env.get("cite")
        if cite is not None:
            found = cite(label, state.env["definitions"][label], sentence_before(src[:start]))
            if found is not None:
                href, title = html.escape(found[0], quote=True), f' title="{plain(found[1])}"'
        token = state.push("html_inline", "", 0)
        token.content = (
            f'<sup class="footnote-ref"><a href="{href}" id="fnref-{anchor}"{title}>'
            f"{notes[label]}</a></sup>"
        )
    state.pos = end + 1
    return True


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MARKERS = re.compile(r"\[\^[^\]]*\]|\[\[(?:[^\]|]*\|)?|\]\]|[*_`]")


def sentence_before(text: str) -> str:
    """The sentence a citation marker ends: the last one of the text before it, markup removed."""
    cleaned = _MARKERS.sub("", text).strip()
    pieces = [p for p in _SENTENCE_END.split(cleaned) if p.strip()]
    return pieces[-1] if pieces else cleaned


def _anchor(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", label)


def split_footnotes(markdown: str) -> tuple[str, list[tuple[str, str]]]:
    """The body without footnote definitions, and the definitions (label, text) in order."""
    body: list[str] = []
    notes: list[tuple[str, str]] = []
    fence = ""
    for line in markdown.splitlines():
        opener = _FENCE.match(line)
        if opener and (not fence or opener.group(1).startswith(fence)):
            fence = "" if fence else opener.group(1)[:3]
        match = None if fence else _FOOTNOTE_DEF.match(line)
        if match:
            notes.append((match.group(1), match.group(2).strip()))
        else:
            body.append(line)
    return "\n".join(body), notes


_MD = _parser()


def render_markdown(markdown: str, resolve: Resolve, cite: Cite | None = None) -> str:
    """Sanitised HTML of a page body, with a footnote list appended when the page cites sources.

    With `cite`, each citation links to its source passage and each footnote names it."""
    body, notes = split_footnotes(markdown)
    numbers = {label: i for i, (label, _) in enumerate(notes, start=1)}
    env = {"resolve": resolve, "footnotes": numbers, "cite": cite, "definitions": dict(notes)}
    rendered = _MD.render(body, env)
    if notes:
        items = []
        for label, text in notes:
            anchor = _anchor(label)
            found = cite(label, text, "") if cite is not None else None
            inner = found[2] if found is not None else _MD.renderInline(text, env)
            items.append(
                f'<li id="fn-{anchor}">{inner} '
                f'<a href="#fnref-{anchor}" class="footnote-back">↩</a></li>'
            )
        rendered += (
            '<section class="footnotes"><h2>Sources</h2><ol>' + "".join(items) + "</ol></section>"
        )
    return sanitise(rendered)


def sanitise(fragment: str) -> str:
    """Strip every script, event handler and unsafe URL from an HTML fragment."""
    return nh3.clean(
        fragment, tags=_TAGS, attributes=_ATTRIBUTES, clean_content_tags={"script", "style"}
    )


def plain(text: str) -> str:
    """Escape text for HTML."""
    return html.escape(text, quote=True)


def _source_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        "table").enable("strikethrough")


# A source is quoted as written: its [[double brackets]] and [^n] are the authors' text, not
# our wikilinks and footnotes (as wikilinks they lost their brackets: "writing Checkpointer links").
_SOURCE_MD = _source_parser()


def passage_html(text: str, *, block: bool = False) -> str:
    """A source passage's sentence (inline Markdown) or code/table block as safe HTML."""
    return sanitise(_SOURCE_MD.render(text) if block else _SOURCE_MD.renderInline(text))
