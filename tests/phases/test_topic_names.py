"""Topics named all at once get the titles naming them one after another gives: distinct, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from compendium.engines.offline.topics import name_topic
from compendium.engines.tasks import EntitySketch, TopicRequest
from compendium.phases.topic_names import Name, distinct_names


def _request(members: list[str], headings: list[tuple[str, int]]) -> TopicRequest:
    return TopicRequest(members=[EntitySketch(name=m, type="component") for m in members], headings=headings)


# Several communities sit under the same headings: the offline namer passes over a taken one.
REQUESTS = [
    _request(["Checkpointer", "Buffer pool", "Page cache"], [("Storage engine", 3), ("Write path", 3)]),
    _request(["Write-ahead log", "Log writer", "Fsync"], [("Storage engine", 3), ("Write path", 3)]),
    _request(["Query planner", "Cost model", "Statistics"], [("Query engine", 3)]),
    _request(["Redo", "Undo", "Recovery manager"], [("Storage engine", 3), ("Write path", 3)]),
    _request(["Parser", "Lexer", "Grammar"], [("Query engine", 3)]),
]


def _offline(i: int, taken: Sequence[str]) -> Name:
    request = REQUESTS[i]
    request.taken_titles = list(taken)
    reply = name_topic(request)
    return Name(reply.title, reply.summary)


def _in_turn(known: Sequence[str | None]) -> list[str]:
    """The titles asking each topic in turn, with the titles before it taken, gives."""
    used: list[str] = []
    for i, title in enumerate(known):
        used.append(title if title is not None else _offline(i, list(used)).title)
    return used


def test_titles_asked_at_once_are_those_asked_in_turn_and_distinct():
    asked: list[tuple[int, tuple[str, ...]]] = []

    async def namer(i: int, taken: Sequence[str]) -> Name:
        asked.append((i, tuple(taken)))
        await asyncio.sleep(0)
        return _offline(i, taken)

    known: list[str | None] = [None, None, "Query engine", None, None]  # topic 2 keeps a stored title
    names = asyncio.run(distinct_names(known, namer, concurrency=8))

    titles = [n.title if n is not None else known[i] for i, n in enumerate(names)]
    assert titles == _in_turn(known)
    assert len({t.lower() for t in titles}) == len(titles)  # type: ignore[union-attr]
    assert names[2] is None  # a kept title is not asked for
    # Each topic was asked once with nothing taken; only those whose answer was taken again.
    assert sorted(i for i, taken in asked if not taken) == [0, 1, 3, 4]
    assert sorted(i for i, taken in asked if taken) == [1, 3, 4]


def test_the_first_answers_are_asked_together_up_to_the_bound():
    in_flight, most = 0, 0

    async def namer(i: int, taken: Sequence[str]) -> Name:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return Name(f"Topic {i}", "")

    names = asyncio.run(distinct_names([None] * 7, namer, concurrency=3))

    assert [n.title for n in names if n] == [f"Topic {i}" for i in range(7)]
    assert most == 3


def test_a_failed_naming_is_not_asked_again_even_when_its_stand_in_is_taken():
    asked: list[int] = []

    async def namer(i: int, taken: Sequence[str]) -> Name:
        asked.append(i)
        return Name("Storage engine", None if i == 1 else "summary")

    names = asyncio.run(distinct_names([None, None], namer, concurrency=2))

    assert [n.title for n in names if n] == ["Storage engine", "Storage engine"]
    assert sorted(asked) == [0, 1]


def test_a_parameter_or_a_value_names_no_topic_even_when_most_claims_name_it():
    request = TopicRequest(
        members=[EntitySketch(name="src", type="concept"), EntitySketch(name="Conversion", type="component")],
        claims=["`src`: the binary to convert", "`src`: the hexadecimal string to convert",
                "`src`: the int to convert", "Conversion converts `src` with endianness awareness."])
    reply = name_topic(request)
    assert reply.title == "Conversion"
    assert reply.summary.startswith("Conversion: Conversion and src")
