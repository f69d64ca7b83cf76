"""Fixtures for the browser tests: the API with the UI on 127.0.0.1, headless Chromium, seeded data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

from .browsing import SCREENSHOTS
from .server import Seed, UiServer, seed_knowledge_base

CHROMIUM = Path("/usr/bin/chromium")



@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless; --no-sandbox only when running as root (CI containers).

    Playwright's sync API runs its own event loop, and while it is open that loop is the
    running loop of the main thread: asyncio.run and every async test there fail ("Cannot run
    the event loop while another loop is running"). So it lives only as long as the browser
    tests (this package), never into the tests that run after them; in here, a test that runs
    a coroutine runs it in a thread of its own (test_site.py, large_graph.py)."""
    playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed: apt-get install -y --no-install-recommends chromium")
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.ui_failed = report.failed  # type: ignore[attr-defined]


@pytest.fixture
def page(browser: object, request: pytest.FixtureRequest) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    tab.js_errors = errors
    try:
        yield tab
        if getattr(request.node, "ui_failed", False):
            # What the browser showed when the test failed, for whoever reads the CI log.
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SCREENSHOTS / f"failed-{request.node.name}.png"))
            print(f"browser at failure: {tab.url}; page errors: {errors}")
    finally:
        context.close()


@pytest.fixture(scope="session")
def llm() -> Iterator[LLMServer]:
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory, llm: LLMServer) -> Iterator[UiServer]:
    data_dir = tmp_path_factory.mktemp("ui-data")
    server = UiServer(settings_for(llm, timeout=10.0), data_dir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def seeded(ui_server: UiServer) -> Seed:
    """Tenant 'acme' with the sample corpus compiled in knowledge base 'handbook' (once per run)."""
    return seed_knowledge_base(ui_server, tenant="acme", kb="handbook")
