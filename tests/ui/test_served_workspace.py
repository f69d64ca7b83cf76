"""A workspace compiled with the CLI, then `compendium keys create` and `compendium serve` run in
it, as a user would: signing in shows its wiki, with no API set-up."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .browsing import clean_screenshot, open_view, sign_in
from .server import CORPUS, free_port


def compendium(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPENDIUM_")}
    return subprocess.run([sys.executable, "-m", "compendium.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """(url, key, workspace) of `compendium serve` running in a CLI-compiled workspace."""
    ws = tmp_path_factory.mktemp("served") / "handbook"
    assert compendium(ws.parent, "init", str(ws)).returncode == 0
    for folder in ("storage", "transactions"):
        shutil.copytree(CORPUS / folder, ws / "documents" / folder)
    compiled = compendium(ws, "compile", "--plain")
    assert compiled.returncode == 0, compiled.stderr
    made = compendium(ws, "keys", "create")
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPENDIUM_")}
    server = subprocess.Popen([sys.executable, "-m", "compendium.cli", "serve", "--port", str(port)],
                              cwd=ws, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/ui/", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"compendium serve did not start: {server.stderr.read().decode()}")
            time.sleep(0.1)
        yield url, key, ws
    finally:
        server.terminate()  # the process this fixture started, by its handle
        server.wait(timeout=20)
        server.stderr.close()


def test_a_cli_compiled_workspace_is_served_and_browsed(page, served):
    url, key, ws = served
    cli_pages = int(next(line for line in compendium(ws, "status").stdout.splitlines()
                         if line.startswith("Compiled:")).split()[1])
    sign_in(page, url, key)
    page.wait_for_selector(".page-list li")  # straight to the wiki: no knowledge base to create
    assert page.locator("#kb-select").input_value() == "default"
    assert page.locator(".page-list li").count() == cli_pages
    clean_screenshot(page, "workspace-wiki")

    open_view(page, url, "#/kb/default/wiki", ".page-list li")
    page.locator(".page-list li a").first.click()
    page.wait_for_selector("#page-body")
    assert page.locator("#page-body").inner_text().strip()

    open_view(page, url, "#/kbs", ".kb-summary[data-kb='default']")
    card = page.locator(".kb-summary[data-kb='default']")
    card.get_by_text("succeeded").wait_for()  # the CLI's compile, seen by the server
    assert str(ws) in card.inner_text()
    clean_screenshot(page, "workspace-kbs")
    open_view(page, url, "#/jobs", ".kb-card[data-kb='default']")
    page.locator(".kb-card[data-kb='default']").get_by_text("succeeded").wait_for()
    assert "never" not in page.locator(".kb-card[data-kb='default']").inner_text()

    # A document added in the UI lands in the workspace, and a compile from the UI is one the
    # CLI then reports as the workspace's last.
    open_view(page, url, "#/kb/default/documents", ".documents-table tbody tr[data-path]")
    page.locator("#upload-input").set_input_files([{
        "name": "ui-note.md", "mimeType": "text/markdown",
        "buffer": b"# Vacuum Notes\n\nVacuum removes dead tuples that MVCC leaves behind.\n"}])
    page.locator(".documents-table tr[data-path='ui-note.md'] .badge", has_text="new").wait_for()
    assert (ws / "documents" / "ui-note.md").is_file()
    template = page.get_by_label("Template of this knowledge base")
    assert template.is_disabled() and template.input_value() == "wiki"  # compendium.yaml decides
    assert "compendium.yaml" in page.locator("#kb-template-note").inner_text()
    clean_screenshot(page, "workspace-documents", full_page=True)
    page.get_by_role("button", name="Compile now").click()
    page.locator(".job-card [data-role='status']", has_text="succeeded").wait_for(timeout=60_000)
    status = compendium(ws, "status").stdout
    assert "Documents:" in status and f"{len(list((ws / 'documents').rglob('*.*')))} (" in status
    assert page.js_errors == []
