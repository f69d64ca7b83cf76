"""Knowledge bases and documents in headless Chromium: create a knowledge base, upload (picked
and dropped, with refusals shown), remove, choose its template, compile, watch, read; schedules;
delete the knowledge base."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

from .browsing import clean_screenshot, open_view, sign_in
from .server import CORPUS, UiServer, create_tenant

LIMIT = 64 * 1024  # bytes per uploaded file on this test's server: small, so "too large" is cheap


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory, llm: LLMServer) -> Iterator[UiServer]:
    server = UiServer(settings_for(llm, timeout=10.0), tmp_path_factory.mktemp("docs-data"),
                      max_upload_bytes=LIMIT).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def key(small_server: UiServer) -> str:
    return create_tenant(small_server, "writers")


def file_payload(path) -> dict:
    return {"name": path.name, "mimeType": "text/markdown" if path.suffix == ".md" else "text/html",
            "buffer": path.read_bytes()}


def drop_file(page, selector: str, name: str, text: str) -> None:
    """Drop a file on an element as a person dragging it from their file manager does."""
    page.evaluate(
        """([selector, name, text]) => {
            const data = new DataTransfer();
            data.items.add(new File([text], name, { type: "text/markdown" }));
            const zone = document.querySelector(selector);
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
            }
        }""",
        [selector, name, text],
    )


def test_create_a_knowledge_base_upload_compile_watch_and_read(page, small_server, key):
    sign_in(page, small_server.url, key)
    # A new tenant has no knowledge base: the UI opens where one is made.
    page.wait_for_selector("#new-kb-name")
    assert "/kbs" in page.url
    page.get_by_label("Name").fill("Field Notes")  # refused: capitals and a space
    page.get_by_role("button", name="Create").click()
    assert page.locator("#new-kb-name:invalid").count() == 1  # the browser holds the form back
    page.get_by_label("Name").fill("field-notes")
    page.get_by_label("Description").fill("Notes on durability")
    clean_screenshot(page, "kb-create")
    page.get_by_role("button", name="Create").click()

    page.get_by_role("heading", name="field-notes: documents").wait_for()
    assert page.locator("#kb-select").input_value() == "field-notes"
    files = sorted((CORPUS / "durability").iterdir())
    too_big = {"name": "huge.md", "mimeType": "text/markdown", "buffer": b"# Huge\n\n" + b"x" * (LIMIT + 10)}
    wrong = {"name": "tool.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90\x00"}
    fake_pdf = {"name": "scan.pdf", "mimeType": "application/pdf", "buffer": b"just text, not a PDF"}
    # Looks like a PDF at the door; only reading it shows it is broken.
    broken = {"name": "broken.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4\nthe rest is lost\n"}
    files_and_broken = [*map(file_payload, files), broken]
    page.locator("#upload-input").set_input_files([*files_and_broken, too_big, wrong, fake_pdf])
    uploads = page.locator(".uploads li")
    uploads.filter(has_text="scan.pdf").locator(".error").wait_for()
    for f in files:
        uploads.filter(has_text=f.name).filter(has_text="uploaded").wait_for()
    assert f"up to {LIMIT:,} bytes per file" in uploads.filter(has_text="huge.md").locator(".error").inner_text()
    assert "“.exe” files cannot be compiled" in uploads.filter(has_text="tool.exe").locator(".error").inner_text()
    assert "not a .pdf file" in uploads.filter(has_text="scan.pdf").locator(".error").inner_text()

    drop_file(page, ".drop-zone", "dropped.md", "# Dropped note\n\nThe checkpointer flushes dirty pages to disk.\n")
    uploads.filter(has_text="dropped.md").filter(has_text="uploaded").wait_for()
    rows = page.locator(".documents-table tbody tr[data-path]")
    rows.filter(has_text="dropped.md").wait_for()
    assert rows.count() == len(files_and_broken) + 1
    assert set(rows.locator(".badge").all_inner_texts()) == {"new"}
    clean_screenshot(page, "documents-uploaded", full_page=True)

    page.get_by_role("button", name="Remove dropped.md").click()
    rows.filter(has_text="dropped.md").wait_for(state="detached")
    assert rows.count() == len(files_and_broken)

    page.get_by_label("Template of this knowledge base").select_option("topics")
    page.get_by_text("Compiles use topics from now on.").wait_for()
    page.get_by_label("Template of this knowledge base").select_option("wiki")
    page.get_by_text("Compiles use wiki from now on.").wait_for()

    page.get_by_role("button", name="Compile now").click()
    page.get_by_role("heading", name="Compile of field-notes").wait_for()
    card = page.locator(".job-card")
    # The broken PDF cannot be read: the compile publishes the rest and says what it left out.
    card.locator("[data-role='status'][data-status='partial']").wait_for(timeout=60_000)
    assert "ingest: 1" in card.inner_text()
    page.get_by_role("heading", name="Report").wait_for()
    clean_screenshot(page, "compile-finished")
    created = page.locator(".changes li", has_text="created")
    assert created.count() > 0
    created.first.get_by_role("link").click()
    page.wait_for_selector("#page-body")
    assert page.locator("#page-body").inner_text().strip()
    clean_screenshot(page, "page-read")

    open_view(page, small_server.url, "#/kb/field-notes/documents", ".documents-table tbody tr[data-path]")
    statuses = dict(zip(rows.evaluate_all("rows => rows.map((r) => r.dataset.path)"),
                        rows.locator(".badge").all_inner_texts(), strict=True))
    assert statuses.pop("broken.pdf") == "failed"
    assert set(statuses.values()) == {"compiled"}
    reason = rows.filter(has_text="broken.pdf").locator(".doc-error").inner_text()
    assert "PDF" in reason and "kbs/" not in reason  # why, without the server's folders
    clean_screenshot(page, "documents-compiled", full_page=True)
    assert "Last compile:" in page.locator(".kb-status").inner_text()
    assert "partial" in page.locator(".kb-status").inner_text()
    assert page.js_errors == []


def test_schedules_are_added_edited_paused_and_deleted(page, small_server, key):
    with small_server.client(key) as client:
        client.post("/knowledge-bases", json={"name": "nightly"}).raise_for_status()
    sign_in(page, small_server.url, key)
    open_view(page, small_server.url, "#/kb/nightly/documents", ".schedules-editor h2")
    box = page.locator(".schedules-editor")
    box.get_by_label("New schedule, cron (UTC)").fill("every night")
    box.get_by_role("button", name="Add schedule").click()
    box.get_by_role("alert").filter(has_text=re.compile("cron", re.I)).wait_for()
    box.get_by_label("New schedule, cron (UTC)").fill("0 3 * * *")
    box.get_by_role("button", name="Add schedule").click()
    row = box.locator(".schedules-table tbody tr")
    row.wait_for()
    assert row.locator(".badge").inner_text() == "active"

    row.get_by_label("Cron of schedule 0 3 * * *").fill("30 4 * * 1")
    row.get_by_role("button", name="Save").click()
    box.get_by_label("Cron of schedule 30 4 * * 1").wait_for()
    row.get_by_role("button", name="Pause").click()
    box.locator(".schedules-table tr[data-enabled='false']").wait_for()
    assert row.locator(".badge").inner_text() == "paused"
    clean_screenshot(page, "schedules", full_page=True)
    with small_server.client(key) as client:
        (saved,) = client.get("/knowledge-bases/nightly/schedules").json()["items"]
    assert saved["cron"] == "30 4 * * 1" and saved["enabled"] is False

    row.get_by_role("button", name="Resume").click()
    box.locator(".schedules-table tr[data-enabled='true']").wait_for()
    row.get_by_role("button", name="Delete schedule 30 4 * * 1").click()
    box.get_by_text("No schedule").wait_for()
    assert page.js_errors == []


def test_delete_a_knowledge_base_after_saying_so_twice(page, small_server, key):
    with small_server.client(key) as client:
        client.post("/knowledge-bases", json={"name": "scratch", "description": "to throw away"}).raise_for_status()
    sign_in(page, small_server.url, key)
    open_view(page, small_server.url, "#/kbs", ".kb-summary[data-kb='scratch']")
    card = page.locator(".kb-summary[data-kb='scratch']")
    card.get_by_role("button", name="Delete scratch").click()
    card.get_by_role("alert").filter(has_text="cannot be undone").wait_for()
    card.get_by_role("button", name="Keep it").click()
    card.get_by_role("button", name="Delete scratch").click()
    card.get_by_role("button", name="Delete for good").click()
    card.wait_for(state="detached")
    with small_server.client(key) as client:
        assert client.get("/knowledge-bases/scratch").status_code == 404
    assert "scratch" not in page.locator("#kb-select").inner_text()
    assert page.js_errors == []


def test_a_folder_goes_up_with_its_structure_and_only_what_can_be_compiled(page, small_server, key, tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nThe checkpointer writes dirty pages.\n")
    (folder / "sub" / "b.md").write_text("# B\n\nThe WAL is written first.\n")
    (folder / ".secret.md").write_text("# Hidden\n")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n")
    with small_server.client(key) as client:
        client.post("/knowledge-bases", json={"name": "folders"}).raise_for_status()
    sign_in(page, small_server.url, key)
    open_view(page, small_server.url, "#/kb/folders/documents", ".drop-zone")
    page.locator("#upload-folder").set_input_files(str(folder))
    page.get_by_role("status").filter(has_text="2 files of the folder left out").wait_for()
    rows = page.locator(".documents-table tbody tr[data-path]")
    rows.nth(1).wait_for()
    assert rows.evaluate_all("rows => rows.map((r) => r.dataset.path)") == ["notes/a.md", "notes/sub/b.md"]
    assert page.js_errors == []
