"""Template groups: which template compiles which document."""

from __future__ import annotations

import pytest

from compendium.errors import ConfigError
from compendium.templates.groups import TemplateGroup, documents_for, parse_groups, template_for
from compendium.templates.loader import read_yaml

GROUPS = [
    TemplateGroup(template="entity-graph", include=["specs/**"], exclude=["specs/drafts/**"]),
    TemplateGroup(template="topics", include=["*.pdf", "notes/*.md"]),
    TemplateGroup(template="drafts", include=["specs/**"]),  # gets what the first excludes
]
PATHS = [
    "readme.md",
    "specs/api.md",
    "specs/v2/storage.md",
    "specs/drafts/idea.md",
    "papers/2021/raft.pdf",
    "notes/a.md",
    "notes/deep/b.md",
]


def test_first_matching_group_wins_and_default_otherwise():
    assert [template_for(p, GROUPS, "wiki") for p in PATHS] == [
        "wiki",
        "entity-graph",
        "entity-graph",
        "drafts",  # excluded from the first group: the next matching group takes it
        "topics",  # a pattern without '/' matches the file name at any depth
        "topics",
        "wiki",  # '*' stays within one folder
    ]


def test_documents_for_partitions_paths():
    chosen = {
        name: documents_for(name, PATHS, GROUPS, "wiki")
        for name in ("wiki", "entity-graph", "topics", "drafts")
    }
    assert chosen["entity-graph"] == ["specs/api.md", "specs/v2/storage.md"]
    assert chosen["drafts"] == ["specs/drafts/idea.md"]
    assert sorted(p for paths in chosen.values() for p in paths) == sorted(PATHS)


def test_no_groups_means_default_for_everything():
    assert documents_for("wiki", PATHS, [], "wiki") == PATHS


def test_windows_and_dot_paths_are_normalised():
    assert template_for("specs\\api.md", GROUPS, "wiki") == "entity-graph"
    assert template_for("./specs/api.md", GROUPS, "wiki") == "entity-graph"


def test_group_entries_are_validated_with_lines():
    text = "groups:\n  - template: wiki\n    include: ['a/**']\n  - template: topics\n    includes: ['b']\n"
    doc = read_yaml(text, source="compendium.yaml")
    with pytest.raises(ConfigError, match=r"^compendium.yaml:5: groups\[1\].includes: unknown key"):
        parse_groups(doc.data["groups"], doc)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("groups:\n  - include: ['a']\n", 2, "groups[0].template: required key is missing"),
        ("groups:\n  - template: wiki\n    include: []\n", 3, "groups[0].include"),
        ("groups:\n  - template: wiki\n    include: ['  ']\n", 3, "a glob may not be empty"),
        ("groups: wiki\n", 1, "must be a list"),
    ],
)
def test_bad_groups(text, line, says):
    doc = read_yaml(text, source="compendium.yaml")
    with pytest.raises(ConfigError) as info:
        parse_groups(doc.data["groups"], doc)
    assert str(info.value).startswith(f"compendium.yaml:{line}: ")
    assert says in str(info.value)
