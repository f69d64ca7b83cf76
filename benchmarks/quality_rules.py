"""The written, mechanical rules the quality benchmark judges a compiled wiki by.

Noise. An entity name is noise when any of these holds (checked in this order, the first
reason is reported):
- `code`: it holds code punctuation ( = ; { } [ ] < > $ \\ | " or a quote pair), an
  operator (`->`, `::`, `:=`, `||`), parentheses other than a trailing `()` on an
  identifier, or starts with a character that is neither a letter, a digit, `_` nor `.`;
- `format`: a format placeholder (`%s`, `%d`, `{}`, `{0}`, `{name}`);
- `file`: the corpus's own document file names (`sql-vacuum.html`, `sql-vacuum`) that the
  text never writes as inline code (a module documented in `codecs.html` and written `codecs`
  is a name), nor its own document's title opens with (a Javadoc class documented in
  `StringUtils.html` titled "StringUtils (... API)" is a name);

File-name title: a page title ending in a document extension (.html, .md, .rst, .txt, .pdf,
.docx), or equal to a document's file name that the text itself never writes.
- `version`: only digits, dots and `v` (`15`, `3.11.2`, `v1.2`), or a label with a number
  (`Table 9.3`, `Section 25.1`, `Example 9-1`, `Chapter 8`);
- `placeholder`: a single letter, with or without a trailing `()` (`x`, `A`, `f()`): an
  example's variable, not a subject;
- `function-words`: it opens or closes with a function word or a participle used as a
  preposition ("time using", "object representing", "by default", "the other", "values of"),
  a lowercase phrase closes with a past participle ("function invoked"), or half its words or
  more are function words;
- `verb-led`: a lowercase phrase opening with a verb in its base form ("indicate successful
  authentication", "resolve polymorphic types");
- `repeated-word`: the same word twice ("arg arg", "BaseHandler Objects BaseHandler");
- `common-word`: one capitalised word that the corpus writes in lowercase more often than
  capitalised ("Resets", "Found", "Expression"): a sentence's first word, not a name;
- `generic`: one lowercase common word that names nothing on its own ("other", "value",
  "example", "case", "way", "number", "part");
- `long`: more than six words (a sentence fragment, not a name).

Defining sentence for a subject X (or one of its aliases): after an optional article, the
sentence opens with X, optionally followed by a parenthesis or an appositive, then `is a`
(an adverb may stand between: `is essentially the`),
`is an`, `is the`, `are`, `refers to`, `means`, `denotes`, `stands for`, `is short for`,
`is defined as`, or `, short for`; or "X (Y) is ..." in either order. The first sentence of a
chunk whose last heading is X counts too (a glossary entry). A lead also defines when it is
the first sentence of a passage of X's own document (its title or a heading above it is X) and opens
with X (a reference page's "ALTER SEQUENCE changes the parameters of ...").

Connective lead: a lead of any page, topics included, after the term a definition opens with
("`color.ui`: This variable ..." points back to `color.ui`, not to a sentence before it), opening with Also, However, This, These,
That, Those, It, Its, They, Such, Thus, Therefore, Hence, Moreover, Furthermore, In addition,
Otherwise, Instead, But, And, So, Then; or with this, these, those, it, its, they, them or
their among its first four words ("If this option is given", "Together they allow"), except
an "it" that stands for nothing ("Often, it is necessary to ..."), and a text saying what it is
itself ("This document provides ...", "This guide contains ...": nothing before it is pointed
at; added 2026-12-07 when such leads became the engine's, with the plain label "flag: This
flag ..." beside the code-marked one).

Repeated sentence: after dropping citations and list markers and folding case and spaces, two
sentences of one page are equal, or one of at least four words is contained in another.

Authored definition of a subject X (its name or an alias) in the page's evidence (the chunks
its entity was found in), read from the blocks each chunk records, never from a regex over prose:
- a `definition` block whose recorded term names X, or (none recorded) whose text opens with
  a term naming X and a colon ("`--squash`: Produce ...");
- a `term` block naming X followed by a `definition` block (a definition list whose term is
  kept apart from its description);
- the first paragraph under a heading, shaped "NAMES - purpose" where one of the
  comma-separated names is X (a man page's NAME line: "git-add - Add file contents to the index");
- the first paragraph under a heading naming X (a reference heading with the paragraph under it),
  unless it is one sentence announcing what follows it ("The basic XML serialization format looks
  like this:", "The docutils documentation describes parsers as follows:").
None of them is a label alone (a definition of one word, or of two ending in a colon: "Sample
usage:"; a paragraph under a heading of under six words and no full stop: "See also", "About this
document") or a version note alone ("New in Django 3.2."): nothing is said of X there (added
2026-12-07: on the six manuals at 150 documents it left out 1 git, 8 Django, 9 Sphinx and 3 MkDocs
pages whose only such text was that, among them pages led by "`latex_elements`: New in version 0.5.").
A term names X when the term, or one of its comma-separated parts with its argument or signature
cut off (`--date=<format>`, `-a, --all`, `escape(String str)`, `class Foo(bar)`), keys to X.
The lead opens with that definition when the lead's first 60 characters (markup, links and a
leading "term:" folded away) occur in the definition's text, or the definition's first 60 in
the lead.

Spread: the share of sentence occurrences (one cited sentence on one page) whose sentence,
folded as for repeats, is published on three or more pages. Reported beside it, with no target:
the same share where a sentence cited from different passages counts apart (the same option row
in twenty man pages is twenty commands' facts; one passage on many pages is the spread a reader sees).

Altered citation: a cited piece of text (what stands before a marker, back to the previous
marker or the paragraph's start, links replaced by their labels, an excerpt's closing "…"
dropped) that is not verbatim in the text of the chunk its footnote names (spaces folded).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import xxhash

FUNCTION_WORDS = frozenset(
    "a an the and or nor but if then else of in on at to for from by with without into onto over "
    "under about above below between among through during before after since until while as than "
    "that which who whom whose what when where why how this these those it its they them their "
    "we our you your he she his her is are was were be been being has have had do does did can "
    "could may might must shall should will would not no yes so such very also only just each "
    "every any all some most more less many much few other another same both either neither one "
    "per via using used given following based called see".split()
)
PARTICIPLES = frozenset(
    "using representing containing including following according regarding concerning describing "
    "having being making giving taking getting returning calling specifying showing".split()
)
BASE_VERBS = frozenset(
    "indicate resolve reach enable allow make get find give take specify define provide contain "
    "show need want keep ensure avoid prevent produce perform compute apply cause determine "
    "require support handle process report request".split()
)
GENERIC_WORDS = frozenset(
    "other value values example examples case cases way ways number numbers part parts thing things "
    "name names type types kind kinds form forms time times result results information data item "
    "items set sets list use user users default note notes section option options parameter "
    "parameters argument arguments command commands function functions object objects field fields "
    "level levels point points line lines end start order system file files".split()
)
CONNECTIVES = re.compile(
    r"^(?:Also|However|This|These|That|Those|It|Its|They|Such|Thus|Therefore|Hence|Moreover|"
    r"Furthermore|In addition|Otherwise|Instead|But|And|So|Then)\b"
)
_POINTING = re.compile(r"^(?:\S+\s+){0,3}?(this|these|those|it|its|they|them|their)\b", re.IGNORECASE)
_OWN_POSSESSIVE = re.compile(r"^(?:[\w`'’.-]+\s+){1,2}(?:can|may|might|must|will|would|should|could|has|have|does|do)"
                             r"\s+(?:\w+\s+)?(?:its|their)\b", re.IGNORECASE)
_IT_FOR_NOTHING = re.compile(r"it\s+(?:is|was|(?:may|can|might|would|will)\s+be)\s+(?:\w+\s+){1,3}?(?:to|that)\b", re.I)
_CODE = re.compile(r"[=;{}\[\]<>$\\|\"]|->|::|:=|\|\||'[^']*'|^[^\w.]")
_FORMAT = re.compile(r"%[-+ #0-9.]*[sdifxXeEgGcrq]\b|\{\w*\}")
_VERSION = re.compile(r"^v?\d+(?:[.\-]\d+)*[a-z]?$|^[A-Z][a-z]+\s+[A-Z]?\d+(?:[.\-]\d+)*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])")
_DEFINING_VERB = (
    r"(?:\s*\([^)]{1,80}\))?(?:\s*,[^,]{1,80},)?\s*"
    r"(?:is\s+(?:\w+ly\s+)?(?:an?|the|one|any)\b|are\b|refers?\s+to|means\b|denotes\b|stands\s+for|"
    r"is\s+short\s+for|is\s+defined\s+as|,\s*short\s+for)"
)


def noise_reason(name: str, file_names: set[str], lowercase_more: frozenset[str] = frozenset(),
                 written: Callable[[], set[str]] | None = None) -> str:
    """Why `name` is noise under the rules above, or '' when it is a fair name.

    `lowercase_more`: words the corpus writes in lowercase more often than capitalised;
    `written`: the corpus's inline code spans (built on first use)."""
    text = name.strip()
    core = text[:-2] if text.endswith("()") else text
    if _CODE.search(core) or "(" in core or ")" in core:
        return "code"
    if _FORMAT.search(text):
        return "format"
    if text in file_names and (written is None or text not in written()):
        return "file"
    if _VERSION.match(text):
        return "version"
    if len(core) == 1 and core.isalpha():
        return "placeholder"
    words = [w.lower() for w in text.split()]
    if not words:
        return "code"
    if len(words) > 6:
        return "long"
    if len(words) > 1:
        if words[0] in FUNCTION_WORDS or words[-1] in FUNCTION_WORDS or words[-1] in PARTICIPLES:
            return "function-words"
        if text.islower() and words[-1].endswith("ed") and words[-1].isalpha():
            return "function-words"
        if sum(w in FUNCTION_WORDS for w in words) * 2 >= len(words):
            return "function-words"
        if text.islower() and words[0] in BASE_VERBS:
            return "verb-led"
        if len(set(words)) < len(words):
            return "repeated-word"
    elif words[0] in FUNCTION_WORDS:
        return "function-words"
    elif text[:1].isupper() and text[1:].islower() and words[0] in lowercase_more:
        return "common-word"
    if len(words) == 1 and text.islower() and words[0] in GENERIC_WORDS:
        return "generic"
    return ""


def key(name: str) -> str:
    """Loose comparison key: case, spaces, a trailing () and a plural s folded."""
    text = " ".join(name.lower().replace("()", "").split())
    return text[:-1] if len(text) > 3 and text.endswith("s") and not text.endswith("ss") else text


def sentences(text: str) -> list[str]:
    """Sentences of the prose paragraphs of `text`; a short line with no full stop (a heading
    or a label that reached the text as a line) is no sentence."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        if not flat or (len(flat.split()) < 6 and not flat.endswith((".", "!", "?"))):
            continue
        out += [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]
    return out


def defines(sentence: str, names: list[str]) -> bool:
    """Does `sentence` define one of `names` (see the module's rule)?"""
    for name in names:
        if not name.strip():
            continue
        pattern = rf"^(?:(?:An?|The)\s+)?[`*\"']*{re.escape(name)}[`*\"']*{_DEFINING_VERB}"
        if re.match(pattern, sentence, re.IGNORECASE):
            return True
    return False


def _opens_passage_about(chunk: Any, title: str, heads: set[str], names: list[str], lead: str) -> bool:
    """Is `lead` the first sentence of a passage under a heading named after the subject, or of
    a section of the subject's own document opening with its name ("ALTER SEQUENCE changes")?"""
    found = sentences(chunk.text)
    if not found or not found[0].startswith(lead[:60]):
        return False
    if chunk.heading_path and key(chunk.heading_path[-1]) in heads:
        return True
    own = any(key(h) in heads for h in (title, *chunk.heading_path))
    opening = lead.lstrip("`*\"'").lower()  # "`ALTER SEQUENCE` changes ...": the marks are markup
    return own and any(opening.startswith(n.lower()) for n in names if n.strip())


_DEFINED = re.compile(r"^(?:`[^`\n]{1,80}`|[^\s:`][^:\n]{0,60}?)(?::| [–—-]) (?=\S)")


_PLAIN_LABEL = re.compile(r"^[\w$@<\[][\w.$@<>\[\]|/=-]*(?:\s[\w.$@<>\[\]|/=-]+){0,4}:\s")
_ITSELF = re.compile(r"^(?:This|The\s+present)\s+(?:document|page|guide|tutorial|chapter|manual|article|howto|"
                     r"how-to|appendix|book|reference)\b(?!\s+(?:was|were|has\s+been|had)\b)")


def leans_back(lead: str) -> bool:
    """A connective lead (see the module docstring)."""
    if _DEFINED.match(lead) or _PLAIN_LABEL.match(lead):  # "`color.ui`: This variable ...": the term named
        return False
    if _ITSELF.match(lead):  # "This document provides ...": the text says what it is
        return False
    if CONNECTIVES.match(lead):
        return True
    pointing = _POINTING.match(lead)
    if pointing is None:
        return False
    if pointing[1].lower() in ("its", "their") and _OWN_POSSESSIVE.match(lead):
        return False  # "Applications can register their own actions ...": the sentence's own subject's
    return pointing[1].lower() != "it" or _IT_FOR_NOTHING.match(lead, pointing.start(1)) is None


def page_body(markdown: str) -> tuple[str, list[str]]:
    """The page's lead and its cited sentences, citations and list markers removed."""
    lead = ""
    cited: list[str] = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("[^"):
            continue
        if "[^" not in stripped:
            continue
        text = stripped[2:] if stripped.startswith(("- ", "* ")) else stripped
        parts = [p.strip() for p in _FOOTNOTE.split(text) if p.strip()]
        if not lead and parts:
            lead = parts[0]
        cited.extend(parts)
    return lead, cited


def repeated(cited: list[str]) -> bool:
    seen = [" ".join(s.lower().split()) for s in cited]
    if len(set(seen)) < len(seen):
        return True
    long = [s for s in seen if len(s.split()) >= 4]
    return any(a != b and a in b for a in long for b in seen)


def judge_wiki(data: dict[str, Any], *, seed: int, sample: int, topic_sample: int,
               checklist: tuple[tuple[str, ...], ...], apart: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    entities = data["entities"]
    pages = data["pages"]
    by_id = {e.id: e for e in entities}
    file_names: set[str] = set()
    for d in data["documents"]:
        base = d.path.rsplit("/", 1)[-1]
        stem = base.rsplit(".", 1)[0]
        file_names.add(base)
        if stem != re.split(r"[\s(]", d.title.strip(), maxsplit=1)[0]:  # "StringUtils (... API)": its name
            file_names.add(stem)
    entity_pages = [p for p in pages if p.kind != "topic"]

    counts: Counter[str] = Counter(w for c in data["chunks"] for w in _WORD.findall(c.text))
    lowercase_more = frozenset(
        w.lower() for w in counts if w[:1].isupper() and w[1:].islower() and counts[w.lower()] > counts[w]
    )

    def written() -> set[str]:  # the corpus's inline code, where a module's name is written as such
        if not code_spans:
            code_spans.append({m for c in data["chunks"] for m in re.findall(r"`([^`\n]+)`", c.text)})
        return code_spans[0]

    code_spans: list[set[str]] = []

    def noise_share(pool: list[Any]) -> tuple[int, int, Counter[str], list[tuple[str, str]]]:
        chosen = stable_sample(pool, sample, seed, lambda e: e.id)
        verdicts = [(e.name, noise_reason(e.name, file_names, lowercase_more, written)) for e in chosen]
        reasons = Counter(r for _, r in verdicts if r)
        return sum(1 for _, r in verdicts if r), len(chosen), reasons, verdicts

    page_subjects = [by_id[p.subject_id] for p in entity_pages if p.subject_id in by_id]
    noise_pages = noise_share(page_subjects)
    # The whole population too: a sample of 100 moves by a few points whenever the entities do.
    noise_every = sum(1 for e in page_subjects if noise_reason(e.name, file_names, lowercase_more, written))
    noise_all = noise_share(entities)

    chunk_text = {c.id: c for c in data["chunks"]}
    doc_title = {d.id: d.title for d in data["documents"]}
    joined: list[str] = []

    def corpus_text() -> str:  # only built when a title looks like a document's file name
        if not joined:
            joined.append("\n".join(c.text for c in data["chunks"]))
        return joined[0]

    no_fact, links_only, file_titles, rep, connective = [], [], [], [], []
    with_definition, defining = [], []
    for p in pages:
        lead, cited = page_body(p.markdown)
        if not cited:
            no_fact.append(p.title)
            if "[[" in p.markdown:
                links_only.append(p.title)
        if re.search(r"\.(?:html?|md|rst|txt|pdf|docx)$", p.title, re.I) or (
            p.title in file_names and p.title not in corpus_text()
        ):
            file_titles.append(p.title)
        if repeated(cited):
            rep.append(p.title)
        if lead and leans_back(lead):
            connective.append((p.title, lead[:80]))
        if p.kind == "topic":
            continue
        entity = by_id.get(p.subject_id)
        if entity is None:
            continue
        names = [entity.name, *entity.aliases]
        heads = {key(n) for n in names}
        has_definition = False
        for cid in entity.chunk_ids:
            chunk = chunk_text.get(cid)
            if chunk is None:
                continue
            found = sentences(chunk.text)
            if chunk.heading_path and key(chunk.heading_path[-1]) in heads and found:
                has_definition = True
                break
            if any(defines(s, names) for s in found):
                has_definition = True
                break
        if has_definition:
            with_definition.append(p.title)
            glossary_first = bool(lead) and any(
                _opens_passage_about(chunk_text[c], doc_title.get(chunk_text[c].document_id, ""), heads, names, lead) for c in entity.chunk_ids if c in chunk_text
            )
            if lead and (defines(lead, names) or glossary_first):
                defining.append(p.title)

    titles = {}
    for p in entity_pages:
        for n in (p.title, *p.aliases):
            titles.setdefault(key(n), p)
    covered, missing = [], []
    for alternatives in checklist:
        hit = next((titles[key(a)] for a in alternatives if key(a) in titles), None)
        if hit is not None and page_body(hit.markdown)[1]:
            covered.append(f"{alternatives[0]} → {hit.title}")
        else:
            missing.append(alternatives[0] + (" (page without a cited fact)" if hit else ""))

    merged = []
    for a, b in apart:
        for e in entities:
            spellings = {n for n in (e.name, *e.aliases)}
            lowered = {n.lower() for n in spellings}
            if (a in spellings or (a.lower() in lowered and a.islower())) and (
                b in spellings or (b.islower() and b.lower() in lowered)
            ):
                merged.append(f"{a} = {b} ({e.name})")
                break

    topics = [p for p in pages if p.kind == "topic"]
    topic_titles = stable_sample(topics, topic_sample, seed, lambda p: p.slug)
    topic_rows = []
    for p in topic_titles:
        topic = next((t for t in data["topics"] if t.id == p.subject_id), None)
        members = [by_id[m].name for m in (topic.members if topic else []) if m in by_id][:6]
        topic_rows.append((p.title, members))
    pair_titles = [p.title for p in topics if re.search(r"\S and \S", p.title)]

    return {
        "entities": len(entities), "pages": len(pages), "entity_pages": len(entity_pages),
        "topics": len(topics),
        "noise_pages": noise_pages, "noise_all": noise_all,
        "noise_every": (noise_every, len(page_subjects)),
        "no_fact": no_fact, "links_only": links_only, "file_titles": file_titles,
        "with_definition": with_definition, "defining": defining, "connective": connective,
        "repeated": rep, "covered": covered, "missing": missing, "checklist": len(checklist),
        "merged": merged, "apart": len(apart), "topic_rows": topic_rows, "pair_titles": pair_titles,
    }


# ---- authored definitions, spread, altered citations ------------------------------------------

_TERM_CUT = re.compile(r"[\s=\[(<{]")  # where a term's argument or signature begins
_NAME_LINE = re.compile(r"^(?P<names>[^\s].{0,200}?)\s+[-\u2013\u2014]{1,2}\s+(?P<purpose>\S.*)$", re.S)
_MARKS = re.compile(r"[`*]+")
_LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
_FOOTNOTE_DEF = re.compile(r"^\[\^(\d+)\]: .*? — chunk (\S+)$", re.M)
_MARKER = re.compile(r"\[\^(\d+)\](?!:)")


def _fold(text: str) -> str:
    return " ".join(_MARKS.sub("", text).lower().split())


def term_keys(term: str) -> set[str]:
    """Keys a definition's term names: the whole term and each comma-separated part, each also
    with its argument or signature cut off (see the module docstring)."""
    term = _MARKS.sub("", term).strip().rstrip(":")
    out = {key(term)}
    for part in re.split(r",\s+|\s+\|\s+", term):
        part = part.strip()
        if not part:
            continue
        out.add(key(part))
        head = _TERM_CUT.split(part, maxsplit=1)[0]
        if head:
            out.add(key(head))
            out.add(key(head.rsplit(".", 1)[-1]))  # a qualified name: Foo.bar names bar
    return out - {""}


def authored_definitions(chunk: Any, headed: bool = True) -> list[tuple[set[str], str]]:
    """(term keys, definition text) of each authored definition a chunk's blocks hold; without
    `headed`, only entries and NAME lines (not a heading's first paragraph)."""
    text, blocks = chunk.text, chunk.blocks or []
    out = []
    previous = ""
    for i, (kind, start, end, *_) in enumerate(blocks):
        piece = text[start:end]
        if kind == "definition":
            term, sep, _ = piece.partition(": ")
            if previous == "term":
                written = text[blocks[i - 1][1]:blocks[i - 1][2]]
            elif len(blocks[i]) > 3 and blocks[i][3]:  # the term the reader recorded: the name it defines
                written = blocks[i][3]
            elif sep and len(term) <= 200 and "\n" not in term:
                written = term
            else:
                written = ""
            if written and says_something(written, piece):
                out.append((term_keys(written), piece))
        elif kind == "paragraph" and previous == "heading":
            line = _NAME_LINE.match(piece.strip())
            if line and len(line["names"].split(",")[0].split()) <= 3:
                out.append((term_keys(line["names"]), line["purpose"]))
            if headed and chunk.heading_path and says_something("", piece, under_heading=True):
                out.append(({key(chunk.heading_path[-1])}, piece))
        previous = kind
    return out


_VERSION_NOTE = re.compile(r"^(?:New|Changed|Deprecated|Added|Removed)\s+(?:in|since)(?:\s+\S+){1,2}$", re.IGNORECASE)
_ANNOUNCES = re.compile(r"\b(?:following|follows|like\s+this|looks\s+like|below)\b[^.!?]*:$", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'])")


def says_something(term: str, text: str, under_heading: bool = False) -> bool:
    """Whether an authored definition's text says something of its term: not a label alone, not a
    version note alone, nor (a paragraph under a heading) one sentence announcing what follows."""
    flat = _fold_spaces(_MARKS.sub("", text))
    written = _fold_spaces(_MARKS.sub("", term)).rstrip(":")
    if written and flat.startswith(written + ": "):
        flat = flat[len(written) + 2:]
    words = len(flat.split())
    if under_heading:  # a rubric's or an admonition's title: "See also", "About this document"
        label = words < 6 and not flat.endswith((".", "!", "?"))
    else:  # "Sample usage:", a lone URL; "`--quiet`: print nothing" says what --quiet does
        label = words < 2 or (words < 3 and flat.endswith(":"))
    if label or _VERSION_NOTE.match(flat):
        return False
    return not (under_heading and len(_SENTENCE_BREAK.split(flat)) == 1 and _ANNOUNCES.search(flat))


def _fold_spaces(text: str) -> str:
    return " ".join(text.split())


def opens_with(lead: str, definition: str) -> bool:
    """Does `lead` open with `definition` (see the module docstring)?"""
    lead_f = _fold(_LINK.sub(lambda m: m.group(2) or m.group(1), lead))
    body = _fold(definition)
    if not lead_f or not body:
        return False
    term, sep, rest = lead_f.partition(": ")
    candidates = [lead_f, rest] if sep and len(term) <= 80 else [lead_f]
    return any(c[:60] in body or body[:60] in c for c in candidates if c)


def spread(pages: list[Any]) -> tuple[int, int, list[tuple[str, int]]]:
    """(occurrences on 3+ pages, all occurrences, the most spread sentences) over cited sentences."""
    where: dict[str, set[str]] = {}
    per_page: list[list[str]] = []
    for p in pages:
        _, cited = page_body(p.markdown)
        folded = list({" ".join(_LINK.sub(lambda m: m.group(2) or m.group(1), one).lower().split())
                       for s in cited for one in _SENTENCE_END.split(s) if one.strip()})
        per_page.append(folded)
        for s in folded:
            where.setdefault(s, set()).add(p.id)
    total = sum(len(f) for f in per_page)
    wide = sum(1 for f in per_page for s in f if len(where[s]) >= 3)
    top = sorted(((s, len(ids)) for s, ids in where.items() if len(ids) >= 3), key=lambda x: -x[1])[:10]
    return wide, total, top


def _opening_key(text: str) -> str:
    """A sentence as the coverage compares it: its first 80 characters, links, marks, case,
    spacing and a closing full stop folded (an entry's label and its first words say which entry
    it is; a man page and a book may write one entry with and without a capital and a stop)."""
    return _fold(_LINK.sub(lambda m: m.group(2) or m.group(1), text)).rstrip(".")[:80]


def definitions_shown(pages: list[Any], chunks: list[Any]) -> dict[str, Any]:
    """Of the entries and NAME lines the sources hold (each text once), how many a page shows
    opening the page or one of its paragraphs (a member's entry opens its paragraph on its
    owner's page), how many anywhere on a page, and examples of those shown nowhere."""
    openings: set[str] = set()
    anywhere: set[str] = set()
    for p in pages:
        for line in p.markdown.splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith(("#", "[^")) or "[^" not in stripped:
                continue
            text = stripped[2:] if stripped.startswith(("- ", "* ")) else stripped
            parts = [_opening_key(x) for x in _FOOTNOTE.split(text) if x.strip()]
            if parts:
                openings.add(parts[0])
                anywhere.update(parts)
    keys: dict[str, str] = {}
    for c in chunks:
        for _, definition in authored_definitions(c, headed=False):
            first = _SENTENCE_END.split(definition.strip(), maxsplit=1)[0]
            keys.setdefault(_opening_key(first), first)
    opening = sum(1 for k in keys if k in openings)
    nowhere = [text for k, text in keys.items() if k not in anywhere]
    return {"opening": opening, "shown": len(keys) - len(nowhere), "total": len(keys), "nowhere": nowhere}


_CITED_PIECE = re.compile(r"([^\n]+?)\[\^(\d+)\]")


def spread_by_passage(pages: list[Any]) -> tuple[int, int]:
    """(occurrences on 3+ pages, all occurrences) as `spread` counts them, but a sentence cited
    from different passages counts apart: the same words in two man pages ("-h, --help:
    display this help and exit") are two commands' facts, one passage on many pages is one."""
    where: dict[tuple[str, str], set[str]] = {}
    per_page: list[set[tuple[str, str]]] = []
    for p in pages:
        notes = dict(_FOOTNOTE_DEF.findall(p.markdown))
        body = _FOOTNOTE_DEF.sub("", p.markdown)
        keys = set()
        for line in body.splitlines():
            line = line.strip().removeprefix("- ").removeprefix("* ")
            for text, ref in _CITED_PIECE.findall(line):
                text = _LINK.sub(lambda m: m.group(2) or m.group(1), _FOOTNOTE.sub("", text))
                for one in _SENTENCE_END.split(text):
                    if one.strip():
                        keys.add((" ".join(one.lower().split()), notes.get(ref, "")))
        per_page.append(keys)
        for key in keys:
            where.setdefault(key, set()).add(p.id)
    total = sum(len(k) for k in per_page)
    return sum(1 for k in per_page for key in k if len(where[key]) >= 3), total


def altered_citations(pages: list[Any], chunks: dict[str, Any]) -> tuple[int, int, list[tuple[str, str]]]:
    """(altered, checked, examples) over every citation marker of every page."""
    altered, checked, examples = 0, 0, []
    flat = {}
    for p in pages:
        notes = dict(_FOOTNOTE_DEF.findall(p.markdown))
        body = _FOOTNOTE_DEF.sub("", p.markdown)
        for paragraph in re.split(r"\n\s*\n", body):
            start = 0
            for m in _MARKER.finditer(paragraph):
                piece = paragraph[start:m.start()]
                start = m.end()
                lines = [ln.strip() for ln in piece.splitlines() if ln.strip()]
                text = " ".join(ln[2:] if ln.startswith(("- ", "* ")) else ln for ln in lines[-1:])
                text = " ".join(_LINK.sub(lambda x: x.group(2) or x.group(1), text).split())
                text = text.removeprefix("- ").removeprefix("* ").strip()
                if not text:
                    continue
                checked += 1
                cid = notes.get(m.group(1), "")
                if cid not in flat and cid in chunks:
                    flat[cid] = " ".join(chunks[cid].text.split())
                quoted = text[:-1].rstrip() if text.endswith("…") else text  # an excerpt cut short
                if cid not in flat or quoted not in flat[cid]:
                    altered += 1
                    if len(examples) < 10:
                        examples.append((p.title, text[:160]))
    return altered, checked, examples


def stable_sample(items: list[Any], k: int, seed: int, name: Callable[[Any], str]) -> list[Any]:
    """The `k` items whose seeded hash of their name is smallest, in that order: a page stays in
    the sample while it exists, however many pages come and go around it (a seeded shuffle
    draws another sample whenever the population changes by one), so a reader re-reads only
    the sampled pages whose text changed."""
    return sorted(items, key=lambda item: xxhash.xxh3_64_intdigest(f"{seed}:{name(item)}".encode()))[:k]


def judge_manual(data: dict[str, Any], *, seed: int, pages: int, topics: int) -> dict[str, Any]:
    """The issue's measures on one compiled manual, with seeded samples for a reader."""
    entities = {e.id: e for e in data["entities"]}
    chunks = {c.id: c for c in data["chunks"]}
    active = data["pages"]
    entity_pages = [p for p in active if p.kind != "topic"]
    topic_pages = [p for p in active if p.kind == "topic"]
    with_authored, leads_authored, missed = 0, 0, []
    for p in entity_pages:
        entity = entities.get(p.subject_id)
        if entity is None:
            continue
        names = {key(n) for n in (entity.name, *entity.aliases, p.title)}
        found = [d for cid in entity.chunk_ids if cid in chunks for keys, d in authored_definitions(chunks[cid])
                 if keys & names]
        if not found:
            continue
        with_authored += 1
        lead, _ = page_body(p.markdown)
        if lead and any(opens_with(lead, d) for d in found):
            leads_authored += 1
        elif len(missed) < 15:
            missed.append((p.title, lead[:100], found[0][:100]))
    return {
        "authored": (leads_authored, with_authored), "authored_missed": missed,
        "spread": spread(active), "spread_by_passage": spread_by_passage(active),
        "definitions": definitions_shown(active, list(chunks.values())),
        "altered": altered_citations(active, chunks),
        "page_sample": stable_sample(entity_pages, pages, seed, lambda p: p.slug),
        "topic_sample": stable_sample(topic_pages, topics, seed, lambda p: p.slug),
    }


# ---- alias gold set --------------------------------------------------------------------------

def acronym_gold(path: Path) -> list[tuple[str, str]]:
    """(acronym, expansion) pairs of the PostgreSQL manual's acronyms appendix."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_bytes(), "html.parser")
    pairs = []
    for dt in soup.select("dl.variablelist > dt"):
        dd = dt.find_next_sibling("dd")
        if dd is None:
            continue
        acronym = " ".join(dt.get_text(" ").split())
        first = dd.find("p") or dd
        expansion = " ".join(first.get_text(" ").split()).rstrip(".")
        # the expansion without its remarks: "Database Interface (Perl)", "Log Sequence Number, see ..."
        expansion = re.split(r"\s*\(|\s*,\s", expansion, maxsplit=1)[0].strip()
        if not acronym or not expansion or len(expansion.split()) > 8 or "." in expansion:
            continue  # a description, not an expansion
        pairs.append((acronym, expansion))
    return pairs


def alias_scores(gold: list[tuple[str, str]], entities: list[Any]) -> dict[str, Any]:
    """Pairwise precision and recall of the merged entities over the gold set's names."""
    def norm(n: str) -> str:
        return " ".join(n.lower().replace("-", " ").split())

    universe = {norm(a) for a, _ in gold} | {norm(x) for _, x in gold}
    gold_pairs = {frozenset((norm(a), norm(x))) for a, x in gold if norm(a) != norm(x)}
    predicted: set[frozenset[str]] = set()
    seen_names: set[str] = set()
    for e in entities:
        names = {norm(n) for n in (e.name, *e.aliases)} & universe
        seen_names |= names
        ordered = sorted(names)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                predicted.add(frozenset((a, b)))
    hits = predicted & gold_pairs
    reachable = {p for p in gold_pairs if p <= seen_names}
    precision = len(hits) / len(predicted) if predicted else 1.0
    recall = len(hits) / len(gold_pairs) if gold_pairs else 0.0
    wrong = sorted(" = ".join(sorted(p)) for p in predicted - gold_pairs)
    missed = sorted(" = ".join(sorted(p)) for p in reachable - hits)
    return {"gold": len(gold_pairs), "predicted": len(predicted), "hits": len(hits),
            "precision": precision, "recall": recall,
            "reachable": len(reachable), "recall_reachable": len(hits & reachable) / len(reachable) if reachable else 0.0,
            "wrong": wrong, "missed": missed}


# ---- report ----------------------------------------------------------------------------------

def _share(n: int, d: int) -> str:
    return f"{n} of {d} ({100 * n / d:.0f}%)" if d else "0 of 0"


def render(results: list[dict[str, Any]], *, documents: int, seed: int) -> str:
    lines = [
        "# Wiki quality benchmark",
        "",
        f"`python -m benchmarks.quality --documents {documents}`: each corpus subsampled to {documents} "
        f"documents (seed {seed}, the checklist's documents always kept), compiled offline, measured with "
        "the mechanical rules of `benchmarks/quality_rules.py` (its docstring is the written rule).",
        "",
        "| measure | target | " + " | ".join(r["corpus"] for r in results) + " |",
        "|---|---|" + "---|" * len(results),
    ]

    def row(label: str, target: str, cell) -> None:  # type: ignore[no-untyped-def]
        lines.append(f"| {label} | {target} | " + " | ".join(cell(r) for r in results) + " |")

    row("documents / chunks", "", lambda r: f"{r['documents']} / {r['chunks']}")
    row("entities / pages / topics", "", lambda r: f"{r['entities']} / {r['pages']} / {r['topics']}")
    row("noise among page subjects (sample of 100)", "≤ 5%", lambda r: _share(*r["noise_pages"][:2]))
    row("noise among every page subject (no sample)", "", lambda r: _share(*r["noise_every"]))
    row("noise among all entities (sample of 100)", "", lambda r: _share(*r["noise_all"][:2]))
    row("pages with no cited fact", "0", lambda r: _share(len(r["no_fact"]), r["pages"]))
    row("pages holding only links", "0", lambda r: _share(len(r["links_only"]), r["pages"]))
    row("pages titled with a file name", "0", lambda r: str(len(r["file_titles"])))
    row("defining leads where the evidence defines", "≥ 80%",
        lambda r: _share(len(r["defining"]), len(r["with_definition"])))
    row("leads opening with a connective", "0", lambda r: str(len(r["connective"])))
    row("pages repeating or containing a sentence", "0", lambda r: _share(len(r["repeated"]), r["pages"]))
    row("topic titles shaped 'X and Y'", "", lambda r: _share(len(r["pair_titles"]), r["topics"]))
    row("checklist concepts with a page", "≥ 90%", lambda r: _share(len(r["covered"]), r["checklist"]))
    row("named false merges", "0", lambda r: f"{len(r['merged'])} of {r['apart']}")
    row("alias precision / recall (acronyms appendix)", "≥ 0.95 / ≥ 0.80",
        lambda r: f"{r['aliases']['precision']:.2f} / {r['aliases']['recall']:.2f}" if "aliases" in r else "—")
    row("compile wall s / CPU s / chunks per CPU second", "≥ 150 chunks/s",
        lambda r: f"{r['wall']:.0f} / {r['cpu']:.0f} / {r['chunks'] / r['cpu']:.0f}")
    engine = ("map", "reduce", "plan", "refine")
    row("offline engine (MAP+REDUCE+PLAN+REFINE) chunks per CPU second", "≥ 150",
        lambda r: f"{r['chunks'] / max(sum(r['phase_cpu'].get(p, 0.0) for p in engine), 1e-9):.0f}")
    row("offline engine CPU seconds per 1,000 words of the corpus", "",
        lambda r: f"{1000 * sum(r['phase_cpu'].get(p, 0.0) for p in engine) / max(r['words'], 1):.3f}")
    row("corpus words / words per chunk", "", lambda r: f"{r['words']:,} / {r['words'] / max(r['chunks'], 1):.0f}")
    row("CPU seconds by phase (ingest, map, reduce, plan, refine)", "",
        lambda r: " / ".join(f"{r['phase_cpu'].get(p, 0.0):.1f}" for p in ("ingest", *engine)))
    for r in results:
        lines += ["", f"## {r['corpus']} ({r['shape']})", ""]
        reasons = r["noise_pages"][2]
        lines.append("Noise reasons among page subjects: " + (", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "none"))
        noisy = [f"`{n}` ({why})" for n, why in r["noise_pages"][3] if why]
        lines.append("Noisy page subjects in the sample: " + ("; ".join(noisy) or "none"))
        reasons = r["noise_all"][2]
        lines.append("Noise reasons among all entities: " + (", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "none"))
        lines.append("Checklist covered: " + "; ".join(r["covered"]))
        lines.append("Checklist missing: " + ("; ".join(r["missing"]) or "none"))
        lines.append("False merges: " + ("; ".join(r["merged"]) or "none"))
        lines.append("Pages without a cited fact (first 10): " + ("; ".join(r["no_fact"][:10]) or "none"))
        lines.append("File-name titles (first 10): " + ("; ".join(r["file_titles"][:10]) or "none"))
        lines.append("Repeating pages (first 10): " + ("; ".join(r["repeated"][:10]) or "none"))
        lines.append("Connective leads (first 5): " + ("; ".join(f"{t}: {lead}" for t, lead in r["connective"][:5]) or "none"))
        missing_def = [t for t in r["with_definition"] if t not in set(r["defining"])]
        lines.append("Evidence defines but the lead does not (first 10): " + ("; ".join(missing_def[:10]) or "none"))
        if "aliases" in r:
            a = r["aliases"]
            lines.append(
                f"Alias gold set: {a['gold']} acronym/expansion pairs; {a['predicted']} pairs merged among their "
                f"names, {a['hits']} right; recall over pairs whose both names were extracted: "
                f"{a['recall_reachable']:.2f} of {a['reachable']}.")
            lines.append("Wrong alias pairs: " + ("; ".join(a["wrong"][:15]) or "none"))
            lines.append("Missed alias pairs (both names extracted, first 15): " + ("; ".join(a["missed"][:15]) or "none"))
        lines += ["", f"Topic titles (seeded sample of {len(r['topic_rows'])}, with their first members):", ""]
        lines += [f"{i}. {title} — {', '.join(members)}" for i, (title, members) in enumerate(r["topic_rows"], 1)]
    return "\n".join(lines) + "\n"


def render_manuals(results: list[dict[str, Any]], *, documents: int, seed: int, out: str) -> str:
    """The report: one column per manual, the issue's measures first, then the older ones."""
    lines = [
        "# Wiki quality benchmark",
        "",
        f"`python -m benchmarks.quality --manual all --documents {documents}`: each manual of "
        f"`benchmarks/manuals.py` sampled to {documents} documents (seed {seed}; the regression checks "
        "keep their checklist documents), compiled offline in a temporary workspace and measured with the "
        "mechanical rules of `benchmarks/quality_rules.py` (its docstring is the written rule). "
        f"The 100 sampled page subjects, 45 sampled pages and 20 topic pages of each manual are written "
        f"under `{out}/<manual>/` for a reader.",
        "",
        "| measure | target | " + " | ".join(r["corpus"] for r in results) + " |",
        "|---|---|" + "---|" * len(results),
    ]

    def row(label: str, target: str, cell) -> None:  # type: ignore[no-untyped-def]
        lines.append(f"| {label} | {target} | " + " | ".join(cell(r) for r in results) + " |")

    engine = ("map", "reduce", "plan", "refine")
    row("toolchain", "", lambda r: r["shape"])
    row("counts toward the targets", "", lambda r: "yes" if r["counts"] else "no (regression check)")
    row("documents / chunks", "", lambda r: f"{r['documents']} / {r['chunks']}")
    row("pages (entity / topic)", "", lambda r: f"{r['pages']} ({r['entity_pages']} / {r['topics']})")
    row("noise among page subjects (sample of 100)", "≤ 8%", lambda r: _share(*r["noise_pages"][:2]))
    row("leads opening with the authored definition, where the evidence holds one", "≥ 90%",
        lambda r: _share(*r["authored"]))
    row("defining leads where the evidence defines (regex proxy)", "",
        lambda r: _share(len(r["defining"]), len(r["with_definition"])))
    row("authored entries and NAME lines opening a page or a paragraph of one", "all",
        lambda r: _share(r["definitions"]["opening"], r["definitions"]["total"]))
    row("authored entries and NAME lines on no page", "0",
        lambda r: _share(len(r["definitions"]["nowhere"]), r["definitions"]["total"]))
    row("sentence occurrences published on 3+ pages", "≤ 15%", lambda r: _share(*r["spread"][:2]))
    row("the same, each source passage counted apart", "", lambda r: _share(*r["spread_by_passage"]))
    row("cited pieces not verbatim in their passage", "0", lambda r: f"{r['altered'][0]} of {r['altered'][1]}")
    row("noise among every page subject (no sample)", "", lambda r: _share(*r["noise_every"]))
    row("pages with no cited fact", "0", lambda r: _share(len(r["no_fact"]), r["pages"]))
    row("pages titled with a file name", "0", lambda r: str(len(r["file_titles"])))
    row("leads opening with a connective", "0", lambda r: str(len(r["connective"])))
    row("pages repeating or containing a sentence", "0", lambda r: _share(len(r["repeated"]), r["pages"]))
    row("checklist concepts with a page", "", lambda r: _share(len(r["covered"]), r["checklist"]) if r["checklist"] else "—")
    row("named false merges", "0", lambda r: f"{len(r['merged'])} of {r['apart']}" if r["apart"] else "—")
    row("alias precision / recall (acronyms appendix)", "≥ 0.95",
        lambda r: f"{r['aliases']['precision']:.2f} / {r['aliases']['recall']:.2f}" if "aliases" in r else "—")
    row("compile wall s / CPU s", "", lambda r: f"{r['wall']:.0f} / {r['cpu']:.0f}")
    row("offline engine (MAP+REDUCE+PLAN+REFINE) chunks per CPU second", "≥ 200",
        lambda r: f"{r['chunks'] / max(sum(r['phase_cpu'].get(p, 0.0) for p in engine), 1e-9):.0f}")
    row("CPU seconds by phase (ingest, map, reduce, plan, refine)", "",
        lambda r: " / ".join(f"{r['phase_cpu'].get(p, 0.0):.1f}" for p in ("ingest", *engine)))
    for r in results:
        lines += ["", f"## {r['corpus']} ({r['shape']})", ""]
        reasons = r["noise_pages"][2]
        lines.append("- Noise reasons among sampled page subjects: "
                     + (", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "none"))
        noisy = [f"`{n}` ({why})" for n, why in r["noise_pages"][3] if why]
        lines.append("- Noisy page subjects in the sample: " + ("; ".join(noisy) or "none"))
        lines.append("- Authored definition in the evidence, lead does not open with it (first 5): " + (
            "; ".join(f"{t}: lead \"{lead}\" / definition \"{d}\"" for t, lead, d in r["authored_missed"][:5]) or "none"))
        lines.append("- Authored entries and NAME lines on no page (first 5): " + (
            "; ".join(f"\"{d[:90]}\"" for d in r["definitions"]["nowhere"][:5]) or "none"))
        lines.append("- Most spread sentences (pages): " + (
            "; ".join(f"\"{s[:80]}\" ({n})" for s, n in r["spread"][2][:5]) or "none"))
        lines.append("- Cited pieces not verbatim (first 5): " + (
            "; ".join(f"{t}: \"{x}\"" for t, x in r["altered"][2][:5]) or "none"))
        lines.append("- File-name titles (first 10): " + ("; ".join(r["file_titles"][:10]) or "none"))
        lines.append("- Connective leads (first 5): " + (
            "; ".join(f"{t}: {lead}" for t, lead in r["connective"][:5]) or "none"))
        if r["checklist"]:
            lines.append("- Checklist missing: " + ("; ".join(r["missing"]) or "none"))
            lines.append("- False merges: " + ("; ".join(r["merged"]) or "none"))
        if "aliases" in r:
            a = r["aliases"]
            lines.append("- Wrong alias pairs: " + ("; ".join(a["wrong"][:15]) or "none"))
    return "\n".join(lines) + "\n"


def dump(results: list[dict[str, Any]], path: Path) -> None:
    plain = []
    for r in results:
        plain.append({k: (list(v) if isinstance(v, tuple) else v) for k, v in r.items()
                      if k not in ("noise_pages", "noise_all", "page_sample", "topic_sample")}
                     | {"noise_pages": r["noise_pages"][3], "noise_all": r["noise_all"][3]})
    path.write_text(json.dumps(plain, indent=1, default=str), encoding="utf-8")
