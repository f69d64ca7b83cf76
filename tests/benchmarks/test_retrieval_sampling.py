"""The retrieval benchmark's documents of a manual: a set's include patterns, and the gold pages kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.retrieval import sample_documents


def _pages(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("<html><body><p>text</p></body></html>", encoding="utf-8")


def test_include_patterns_keep_the_books_pages_and_leave_the_rest(tmp_path: Path) -> None:
    _pages(tmp_path, "ch01-intro.html", "ch02-next.html", "appendix-a.html", "print.html",
           "first-edition/ch01-old.html", "_static/x.html")
    chosen = sample_documents(tmp_path, {"ch02-next.html"}, 10, ("ch*.html", "appendix-*.html"))
    assert chosen == ["appendix-a.html", "ch01-intro.html", "ch02-next.html"]


def test_by_default_every_html_page_below_the_root_counts_but_site_folders(tmp_path: Path) -> None:
    _pages(tmp_path, "index.html", "usage/create.html", "_static/x.html", "_sources/index.html")
    assert sample_documents(tmp_path, set(), 10) == ["index.html", "usage/create.html"]


def test_a_sample_keeps_every_answering_page(tmp_path: Path) -> None:
    _pages(tmp_path, *(f"ch{n:02}.html" for n in range(20)))
    chosen = sample_documents(tmp_path, {"ch07.html", "ch13.html"}, 5)
    assert len(chosen) == 5 and {"ch07.html", "ch13.html"} <= set(chosen)


def test_an_answering_page_outside_the_include_patterns_is_an_error(tmp_path: Path) -> None:
    _pages(tmp_path, "ch01.html", "print.html")
    with pytest.raises(SystemExit, match=r"print\.html"):
        sample_documents(tmp_path, {"print.html"}, 10, ("ch*.html",))
