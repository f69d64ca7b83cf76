"""The HTML the reader knows: block, heading and code tags, and the site's chrome that is never content."""

from __future__ import annotations

import re
from typing import Any

# Never content: scripts, embedded media, form controls and the site's own chrome.
SKIP = frozenset(
    "script style noscript template svg math iframe object embed canvas audio video map button "
    "select textarea input form nav aside footer menu dialog datalist".split()
)
HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCKS = frozenset(
    "html body main article section div header p ul ol dir li dl dt dd blockquote figure figcaption "
    "details summary address hr center fieldset legend hgroup caption table tr td th pre".split()
) | frozenset(HEADINGS)
INLINE_CODE = frozenset({"code", "tt", "kbd", "samp"})
_CONTENT = frozenset({"html", "body", "main", "article"})  # never chrome, whatever their class
_CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar", "doc-toc"}
)
# Whole class names and ids that mark navigation, menus, breadcrumbs, sidebars, footers, TOCs.
_CHROME_NAME = re.compile(
    r"(?:nav|navbar|navigation|navheader|navfooter|breadcrumbs?|menu|menubar|sidebar|sphinxsidebar"
    r"|sphinxsidebarwrapper|footer|toc|related|skip-?link|masthead|pager|pagination|wy-nav-side"
    r"|(?:site|page|top|main|global|local)[-_](?:nav|navigation|menu|footer|sidebar|toc)"
    r"|(?:nav|navbar|menu|sidebar|toc|breadcrumbs?)[-_]\w+"
    r"|\w+[-_](?:nav|navbar|navigation|menu|sidebar|breadcrumbs?|toc))",
    re.I,
)
_CHROME_ID = re.compile(r"(?:nav|navbar|navigation|breadcrumbs?|menu|sidebar|header|footer|toc|masthead)", re.I)
# Member summaries: a table of the members the details below define again, each row's sentence
# without its member's name ("Gets the left element from this pair."): Javadoc's, and Doxygen's
# "memberdecls". Doxygen's code tooltips ("ttc") are boxes a style sheet hides, repeating a
# member's sentence in a source listing.
_MEMBER_SUMMARY = re.compile(
    r"(?:method|field|constructor|nested-class|enum-constant|constants|property|annotation-type-(?:required|optional)-element"
    r"|member)-summary|memberSummary|memberdecls|ttc"
)
# Sphinx's "¶" anchors and "[source]" links; texinfo's "¶" anchors (copiable-anchor, -link);
# Doxygen's "◆" anchors (permalink); rustdoc's and gi-docgen's "[src]" links (srclink)
# older Javadoc's "Description copied from class: Node" over an inherited member's text
_INLINE_CHROME = frozenset({"headerlink", "viewcode-link", "copiable-anchor", "copiable-link", "permalink",
                            "descfrmTypeLabel", "srclink"})
# older Javadoc lays out each block of a page in a list of one item: no list, no item
LAYOUT_LISTS = frozenset({"blockList", "blockListLast"})
# Doxygen's group breadcrumb inside a page's title ("The libssh API" under its module's name)
_BLOCK_CHROME = frozenset({"ingroups"})
# Doxygen's page title box: the page's own title, where <title> puts the project's name first
PAGE_TITLE_BOX = frozenset({"headertitle"})
_LANGUAGE = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")


def class_names(attrib: Any) -> list[str]:
    return (attrib.get("class") or "").split()


def is_chrome(tag: str, attrib: Any) -> bool:
    if not attrib or tag in _CONTENT:
        return False
    if attrib.get("hidden") is not None or attrib.get("aria-hidden") == "true":
        return True
    if re.search(r"display\s*:\s*none", attrib.get("style") or ""):
        return True
    classes = class_names(attrib)
    if tag not in BLOCKS:  # inline chrome: only the heading anchors
        return any(c in _INLINE_CHROME for c in classes)
    if (attrib.get("role") or "").lower() in _CHROME_ROLES:
        return True
    if any(_CHROME_NAME.fullmatch(c) or _MEMBER_SUMMARY.fullmatch(c) or c in _BLOCK_CHROME for c in classes):
        return True
    # Ids name sections too ("#menu" of a page about menus): only non-section boxes count.
    ident = attrib.get("id") or ""
    if ident == "header" and tag == "div":
        return False  # a page header: read like <header> (its headings, then what they head)
    sectioning = tag in ("section", "article") or any(c.startswith(("section", "sect")) for c in classes)
    return bool(ident) and not sectioning and _CHROME_ID.fullmatch(ident) is not None


def language_of(attrib: Any) -> str:
    for name in class_names(attrib):
        match = _LANGUAGE.match(name)
        if match:
            return "" if match.group(1) in ("default", "none", "text") else match.group(1)
    return ""
