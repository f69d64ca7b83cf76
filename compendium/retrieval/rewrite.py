"""The LLM's reading of a question (names and keywords): its reply model and prompt, loaded only
when a model is configured (pydantic and the engines' task models are not a CLI query's cost)."""

from __future__ import annotations

from pydantic import Field

from ..engines.tasks import Reply, bound


class QuestionRewrite(Reply):
    """The LLM's reading of a question: entity names it mentions, and search keywords."""

    # Bounded in the schema: under a grammar a small model otherwise repeats one keyword until
    # its reply runs out ("Writes", "Writes", ...).
    names: list[str] = Field(json_schema_extra=bound(items=10))
    keywords: list[str] = Field(json_schema_extra=bound(items=10))


REWRITE_SYSTEM = (
    "You prepare search queries over a knowledge base compiled from documents. "
    "Reply with JSON only."
)
REWRITE_PROMPT = """Question: {question}

List the names of the things the question is about (products, components, people, concepts,
settings; as they would be written in the documents, expanding abbreviations you are sure of)
and up to 10 keywords a passage answering it would contain. JSON: {{"names": [...], "keywords": [...]}}"""
