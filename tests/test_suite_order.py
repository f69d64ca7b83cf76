"""The suite passes in any order: tests run after the browser tests, in the same process, find
no event loop of theirs still running (Playwright's sync API runs one while it is open)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_an_async_test_after_a_browser_test_runs_on_its_own_loop():
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Chromium is not installed: the browser test would be skipped, proving nothing")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "tests/ui/test_ui_routes.py::test_the_sign_in_form_is_the_first_thing_a_browser_shows",
         "tests/test_public_api.py::test_a_script_compiles_a_folder_with_the_public_api"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
