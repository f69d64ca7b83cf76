"""Pytest fixtures for the scripted LLM server (registered as a plugin in tests/conftest.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from compendium.settings import EmbeddingSettings, LLMSettings, Settings

from .llm_server import LLMServer

# Short enough that a test of timeouts and retries takes a fraction of a second.
# No hedging: these tests count the requests the server sees, and on a loaded machine a call
# past 0.25 s would be sent twice (hedging has tests of its own: tests/engines/test_hedged_calls.py).
FAST = {"timeout": 0.5, "max_retries": 2, "retry_wait": 0.01, "hedge": False}


def settings_for(server: LLMServer, *, embeddings: bool = False, **overrides: Any) -> Settings:
    """Settings pointing the LLM (and, with embeddings=True, the embedder) at `server`.

    Overrides name LLMSettings fields (model, timeout, requests_per_minute...) or Settings
    fields (token_budget, knowledge_base...).
    """
    llm_fields = {f.name for f in dataclasses.fields(LLMSettings)}
    llm_args = {"base_url": server.base_url, "api_key": server.api_key or "test-key", "model": "test-chat", **FAST}
    top: dict[str, Any] = {}
    for key, value in overrides.items():
        (llm_args if key in llm_fields else top)[key] = value
    embedding = EmbeddingSettings()
    if embeddings:
        embedding = EmbeddingSettings(
            base_url=server.base_url,
            api_key=server.api_key or "test-key",
            model="test-embed",
            timeout=llm_args["timeout"],
            max_retries=llm_args["max_retries"],
            retry_wait=llm_args["retry_wait"],
        )
    return Settings(llm=LLMSettings(**llm_args), embedding=embedding, **top)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, fresh for each test."""
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()
