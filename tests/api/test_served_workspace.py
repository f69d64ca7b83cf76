"""`compendium serve` in a workspace serves that workspace: a key made there opens the knowledge
base the CLI compiled, and compiles started through the API use the CLI's store and lease."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import uuid

import pytest

from compendium.cli import main
from compendium.compiler.exclusive import acquire
from compendium.compiler.jobs import FINISHED
from compendium.compiler.leases import worker_name
from compendium.settings import load_settings
from compendium.storage.factory import open_store
from compendium.storage.records import RECORD_TYPES, ApiKey, Job, KnowledgeBase, Tenant
from compendium.tenancy import SYSTEM_SCOPE, WorkspaceLink, system_store

from .conftest import SAMPLE_CORPUS


@pytest.fixture
def compiled_workspace(tmp_path, monkeypatch):
    """A workspace compiled by the CLI (offline), as a user leaves it."""
    for name in ("COMPENDIUM_STORE", "COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    assert main(["-w", str(ws), "compile", "--plain"]) == 0
    return ws


async def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(argv))  # main() runs its own event loop
    out, err = capsys.readouterr()
    return code, out, err


async def wait_for(api, key, job_id):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = (await api.client.get(f"/jobs/{job_id}", headers=api.as_(key))).json()
        if job["status"] in FINISHED:
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("the compile did not finish")


async def test_a_key_made_in_a_workspace_opens_the_knowledge_base_the_cli_compiled(
        compiled_workspace, make_api, capsys):
    ws = compiled_workspace
    code, out, err = await cli(capsys, "-w", str(ws), "keys", "create")
    assert code == 0, err
    key = out.strip()
    assert "tenant 'local'" in err and "compendium serve" in err
    cli_pages = int(next(line for line in (await cli(capsys, "-w", str(ws), "status"))[1].splitlines()
                         if line.startswith("Compiled:")).split()[1])

    async with make_api(load_settings(ws), data_dir=ws) as api:
        kbs = (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"]
        assert [(kb["name"], kb["workspace"]) for kb in kbs] == [("default", str(ws.resolve()))]
        pages = (await api.client.get("/knowledge-bases/default/pages?limit=500", headers=api.as_(key))).json()
        assert len(pages["items"]) == cli_pages > 0
        status = (await api.client.get("/knowledge-bases/default/status", headers=api.as_(key))).json()
        assert status["last_compile"]["status"] == "succeeded"  # the CLI's compile, seen by the server
        docs = (await api.client.get("/knowledge-bases/default/documents", headers=api.as_(key))).json()["items"]
        assert docs and {d["status"] for d in docs} == {"compiled"}

        # An edit in the workspace shows as changed; a compile through the API reads it, in the
        # same store scope as the CLI (only the edited document's pages can change).
        edited = ws / "documents" / "storage" / "toast.md"
        edited.write_text(edited.read_text() + "\n\nTOAST keeps large values out of line.\n")
        docs = (await api.client.get("/knowledge-bases/default/documents", headers=api.as_(key))).json()["items"]
        assert {d["path"]: d["status"] for d in docs}["storage/toast.md"] == "changed"
        job = (await api.client.post("/knowledge-bases/default/compile", headers=api.as_(key))).json()
        done = await wait_for(api, key, job["id"])
        assert done["status"] == "succeeded", done
        assert done["report"]["pages"]["unchanged"] > 0 and done["report"]["documents"] == len(docs)

    # The CLI sees the server's compile as the workspace's last one.
    code, out, _ = await cli(capsys, "-w", str(ws), "status")
    assert code == 0
    assert f"{done['report']['pages']['unchanged']} unchanged" in out


async def test_a_compile_from_the_api_waits_for_no_one_while_the_cli_holds_the_lease(
        compiled_workspace, make_api, capsys):
    ws = compiled_workspace
    key = (await cli(capsys, "-w", str(ws), "keys", "create", "--tenant", "team"))[1].strip()
    async with make_api(load_settings(ws), data_dir=ws) as api:
        # A `compendium compile` of this workspace holds the lease (this process stands in for it).
        await acquire(api.store.for_kb("default"), knowledge_base="default", template="wiki",
                      worker=worker_name(), wait=False, lease_seconds=30, poll_seconds=0.1)
        job = (await api.client.post("/knowledge-bases/default/compile", headers=api.as_(key))).json()
        done = await wait_for(api, key, job["id"])
    assert done["status"] == "failed"
    assert "another compile of knowledge base 'default'" in done["error"]


async def test_a_server_data_dir_is_still_a_server_of_tenants(compiled_workspace, make_api, tmp_path, capsys):
    data = tmp_path / "server"
    code, _, err = await cli(capsys, "-w", str(compiled_workspace), "keys", "create", "--data-dir", str(data))
    assert code == 2 and "--tenant" in err  # no workspace to default to: say what is missing
    key = (await cli(capsys, "keys", "create", "--tenant", "acme", "--data-dir", str(data)))[1].strip()
    async with make_api(run_worker=False, data_dir=data) as api:
        assert (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"] == []
        r = await api.client.post("/knowledge-bases", json={"name": "handbook"}, headers=api.as_(key))
        assert r.status_code == 201 and r.json()["workspace"] is None
    assert (data / "kbs" / "acme" / "handbook" / "documents").is_dir()


async def test_removing_the_workspace_knowledge_base_from_the_server_keeps_the_workspace(
        compiled_workspace, make_api, capsys):
    ws = compiled_workspace
    key = (await cli(capsys, "-w", str(ws), "keys", "create"))[1].strip()
    async with make_api(load_settings(ws), data_dir=ws, run_worker=False) as api:
        r = await api.client.delete("/knowledge-bases/default", headers=api.as_(key))
        assert r.status_code == 204
        assert (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"] == []
    assert (ws / "documents" / "storage" / "toast.md").is_file()
    code, out, _ = await cli(capsys, "-w", str(ws), "status")
    assert code == 0 and "Last compile:   succeeded" in out


async def test_serve_gives_the_workspace_to_keys_made_there_before(compiled_workspace, make_api, capsys):
    """A key made in the workspace without the link (an older release, or --data-dir pointing at
    the workspace itself) opens the knowledge base once `compendium serve` starts there."""
    ws = compiled_workspace
    key = (await cli(capsys, "keys", "create", "--tenant", "early", "--data-dir", str(ws)))[1].strip()
    link = WorkspaceLink(folder=ws.resolve(), knowledge_base="default", default_template="wiki", own_store=True)
    async with make_api(load_settings(ws), data_dir=ws, run_worker=False) as api:
        kbs = (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"]
        assert kbs == []  # served as a data folder: no workspace
    async with make_api(load_settings(ws), data_dir=ws, run_worker=False, workspace=link) as api:
        kbs = (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"]
        assert [kb["name"] for kb in kbs] == ["default"]


async def test_the_workspace_settings_stay_in_its_compendium_yaml(compiled_workspace, make_api, capsys):
    ws = compiled_workspace
    key = (await cli(capsys, "-w", str(ws), "keys", "create"))[1].strip()
    async with make_api(load_settings(ws), data_dir=ws, run_worker=False) as api:
        for body in ({"default_template": "topics"}, {"token_budget": 1000}):
            r = await api.client.patch("/knowledge-bases/default", json=body, headers=api.as_(key))
            assert r.status_code == 422, r.text
            error = r.json()["error"]
            assert error["field"] == next(iter(body)) and f"{ws.resolve()}/compendium.yaml" in error["message"]
        r = await api.client.patch("/knowledge-bases/default", json={"description": "our handbook"},
                                   headers=api.as_(key))
        assert r.status_code == 200 and r.json()["description"] == "our handbook"


async def test_a_knowledge_base_name_the_server_cannot_use_is_named_in_compendium_yaml(
        compiled_workspace, capsys):
    ws = compiled_workspace
    config = ws / "compendium.yaml"
    config.write_text(config.read_text().replace("knowledge_base: default", "knowledge_base: Our Handbook"))
    code, _, err = await cli(capsys, "-w", str(ws), "keys", "create")
    assert code == 2
    assert str(config) in err and "'Our Handbook'" in err


MYSQL_URL = os.environ.get("COMPENDIUM_TEST_MYSQL_URL", "")


@pytest.mark.skipif(not MYSQL_URL, reason="COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server")
async def test_a_workspace_on_mariadb_is_served_and_compiled_through_the_cli_lease(tmp_path, make_api, capsys,
                                                                                    monkeypatch):
    """The same with the workspace's store on MariaDB, whose leases are confirmed after a pause."""
    for name in ("COMPENDIUM_STORE", "COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    name, tenant = f"ws-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}"
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    config = ws / "compendium.yaml"
    config.write_text(config.read_text().replace("knowledge_base: default", f"knowledge_base: {name}")
                      + f"\nstore: {MYSQL_URL}\n")
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    store = await open_store(MYSQL_URL, SYSTEM_SCOPE)
    try:
        assert (await cli(capsys, "-w", str(ws), "compile", "--plain"))[0] == 0
        key = (await cli(capsys, "-w", str(ws), "keys", "create", "--tenant", tenant))[1].strip()
        async with make_api(load_settings(ws), data_dir=ws) as api:
            kbs = (await api.client.get("/knowledge-bases", headers=api.as_(key))).json()["items"]
            assert [kb["name"] for kb in kbs] == [name]
            job = (await api.client.post(f"/knowledge-bases/{name}/compile", headers=api.as_(key))).json()
            done = await wait_for(api, key, job["id"])
        assert done["status"] == "succeeded", done
        assert done["report"]["pages"]["created"] == 0 and done["report"]["pages"]["unchanged"] > 0
    finally:
        for kind in RECORD_TYPES.values():
            await store.for_kb(name).delete(kind, {})
        system = system_store(store)
        for kind, where in ((Job, {"knowledge_base": name}), (KnowledgeBase, {"tenant": tenant}),
                            (ApiKey, {"tenant": tenant}), (Tenant, {"id": tenant})):
            await system.delete(kind, where)
        await store.close()


async def test_a_document_the_last_compile_could_not_read_is_listed_as_failed_with_why(
        compiled_workspace, make_api, capsys):
    ws = compiled_workspace
    (ws / "documents" / "broken.pdf").write_bytes(b"%PDF-1.4\nthe rest is lost\n")
    assert (await cli(capsys, "-w", str(ws), "compile", "--plain"))[0] == 8  # partial
    key = (await cli(capsys, "-w", str(ws), "keys", "create"))[1].strip()
    async with make_api(load_settings(ws), data_dir=ws, run_worker=False) as api:
        doc = (await api.client.get("/knowledge-bases/default/documents/broken.pdf", headers=api.as_(key))).json()
        assert doc["status"] == "failed" and "PDF" in doc["error"] and str(ws) not in doc["error"]
        # Replaced since: it is new again until a compile reads it.
        replaced = ws / "documents" / "broken.pdf"
        replaced.write_bytes(b"%PDF-1.4\nstill lost, but newer\n")
        later = time.time() + 5  # past the compile's end whatever the clock's resolution
        os.utime(replaced, (later, later))
        doc = (await api.client.get("/knowledge-bases/default/documents/broken.pdf", headers=api.as_(key))).json()
        assert doc["status"] == "new" and doc["error"] == ""
