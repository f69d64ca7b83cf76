"""The sample corpus compiled offline once for the retrieval tests (they only read it)."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path

import pytest

from compendium.operations import compile_workspace
from compendium.settings import Settings, load_settings
from compendium.workspace import add_documents, init_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="session")
def compiled_offline(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings of a workspace holding samples/corpus, compiled by the offline engine."""
    workspace = init_workspace(tmp_path_factory.mktemp("retrieval") / "ws")
    add_documents(workspace, [SAMPLES / "corpus"])
    settings = load_settings(workspace, env={})
    report = asyncio.run(compile_workspace(settings))
    assert report.status == "succeeded"
    return settings


@pytest.fixture
def compiled_copy(compiled_offline: Settings, tmp_path: Path) -> Settings:
    """A copy of the compiled workspace, for tests that write to it (LLM replies are cached)."""
    target = tmp_path / "ws"
    shutil.copytree(compiled_offline.workspace, target)
    store = f"sqlite:///{target / '.compendium' / 'store.db'}"
    return dataclasses.replace(compiled_offline, workspace=target, store_url=store)
