"""Retrieval and answers over a compiled knowledge base: `retrieve` gives typed evidence and a
context block, `ask` a cited answer as a stream of events."""

from .answer import NOTHING, ask, citation_problems, extractive_answer, split_answer
from .index import ensure_index
from .ranking import DEFAULT_RANKING, RANKINGS
from .retrieve import MODES, Options, Retrieval, retrieve
from .terms import QuestionTerms, rule_terms

__all__ = [
    "DEFAULT_RANKING",
    "MODES",
    "NOTHING",
    "RANKINGS",
    "Options",
    "QuestionTerms",
    "Retrieval",
    "ask",
    "citation_problems",
    "ensure_index",
    "extractive_answer",
    "retrieve",
    "rule_terms",
    "split_answer",
]
