"""Compile jobs: one at a time per knowledge base and template, cancellable with nothing
half-written, taken over when a worker dies, stopped by the token budget, fired by schedules."""

from __future__ import annotations

import asyncio
import time

import pytest

from compendium.compiler.jobs import LeaseLost, heartbeat, lease_next
from compendium.compiler.schedules import fire_due_schedules
from compendium.compiler.worker import WorkerOptions, run_worker
from compendium.storage.records import Chunk, Extract, Page, Schedule
from compendium.tenancy import kb_store, system_store
from tests.support.llm_fixtures import settings_for
from tests.support.scripted_replies import POISON_DOCUMENT, BoundedResponder, poisoned


async def _kb(api, name="kb", **settings):
    key = await api.tenant_key("acme")
    r = await api.client.post("/knowledge-bases", json={"name": name, **settings}, headers=api.as_(key))
    assert r.status_code == 201, r.text
    return key, api.as_(key)


async def _wait(api, h, job_id, predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = (await api.client.get(f"/jobs/{job_id}", headers=h)).json()
        if predicate(job):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job never reached the state: {job}")


async def test_a_second_compile_request_returns_the_running_job(make_api):
    async with make_api(run_worker=False) as api:
        _, h = await _kb(api, engine="offline")
        first = await api.client.post("/knowledge-bases/kb/compile", headers=h)
        again = await api.client.post("/knowledge-bases/kb/compile", json={"template": "wiki"}, headers=h)
        assert first.status_code == 202 and again.status_code == 200
        assert again.json()["id"] == first.json()["id"]
        other = await api.client.post("/knowledge-bases/kb/compile", json={"template": "topics"}, headers=h)
        assert other.status_code == 202 and other.json()["id"] != first.json()["id"]
        cancelled = (await api.client.post(f"/jobs/{first.json()['id']}/cancel", headers=h)).json()
        assert cancelled["status"] == "cancelled"  # a queued job is cancelled at once
        fresh = await api.client.post("/knowledge-bases/kb/compile", headers=h)
        assert fresh.status_code == 202 and fresh.json()["id"] != first.json()["id"]


async def test_cancel_stops_after_the_current_batch_and_the_next_compile_resumes(make_api, llm_server):
    # Calls slower than progress is saved and checked (0.5 s), so the cancel lands mid-MAP.
    llm_server.set_latency(1.0)
    async with make_api(settings_for(llm_server, timeout=5.0)) as api:
        key, h = await _kb(api)
        await api.upload_corpus("kb", key)
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        running = await _wait(api, h, job["id"], lambda j: j["progress"].get("phase") == "map")
        assert running["status"] == "running"
        assert (await api.client.post(f"/jobs/{job['id']}/cancel", headers=h)).json()["cancel_requested"]
        events = await api.follow(job["id"], key)
        final = events[-1][1]
        assert final["status"] == "cancelled"
        mapped = final["report"]["phases"]["map"]
        assert 0 < mapped["done"] < mapped["items"]
        assert "refine" not in final["report"]["phases"]

        scoped = kb_store(api.store, "acme", "kb")
        chunks = {c.id async for c in scoped.scan(Chunk)}
        extracts = [e async for e in scoped.scan(Extract)]
        # Whole batches only: every stored extract is complete and belongs to a live chunk.
        assert extracts and all(e.id in chunks and e.status == "done" and e.fingerprint for e in extracts)
        assert await scoped.count(Page) == 0

        llm_server.set_latency(0.0)
        again = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        final = (await api.follow(again["id"], key))[-1][1]
        assert final["status"] == "succeeded"
        assert final["report"]["phases"]["map"]["skipped"] >= len(extracts)  # resumed, not redone


async def test_a_job_whose_worker_died_is_taken_over_when_its_lease_expires(make_api):
    async with make_api(run_worker=False) as api:
        key, h = await _kb(api, engine="offline")
        await api.upload_corpus("kb", key, only=4)
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        # A worker leases the job and dies at once: no heartbeat ever comes.
        dead = await lease_next(api.store, "dead-worker", lease_seconds=0.4)
        assert dead is not None and dead.id == job["id"]
        assert await lease_next(api.store, "eager-worker", lease_seconds=5) is None  # lease still valid

        stop = asyncio.Event()
        settings = api.app.state.service.settings
        survivor = asyncio.create_task(run_worker(
            api.store, settings, api.data_dir, worker="survivor", stop=stop,
            options=WorkerOptions(lease_seconds=5, poll_seconds=0.05),
        ))
        try:
            done = await _wait(api, h, job["id"], lambda j: j["status"] not in ("queued", "running"))
        finally:
            stop.set()
            await survivor
        assert done["status"] == "succeeded" and done["attempts"] == 2
        with pytest.raises(LeaseLost):  # the dead worker, were it to wake, may not write
            await heartbeat(api.store, job["id"], "dead-worker", lease_seconds=5)


async def test_the_token_budget_is_a_ceiling_for_a_job(make_api, llm_server):
    llm_server.responder = BoundedResponder()  # replies within max_tokens, as real servers keep them
    async with make_api(settings_for(llm_server, max_reply_tokens=9000)) as api:
        key, h = await _kb(api, token_budget=30_000)
        await api.upload_corpus("kb", key)
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        final = (await api.follow(job["id"], key))[-1][1]
        assert final["status"] == "budget_exceeded"
        assert "token budget of 30000" in final["error"]
        job = (await api.client.get(f"/jobs/{job['id']}", headers=h)).json()
        assert job["status"] == "budget_exceeded"
        assert final["progress"]["budget_tokens"] == 30_000
        # Each call reserves its prompt and its reply's bound before it is sent: never past it.
        spent = llm_server.prompt_tokens + llm_server.completion_tokens
        assert 0 < spent <= 30_000, spent
        assert final["progress"]["tokens"] == spent
        assert "refine" not in final["report"]["phases"]
        assert await kb_store(api.store, "acme", "kb").count(Page) == 0


async def test_a_job_whose_batches_failed_for_good_is_partial_in_the_job_and_the_report(make_api, llm_server):
    llm_server.responder = poisoned
    async with make_api(settings_for(llm_server, max_retries=0)) as api:
        key, h = await _kb(api)
        await api.upload_corpus("kb", key, only=4)
        glitch = ("glitch.md", POISON_DOCUMENT.encode(), "text/markdown")
        r = await api.client.post("/knowledge-bases/kb/documents", files=[("files", glitch)], headers=h)
        assert r.status_code == 201, r.text
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        final = (await api.follow(job["id"], key))[-1][1]
        assert final["status"] == "partial"
        assert final["report"]["status"] == "partial" and final["report"]["phases"]["map"]["failed"] > 0
        job = (await api.client.get(f"/jobs/{job['id']}", headers=h)).json()
        assert job["status"] == "partial" and "map" in job["error"] and job["finished_at"]
        # A partial job is a finished one: the next compile request starts a new job.
        again = await api.client.post("/knowledge-bases/kb/compile", headers=h)
        assert again.status_code == 202 and again.json()["id"] != job["id"]


async def test_schedules_enqueue_compiles_once_per_due_time(make_api):
    async with make_api(run_worker=False) as api:
        _, h = await _kb(api, engine="offline")
        r = await api.client.post("/knowledge-bases/kb/schedules", json={"cron": "*/5 * * * *"}, headers=h)
        assert r.status_code == 201, r.text
        schedule = r.json()
        assert schedule["template"] == "wiki" and schedule["next_run_at"] > time.time()
        listed = (await api.client.get("/knowledge-bases/kb/schedules", headers=h)).json()["items"]
        assert [s["id"] for s in listed] == [schedule["id"]]

        assert await fire_due_schedules(api.store, now=schedule["next_run_at"] - 1) == []
        due = schedule["next_run_at"] + 1
        fired = await fire_due_schedules(api.store, now=due)
        assert len(fired) == 1 and fired[0].trigger == "schedule" and fired[0].knowledge_base == "kb"
        assert await fire_due_schedules(api.store, now=due) == []  # claimed: not fired twice
        moved = (await api.client.get(f"/knowledge-bases/kb/schedules/{schedule['id']}", headers=h)).json()
        assert moved["next_run_at"] == schedule["next_run_at"] + 300 and moved["last_job_id"] == fired[0].id

        r = await api.client.patch(f"/knowledge-bases/kb/schedules/{schedule['id']}", json={"enabled": False}, headers=h)
        assert r.json()["enabled"] is False
        assert await fire_due_schedules(api.store, now=due + 10_000) == []


async def test_the_in_process_worker_fires_a_due_schedule_and_runs_the_job(make_api):
    async with make_api() as api:
        key, h = await _kb(api, engine="offline")
        await api.upload_corpus("kb", key, only=3)
        r = await api.client.post("/knowledge-bases/kb/schedules", json={"cron": "0 3 * * *"}, headers=h)
        system = system_store(api.store)
        record = (await system.get(Schedule, [r.json()["id"]]))[0]
        record.next_run_at = time.time() - 1  # as if 03:00 had just passed
        await system.upsert([record])
        deadline = time.monotonic() + 20
        jobs = []
        while time.monotonic() < deadline and not jobs:
            jobs = [j for j in (await api.client.get("/jobs", headers=h)).json()["items"] if j["status"] == "succeeded"]
            await asyncio.sleep(0.05)
        assert jobs and jobs[0]["trigger"] == "schedule"


async def test_template_groups_of_a_knowledge_base_choose_the_template_documents_are_extracted_with(make_api):
    from compendium.storage.records import Document, Extract

    async with make_api() as api:
        key = await api.tenant_key("acme")
        h = api.as_(key)
        yaml_text = (
            "name: storage-notes\nversion: 1\nentity_types:\n"
            "  - name: storage-part\n    description: Anything in the storage chapters.\n    patterns: ['.']\n"
        )
        r = await api.client.post("/templates", json={"yaml": yaml_text}, headers=h)
        assert r.status_code == 201, r.text
        r = await api.client.post(
            "/knowledge-bases",
            json={"name": "kb", "engine": "offline",
                  "groups": [{"template": "storage-notes", "include": ["corpus/storage/**"]}]},
            headers=h,
        )
        assert r.status_code == 201, r.text
        await api.upload_corpus("kb", key)
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=h)).json()
        final = (await api.follow(job["id"], key))[-1][1]
        assert final["status"] == "succeeded", final.get("error")

        scoped = kb_store(api.store, "acme", "kb")
        docs = {d.id: d async for d in scoped.scan(Document)}
        grouped = {d.id for d in docs.values() if d.path.startswith("corpus/storage/")}
        assert grouped, sorted(d.path for d in docs.values())[:5]
        assert all(docs[i].template == "storage-notes" for i in grouped)
        types_in_group = {
            e["type"] async for x in scoped.scan(Extract) if x.document_id in grouped for e in x.entities
        }
        assert types_in_group == {"storage-part"}


async def test_a_worker_never_runs_a_compile_another_worker_is_running(make_api):
    from compendium.storage.records import Job

    async with make_api(run_worker=False) as api:
        now = time.time()
        compile_of = {"tenant": "acme", "knowledge_base": "kb", "template": "wiki"}
        running = Job(id="a1", status="running", lease_owner="far-host.example:77:aa", created_at=now,
                      lease_expires_at=now + 30, heartbeat_at=now, attempts=1, **compile_of)
        # Two requests that raced past enqueue's check: a second job of the same compile.
        queued = Job(id="b2", status="queued", created_at=now, **compile_of)
        other = Job(id="c3", status="queued", created_at=now, tenant="acme", knowledge_base="kb", template="topics")
        await system_store(api.store).upsert([running, queued, other])
        leased = await lease_next(api.store, "w:1:x", lease_seconds=5, now=now + 1)
        assert leased is not None and leased.id == "c3"  # another compile: free to run
        assert await lease_next(api.store, "w:1:x", lease_seconds=5, now=now + 1) is None
        taken = await lease_next(api.store, "w:1:x", lease_seconds=5, now=now + 31)  # its worker died
        assert taken is not None and taken.id == "a1" and taken.attempts == 2
