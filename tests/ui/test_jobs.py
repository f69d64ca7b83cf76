"""The job dashboard in headless Chromium: start a compile, watch it live, cancel, schedule."""

from __future__ import annotations

import re

import pytest

from .browsing import open_view, screenshot, sign_in
from .server import UiServer, corpus_files, upload

PHASES = ("ingest", "map", "reduce", "plan", "refine")


@pytest.fixture
def fresh_kb(ui_server: UiServer, seeded):
    """A new knowledge base of the seeded tenant holding part of the sample corpus."""
    made = []

    def make(name: str, folders: tuple[str, ...]) -> str:
        files = {k: v for k, v in corpus_files().items() if k.split("/")[0] in folders}
        with ui_server.client(seeded.key) as client:
            client.post("/knowledge-bases", json={"name": name}).raise_for_status()
            upload(client, name, files)
        made.append(name)
        return name

    yield make
    with ui_server.client(seeded.key) as client:
        for name in made:
            client.delete(f"/knowledge-bases/{name}")


def test_start_a_compile_and_watch_its_progress_to_the_end(page, ui_server, seeded, llm, fresh_kb):
    kb = fresh_kb("compile-demo", ("durability", "storage"))
    llm.set_latency(0.03)  # slow enough that progress is seen moving, fast enough for CI
    try:
        sign_in(page, ui_server.url, seeded.key)
        open_view(page, ui_server.url, "#/jobs", f".kb-card[data-kb='{kb}']")
        card = page.locator(f".kb-card[data-kb='{kb}']")
        assert "never" in card.inner_text()
        card.get_by_role("button", name="Start compile").click()

        job = page.locator(".job-card").filter(has_text=kb)
        job.wait_for()
        # Live: the map phase shows counts while it runs, before the compile ends.
        job.locator("[data-phase='map'] .count").filter(has_text=re.compile(r"\d+/\d+")).wait_for()
        screenshot(page, "jobs-running")
        job.locator("[data-role='status']", has_text="succeeded").wait_for(timeout=60_000)
    finally:
        llm.set_latency(0.0)
    for phase in PHASES:
        count = job.locator(f"[data-phase='{phase}'] .count").inner_text()
        reached, total = re.match(r"(\d+)/(\d+)", count).groups()  # type: ignore[union-attr]
        assert "✓" in count and reached == total, (phase, count)  # a full bar: nothing left unsaid
    assert re.search(r"[1-9][\d,]* tokens", job.locator(".usage").inner_text())
    page.locator(f".jobs-table tr:has-text('{kb}') .badge", has_text="succeeded").wait_for()
    card.locator(".last-compile .badge", has_text="succeeded").wait_for()  # no reload needed
    assert "never" not in card.inner_text()
    screenshot(page, "jobs-finished")

    # The finished job's report lists the pages it created, linked to the wiki.
    job.get_by_role("link", name=re.compile(kb)).click()
    page.get_by_role("heading", name="Report").wait_for()
    created = page.locator(".changes li", has_text="created")
    assert created.count() > 0
    screenshot(page, "job-report")
    assert page.js_errors == []


def test_cancel_a_running_compile_and_add_a_schedule(page, ui_server, seeded, llm, fresh_kb):
    kb = fresh_kb("cancel-demo", ("replication",))
    llm.set_latency(0.3)
    try:
        sign_in(page, ui_server.url, seeded.key)
        open_view(page, ui_server.url, "#/jobs", f".kb-card[data-kb='{kb}']")
        page.locator(f".kb-card[data-kb='{kb}']").get_by_role("button", name="Start compile").click()
        job = page.locator(".job-card").filter(has_text=kb)
        job.locator("[data-role='status']", has_text="running").wait_for()
        job.get_by_role("button", name="Cancel").click()
        job.locator("[data-role='status']", has_text="cancelled").wait_for(timeout=30_000)
    finally:
        llm.set_latency(0.0)

    card = page.locator(f".kb-card[data-kb='{kb}']")
    card.get_by_label("Cron (UTC)").fill("not a cron")
    card.get_by_role("button", name="Add schedule").click()
    card.get_by_role("alert").filter(has_text=re.compile(r"cron", re.I)).wait_for()
    card.get_by_label("Cron (UTC)").fill("0 3 * * *")
    card.get_by_role("button", name="Add schedule").click()
    card.locator(".schedules li", has_text="0 3 * * *").wait_for()
    assert page.js_errors == []


def test_a_compile_whose_batches_failed_for_good_shows_as_partial(page, ui_server, seeded, llm, fresh_kb):
    from tests.support.llm_responder import KnowledgeResponder
    from tests.support.scripted_replies import POISON_DOCUMENT, poisoned

    kb = fresh_kb("partial-demo", ("storage",))
    with ui_server.client(seeded.key) as client:
        upload(client, kb, {"glitch.md": POISON_DOCUMENT.encode()})
    llm.responder = poisoned
    try:
        sign_in(page, ui_server.url, seeded.key)
        open_view(page, ui_server.url, "#/jobs", f".kb-card[data-kb='{kb}']")
        page.locator(f".kb-card[data-kb='{kb}']").get_by_role("button", name="Start compile").click()
        job = page.locator(".job-card").filter(has_text=kb)
        status = job.locator("[data-role='status'][data-status='partial']")
        status.wait_for(timeout=60_000)
    finally:
        llm.responder = KnowledgeResponder()
    assert status.inner_text() == "partial: some items failed"
    assert "map" in job.inner_text() and "run compile again" in job.inner_text()  # says what failed
    page.locator(f".jobs-table tr:has-text('{kb}') .badge.partial").wait_for()
    assert page.js_errors == []
