"""Settings: compendium.yaml < COMPENDIUM_* environment < overrides; secrets never in the file."""

from __future__ import annotations

import pytest

from compendium.errors import ConfigError, WorkspaceError
from compendium.settings import load_groups, load_settings
from compendium.workspace import init_workspace


@pytest.fixture
def workspace(tmp_path):
    return init_workspace(tmp_path / "ws")


def configure(workspace, text):
    (workspace / "compendium.yaml").write_text(text, encoding="utf-8")


def test_fresh_workspace_is_offline_with_sqlite_store(workspace):
    s = load_settings(workspace, env={})
    assert s.offline and s.embedding.base_url is None
    assert s.store_url == f"sqlite:///{workspace}/.compendium/store.db"
    assert (s.workspace, s.knowledge_base, s.default_template) == (workspace, "default", "wiki")


def test_no_workspace_uses_defaults_and_environment():
    s = load_settings(None, env={"COMPENDIUM_LLM_MODEL": "m"})
    assert s.llm.model == "m" and s.workspace is None and s.store_url == ""


def test_yaml_values_are_read(workspace):
    configure(
        workspace,
        "knowledge_base: docs\ndefault_template: topics\ntoken_budget: 5000\n"
        "llm:\n  base_url: http://127.0.0.1:8000/v1\n  model: small\n  timeout: 9\n"
        "  requests_per_minute: 60\n  price_per_1k_prompt: 0.5\n"
        "embedding:\n  base_url: http://127.0.0.1:8001/v1\n  model: emb\n  batch_size: 16\n",
    )
    s = load_settings(workspace, env={})
    assert (s.knowledge_base, s.default_template, s.token_budget) == ("docs", "topics", 5000)
    assert (s.llm.base_url, s.llm.model, s.llm.timeout) == (
        "http://127.0.0.1:8000/v1",
        "small",
        9.0,
    )
    assert (s.llm.requests_per_minute, s.llm.price_per_1k_prompt) == (60, 0.5)
    assert (s.embedding.model, s.embedding.batch_size) == ("emb", 16)
    assert s.llm.max_retries == 5  # unspecified keys keep their defaults
    assert not s.offline


def test_precedence_yaml_then_environment_then_overrides(workspace):
    configure(
        workspace,
        "store: sqlite:////tmp/yaml.db\nllm:\n  model: from-yaml\n  base_url: http://yaml\n",
    )
    env = {"COMPENDIUM_LLM_MODEL": "from-env", "COMPENDIUM_STORE": "elasticsearch://127.0.0.1:9200"}
    s = load_settings(workspace, env=env)
    assert (s.llm.model, s.llm.base_url) == ("from-env", "http://yaml")
    assert s.store_url == "elasticsearch://127.0.0.1:9200"
    s = load_settings(
        workspace,
        env=env,
        overrides={"llm.model": "from-flag", "llm": {"base_url": "http://flag"}, "store": None},
    )
    assert (s.llm.model, s.llm.base_url) == ("from-flag", "http://flag")
    assert s.store_url == "elasticsearch://127.0.0.1:9200"  # a None override changes nothing


def test_every_documented_environment_variable(workspace):
    env = {
        "COMPENDIUM_LLM_BASE_URL": "http://llm",
        "COMPENDIUM_LLM_API_KEY": "k1",
        "COMPENDIUM_LLM_MODEL": "m1",
        "COMPENDIUM_EMBED_BASE_URL": "http://emb",
        "COMPENDIUM_EMBED_API_KEY": "k2",
        "COMPENDIUM_EMBED_MODEL": "m2",
        "COMPENDIUM_STORE": "mysql://127.0.0.1:4000/c",
    }
    s = load_settings(workspace, env=env)
    assert (s.llm.base_url, s.llm.api_key, s.llm.model) == ("http://llm", "k1", "m1")
    assert (s.embedding.base_url, s.embedding.api_key, s.embedding.model) == (
        "http://emb",
        "k2",
        "m2",
    )
    assert s.store_url == "mysql://127.0.0.1:4000/c"


def test_variable_substitution(workspace):
    configure(
        workspace,
        "knowledge_base: ${KB}\nllm:\n  base_url: http://${HOST:-127.0.0.1}:8000/v1\n"
        "  model: literal-$${NOT_A_VAR}\ntoken_budget: ${BUDGET}\n",
    )
    s = load_settings(workspace, env={"KB": "team", "BUDGET": "1200"})
    assert (s.knowledge_base, s.token_budget) == ("team", 1200)
    assert s.llm.base_url == "http://127.0.0.1:8000/v1"
    assert s.llm.model == "literal-${NOT_A_VAR}"
    assert (
        load_settings(workspace, env={"KB": "t", "BUDGET": "1", "HOST": "h"}).llm.base_url
        == "http://h:8000/v1"
    )


def test_missing_variable_names_file_line_and_variable(workspace):
    configure(workspace, "knowledge_base: kb\nllm:\n  base_url: ${LLM_URL}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(workspace, env={})
    assert str(info.value).startswith(
        f"{workspace}/compendium.yaml:3: llm.base_url: ${{LLM_URL}} is not set"
    )


def test_api_key_is_read_from_the_named_variable(workspace):
    configure(workspace, "llm:\n  base_url: http://127.0.0.1:1/v1\n  api_key_env: TEAM_KEY\n")
    s = load_settings(workspace, env={"TEAM_KEY": "sk-secret-123"})
    assert s.llm.api_key == "sk-secret-123"
    # the direct variable wins over the named one
    s = load_settings(workspace, env={"TEAM_KEY": "a", "COMPENDIUM_LLM_API_KEY": "b"})
    assert s.llm.api_key == "b"


def test_named_key_variable_missing_is_an_error_when_online(workspace):
    configure(workspace, "llm:\n  base_url: http://127.0.0.1:1/v1\n  api_key_env: TEAM_KEY\n")
    with pytest.raises(ConfigError, match=r"llm\.api_key_env names TEAM_KEY, which is not set"):
        load_settings(workspace, env={})


@pytest.mark.parametrize("section", ["llm", "embedding"])
def test_literal_api_key_in_yaml_is_rejected(workspace, section):
    configure(workspace, f"knowledge_base: kb\n{section}:\n  model: m\n  api_key: sk-leaked\n")
    with pytest.raises(ConfigError) as info:
        load_settings(workspace, env={})
    message = str(info.value)
    assert message.startswith(f"{workspace}/compendium.yaml:4: {section}.api_key: ")
    assert "api_key_env" in message and "sk-leaked" not in message


def test_keys_never_appear_in_repr(workspace):
    env = {"COMPENDIUM_LLM_API_KEY": "sk-llm-999", "COMPENDIUM_EMBED_API_KEY": "sk-emb-888"}
    s = load_settings(workspace, env=env)
    assert s.llm.api_key == "sk-llm-999"
    for text in (repr(s), str(s), repr(s.llm), repr(s.embedding)):
        assert "sk-llm-999" not in text and "sk-emb-888" not in text


@pytest.mark.parametrize(
    ("text", "line", "key", "says"),
    [
        (
            "knowledge_base: kb\nllm:\n  modle: x\n",
            3,
            "llm.modle",
            "unknown key (valid keys: base_url, model",
        ),
        ("knowlege_base: kb\n", 1, "knowlege_base", "unknown key"),
        ("llm:\n  timeout: 0\n", 2, "llm.timeout", "must be > 0"),
        ("embedding:\n  batch_size: many\n", 2, "embedding.batch_size", "must be an integer"),
        ("token_budget: -5\n", 1, "token_budget", "must be ≥ 1"),
        ("llm:\n  api_key_env: not a name\n", 2, "llm.api_key_env", "must match"),
        ("llm: [1, 2]\n", 1, "llm", "must be a mapping"),
    ],
)
def test_bad_settings_name_file_line_and_key(workspace, text, line, key, says):
    configure(workspace, text)
    with pytest.raises(ConfigError) as info:
        load_settings(workspace, env={})
    assert str(info.value).startswith(f"{workspace}/compendium.yaml:{line}: {key}: ")
    assert says in str(info.value)


def test_yaml_syntax_error_in_settings(workspace):
    configure(workspace, "llm:\n  model: [x\n")
    with pytest.raises(ConfigError, match=r"compendium.yaml:3: YAML syntax error"):
        load_settings(workspace, env={})


def test_bad_environment_and_override_values_name_their_source(workspace):
    with pytest.raises(ConfigError, match=r"override llm\.timeout"):
        load_settings(workspace, env={}, overrides={"llm.timeout": "soon"})
    with pytest.raises(ConfigError, match=r"unknown setting 'llm\.modle'"):
        load_settings(workspace, env={}, overrides={"llm.modle": "x"})


def test_relative_sqlite_store_is_inside_the_workspace(workspace):
    configure(workspace, "store: sqlite:///data/kb.db\n")
    assert load_settings(workspace, env={}).store_url == f"sqlite:///{workspace}/data/kb.db"


def test_missing_settings_file(tmp_path):
    with pytest.raises(WorkspaceError, match=r"no compendium\.yaml"):
        load_settings(tmp_path, env={})


def test_groups_are_loaded_and_checked(workspace):
    (workspace / "templates" / "mine.yaml").write_text("name: mine\n", encoding="utf-8")
    configure(
        workspace,
        "groups:\n  - template: mine\n    include: ['specs/**']\n  - template: topics\n    include: ['*.pdf']\n",
    )
    groups = load_groups(workspace)
    assert [g.template for g in groups] == ["mine", "topics"]
    assert groups[0].matches("specs/a.md")
    configure(workspace, "groups:\n  - template: mine\n  - template: wikki\n")
    with pytest.raises(
        ConfigError, match=r"compendium.yaml:3: groups\[1\].template: unknown template 'wikki'"
    ):
        load_groups(workspace)
    configure(workspace, "groups:\n  - template: mine\n    exlude: ['x']\n")
    with pytest.raises(ConfigError, match=r"compendium.yaml:3: groups\[0\].exlude: unknown key"):
        load_settings(workspace, env={})


def test_default_config_written_by_init_has_no_groups(workspace):
    assert load_groups(workspace) == []
