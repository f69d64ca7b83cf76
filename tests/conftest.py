"""Shared fixtures: the scripted LLM server and workspaces on the sample corpus."""

import importlib.util

pytest_plugins = [
    name
    for name in ("tests.support.llm_fixtures", "tests.support.workspace_fixtures")
    if importlib.util.find_spec(name) is not None
]
