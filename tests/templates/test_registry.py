"""Finding templates: workspace first, then built-ins; clear errors for unknown names."""

from __future__ import annotations

import pytest

from compendium.errors import TemplateError
from compendium.templates.registry import (
    list_templates,
    load_template,
    show_template,
    validate_template_file,
)


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "templates").mkdir()
    return tmp_path


def write(workspace, name, text):
    path = workspace / "templates" / name
    path.write_text(text, encoding="utf-8")
    return path


def test_builtin_by_name_without_workspace():
    assert load_template("wiki").name == "wiki"


def test_workspace_template_comes_before_builtin(workspace):
    write(workspace, "wiki.yaml", "name: wiki\nversion: 7\nartifacts: [entity_graph]\n")
    assert load_template("wiki", workspace=workspace).version == 7
    assert load_template("wiki").version == 1  # other workspaces still see the built-in


def test_workspace_only_template_and_yml_suffix(workspace):
    write(workspace, "notes.yml", "description: my notes\n")
    assert load_template("notes", workspace=workspace).description == "my notes"


def test_path_is_loaded_as_a_file(workspace):
    path = write(workspace, "other.yaml", "name: other\n")
    assert load_template(str(path)).name == "other"
    with pytest.raises(TemplateError, match="may not contain"):
        load_template(str(path), allow_paths=False)
    with pytest.raises(TemplateError, match="may not contain"):
        load_template("../../etc/passwd", workspace=workspace, allow_paths=False)


def test_unknown_name_lists_available_and_says_how_to_add(workspace):
    write(workspace, "mine.yaml", "name: mine\n")
    with pytest.raises(TemplateError) as info:
        load_template("wikki", workspace=workspace)
    message = str(info.value)
    assert "unknown template 'wikki'" in message
    assert "available: entity-graph, mine, topics, wiki" in message
    assert "templates/NAME.yaml" in message


def test_name_and_file_name_must_agree(workspace):
    write(workspace, "alpha.yaml", "name: beta\n")
    with pytest.raises(TemplateError, match="declares name 'beta'"):
        load_template("alpha", workspace=workspace)


def test_invalid_workspace_template_error_names_its_file(workspace):
    path = write(workspace, "bad.yaml", "name: bad\nmap:\n  batch: 3\n")
    with pytest.raises(TemplateError, match=rf"^{path}:3: map.batch: unknown key"):
        load_template("bad", workspace=workspace)
    with pytest.raises(TemplateError, match=rf"^{path}:3"):
        validate_template_file(path)


def test_list_templates(workspace):
    write(workspace, "wiki.yaml", "name: wiki\nversion: 2\ndescription: ours\n")
    write(workspace, "broken.yaml", "name: broken\nnope: 1\n")
    infos = {i.name: i for i in list_templates(workspace)}
    assert sorted(infos) == ["broken", "entity-graph", "topics", "wiki"]
    assert (infos["wiki"].version, infos["wiki"].description) == (2, "ours")
    assert infos["wiki"].source.endswith("wiki.yaml")
    assert infos["topics"].source == "builtin" and infos["topics"].error is None
    assert infos["broken"].error and "nope: unknown key" in infos["broken"].error
    assert [i.name for i in list_templates(None)] == ["entity-graph", "topics", "wiki"]


def test_show_template_returns_the_yaml_as_written(workspace):
    assert show_template("wiki").startswith("# Built-in template")
    write(workspace, "mine.yaml", "# my comment\nname: mine\n")
    assert show_template("mine", workspace) == "# my comment\nname: mine\n"
    with pytest.raises(TemplateError, match="unknown template"):
        show_template("nothing", workspace)
