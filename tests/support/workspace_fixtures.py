"""Fixtures: a workspace holding a copy of the sample corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_CORPUS = REPO / "samples" / "corpus"
SAMPLE_EXPECTED = REPO / "samples" / "expected.yaml"


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A fresh workspace whose documents/ folder holds the sample corpus."""
    from compendium.workspace import init_workspace

    workspace = init_workspace(tmp_path / "ws")
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    return workspace
