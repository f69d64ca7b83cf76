"""A bounded schemathesis pass over the whole API, in-process: every request it generates from
the OpenAPI schema must get a documented status, never a 5xx, and a body that matches the
schema; a schema-valid request is never refused as invalid.

Bounded: seeded and derandomized, EXAMPLES per operation and generation mode, a request
timeout; .ci/run adds a wall-clock timeout. About 30 s on 2 cores."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import negative_data_rejection

from compendium.api.app import create_app
from compendium.api.limits import FailedLogins
from compendium.api.schemas import NAMED_TEMPLATE_FORMAT, TEMPLATE_FORMAT
from compendium.engines.factory import passage_embedder
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.retrieval.index import build_index
from compendium.settings import Settings
from compendium.storage.factory import open_store
from compendium.storage.records import (
    Chunk,
    Claim,
    Document,
    Entity,
    Page,
    PageVersion,
    Relation,
    Topic,
)
from compendium.tenancy import SYSTEM_SCOPE, kb_store, server_store_url

from .conftest import ADMIN_KEY

SEED = 20261201
EXAMPLES = 20  # per operation and per generation mode
KB = "kb"
ACCEPTED = ["2xx", "401", "403", "404", "409"]  # how a schema-valid request may be answered
SEEDED = {"slug": "p", "entity_id": "e1", "relation_id": "r1", "topic_id": "t1", "chunk_id": "c1"}


def records() -> list:
    """A small compiled knowledge base: two entities, a relation, a topic, a page with two versions."""
    now = time.time()
    page = Page(id="p", slug="p", title="Alpha", kind="entity", subject_id="e1", version=2,
                markdown="# Alpha\n\nUses [[beta]] [^c1].\n", outlinks=["beta"], cited_chunks=["c1"],
                updated_at=now)
    first = PageVersion.of(page)
    first.id, first.version, first.markdown = "p@1", 1, "# Alpha\n"
    return [
        Document(id="d1", path="notes.md", title="Notes", format="markdown", chunk_ids=["c1"]),
        Chunk(id="c1", document_id="d1", text="Alpha uses beta.", heading_path=["Notes"], end=16),
        Entity(id="e1", name="Alpha", type="system", chunk_ids=["c1"], document_ids=["d1"], degree=1,
               importance=1.0),
        Entity(id="e2", name="Beta", type="system", chunk_ids=["c1"], document_ids=["d1"], degree=1),
        Relation(id="r1", source="e1", target="e2", type="uses", strength=2, chunk_ids=["c1"]),
        Claim(id="k1", text="Alpha uses beta.", chunk_id="c1", document_id="d1", entity_ids=["e1", "e2"]),
        Topic(id="t1", slug="systems", title="Systems", members=["e1", "e2"]),
        page, first, PageVersion.of(page),
    ]


def seed(data_dir: Path) -> None:
    """Write the records through a second connection to the app's SQLite file (the app is idle
    between requests)."""

    async def write() -> None:
        store = await open_store(server_store_url("", data_dir), SYSTEM_SCOPE)
        try:
            scoped = kb_store(store, "acme", KB)
            await scoped.upsert(records())
            # As a compile leaves it: retrieval's index of the passages too.
            await build_index(scoped, passage_embedder(OfflineEmbedder()))
        finally:
            await store.close()

    asyncio.run(write())

def templates(named: bool) -> st.SearchStrategy[str]:
    """Template YAML of the schema's formats (api/schemas.py): a name of our own (a built-in's
    is refused), a description, a version and artifacts; under a URL naming it, no name."""
    name = st.from_regex(r"\Afuzz-[a-z0-9][a-z0-9_-]{0,20}\Z")
    words = st.text(st.sampled_from("abcdefghij klmnop"), min_size=0, max_size=40).map(str.strip)
    artifacts = st.lists(st.sampled_from(["wiki_pages", "entity_graph", "topics"]), min_size=1, max_size=3,
                         unique=True)

    def text(n: str, description: str, version: int, built: list[str]) -> str:
        head = "" if named else f"name: {n}\n"
        return f"{head}description: '{description}'\nversion: {version}\nartifacts: [{', '.join(built)}]\n"

    return st.builds(text, name, words, st.integers(1, 1000), artifacts)


def documents() -> st.SearchStrategy[bytes]:
    """A file part's bytes as the schema's encoding declares them (text/markdown): Markdown text."""
    line = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), min_size=1, max_size=80)
    return st.lists(line, min_size=1, max_size=8).map(lambda lines: ("# Notes\n\n" + "\n".join(lines)).encode())


# Strings the schema says are templates are made as templates (what a client knowing the format does).
schemathesis.openapi.format(TEMPLATE_FORMAT, templates(named=False))
schemathesis.openapi.format(NAMED_TEMPLATE_FORMAT, templates(named=True))
schemathesis.openapi.format("binary", documents())

# The schema is read at collection, from an app that starts only when the module fixture has
# given it a data folder (schemathesis's lazy fixture loader does not work on pytest 9).
# The fuzzer sends wrong keys on purpose, all from one address: failed sign-ins are not limited here.
APP = create_app(Settings(), data_dir=Path("unset"), run_worker=False, admin_key=ADMIN_KEY,
                 failed_logins=FailedLogins(burst=10**9))
schema = schemathesis.openapi.from_dict(
    APP.openapi(),
    config=schemathesis.Config.from_dict({
        "seed": SEED,
        "request-timeout": 10,
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "database": "none"},
        # Every case names the knowledge base that exists, and most the records seeded in it,
        # so they reach past the 404 and their answers are checked against the schema.
        "dictionaries": {name: {"values": [value]} for name, value in SEEDED.items()},
        "parameters": {"path.kb": KB, **{f"path.{name}": {"dictionary": name, "probability": 0.8}
                                         for name in SEEDED}},
        # A body over the bound is refused unread, with 413.
        "checks": {"negative_data_rejection": {"expected-statuses": [
            "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]}},
    }),
)
schema.app, schema.location = APP, "/openapi.json"  # as schemathesis.openapi.from_asgi does


def _unreliable(case) -> list:
    """Checks that cannot judge this case. A query string carries only text, so a value made
    invalid there can read as a valid one (0.0 as the string "0.0", an empty object as an
    empty cursor, a string as a one-item list): "invalid data accepted" would be no finding.
    Our own key replaces a mutated auth header, so that mutation never reaches the server."""
    negated = {str(getattr(loc, "value", loc)) for loc, info in (case.meta.components.items()
               if case.meta else ()) if info.mode.is_negative}
    return [negative_data_rejection] if negated and negated <= {"query", "header"} else []


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory):
    """The app on a real SQLite store with one tenant, its key, a template and a knowledge base
    holding a few compiled records."""
    app = APP
    data_dir = app.state.service.data_dir = tmp_path_factory.mktemp("fuzz") / "data"
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with asgi.get_client(app) as client:  # starts the app's lifespan once, for the whole module
        assert client.post("/tenants", json={"name": "acme"}, headers=admin).status_code == 201
        r = client.post("/tenants/acme/keys", json={"name": "fuzz"}, headers=admin)
        key = {"Authorization": f"Bearer {r.json()['key']}"}
        assert client.post("/knowledge-bases", json={"name": KB}, headers=key).status_code == 201
        r = client.post("/templates", json={"yaml": "name: mine\ndescription: fuzz\n"}, headers=key)
        assert r.status_code == 201, r.text
        seed(data_dir)
        assert client.get(f"/knowledge-bases/{KB}/pages/p/diff", headers=key).status_code == 200
        yield data_dir, admin, key, client
    asgi.shutdown_lifespans()


@pytest.mark.fuzz
@schema.parametrize()
@hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_api_answers_every_generated_request_as_documented(case, fuzz_target):
    data_dir, admin, key, client = fuzz_target
    admin_only = case.path.startswith("/tenants")
    case.call_and_validate(headers=admin if admin_only else key, excluded_checks=_unreliable(case))
    if case.method == "DELETE" and case.path == "/knowledge-bases/{kb}":  # again, for the cases after it
        client.post("/knowledge-bases", json={"name": KB}, headers=key)
        seed(data_dir)
