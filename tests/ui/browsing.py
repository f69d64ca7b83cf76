"""What the browser tests do often: sign in, wait for a view, take a screenshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def sign_in(page: Any, url: str, key: str) -> None:
    page.goto(f"{url}/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("header nav:not([hidden])")


def open_view(page: Any, url: str, route: str, ready: str) -> None:
    """Go to a hash route of the UI and wait for a selector that shows it has loaded."""
    page.goto(f"{url}/ui/{route}")
    page.wait_for_selector(ready)


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def clean_screenshot(page: Any, name: str, *, full_page: bool = False) -> Path:
    """A screenshot without the passing status toast (it would cover the view), of the whole
    page when asked (long views)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.getElementById('status').textContent = ''")
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
