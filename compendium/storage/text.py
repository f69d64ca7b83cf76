"""Full-text search shared by every backend: the kinds' text fields, query words, a BM25 scan."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ..errors import StoreError
from . import codec
from .records import Record

MAX_QUERY_WORDS = 32  # a stranger's query costs at most this many terms
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words that carry no meaning in a question; dropping them keeps OR queries selective.
STOPWORDS = frozenset(
    """a an and are as at be by can could did do does for from had has have how i if in into is
    it its me my of on or our should so than that the their them then there these they this to
    was we were what when where which who whom why will with would you your about after before
    does doing done also any all each more most other some such only own same too very just
    not no nor out over under up down again further once here both few off""".split()
)


def text_fields(kind: type[Record]) -> dict[str, float]:
    """The fields of a kind indexed for full text, with their BM25 weights (empty: none)."""
    return dict(kind.TEXT)


def chosen_fields(kind: type[Record], fields: Sequence[str] | None) -> dict[str, float]:
    """The weighted fields a search names (all the kind's when None); unknown ones are errors."""
    every = text_fields(kind)
    if not every:
        raise StoreError(f"{kind.KIND} records have no text fields; full-text search is not possible")
    if fields is None:
        return every
    unknown = [f for f in fields if f not in every]
    if unknown or not fields:
        raise StoreError(
            f"cannot search {kind.KIND} text in {', '.join(unknown) or 'no field'}; "
            f"text fields: {', '.join(every)}",
            field=(unknown or ["fields"])[0],
        )
    return {f: every[f] for f in fields}


def field_text(record: Record, name: str) -> str:
    """A text field as indexed: lists (aliases, heading paths) become one line per item."""
    value = getattr(record, name)
    if isinstance(value, list | tuple):
        return "\n".join(str(v) for v in value)
    return "" if value is None else str(value)


def words(text: str) -> list[str]:
    """Lowercased words of a text, in order (digits kept, punctuation and _ split)."""
    return [w.casefold() for w in _WORD.findall(text)]


def query_words(query: str) -> list[str]:
    """The distinct meaningful words of a query, in order, at most MAX_QUERY_WORDS."""
    if not isinstance(query, str):
        raise StoreError(f"a text query must be a string, got {type(query).__name__}")
    seen = dict.fromkeys(w for w in words(query) if w not in STOPWORDS)
    if not seen:  # a query of stopwords only still means something
        seen = dict.fromkeys(words(query))
    return list(seen)[:MAX_QUERY_WORDS]


def fts5_query(terms: Sequence[str], columns: Sequence[str] | None = None) -> str:
    """An FTS5 MATCH expression: any of the terms (quoted: never operators), in these columns."""
    body = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    if columns:
        return "{" + " ".join(columns) + "} : (" + body + ")"
    return body


def natural_query(terms: Sequence[str]) -> str:
    """The query as MySQL natural language mode and Elasticsearch `match` read it."""
    return " ".join(terms)


def check_limit(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool):
        raise StoreError(f"a search limit must be an integer, got {k!r}")
    return max(0, min(k, 10_000))


class TextSearch(NamedTuple):
    """A full-text search's checked arguments, as every backend's search_text needs them."""

    kind: type[Record]
    fields: dict[str, float]
    terms: list[str]
    k: int


def prepare_search(kind: Any, query: str, k: int, fields: Sequence[str] | None) -> TextSearch:
    """Check a search_text call's arguments once, in the order every backend reports them."""
    kind = codec.record_kind(kind)
    return TextSearch(kind, chosen_fields(kind, fields), query_words(query), check_limit(k))


class ScanScorer:
    """BM25 (k1=1.2, b=0.75) over records streamed in: the fallback of servers without full text.

    Field scores are summed with the fields' weights; each field has its own length norm.
    `collection` is the number of records searched when only candidates are added (a server's
    index chose them); by default every record searched is added.
    """

    def __init__(self, fields: dict[str, float], terms: Sequence[str], k: int, collection: int = 0):
        self.fields, self.terms, self.k = fields, set(terms), k
        self.collection = collection
        self.rows: list[tuple[Any, dict[str, Counter[str]], dict[str, int]]] = []
        self.df: Counter[tuple[str, str]] = Counter()
        self.lengths = dict.fromkeys(fields, 0)

    def add(self, records: Iterable[Record]) -> None:
        for record in records:
            self.add_text(record, {name: field_text(record, name) for name in self.fields})

    def add_text(self, key: Any, texts: dict[str, str]) -> None:
        """One record's fields as text, under the key best() returns for it."""
        counts, sizes = {}, {}
        for name in self.fields:
            tokens = words(texts.get(name) or "")
            sizes[name] = len(tokens)
            self.lengths[name] += len(tokens)
            counts[name] = Counter(t for t in tokens if t in self.terms)
            for term in counts[name]:
                self.df[(name, term)] += 1
        # a record matching nothing is kept for the length norm only
        self.rows.append((key, counts if any(counts.values()) else {}, sizes))

    def best(self) -> list[tuple[Any, float]]:
        seen = len(self.rows)
        if not seen:
            return []
        n = max(seen, self.collection)
        scored: list[tuple[Any, float]] = []
        for key, counts, sizes in self.rows:
            if not counts:
                continue
            score = 0.0
            for name, weight in self.fields.items():
                average = (self.lengths[name] / seen) or 1.0
                for term, tf in counts[name].items():
                    df = self.df[(name, term)]
                    idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                    norm = tf + 1.2 * (1 - 0.75 + 0.75 * sizes[name] / average)
                    score += weight * idf * tf * 2.2 / norm
            if score > 0:
                scored.append((key, score))
        scored.sort(key=lambda pair: (-pair[1], getattr(pair[0], "id", pair[0])))
        return scored[: self.k]


def rank_postings(
    postings: Iterable[tuple[str, str, str, int, int]],
    fields: dict[str, float],
    k: int,
    collection: int,
) -> list[tuple[str, float]]:
    """BM25 (as ScanScorer) from a word index: (id, field, term, tf, field length) rows of the
    records holding a query word, out of `collection` records searched.

    A field's average length is taken over the records that hold a query word in it.
    """
    matched: dict[str, dict[str, tuple[int, dict[str, int]]]] = {}
    df: Counter[tuple[str, str]] = Counter()
    for key, field, term, tf, length in postings:
        if field not in fields:
            continue
        by_field = matched.setdefault(key, {})
        size, counts = by_field.setdefault(field, (int(length), {}))
        counts[term] = int(tf)
        df[(field, term)] += 1
    if not matched:
        return []
    n = max(collection, len(matched))
    totals: Counter[str] = Counter()
    holders: Counter[str] = Counter()
    for by_field in matched.values():
        for field, (size, _) in by_field.items():
            totals[field] += size
            holders[field] += 1
    scored: list[tuple[str, float]] = []
    for key, by_field in matched.items():
        score = 0.0
        for field, (size, counts) in by_field.items():
            average = (totals[field] / holders[field]) or 1.0
            for term, tf in counts.items():
                d = df[(field, term)]
                idf = math.log(1.0 + (n - d + 0.5) / (d + 0.5))
                norm = tf + 1.2 * (1 - 0.75 + 0.75 * size / average)
                score += fields[field] * idf * tf * 2.2 / norm
        if score > 0:
            scored.append((key, score))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:k]
