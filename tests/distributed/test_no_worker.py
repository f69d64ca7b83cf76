"""A compile told to use a broker that no worker listens on says so at once, and what to start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compendium.errors import EngineUnavailable
from compendium.operations import compile_workspace
from compendium.settings import load_settings

REDIS_URL = os.environ.get("COMPENDIUM_TEST_REDIS_URL", "").strip()
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="COMPENDIUM_TEST_REDIS_URL is not set: no Redis server for the broker")
pytest.importorskip("celery", reason="celery is not installed: pip install -e '.[distributed]'")


async def test_a_compile_with_a_broker_and_no_worker_names_the_command_to_start_one(sample_workspace: Path):
    lonely = REDIS_URL.rsplit("/", 1)[0] + "/15"  # a database no worker of another test listens on
    settings = load_settings(sample_workspace, env={"COMPENDIUM_BROKER": lonely})
    with pytest.raises(EngineUnavailable, match=r"no compile worker answers.*compendium worker --tasks"):
        await compile_workspace(settings)  # asked once, not waited on forever


async def test_an_unreachable_broker_is_named_without_its_password(sample_workspace: Path):
    settings = load_settings(sample_workspace, env={"COMPENDIUM_BROKER": "redis://:s3cret@127.0.0.1:9/0"})
    with pytest.raises(EngineUnavailable, match=r"cannot reach the broker redis://127\.0\.0\.1:9/0") as caught:
        await compile_workspace(settings)
    assert "s3cret" not in str(caught.value)
