"""The LLM engine: asks the model for each task's JSON or page, and keeps only a reply that
passes its checks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import LabelError, ReplyError
from ..spacing import single_spaced
from ..support import check_text
from ..templates.schema import Template
from . import model_profile
from .llm_prompts import (
    UPDATE_LABEL,
    judge_system,
    map_prompt,
    map_sources,
    page_prompt,
    page_sources,
    prepared,
    render_prompt,
    updates_prompt,
    updates_sources,
)
from .map_items import drop_unheld, labels_of, place_items
from .map_names import clean_names
from .offline.names import name_key
from .offline.pairs import same_thing
from .openai_client import EMPTY_REPLY, JsonCheck, OpenAIClient
from .page_evidence import evidence_texts, sent_evidence, sent_refs
from .page_sentences import write_sentences
from .page_support import MIN_KEPT_SENTENCES, support_problem, supported_text
from .prompt_text import folded
from .replies import (
    NO_CITATION,
    label_problem,
    page_problem,
    page_repair,
    unknown_labels,
    usable_additions,
)
from .tasks import (
    DescriptionReply,
    DescriptionRequest,
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

MIN_FACT_WORDS = 25  # words of a batch's chunks past which an empty MAP reply is refused once
UNIFORM_BATCH = 6  # pairs in a batch from which a model's "same" for all of them is not believed


def _adds_words(a: str, b: str) -> bool:
    """One name is the other with words added ("TOAST" / "TOAST table"): another thing, though
    its first letters spell the acronym."""
    wa, wb = set(name_key(a).split()), set(name_key(b).split())
    return bool(wa) and bool(wb) and wa != wb and (wa < wb or wb < wa)


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

    # ---- calls -----------------------------------------------------------------------------

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


    # ---- MAP -------------------------------------------------------------------------------

    def map_prompt(self, batch: ExtractionBatch, template: Template) -> tuple[str, str]:
        """(system, prompt) for one batch; separate so prompt size can be measured."""
        return map_prompt(batch, template, self.list_items(), self.lean())

    def lean(self) -> bool:
        return model_profile.lean(self.client)

    def list_items(self) -> int:
        return model_profile.list_items(self.client)

    def map_limits(self, template: Template) -> tuple[int, int, int | None]:
        return model_profile.map_limits(self.client, template)

    def page_limits(self, template: Template) -> tuple[int, int]:
        return model_profile.page_limits(self.client, template)

    def map_schema(self, labels: Sequence[str], wordy: bool = False, prose: Sequence[str] = ()) -> dict[str, Any]:
        return model_profile.map_schema(self.client, labels, wordy, prose)

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
        system, prompt = await prepared(self.map_prompt, batch, template, sources=map_sources(template))
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
            clean_names(reply, batch)
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
                schema=self.map_schema(labels, wordy, [c.label for c in batch.chunks
                                                       if len(c.text.split()) >= MIN_FACT_WORDS]),
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
        if self.lean():
            # A model of small context is not asked: the 1.5B model answered 13 of 45 pairs
            # wrong (merging "TOAST" with "TOAST pointer", keeping "Vacuum" apart from
            # "Vacuum" typed otherwise), the name rules none. Its types are noise: not compared.
            return {p.label: same_thing(replace(p.a, type=""), replace(p.b, type="")) and not _adds_words(p.a.name, p.b.name)
                    for p in pairs}
        prompt = render_prompt(template.reduce.prompt, "pairs", f"{template.name}: reduce.prompt", pairs=list(pairs))
        reply: PairReply = await self._ask_json(template, judge_system(), prompt, PairReply, "pairs")
        said = {d.pair: d.same for d in reply.decisions}
        # A pair the model skipped stays apart: a wrong merge is worse than a missed one.
        answers = {p.label: bool(said.get(p.label, False)) for p in pairs}
        if len(pairs) >= UNIFORM_BATCH and all(answers.values()):
            # "Same" for every pair of a batch is a model that does not tell them apart (a
            # small one answered so batch after batch, merging "transaction" with
            # "Transaction ID"): none of it is taken.
            return {label: False for label in answers}
        return answers

    async def summarize(self, request: DescriptionRequest, template: Template) -> str:
        prompt = render_prompt(
            template.reduce.summary_prompt,
            "summary",
            f"{template.name}: reduce.summary_prompt",
            name=request.name,
            type=request.type,
            descriptions=[single_spaced(d) for d in request.descriptions],
            max_chars=request.max_chars,
        )
        reply: DescriptionReply = await self._ask_json(
            template, judge_system(), prompt, DescriptionReply, "description"
        )
        return _clip(reply.description.strip(), request.max_chars)

    # ---- PLAN ------------------------------------------------------------------------------

    async def judge_matches(self, questions: Sequence[MatchQuestion], template: Template) -> dict[str, bool]:
        if not questions:
            return {}
        prompt = render_prompt(
            template.plan.prompt, "matches", f"{template.name}: plan.prompt", questions=list(questions)
        )
        reply: MatchReply = await self._ask_json(template, judge_system(), prompt, MatchReply, "matches")
        said = {d.question: d.same for d in reply.decisions}
        return {q.label: bool(said.get(q.label, False)) for q in questions}

    async def name_topic(self, request: TopicRequest, template: Template) -> TopicReply:
        # A fact a member's description already states is not listed again.
        described = " ".join(folded(m.description or "") for m in request.members)
        claims = [c for c in (single_spaced(c) for c in request.claims) if folded(c) not in described]
        prompt = render_prompt("", "topic", "topic", members=request.members, claims=claims)
        reply: TopicReply = await self._ask_json(template, judge_system(), prompt, TopicReply, "topic")
        return reply

    # ---- REFINE ----------------------------------------------------------------------------

    def page_prompt(self, request: PageRequest, template: Template) -> tuple[str, str]:
        return page_prompt(request, template)

    def sentences_first(self, request: PageRequest) -> bool:
        """Whether a page is asked as JSON sentences at once rather than as prose first: on a
        model of small context (model_profile.lean), for a page written anew."""
        return self.lean() and not request.existing_markdown.strip()

    async def write_page(self, request: PageRequest, template: Template) -> str:
        """The page's Markdown, checked before it is cached or returned: prose citing the
        evidence it was sent. A small model is asked for the page as JSON sentences with their
        evidence labels (page_sentences.py); another model writes prose, and a page written
        anew whose prose stays unusable is asked once more as sentences. Raises ReplyError
        naming what failed when no way gave a page."""
        if self.sentences_first(request):
            return await write_sentences(self.client, request, template)
        try:
            return await self.write_prose(request, template)
        except ReplyError as exc:
            if request.existing_markdown.strip() or not sent_evidence(request):
                raise
            try:
                return await write_sentences(self.client, request, template, [exc.problem or str(exc)])
            except ReplyError as second:
                # Both reasons, each cut short: REFINE keeps a failure's first 500 characters.
                prose = exc.args[0] if exc.args else str(exc)
                error = ReplyError(f"{_clip(prose, 240)}; then asked as sentences, not usable after 1 repair: "
                                   f"{_clip(second.problem or str(second), 240)}",
                                   hint="try a stronger model", field=f"page {request.slug!r}")
                error.problem = second.problem or exc.problem
                raise error from exc

    async def write_prose(self, request: PageRequest, template: Template) -> str:
        """The page asked as Markdown prose (the template's writer prompt), with its repairs."""
        system, prompt = await prepared(self.page_prompt, request, template, sources=page_sources(template))
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
        return updates_prompt(requests, template)

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        """The new sentences of each page, by slug, in one call; a page whose item is missing or
        fails `page_problem` against its own new evidence is left out (its caller asks for it
        alone). A reply with no usable item is repaired once; after that, nothing is kept."""
        if not requests:
            return {}
        system, prompt = await prepared(self.updates_prompt, requests, template, sources=updates_sources(template))
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
