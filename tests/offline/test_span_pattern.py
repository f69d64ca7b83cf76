"""names.SPAN finds exactly the spans of the plain form it was written from (no opening
assertion, no possessive runs), on random text built of the characters its branches read."""

from __future__ import annotations

import random
import re

from compendium.engines.offline.names import _CAP, _CONNECT, _VERSION, SPAN

PLAIN = re.compile(
    r"`(?P<code>[^`\n]{1,60})`"
    r"|\*\*(?P<strong>[^*\n]{2,60}?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\n\s][^*\n]{0,58}?)\*(?![\w*])"
    r"|(?<![\w/.:-])(?P<file>[\w-]+\.(?:conf|py|c|h|sql|json|ya?ml|toml|sh|so|dll|exe|ini|cfg|js|ts|log))\b"
    r"|(?P<ident>\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b(?:\(\))?"
    r"|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b(?:\(\))?"
    r"|\b[A-Za-z_][\w.]*\(\))"
    rf"|(?P<name>\b{_CAP}(?:\s+{_CONNECT}?{_CAP})*{_VERSION}?)"
)

_PIECES = [
    "a", "b", "Z", "Q", "x", "ab", "Ab", "AB", "_", "__", "-", ".", "/", ":", "*", "**", "`", "(", ")",
    "()", " ", "  ", "\n", "\t", "1", "2.5", "v3", "'", "’", "é", "É", "ß", "²", ".py", ".c", ".yml",
    ".log", "of ", "for the ", "von ", "getValue", "max_wal_size", "os.path", "open()", "Write-Ahead",
    "PostgreSQL", "README.txt", "a.py", "f(x)", "**bold**", "*em*", "`code`", ",", ";", "\u00a0",
]


def _sig(pattern: re.Pattern[str], text: str) -> list[tuple]:
    return [(m.span(), m.lastgroup, m.groupdict()) for m in pattern.finditer(text)]


def test_span_finds_what_the_plain_pattern_finds():
    rng = random.Random(5)
    for _ in range(20000):
        text = "".join(rng.choices(_PIECES, k=rng.randint(1, 14)))
        assert _sig(SPAN, text) == _sig(PLAIN, text), text


def test_span_on_prose():
    text = ("The `max_wal_size` setting of PostgreSQL 16.1 limits the Write-Ahead Log; see **WAL** and "
            "*checkpoints* in postgresql.conf, call getValue() or os.path.join() (Bank of the West).")
    assert _sig(SPAN, text) == _sig(PLAIN, text)
    assert [(m.lastgroup, m.group(m.lastgroup)) for m in SPAN.finditer(text)] == [
        ("name", "The"), ("code", "max_wal_size"), ("name", "PostgreSQL 16.1"), ("name", "Write-Ahead Log"),
        ("strong", "WAL"), ("em", "checkpoints"), ("file", "postgresql.conf"), ("ident", "getValue()"),
        ("ident", "os.path.join()"), ("name", "Bank of the West")]
