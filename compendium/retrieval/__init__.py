"""Retrieval and answers over a compiled knowledge base: `retrieve` gives typed evidence and a
context block, `ask` a cited answer as a stream of events.

The answer's names are loaded on first use (PEP 562): `compendium retrieve` imports the ranking,
not the answer's sentence checks nor the LLM rewrite's models (a CLI query pays for what it
runs). `retrieve` is imported here: the function shares its name with its module, which a lazy
import would leave in its place.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ..lazy_names import lazy_getattr as _lazy_getattr
from .options import MODES, Options
from .retrieve import Retrieval, retrieve

if _TYPE_CHECKING:
    from .answer import NOTHING, ask, extractive_answer
    from .citations import citation_problems, split_answer
    from .index import ensure_index
    from .ranking import DEFAULT_RANKING, RANKINGS
    from .terms import QuestionTerms, rule_terms

_LAZY = {
    "DEFAULT_RANKING": ".ranking",
    "NOTHING": ".answer",
    "RANKINGS": ".ranking",
    "QuestionTerms": ".terms",
    "ask": ".answer",
    "citation_problems": ".citations",
    "ensure_index": ".index",
    "extractive_answer": ".answer",
    "rule_terms": ".terms",
    "split_answer": ".citations",
}

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

__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
