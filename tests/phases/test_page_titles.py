"""No two pages of one title: topics and overviews named like another page are titled apart."""

from __future__ import annotations

from compendium.phases.page_titles import titles_apart
from compendium.phases.planning import Subject


def subject(id_: str, title: str, kind: str = "topic") -> Subject:
    return Subject(id=id_, title=title, kind=kind)


def test_topics_and_overviews_named_like_a_page_are_titled_apart_entities_keep_their_names():
    subjects = [
        subject("e1", "Storage Engine", "entity"), subject("c1", "checkpoint", "concept"),
        subject("t1", "Storage Engine"),  # the community around the entity
        subject("o1", "Storage Engine"),  # the outline node of the document about it
        subject("o2", "Special method names"), subject("o3", "Special method names"),
        subject("o4", "Special method names"), subject("t2", "Checkpoint"),
    ]
    parents = {"o1": "Storage", "o2": "Data model", "o3": "Data model", "o4": "Data model"}
    titles_apart(subjects, parents)
    titles = [s.title for s in subjects]
    assert titles == [
        "Storage Engine", "checkpoint", "Storage Engine topic", "Storage Engine overview",
        "Special method names", "Special method names overview", "Special method names (Data model)",
        "Checkpoint topic",
    ]
    assert len({t.casefold() for t in titles}) == len(titles)


def test_a_clash_left_after_every_other_name_is_numbered():
    subjects = [subject("e1", "Index", "entity"), subject("o1", "Index"), subject("o2", "Index"), subject("o3", "Index")]
    titles_apart(subjects, {"o1": "", "o2": "", "o3": "index"})  # a root; a node under its namesake
    assert [s.title for s in subjects] == ["Index", "Index overview", "Index overview 2", "Index overview 3"]
