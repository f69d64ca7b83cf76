"""In LLM mode each outline node's overview page is one REFINE call: no naming call of its own,
and its title comes from the authors' structure."""

from __future__ import annotations

from pathlib import Path

from compendium.outline import OutlineNode
from compendium.storage.records import Page, Topic
from tests.e2e.conftest import compile_in_process, new_workspace, read_store
from tests.support.llm_server import LLMServer

from .test_outline_exports import _stored


def test_each_node_overview_is_one_refine_call_and_costs_no_naming_call(tmp_path: Path):
    workspace = new_workspace(tmp_path / "ws")
    builtin = Path(__file__).parents[2] / "compendium" / "templates" / "builtin" / "wiki.yaml"
    text = builtin.read_text(encoding="utf-8").replace("name: wiki\n", "name: mapped\n", 1)
    (workspace / "templates").mkdir(exist_ok=True)
    (workspace / "templates" / "mapped.yaml").write_text(text, encoding="utf-8")
    config = workspace / "compendium.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("default_template: wiki", "default_template: mapped"))
    with LLMServer() as server:
        report = compile_in_process(workspace, server)
        requests = list(server.requests)
        server.reset()
        again = compile_in_process(workspace, server)
        # Nothing changed: the outline keeps its nodes and their pages, at no cost.
        assert server.calls["chat"] == 0 and again["pages"]["updated"] == again["pages"]["created"] == 0
    pages, topics = read_store(workspace, Page, Topic)
    roots = [OutlineNode.from_dict(d) for d in _stored(workspace)["roots"]]
    nodes = [n for r in roots for n, _d in r.walk()]
    assert nodes and all(n.slug for n in nodes)
    written = [r for r in requests if (r.response_format or {}).get("type", "text") == "text"]
    active = [p for p in pages if p.status == "active"]
    # One writing call per page (no retries were needed from this server) ...
    assert len(written) == report["pages"]["created"] == len(active)
    # ... and the only naming calls are the flat topics': the outline names its nodes itself.
    assert sum(1 for r in requests if r.schema_name == "topic") <= len(topics)
    by_slug = {p.slug: p for p in active}
    for node in nodes:
        overview = by_slug[node.slug]
        assert overview.title == node.title  # its own topic page, or the page it is named like
        assert overview.cited_chunks  # a cited overview
