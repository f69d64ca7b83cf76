"""The LLM engine's prompts and replies, end to end through the scripted server."""

from __future__ import annotations

import re

import pytest

from compendium.engines.base import Engine
from compendium.engines.factory import build_engine
from compendium.engines.llm import LLMEngine
from compendium.engines.openai_client import count_tokens
from compendium.engines.tasks import (
    ChunkInput,
    DescriptionRequest,
    EntitySketch,
    EvidenceItem,
    ExtractionBatch,
    LinkTarget,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicRequest,
)
from compendium.engines.usage import UsageMeter
from compendium.errors import TemplateError
from compendium.templates.schema import Template, TypeSpec
from tests.support.llm_fixtures import settings_for

TEMPLATE = Template(
    name="wiki",
    entity_types=[
        TypeSpec(name="organization", description="companies, agencies, institutions"),
        TypeSpec(name="person", description="people by name"),
    ],
    relation_types=[TypeSpec(name="related_to", description="any stated connection")],
)

IBM_TEXT = (
    "International Business Machines (IBM) is a technology company based in Armonk. "
    "Arvind Krishna leads IBM since 2020. Watson is a question answering system built by IBM Research."
)


@pytest.fixture
async def engine(llm_server):
    built = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter())
    yield built
    await built.close()


def test_llm_engine_meets_the_engine_protocol(llm_server):
    built = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter())
    assert isinstance(built, LLMEngine) and isinstance(built, Engine)
    assert (built.name, built.model) == ("llm", "test-chat")


async def test_extract_labels_chunks_and_returns_claims_from_their_text(engine, llm_server):
    batch = ExtractionBatch(
        [
            ChunkInput("c1", IBM_TEXT, ["Companies", "IBM"], "Tech notes"),
            ChunkInput("c2", "Grace Hopper worked on the Harvard Mark I. She was a rear admiral.", [], "People"),
        ]
    )
    reply = await engine.extract(batch, TEMPLATE)
    prompt = llm_server.requests[0].prompt
    assert "### [c1] Tech notes › Companies › IBM\n" + IBM_TEXT in prompt
    assert "### [c2] People\n" in prompt
    assert "- organization: companies, agencies, institutions" in prompt
    texts = {"c1": IBM_TEXT, "c2": batch.chunks[1].text}
    assert reply.claims and all(claim.text in texts[claim.chunk] for claim in reply.claims)
    ibm = next(e for e in reply.entities if e.name == "International Business Machines")
    assert ibm.aliases == ["IBM"] and ibm.type == "organization"
    assert {e.name for e in reply.entities if e.chunk == "c2"} >= {"Grace Hopper", "Harvard Mark I"}
    assert llm_server.calls["extraction"] == 1


async def test_map_prompt_overhead_is_small_against_the_chunk_text(engine):
    sentence = "The Northwind Trading Company ships coffee beans from Santos to Rotterdam every week. "
    chunks = []
    for i in range(8):
        text = ""
        while count_tokens(text) < 400:
            text += sentence.replace("week", f"week {i}")
        chunks.append(ChunkInput(f"c{i + 1}", text.strip(), ["Logistics", f"Route {i}"], "Shipping handbook"))
    system, prompt = engine.map_prompt(ExtractionBatch(chunks), TEMPLATE)
    chunk_tokens = sum(count_tokens(c.text) for c in chunks)
    ratio = (count_tokens(system) + count_tokens(prompt)) / chunk_tokens
    print(f"MAP prompt tokens / chunk tokens for 8 x ~400-token chunks: {ratio:.3f}")
    assert ratio <= 1.3


async def test_map_prompt_asks_for_no_second_pass(engine):
    _, prompt = engine.map_prompt(ExtractionBatch([ChunkInput("c1", IBM_TEXT)]), TEMPLATE)
    assert not re.search(r"glean|missed|second pass|again", prompt, re.IGNORECASE)


async def test_judge_pairs_answers_each_label(engine, llm_server):
    pairs = [
        PairQuestion("p1", EntitySketch("IBM", "organization"), EntitySketch("International Business Machines", "organization"), 0.9),
        PairQuestion("p2", EntitySketch("Arvind Krishna", "person"), EntitySketch("Grace Hopper", "person"), 0.86),
    ]
    assert await engine.judge_pairs(pairs, TEMPLATE) == {"p1": True, "p2": False}
    assert await engine.judge_pairs([], TEMPLATE) == {}
    assert llm_server.calls["pairs"] == 1


async def test_judge_matches_and_name_topic_and_summarize(engine):
    questions = [
        MatchQuestion("q1", EntitySketch("IBM", "organization"), "International Business Machines", "A company.", 0.9),
        MatchQuestion("q2", EntitySketch("Watson", "product"), "Grace Hopper", "A computer scientist.", 0.86),
    ]
    assert await engine.judge_matches(questions, TEMPLATE) == {"q1": True, "q2": False}
    topic = await engine.name_topic(
        TopicRequest([EntitySketch("IBM", "organization"), EntitySketch("Watson", "product")]), TEMPLATE
    )
    assert topic.title == "IBM and Watson"
    summary = await engine.summarize(
        DescriptionRequest("IBM", "organization", ["IBM is a company. More.", "IBM makes computers."], 30),
        TEMPLATE,
    )
    assert len(summary) <= 30 and summary.startswith("IBM is a company.")


async def test_write_page_prompt_and_reply_cite_the_evidence(engine, llm_server):
    request = PageRequest(
        slug="ibm",
        title="IBM",
        kind="entity",
        description="A technology company.",
        aliases=["International Business Machines"],
        evidence=[
            EvidenceItem(1, "IBM is a technology company based in Armonk.", "ch1", "Tech notes", ["Companies"]),
            EvidenceItem(2, "Arvind Krishna leads IBM since 2020.", "ch2", "Tech notes", ["People"]),
        ],
        links=[LinkTarget("arvind-krishna", "Arvind Krishna"), LinkTarget("watson", "Watson")],
        existing_markdown="IBM is old. [^9]",
    )
    markdown = await engine.write_page(request, TEMPLATE)
    prompt = llm_server.requests[0].prompt
    assert "Source: Tech notes › Companies\n[^1] IBM is a technology company based in Armonk." in prompt
    assert "Source: Tech notes › People\n[^2] Arvind Krishna leads IBM since 2020." in prompt
    assert "[[arvind-krishna]] Arvind Krishna" in prompt
    assert "merge the new evidence into this page" in prompt.lower()
    assert "IBM is old. [^9]" in prompt
    assert "IBM is a technology company based in Armonk. [^1]" in markdown
    assert "Arvind Krishna leads IBM since 2020. [^2]" in markdown
    assert "[[watson]]" in markdown
    assert llm_server.calls["text"] == 1


async def test_a_template_prompt_replaces_the_builtin_one(llm_server):
    template = Template(name="custom", map={"prompt": "Only people, please.\n{% for c in chunks %}### [{{ c.label }}] {{ c.header }}\n{{ c.text }}\n{% endfor %}"})
    engine = build_engine(settings_for(llm_server), template, usage=UsageMeter())
    try:
        await engine.extract(ExtractionBatch([ChunkInput("c1", IBM_TEXT)]), template)
    finally:
        await engine.close()
    assert llm_server.requests[0].prompt.startswith("Only people, please.\n### [c1] (untitled)\n")


async def test_a_broken_template_prompt_names_the_template_and_field(llm_server):
    template = Template(name="broken", map={"prompt": "{{ no_such_variable }}"})
    engine = build_engine(settings_for(llm_server), template, usage=UsageMeter())
    try:
        with pytest.raises(TemplateError, match=r"broken: map\.prompt"):
            await engine.extract(ExtractionBatch([ChunkInput("c1", IBM_TEXT)]), template)
    finally:
        await engine.close()
    assert llm_server.calls["chat"] == 0


async def test_usage_is_counted_per_phase(engine, llm_server):
    with UsageMeter.phase("map"):
        await engine.extract(ExtractionBatch([ChunkInput("c1", IBM_TEXT)]), TEMPLATE)
    used = engine.usage.get("map")
    assert used.llm_calls == 1 and used.prompt_tokens == llm_server.prompt_tokens
