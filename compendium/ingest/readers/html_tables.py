"""HTML tables read as rows of cells, and layout tables (holding headings or tables) unwrapped into the page's flow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .builder import Builder
from .html_tags import BLOCKS, HEADINGS


class TableLayout:
    """The part of the HTML parser target that reads tables."""

    out: Builder
    table_depth: int
    rows: list[list[tuple[str, int, int]]]  # (text, rowspan, colspan) per cell
    cell: list[str] | None
    spans: tuple[int, int]
    caption: list[str] | None
    inline: list[str]
    _open: Callable[[str, Any], str]  # a layout table's headings and tables are read as the page's

    def _open_in_table(self, tag: str, attrib: Any) -> str:
        if tag in HEADINGS or (tag == "table" and self.table_depth == 1 and self.cell is not None):
            # A table holding headings or tables is the page's layout, not data: what it has read
            # is written out, and the rest is read as the page's own flow.
            self._unwrap_layout()
            return self._open(tag, attrib)
        if tag == "table":
            self.table_depth += 1
        elif self.table_depth == 1 and tag == "tr":
            self.rows.append([])
        elif self.table_depth == 1 and tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self.cell = []
            self.spans = (span(attrib.get("rowspan"), 1000), span(attrib.get("colspan"), 50))
        elif self.table_depth == 1 and tag == "caption":
            self.caption = []
        elif tag in BLOCKS or tag == "br":
            target = self.cell if self.cell is not None else self.caption
            if target is not None:
                target.append(" ")  # blocks inside a cell: words must not run together
        return "cell-part"

    def _unwrap_layout(self) -> None:
        for row in self.rows:
            for text, _rowspan, _colspan in row:
                self.out.prose("paragraph", text)
        if self.caption:
            self.out.prose("paragraph", "".join(self.caption))
        cell = self.cell or []
        self.rows, self.cell, self.caption, self.table_depth = [], None, None, 0
        self.inline.extend(cell)  # the open cell's words so far: the flow goes on from them

    def _close_in_table(self, tag: str) -> None:
        if tag == "table":
            self.table_depth -= 1
            if self.table_depth == 0:
                if self.caption is not None and self.caption:
                    self.out.prose("paragraph", "".join(self.caption))
                self.out.table(grid(self.rows))
                self.rows, self.cell, self.caption = [], None, None
        elif self.table_depth == 1 and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(("".join(self.cell), *self.spans))
            self.cell = None
        elif self.table_depth == 1 and tag == "caption" and self.caption is not None:
            self.out.prose("paragraph", "".join(self.caption))
            self.caption = None


def span(value: Any, limit: int) -> int:
    try:
        return min(max(int(value), 1), limit)  # bounded: a stranger's rowspan=65534 costs nothing
    except (TypeError, ValueError):
        return 1


def grid(rows: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """Rows of cells with spans laid out: a cell spanning rows repeats in each of them, one
    spanning columns leaves the columns after it empty, so every column keeps its meaning."""
    carry: dict[int, list[Any]] = {}  # column -> [text, rows still to fill]
    out = []
    for row in rows:
        cells: list[str] = []
        pending = list(row)
        col = 0
        while pending or any(c >= col for c in carry):
            if col in carry:
                cells.append(carry[col][0])
                carry[col][1] -= 1
                if carry[col][1] <= 0:
                    del carry[col]
                col += 1
                continue
            if not pending:
                cells.append("")
                col += 1
                continue
            text, rowspan, colspan = pending.pop(0)
            for k in range(colspan):
                cells.append(text if k == 0 else "")
                if rowspan > 1:
                    carry[col] = [text if k == 0 else "", rowspan - 1]
                col += 1
        out.append(cells)
    return out
