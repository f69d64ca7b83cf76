"""A report's hand-written "## Findings" section, kept when its script writes the report again."""

from __future__ import annotations

from pathlib import Path

HEADING = "## Findings"


def kept_findings(report: Path) -> str:
    """The report's text from its Findings heading on ('' when it has none or does not exist)."""
    old = report.read_text(encoding="utf-8") if report.exists() else ""
    return old[old.index(HEADING):] if HEADING in old else ""
