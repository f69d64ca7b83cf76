"""A page asked as JSON sentences, each with the labels of the evidence it restates, and
rendered as Markdown with [^N] markers by us.

A small local model writes pages of prose of its own and almost never a marker, and a repair
that shows the failed page gets it back (Qwen2.5-Coder 1.5B, benchmarks/reports/real_model.md).
As JSON a citation is a field the grammar cannot leave out, and only the labels of the
evidence sent can be written; the list is bounded, so it cannot loop. Each sentence is then
checked like a written page's (support.check_text): the unsupported ones are dropped, and the
page stands when enough remain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from ..errors import ReplyError
from ..spacing import single_spaced
from ..support import CITE, SentenceCheck, check_text
from ..templates.schema import Template
from ..words import split_sentences
from .llm_prompts import render_prompt
from .page_evidence import evidence_line, evidence_texts, said_once, sent_evidence
from .page_support import supported_text
from .prompt_text import as_data, fence_key
from .tasks import Reply, bound

SCHEMA_NAME = "page_sentences"
SENTENCE_CHARS = 300
MAX_LABELS = 3
MAX_SENTENCES = 12  # a page of more is not what a small model writes well, and each costs ~60 tokens
MIN_SENTENCES = 3  # supported sentences that make a page (fewer when fewer items were sent)
TOKENS_PER_SENTENCE = 90  # the reply cap: a sentence at its longest, its labels and JSON
PLACEHOLDER = "<a sentence of the page>"


class PageSentence(Reply):
    text: str = Field(json_schema_extra=bound(chars=SENTENCE_CHARS))
    cites: list[str] = Field(default_factory=list, json_schema_extra=bound(items=MAX_LABELS))


class PageSentences(Reply):
    sentences: list[PageSentence] = Field(default_factory=list, json_schema_extra=bound(items=MAX_SENTENCES))


def sentence_bounds(evidence_lines: int) -> tuple[int, int]:
    """(fewest, most) sentences asked for a page shown `evidence_lines` items."""
    most = max(1, min(MAX_SENTENCES, evidence_lines + 2))
    return min(MIN_SENTENCES, evidence_lines, most) or 1, most


def sentences_schema(labels: Sequence[str], fewest: int, most: int) -> dict[str, Any]:
    """The reply's schema: bounded lists, and the labels shown as the only values a citation takes."""
    return {
        "type": "object", "additionalProperties": False, "required": ["sentences"],
        "properties": {"sentences": {
            "type": "array", "minItems": fewest, "maxItems": most,
            "items": {
                "type": "object", "additionalProperties": False, "required": ["text", "cites"],
                "properties": {
                    "text": {"type": "string", "maxLength": SENTENCE_CHARS},
                    "cites": {"type": "array", "minItems": 1, "maxItems": MAX_LABELS,
                              "items": {"type": "string", "enum": list(labels)}},
                },
            },
        }},
    }


def sentences_prompt(request: Any, template: Template, problems: Sequence[str] = ()) -> tuple[str, str, list[dict[str, Any]]]:
    """(system, prompt, evidence lines shown) of a page asked as sentences."""
    system = render_prompt(template.refine.system, "page_system", f"{template.name}: refine.system")
    evidence = said_once([evidence_line(e) for e in sent_evidence(request)])
    fewest, most = sentence_bounds(len(evidence))
    prompt = render_prompt(
        "", "page_sentences", "page_sentences",
        title=request.title,
        description=single_spaced(request.description),
        aliases=request.aliases,
        evidence=evidence,
        links=[{"slug": link.slug, "title": link.title} for link in request.links],
        problems=[as_data(p) for p in problems],
        min_sentences=fewest,
        max_sentences=most,
        key=fence_key(*(e["text"] for e in evidence)),
    )
    return system, prompt, evidence


# Words no sentence ends on: one that does was cut ("The B-tree index is used to.").
_OPEN_ENDS = frozenset("""a an the to of in on at by for with from into onto and or but nor as than that which
    whose is are was were be been its their his her our your this these those""".split())


def _copied_whole(sentence: str, labels: Sequence[str], texts: dict[str, str]) -> str:
    """The sentence, or the evidence's whole sentence where it copies a part of one: the model
    copied "... its TOAST chunks become dead tuples in the TOAST" from "... dead tuples in the
    TOAST table and are removed by Vacuum ...", and "MVCC keeps several versions of it." from
    "Instead of updating a row in place, MVCC keeps several versions of it.", which the check
    finds said."""
    body = sentence.rstrip(".!? ")
    if len(body.split()) < 4:
        return sentence
    # The labels it cites first; then any item (the check cites again one that restates it).
    for label in [*labels, *(key for key in texts if key not in labels)]:
        for said in split_sentences(" ".join(texts.get(label, "").split())):
            said = said.strip()
            if body in said and said.rstrip(".!? ") != body:
                return said
    return sentence


_LIST_NUMBER = re.compile(r"\s+\d{1,2}[.)]$")
_ITEM_LABEL = re.compile(r"^\[\d{1,3}\]\s*")  # an evidence line's label copied with it: "[2] Because a tuple ..."
_BOLD_LABEL = re.compile(r"^\*\*[^*]{1,40}\*\*\s+(?=\S)")  # a list item's label: "**Heap scan.** Vacuum reads ..."
MIN_WORDS = 3  # fewer make no sentence ("**Heap scan.**", "2. 3.")


def rendered(reply: PageSentences, sources: dict[str, str], texts: dict[str, str] | None = None) -> str:
    """The sentences as Markdown: each with its markers after its stop ("...disk.[^2]"); a new
    paragraph where the source of a sentence's first item changes. An item's text is read
    sentence by sentence, and a sentence copied from its evidence but cut short is given whole
    (`texts`: label -> the item's text). The prompt's placeholder copied back, a text with no
    letters, a sentence said before, a fragment (opening in lower case: the 1.5B model copied
    the tail of an item; or ending on a word no sentence ends on), a source's heading or the
    page's name alone ("Multi-Version Concurrency Control."), a text holding an excerpt's cut
    ("…": it copied "Within 3 million transactions, it refuses to assign new XIDs, and …") or a
    sentence announcing what it does not hold ("For each column it tries, in order:") are left out."""
    texts = texts or {}
    headings = {_bare(part) for source in sources.values() for part in source.split(" › ")}
    paragraphs: list[list[str]] = []
    last_source: str | None = None
    said: set[str] = set()
    for item in reply.sentences:
        labels = [label.strip().strip("[]^") for label in item.cites]
        labels = list(dict.fromkeys(label for label in labels if label))
        for piece in split_sentences(" ".join(item.text.split())) or [""]:
            body = _BOLD_LABEL.sub("", _ITEM_LABEL.sub("", piece.strip()))
            if body.count("`") % 2:  # a code mark left open where the copy broke off ("in its`.")
                body = body.rstrip(".!? ").removesuffix("`").rstrip()
            # "... works in phases: 1.", and the evidence's own list label given back whole
            body = _BOLD_LABEL.sub("", _LIST_NUMBER.sub("", _copied_whole(body, labels, texts)))
            key = body.casefold().rstrip(".!? ")
            last = key.split()[-1] if key.split() else ""
            if (not any(ch.isalpha() for ch in body) or body == PLACEHOLDER or key in said or body[0].islower()
                    or "…" in body or body.rstrip(".").endswith(":") or last in _OPEN_ENDS
                    or _bare(body) in headings or body.count("`") % 2 or len(body.split()) < MIN_WORDS):
                # nothing, the example, a repeat, a fragment, a cut, a heading, broken code marks, an excerpt's cut
                # copied ("and …"), or a sentence announcing a list it does not hold
                continue
            said.add(key)
            stop = ""
            while body and body[-1] in ".!?":
                stop, body = body[-1] + stop, body[:-1]
            sentence = f"{body.rstrip()}{stop or '.'}" + "".join(f"[^{label}]" for label in labels)
            source = sources.get(labels[0]) if labels else None
            if not paragraphs or (source is not None and source != last_source):
                paragraphs.append([])
            paragraphs[-1].append(sentence)
            last_source = source if source is not None else last_source
    return "\n\n".join(" ".join(p) for p in paragraphs)


def _bare(text: str) -> str:
    return " ".join(text.casefold().rstrip(".!? ").split())


def failed_sentences(checks: Sequence[SentenceCheck], limit: int = 3) -> str:
    """Up to `limit` unsupported sentences with why, for a failure's reason and a repair."""
    shown = []
    for s in [s for s in checks if not (s.ok or s.supported)][:limit]:
        why = ("cites nothing" if not s.cited else
               f"cites {', '.join(s.cited)}: {next(iter(s.misread.values()), 'its evidence does not say this')}")
        shown.append(f"{' '.join(CITE.sub(' ', s.text).split())[:120]!r} ({why})")
    return "; ".join(shown)


def kept_page(text: str, evidence: dict[str, str], fewest: int) -> tuple[str, str | None]:
    """(the page with its supported sentences only, why it cannot be published or None)."""
    report = check_text(text, evidence)
    kept = supported_text(text, evidence)
    standing = len(check_text(kept, evidence).sentences)
    if standing >= fewest:
        return kept, None
    shown = failed_sentences(report.sentences)
    return kept, (f"{standing} of {len(report.sentences)} sentences are supported by the evidence they cite "
                  f"({fewest} needed){': ' + shown if shown else ''}")


async def write_sentences(client: Any, request: Any, template: Template, problems: Sequence[str] = ()) -> str:
    """The page asked as sentences (once, and once afresh naming what failed), rendered and
    checked: its supported sentences, when at least the fewest asked for stand. Else a
    ReplyError naming the sentences that failed."""
    system, prompt, lines = sentences_prompt(request, template, problems)
    labels = [str(line["ref"]) for line in lines]
    sources = {str(line["ref"]): line["source"] for line in lines}
    evidence = evidence_texts(sent_evidence(request))
    fewest, most = sentence_bounds(len(lines))
    if not labels:
        raise ReplyError(f"page {request.slug!r} was sent no evidence to write from", field=f"page {request.slug!r}")

    def check(reply: PageSentences) -> str | None:
        return kept_page(rendered(reply, sources, evidence), evidence, fewest)[1]

    def afresh(problem: str) -> str:
        return sentences_prompt(request, template, [*problems, problem])[1]

    try:
        reply: PageSentences = await client.complete_json(
            system=system, prompt=prompt, reply_type=PageSentences, schema_name=SCHEMA_NAME,
            schema=sentences_schema(labels, fewest, most), temperature=template.models.temperature,
            check=check, max_tokens=most * TOKENS_PER_SENTENCE + 60, repair_prompt=afresh,
        )
    except ReplyError as exc:
        error = ReplyError(f"the model's page {request.slug!r}, asked as sentences, was not usable after 1 repair: "
                           f"{exc.problem or exc}", hint="try a stronger model", field=f"page {request.slug!r}")
        error.problem = exc.problem or str(exc)
        raise error from exc
    return kept_page(rendered(reply, sources, evidence), evidence, fewest)[0]
