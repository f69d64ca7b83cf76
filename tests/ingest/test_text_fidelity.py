"""What a document says reaches a page unaltered: code keeps its brackets and back-ticks."""

from __future__ import annotations

from compendium.engines.tasks import EvidenceItem
from compendium.phases.citations import clean_page


def test_a_footnote_marker_is_read_only_outside_code():
    page = (
        "# Patterns\n\n"
        "Append `|[^[:space:]]` to the pattern.[^1] Quote ``a`[^2]`` as written.[^1]\n\n"
        "```\nword = re.compile(\"[^ ]+\")\n```\n\n"
        "Unknown markers outside code go.[^9]\n"
    )
    cleaned = clean_page(page, [], [EvidenceItem(1, "Append ...", "c1")])
    assert "Append `|[^[:space:]]` to the pattern.[^1]" in cleaned.markdown
    assert "Quote ``a`[^2]`` as written.[^1]" in cleaned.markdown
    assert 'word = re.compile("[^ ]+")' in cleaned.markdown
    assert "Unknown markers outside code go.\n" in cleaned.markdown
    assert cleaned.counters["removed_citations"] == 1
