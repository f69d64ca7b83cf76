"""Responders for the scripted LLM server: one that fails some MAP batches for good, and one
that keeps replies within max_tokens (as real servers do) while counting concurrent calls."""

from __future__ import annotations

import threading
import time

from compendium.tokens import count_tokens

from .llm_responder import KnowledgeResponder
from .llm_server import ChatRequest

POISON = "Glitchweaver"  # MAP replies for a batch holding this word are never valid JSON
POISON_DOCUMENT = f"# {POISON}\n\nThe {POISON} module rewrites every page it touches.\n"


def poisoned(request: ChatRequest) -> str:
    """KnowledgeResponder, except that a batch holding POISON (and its repair) gets a refusal."""
    if request.schema_name == "extraction" and any(POISON in str(m.get("content")) for m in request.messages):
        return "Sorry, I cannot help with that."
    return KnowledgeResponder()(request)


class BoundedResponder:
    """KnowledgeResponder's answers cut to the request's max_tokens; `most_at_once` is the
    largest number of requests being answered at the same time."""

    def __init__(self, seconds: float = 0.05):
        self.seconds = seconds
        self.inner = KnowledgeResponder()
        self.lock = threading.Lock()
        self.now = 0
        self.most_at_once = 0
        self.cut = 0

    def __call__(self, request: ChatRequest) -> str:
        with self.lock:
            self.now += 1
            self.most_at_once = max(self.most_at_once, self.now)
        try:
            time.sleep(self.seconds)  # long enough for concurrent calls to overlap
            text = self.inner(request)
            bound = request.body.get("max_tokens")
            if isinstance(bound, int) and count_tokens(text) > bound:
                with self.lock:
                    self.cut += 1
                while count_tokens(text) > bound:
                    text = text[: int(len(text) * 0.9)]
            return text
        finally:
            with self.lock:
                self.now -= 1
