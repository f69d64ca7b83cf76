"""The LLM engine: renders each task's prompt from the template and asks the model for JSON.

Variables every prompt may use (template authors can override any prompt):
  map       entity_types, relation_types ([{name, description}]), chunks ([{label, header, text}]),
            max_items
  pairs     pairs ([PairQuestion: label, similarity, a/b: {name, type, description, aliases, evidence}])
  summary   name, type, descriptions, max_chars
  matches   questions ([MatchQuestion: label, similarity, candidate, page_title, page_summary])
  topic     members ([EntitySketch]), claims ([str])
  page      title, kind, description, aliases, evidence ([{ref, source, text, chunk_id}]),
            links ([{slug, title}]), writer_example, existing_markdown, removed_refs, max_tokens,
            new_evidence_only (an UPDATE: `evidence` holds only the new items; the page cites the rest)
  page_updates  pages ([{label, title, kind, description, sections, evidence, links}]): several
            small UPDATEs in one call; each page's new evidence only, its "## " headings, and
            the links its new evidence names (built-in prompt only)
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any, TypeVar

from ..errors import LabelError, ReplyError
from ..fingerprint import text_hash
from ..spacing import single_spaced
from ..statements import read_evidence, statement_problem
from ..support import SUPPORT_THRESHOLD, check_text, content_words, overlap, split_sentences
from ..templates.render import prompt_source, render, renders_here
from ..templates.schema import Template
from .openai_client import EMPTY_REPLY, JsonCheck, OpenAIClient, strict_schema
from .replies import (
    NO_CITATION,
    label_key,
    label_problem,
    page_problem,
    page_repair,
    unknown_labels,
    usable_additions,
)
from .tasks import (
    ITEMS_PER_CHUNK,
    ChunkInput,
    DescriptionReply,
    DescriptionRequest,
    EvidenceItem,
    ExtractionBatch,
    ExtractionReply,
    MatchQuestion,
    MatchReply,
    PageAdditionsReply,
    PageRequest,
    PairQuestion,
    PairReply,
    TopicReply,
    TopicRequest,
)
from .usage import UsageMeter

T = TypeVar("T")

SEPARATOR = " › "
# MAP batch sizing on a model of known context: what one chunk's reply costs until replies
# are measured (Qwen2.5-Coder 1.5B over the sample corpus wrote 150-450 tokens per chunk).
REPLY_TOKENS_PER_CHUNK = 250
MAP_PROMPT_OVERHEAD = 1200  # tokens of the MAP prompt besides its chunks (rules, types, example)
MAX_LIST_ITEMS = 12  # items per list per chunk a prompt asks for at most
SMALL_CONTEXT = 16384  # tokens of context up to which a model is served as a small one
SMALL_MODEL_ITEMS = 4
MIN_FACT_WORDS = 25  # words of a batch's chunks past which an empty MAP reply is refused once
_SECTION = re.compile(r"^#{2,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
UPDATE_LABEL = "u"  # pages of a grouped update are u1, u2, ...


def fence_key(*texts: str) -> str:
    """A delimiter key for one call: a hash of the untrusted texts it fences. A text cannot
    hold the key of the fence around it (it would have to contain its own hash), and the key
    differs between calls that carry different texts."""
    return text_hash("\0".join(texts))[:8]


# Tags a document could write to look like our fences; made harmless inside fenced text.
_TAG = re.compile(r"<(/?)(chunks?|evidence|page|data)\b", re.IGNORECASE)
_FORGED_HEADER = re.compile(r"^(\s*#+[ \t]*)\[([^\]\n]{1,12})\]", re.MULTILINE)  # "### [c2] ..."


def as_data(text: str) -> str:
    """Untrusted text as it goes inside a fence: no tag that looks like ours, no citation
    marker a writer could mistake for one of the evidence refs."""
    text = _TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text).replace("[^", "[ ^")
    return _FORGED_HEADER.sub(r"\1(\2)", text) if "[" in text else text


def chunk_header(chunk: ChunkInput) -> str:
    """How a chunk is introduced to the model: `Document title › Heading › Path`.

    A part equal to the one before it is said once: a document's first heading is usually
    its title, and repeating it costs tokens in every chunk of every batch.
    """
    return source_path(chunk.document_title, *chunk.heading_path) or "(untitled)"


def chunk_body(chunk: ChunkInput) -> str:
    """A chunk's text as a MAP prompt gives it: without a first line that only repeats the
    heading its header ends with (every chunk of the sample corpus opens with its heading)."""
    text = chunk.text.strip()
    first, newline, rest = text.partition("\n")
    heading = (chunk.heading_path or [chunk.document_title])[-1]
    if newline and rest.strip() and heading and _flat(first.lstrip("#").strip()) == _flat(heading):
        return rest.strip()
    return text


def source_path(*parts: str) -> str:
    """`Document › Heading › Path`, a part equal to the one before it said once."""
    kept: list[str] = []
    for part in parts:
        if part and part.strip() and (not kept or part.strip().casefold() != kept[-1].strip().casefold()):
            kept.append(part)
    return SEPARATOR.join(kept)


class LLMEngine:
    """Engine over an OpenAI-compatible chat endpoint; owns (and closes) its client."""

    name = "llm"
    writes_additions = True  # an UPDATE with new_refs is answered with the new sentences only

    def __init__(self, client: OpenAIClient):
        self.client = client
        self.model = client.model
        self._probe = asyncio.Lock()
        self._probed = False

    @property
    def usage(self) -> UsageMeter:
        return self.client.usage

    async def close(self) -> None:
        await self.client.close()

    # ---- prompt helpers --------------------------------------------------------------------

    @staticmethod
    def _render(configured: str, default: str, where: str, **variables: Any) -> str:
        return render(prompt_source(configured, default), where=where, **variables)

    async def _ask_json(
        self, template: Template, system: str, prompt: str, reply_type: Any, schema: str,
        check: JsonCheck | None = None,
    ) -> Any:
        return await self.client.complete_json(
            system=system,
            prompt=prompt,
            reply_type=reply_type,
            schema_name=schema,
            temperature=template.models.temperature,
            check=check,
        )

    @staticmethod
    async def _prepared(build: Callable[..., T], *args: Any, sources: Iterable[str]) -> T:
        """`build(*args)`, a prompt builder: a stranger's prompt renders in a worker process, so
        it is waited for off the event loop; built-in prompts render here at once (a thread
        hop costs more CPU than they take, and they hold the GIL either way)."""
        if all(renders_here(source) for source in sources):
            return build(*args)
        return await asyncio.to_thread(build, *args)

    def _judge_system(self) -> str:
        return _judge_system()

    # ---- MAP -------------------------------------------------------------------------------

    def map_prompt(self, batch: ExtractionBatch, template: Template) -> tuple[str, str]:
        """(system, prompt) for one batch; separate so prompt size can be measured."""
        system = self._render(template.map.system, "map_system", f"{template.name}: map.system")
        chunks = [{"label": c.label, "header": as_data(chunk_header(c)), "text": as_data(chunk_body(c))}
                  for c in batch.chunks]
        key = fence_key(*(f"{c['header']}\n{c['text']}" for c in chunks))
        prompt = self._render(
            template.map.prompt,
            "map",
            f"{template.name}: map.prompt",
            entity_types=[{"name": t.name, "description": t.description} for t in template.entity_types],
            relation_types=[{"name": t.name, "description": t.description} for t in template.relation_types],
            chunks=chunks,
            max_items=min(template.map.max_items_per_chunk, self.list_items()),
            key=key,
            example=map_example(template, lean=self.lean()),
            labels=[c.label for c in batch.chunks],
            lean=self.lean(),
        )
        return system, prompt

    def lean(self) -> bool:
        """A model of small context is asked for claims and entity names only: on a CPU it writes
        2-10 tokens a second, and relations, concepts, descriptions and topics cost three
        quarters of a full reply (REDUCE and PLAN work from claims and names; relations are
        then only the co-mentions REDUCE finds)."""
        context = self.client.context_tokens
        return bool(context and context <= SMALL_CONTEXT)

    def list_items(self) -> int:
        """Items per list per chunk a MAP prompt asks for at most: fewer on a model of small
        context (a 1.5B model writes 2-10 tokens a second; every item costs ~40 of them)."""
        context = self.client.context_tokens
        return SMALL_MODEL_ITEMS if context and context <= SMALL_CONTEXT else MAX_LIST_ITEMS

    def map_limits(self, template: Template) -> tuple[int, int, int | None]:
        """(chunks, chunk tokens, reply tokens) of one MAP batch on this model. With the
        model's context known: replies measured so far (else REPLY_TOKENS_PER_CHUNK) say how
        many chunks one reply holds within the reply cap (a quarter of the context, at most
        llm.max_reply_tokens), and the rest of the context bounds the chunks' tokens; the
        template's limits bound both. Unknown context: the template's limits, as they are."""
        chunks, tokens = template.map.batch_chunks, template.map.batch_tokens
        context = self.client.context_tokens
        if not context:
            return chunks, tokens, None
        cap = max(256, min(self.client.max_reply_tokens, context // 4))
        measured = self.client.reply_tokens.get("extraction:per_chunk") or []
        per_chunk = max(sum(measured) / len(measured), 64.0) if measured else float(REPLY_TOKENS_PER_CHUNK)
        fit = max(1, int(cap * 0.6 / per_chunk))  # room for a reply half as long again as usual
        room = max(256, context - cap - MAP_PROMPT_OVERHEAD)
        return min(chunks, fit), min(tokens, room), cap

    def page_limits(self, template: Template) -> tuple[int, int]:
        """(evidence tokens, page tokens) of one page on this model: the template's, and with
        the model's context known at most a quarter of it for evidence and an eighth for the page."""
        budget, page = template.refine.context_budget, template.refine.max_page_tokens
        context = self.client.context_tokens
        if not context:
            return budget, page
        return min(budget, max(512, context // 4)), min(page, max(256, context // 8))

    def map_schema(self, n_chunks: int, wordy: bool = False) -> dict[str, Any]:
        """The extraction schema with its lists bounded for a batch of `n_chunks` chunks. For
        chunks of prose it asks for at least one claim and one entity: under a grammar a small
        model otherwise closes every list at once (measured), and prose always states some."""
        schema = copy.deepcopy(strict_schema(ExtractionReply))
        per_chunk_cap = min(self.list_items(), MAX_LIST_ITEMS)
        for kind, per_chunk in ITEMS_PER_CHUNK.items():
            schema["properties"][kind]["maxItems"] = min(per_chunk, per_chunk_cap) * max(1, n_chunks)
        if wordy:
            for kind in ("claims", "entities"):
                schema["properties"][kind]["minItems"] = 1
        if self.lean():
            for kind in ("concepts", "relations", "topics"):
                schema["properties"][kind]["maxItems"] = 0
            # Claims first (a grammar writes properties in order, and pages are written from
            # claims), entities by name and type only.
            order = ["claims", "entities", "concepts", "relations", "topics"]
            schema["properties"] = {k: schema["properties"][k] for k in order}
            schema["required"] = order
            entity = schema["$defs"]["EntityItem"]
            entity["properties"] = {k: entity["properties"][k] for k in ("chunk", "name", "type")}
            entity["required"] = ["chunk", "name", "type"]
        return schema

    async def extract(self, batch: ExtractionBatch, template: Template) -> ExtractionReply:
        if not batch.chunks:
            return ExtractionReply(entities=[], concepts=[], claims=[], relations=[], topics=[])
        if self._probed:
            return await self._extract(batch, template)
        # The first batch goes alone: its reply tells how this endpoint answers (a grammar that
        # gives empty lists switches the client to json_object), before other batches are sent.
        async with self._probe:
            if self._probed:
                return await self._extract(batch, template)
            try:
                return await self._extract(batch, template)
            finally:
                self._probed = True

    async def _extract(self, batch: ExtractionBatch, template: Template) -> ExtractionReply:
        system, prompt = await self._prepared(self.map_prompt, batch, template, sources=_map_sources(template))
        labels = [c.label for c in batch.chunks]
        last: list[tuple[int, int, str]] = []  # (items, unknown, problem) of replies that failed the check
        _chunks, _tokens, reply_cap = self.map_limits(template)
        wordy = sum(len(c.text.split()) for c in batch.chunks) >= MIN_FACT_WORDS
        refused: list[bool] = []  # an empty reply is refused once; a second one stands (MAP judges)

        def check(reply: ExtractionReply) -> str | None:
            # Items are placed first: a missing or forged label is read from the item's own
            # text where that text is found in exactly one chunk of the batch.
            place_items(reply, batch)
            drop_unheld(reply, batch)
            written = labels_of(reply)
            if not written and wordy and not refused:
                # Nothing at all from chunks of prose: asked again once (the client sends that
                # repair with the schema in the prompt when a grammar gave the empty reply).
                refused.append(True)
                return (f"{EMPTY_REPLY}, but these chunks state facts. List the entities, concepts, "
                        f"claims, relations and topics of each chunk ({', '.join(labels)}), shaped like the example")
            # A reply most of whose items name no chunk of the batch is asked again once,
            # with the valid labels; it is never cached.
            problem = label_problem(written, labels)
            if problem is not None:
                last.append((len(written), len(unknown_labels(written, labels, distinct=False)), problem))
            return problem

        try:
            measured = len(self.client.reply_tokens.get("extraction") or [])
            reply: ExtractionReply = await self.client.complete_json(
                system=system,
                prompt=prompt,
                reply_type=ExtractionReply,
                schema_name="extraction",
                temperature=template.models.temperature,
                check=check,
                schema=self.map_schema(len(batch.chunks), wordy),
                # A batch of several chunks cut off is split by MAP; one chunk is repaired.
                split_on_cutoff=len(batch.chunks) > 1,
                max_tokens=reply_cap,
            )
        except ReplyError as exc:
            if not last or exc.problem != last[-1][2]:
                raise  # the last reply failed its schema, not its labels
            items, unknown, _problem = last[-1]
            raise LabelError(
                f"{unknown} of the {items} items name no chunk of the batch ({', '.join(labels)}), "
                "even after a repair that listed the valid labels",
                items=items,
                unknown=unknown,
                hint="the model does not cite chunk labels",
            ) from exc
        used = self.client.reply_tokens.get("extraction") or []
        if len(used) > measured:  # measured reply sizes size the next batches (map_limits)
            self.client.reply_tokens.setdefault("extraction:per_chunk", []).append(used[-1] / len(batch.chunks))
        return reply

    # ---- REDUCE ----------------------------------------------------------------------------

    async def judge_pairs(self, pairs: Sequence[PairQuestion], template: Template) -> dict[str, bool]:
        if not pairs:
            return {}
        prompt = self._render(template.reduce.prompt, "pairs", f"{template.name}: reduce.prompt", pairs=list(pairs))
        reply: PairReply = await self._ask_json(template, self._judge_system(), prompt, PairReply, "pairs")
        said = {d.pair: d.same for d in reply.decisions}
        # A pair the model skipped stays apart: a wrong merge is worse than a missed one.
        return {p.label: bool(said.get(p.label, False)) for p in pairs}

    async def summarize(self, request: DescriptionRequest, template: Template) -> str:
        prompt = self._render(
            template.reduce.summary_prompt,
            "summary",
            f"{template.name}: reduce.summary_prompt",
            name=request.name,
            type=request.type,
            descriptions=[single_spaced(d) for d in request.descriptions],
            max_chars=request.max_chars,
        )
        reply: DescriptionReply = await self._ask_json(
            template, self._judge_system(), prompt, DescriptionReply, "description"
        )
        return _clip(reply.description.strip(), request.max_chars)

    # ---- PLAN ------------------------------------------------------------------------------

    async def judge_matches(self, questions: Sequence[MatchQuestion], template: Template) -> dict[str, bool]:
        if not questions:
            return {}
        prompt = self._render(
            template.plan.prompt, "matches", f"{template.name}: plan.prompt", questions=list(questions)
        )
        reply: MatchReply = await self._ask_json(template, self._judge_system(), prompt, MatchReply, "matches")
        said = {d.question: d.same for d in reply.decisions}
        return {q.label: bool(said.get(q.label, False)) for q in questions}

    async def name_topic(self, request: TopicRequest, template: Template) -> TopicReply:
        # A fact a member's description already states is not listed again.
        described = " ".join(_flat(m.description or "") for m in request.members)
        claims = [c for c in (single_spaced(c) for c in request.claims) if _flat(c) not in described]
        prompt = self._render("", "topic", "topic", members=request.members, claims=claims)
        reply: TopicReply = await self._ask_json(template, self._judge_system(), prompt, TopicReply, "topic")
        return reply

    # ---- REFINE ----------------------------------------------------------------------------

    def page_prompt(self, request: PageRequest, template: Template) -> tuple[str, str]:
        system = self._render(template.refine.system, "page_system", f"{template.name}: refine.system")
        evidence = said_once([_evidence_line(e) for e in sent_evidence(request)])
        existing = as_data(request.existing_markdown.strip()).replace("[ ^", "[^")  # its own citations stay
        key = fence_key(*(e["text"] for e in evidence), existing)
        prompt = self._render(
            template.refine.writer_prompt,
            "page",
            f"{template.name}: refine.writer_prompt",
            title=request.title,
            kind=request.kind,
            description=single_spaced(request.description),
            aliases=request.aliases,
            evidence=evidence,
            links=[{"slug": link.slug, "title": link.title} for link in request.links],
            writer_example=template.refine.writer_example.strip(),
            existing_markdown=existing,
            removed_refs=request.removed_refs,
            max_tokens=request.max_tokens,
            new_evidence_only=bool(request.existing_markdown.strip() and request.new_refs),
            key=key,
        )
        return system, prompt

    async def write_page(self, request: PageRequest, template: Template) -> str:
        """The page's Markdown, checked before it is cached or returned: prose citing the
        evidence it was sent. Raises ReplyError when repairs did not give such a page."""
        system, prompt = await self._prepared(self.page_prompt, request, template, sources=_page_sources(template))
        refs = sent_refs(request)
        evidence = evidence_texts(sent_evidence(request))

        def check(text: str, finish: str | None) -> str | None:
            problem = page_problem(text, refs, finish_reason=finish)
            if problem == NO_CITATION and page_problem(supported_text(text, evidence), refs) is None:
                problem = None  # no marker, but its sentences restate the evidence: they get theirs
            return problem or support_problem(text, evidence)

        # Room for the page plus some slack, so a page is not cut mid-sentence.
        try:
            written = await self.client.complete_text(
                system=system,
                prompt=prompt,
                temperature=template.models.temperature,
                max_tokens=int(request.max_tokens * 1.5),
                check=check,
                repair=lambda problem: page_repair(problem, refs),
                what=f"page {request.slug!r}",
            )
        except ReplyError as exc:
            # Repairs did not give a page most of whose sentences hold: the reply whose
            # supported sentences make the longest page is published with those only.
            kept = max((supported_text(r, evidence) for r in getattr(exc, "replies", []) if r), key=len, default="")
            if page_problem(kept, refs) is None and len(check_text(kept, evidence).sentences) >= MIN_KEPT_SENTENCES:
                return kept
            raise
        return supported_text(written, evidence)

    # ---- REFINE: several small updates in one call ------------------------------------------

    def updates_prompt(self, requests: Sequence[PageRequest], template: Template) -> tuple[str, str]:
        """(system, prompt) of a grouped update: per page, its headings and new evidence only."""
        system = self._render(template.refine.system, "page_system", f"{template.name}: refine.system")
        pages = []
        for n, request in enumerate(requests, start=1):
            evidence = sent_evidence(request)
            named = {slug for e in evidence for slug in e.about}
            pages.append({
                "label": f"{UPDATE_LABEL}{n}",
                "title": request.title,
                "kind": request.kind,
                "description": single_spaced(request.description),
                "sections": list(dict.fromkeys(_SECTION.findall(request.existing_markdown))),
                "evidence": said_once([_evidence_line(e) for e in evidence]),
                "links": [{"slug": link.slug, "title": link.title} for link in request.links if link.slug in named],
            })
        key = fence_key(*(e["text"] for p in pages for e in p["evidence"]))
        return system, self._render("", "page_updates", "page_updates", pages=pages, key=key)

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        """The new sentences of each page, by slug, in one call; a page whose item is missing or
        fails `page_problem` against its own new evidence is left out (its caller asks for it
        alone). A reply with no usable item is repaired once; after that, nothing is kept."""
        if not requests:
            return {}
        system, prompt = await self._prepared(
            self.updates_prompt, requests, template, sources=_updates_sources(template)
        )
        by_label = {f"{UPDATE_LABEL}{n}": r for n, r in enumerate(requests, start=1)}
        refs = {label: [str(ref) for ref in r.new_refs] or sent_refs(r) for label, r in by_label.items()}
        texts = {label: evidence_texts(sent_evidence(r)) for label, r in by_label.items()}

        def read(reply: PageAdditionsReply) -> tuple[dict[str, str], dict[str, str]]:
            kept, problems = usable_additions(((item.page, item.markdown) for item in reply.pages), refs)
            for label in list(kept):
                text = supported_text(kept[label], texts[label])
                if page_problem(text, refs[label]) is None:
                    kept[label] = text
                else:  # nothing it says is supported by its evidence
                    problems[label] = "none of its sentences is supported by the evidence it cites"
                    del kept[label]
            return kept, problems

        def check(reply: PageAdditionsReply) -> str | None:
            kept, problems = read(reply)
            if kept:
                return None
            shown = "; ".join(f"{label}: {why}" for label, why in list(problems.items())[:4])
            return (f"no item of the reply can be published ({shown}). Answer with one item per page label "
                    f"({', '.join(by_label)}), citing that page's own new evidence.")

        try:
            reply: PageAdditionsReply = await self._ask_json(
                template, system, prompt, PageAdditionsReply, "page_additions", check
            )
        except ReplyError:
            return {}  # every page of the group is asked alone
        kept, _problems = read(reply)
        return {by_label[label].slug: text for label, text in kept.items()}


@cache
def _judge_system() -> str:
    """The built-in system prompt of every judgment and summary: it reads no variables, so it
    is rendered once (REDUCE asks for it with each of its calls)."""
    return render(prompt_source("", "judge_system"), where="judge_system")


# The prompt sources each builder renders (system, prompt): whether they all render here.
def _map_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.map.system, "map_system"), prompt_source(template.map.prompt, "map")


def _page_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.refine.system, "page_system"), prompt_source(template.refine.writer_prompt, "page")


def _updates_sources(template: Template) -> tuple[str, str]:
    return prompt_source(template.refine.system, "page_system"), prompt_source("", "page_updates")


def _evidence_line(e: EvidenceItem) -> dict[str, Any]:
    # A document's first heading is usually its title: said once, as in a MAP chunk's header.
    source = source_path(e.document, *e.heading_path) or e.chunk_id
    return {
        "ref": e.ref,
        "source": as_data(single_spaced(source)).replace("(", "[").replace(")", "]"),
        "text": as_data(single_spaced(e.text)),
        "chunk_id": e.chunk_id,
    }


MIN_REPEAT_CHARS = 20  # a shorter sentence ("Requires a restart.") may be said again


def said_once(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evidence lines as a page prompt carries them: a line all of whose sentences earlier lines
    already gave is left out (a page's pack holds a fact both as a claim and as its chunk's
    excerpt, measured on the sample corpus: one REFINE prompt token in twenty-three). A line
    that still says something new is sent whole: cut down to its new sentences, an excerpt's
    context would stand alone as a fact of the page. The model cites the line that says a
    fact; its reply is still checked against every item it was sent."""
    said: set[str] = set()
    out: list[dict[str, Any]] = []
    for line in lines:
        keys = [_flat(p) for p in split_sentences(line["text"]) if p.strip()]
        if not keys or any(len(k) < MIN_REPEAT_CHARS or k not in said for k in keys):
            out.append(line)
        said.update(keys)
    return out


def evidence_texts(evidence: Sequence[EvidenceItem]) -> dict[str, str]:
    """What each citation key a page may write names: by ref and by chunk id."""
    out: dict[str, str] = {}
    for e in evidence:
        out[str(e.ref)] = e.text
        out[e.chunk_id] = f"{out[e.chunk_id]} {e.text}" if e.chunk_id in out else e.text
    return out


# A page most of whose sentences lack support is asked again, naming them; past this share of
# supported sentences it is kept with its unsupported sentences dropped (support.check_text).
MIN_SUPPORTED_SHARE = 0.5
MIN_KEPT_SENTENCES = 3  # supported sentences that make a page of a reply that stayed short of the share


def support_problem(text: str, evidence: dict[str, str]) -> str | None:
    """Why a page's sentences cannot be kept as written: most of them cite nothing, or cite
    evidence that does not say what they say. Names up to three of them."""
    report = check_text(text, evidence, recite_from=_by_ref(evidence))
    if not report.sentences:
        return None
    kept = sum(1 for s in report.sentences if s.ok or s.supported)
    if kept >= MIN_SUPPORTED_SHARE * len(report.sentences):
        return None
    bad = [s for s in report.sentences if not (s.ok or s.supported)][:3]
    shown = "; ".join(f"{s.text[:120]!r} ({'cites nothing' if not s.cited else 'its evidence does not say this'})"
                      for s in bad)
    return (f"{len(report.sentences) - kept} of {len(report.sentences)} sentences are not supported by the "
            f"evidence they cite, e.g. {shown}. Each sentence must restate its cited evidence, in its words")


def supported_text(text: str, evidence: dict[str, str]) -> str:
    """The page with only its supported sentences (support.check_text), each paragraph said once; a
    sentence citing the wrong item of its evidence, which another item restates, cites that
    one instead."""
    return check_text(text, evidence, recite_from=_by_ref(evidence), code_from=evidence.values(), once=True).kept_text


def _by_ref(evidence: dict[str, str]) -> dict[str, str]:
    return {key: text for key, text in evidence.items() if key.isdigit()}


def sent_evidence(request: PageRequest) -> list[EvidenceItem]:
    """The evidence a page prompt carries. An UPDATE with new_refs sends the page as it stands
    and only the new evidence: the page already carries (and cites) the rest, so the prompt
    grows with the change only."""
    if request.existing_markdown.strip() and request.new_refs:
        wanted = set(request.new_refs)
        return [e for e in request.evidence if e.ref in wanted]
    return list(request.evidence)


def sent_refs(request: PageRequest) -> list[str]:
    """What a page reply must cite one of: the evidence it was sent, by ref or chunk id."""
    sent = sent_evidence(request)
    return list(dict.fromkeys([*(str(e.ref) for e in sent), *(e.chunk_id for e in sent)]))


def map_example(template: Template, lean: bool = False) -> str:
    """One short, valid MAP reply for an imaginary chunk "c0", in the template's own types:
    the shape every item takes, shown whatever the transport (a grammar-only server never
    shows the model the schema). Its label names no chunk, so a copied example is dropped."""
    types = [t.name for t in template.entity_types]
    relations = [t.name for t in template.relation_types]

    def pick(wanted: str, names: list[str], default: str) -> str:
        return wanted if wanted in names else (names[0] if names else default)

    # Claims first: pages are written from them, and a small model spends its reply in order.
    example = {
        "claims": [{"chunk": EXAMPLE_LABEL, "text": "The Cluster Manager uses Raft to elect a leader.",
                    "entities": ["Cluster Manager", "Raft"]}],
        "entities": [
            {"chunk": EXAMPLE_LABEL, "name": "Cluster Manager", "type": pick("component", types, "component"),
             "description": "Runs the cluster.", "aliases": ["CM"]},
            {"chunk": EXAMPLE_LABEL, "name": "Raft", "type": pick("algorithm", types, "algorithm"),
             "description": "A consensus algorithm.", "aliases": []},
        ],
        "concepts": [{"chunk": EXAMPLE_LABEL, "term": "leader election", "definition": "Choosing one node to lead."}],
        "relations": [{"chunk": EXAMPLE_LABEL, "source": "Cluster Manager", "target": "Raft",
                       "type": pick("uses", relations, "uses"), "description": "elects a leader", "strength": 9}],
        "topics": [{"chunk": EXAMPLE_LABEL, "name": "Consensus"}],
    }
    if lean:  # claims and entity names only: what a slow model can afford to write
        example = {"claims": example["claims"],
                   "entities": [{k: e[k] for k in ("chunk", "name", "type")} for e in example["entities"]],
                   "concepts": [], "relations": [], "topics": []}
    return json.dumps(example, ensure_ascii=False, separators=(",", ":"))


EXAMPLE_LABEL = "c0"  # the example's chunk: never one of a batch (labels start at c1)
# The example's names: an item naming one of them that no chunk of the batch holds was copied
# from the example (small models do), whatever label it carries.
EXAMPLE_NAMES = ("cluster manager", "raft", "leader election", "consensus", "cm")
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def place_items(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Give each item of a MAP reply the chunk it comes from; returns how many were moved.

    A claim whose text is found in exactly one chunk belongs to that chunk whatever label it
    carries: a document cannot make its sentences count for another chunk by writing a label
    into itself. An item with no label (or a heading where the label goes) takes the batch's
    one chunk, else the one chunk its name or text is found in; an item whose label names no
    chunk of the batch is placed only by its text. The example's label (c0) is never placed."""
    labels = [c.label for c in batch.chunks]
    if not labels:
        return 0
    known = {label_key(x) for x in labels}
    texts = {c.label: _flat(c.text) for c in batch.chunks}
    moved = 0
    everything = " ".join(texts.values())
    copied = {n for n in EXAMPLE_NAMES if not re.search(rf"\b{re.escape(n)}\b", everything)}
    if copied:
        _drop_copied(reply, copied)

    def where(text: str) -> str | None:
        quoted = _flat(text).rstrip(".")
        if len(quoted) < 3:
            return None
        found = [label for label, body in texts.items() if quoted in body]
        return found[0] if len(found) == 1 else None

    for claim in reply.claims:
        home = where(claim.text)
        if home is not None and claim.chunk != home and label_key(claim.chunk or "") != EXAMPLE_LABEL:
            claim.chunk, moved = home, moved + 1
    for item in _items(reply):
        key = label_key(item.chunk or "")
        if key in known or key == EXAMPLE_LABEL:
            continue
        if key is None and len(labels) == 1:  # no label at all: the batch has one chunk
            item.chunk, moved = labels[0], moved + 1
            continue
        text = getattr(item, "name", None) or getattr(item, "term", None) or getattr(item, "source", None) or ""
        home = where(text) or where(getattr(item, "text", "") or "")
        if home is not None:
            item.chunk, moved = home, moved + 1
    return moved


NAME_HELD = 0.5  # of a name's content words its chunk must hold


def drop_unheld(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Take out the claims their chunk does not say (support.overlap under SUPPORT_THRESHOLD,
    REFINE's own check of a sentence against its evidence) and the names their chunk does not
    hold; returns how many went. A 1.5B model wrote "The Write-Ahead Log uses Raft, a consensus
    algorithm, to elect a leader." for a chunk on full-page writes, after the prompt's example:
    stored as a claim, it was the evidence that later supported the same sentence on a page."""
    words = {label_key(c.label): content_words(c.text) for c in batch.chunks}
    texts = {label_key(c.label): c.text for c in batch.chunks}
    read: dict[str, Any] = {}

    def held(label: str | None, text: str, share: float) -> bool:
        found = words.get(label_key(label or ""))
        said = content_words(text)
        return found is None or not said or overlap(said, found) >= share  # unplaced: label_problem judges

    def stated(label: str | None, text: str) -> bool:
        """The chunk says the claim in one statement, with its names and its actor: "The Harvard
        Mark I wrote the first compiler for Grace Hopper" holds every word and says the opposite."""
        key = label_key(label or "")
        if key not in texts:
            return True
        if key not in read:
            read[key] = read_evidence(texts[key])
        return statement_problem(text, read[key], SUPPORT_THRESHOLD) is None

    gone: dict[str, int] = reply._unheld

    def keep(items: list[Any], *fields: tuple[str, float], statement: bool = False) -> list[Any]:
        kept = []
        for item in items:
            if all(held(item.chunk, getattr(item, field), share) for field, share in fields) and (
                    not statement or stated(item.chunk, item.text)):
                kept.append(item)
            else:
                label = label_key(item.chunk or "") or item.chunk
                gone[label] = gone.get(label, 0) + 1
        return kept

    before = sum(gone.values())
    reply.claims = keep(reply.claims, ("text", SUPPORT_THRESHOLD), statement=True)
    reply.entities = keep(reply.entities, ("name", NAME_HELD))
    reply.concepts = keep(reply.concepts, ("term", NAME_HELD))
    reply.relations = keep(reply.relations, ("source", NAME_HELD), ("target", NAME_HELD))
    return sum(gone.values()) - before


def _drop_copied(reply: ExtractionReply, copied: set[str]) -> None:
    """Take out the items that name one of the example's names the batch does not hold."""
    def named(*values: str) -> bool:
        return any(_flat(v) in copied for v in values if v)

    reply.entities = [e for e in reply.entities if not named(e.name)]
    reply.concepts = [c for c in reply.concepts if not named(c.term)]
    reply.relations = [r for r in reply.relations if not named(r.source, r.target)]
    reply.claims = [c for c in reply.claims if not (c.entities and all(named(x) for x in c.entities))
                    and _flat(c.text) != "the cluster manager uses raft to elect a leader."]
    reply.topics = [t for t in reply.topics if not named(t.name)]


def _items(reply: ExtractionReply) -> Iterable[Any]:
    for group in (reply.entities, reply.concepts, reply.claims, reply.relations, reply.topics):
        yield from group


def labels_of(reply: ExtractionReply) -> list[str]:
    """The chunk label of every item of a MAP reply."""
    groups: tuple[list[Any], ...] = (reply.entities, reply.concepts, reply.claims, reply.relations, reply.topics)
    return [item.chunk for group in groups for item in group]


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a sentence or word end when there is one."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= limit // 2:
        return cut[: end + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut[: limit - 1]).rstrip(",;: ") + "…"
