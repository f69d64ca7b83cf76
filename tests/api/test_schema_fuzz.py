"""A bounded schemathesis pass over the whole API, in-process: every request it generates from
the OpenAPI schema must get a documented status, never a 5xx, and a body that matches the
schema; a schema-valid request is never refused as invalid."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.python import asgi

from compendium.api.app import create_app
from compendium.settings import Settings

from .conftest import ADMIN_KEY

SEED = 20261201
EXAMPLES = 20  # per operation and per generation mode
KB = "kb"
ACCEPTED = ["2xx", "401", "403", "404", "409"]  # how a schema-valid request may be answered

# The schema is read at collection, from an app that starts only when the module fixture has
# given it a data folder (schemathesis's lazy fixture loader does not work on pytest 9).
APP = create_app(Settings(), data_dir=Path("unset"), run_worker=False, admin_key=ADMIN_KEY)
schema = schemathesis.openapi.from_dict(
    APP.openapi(),
    config=schemathesis.Config.from_dict({
        "seed": SEED,
        "request-timeout": 10,
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "database": "none"},
        # Most cases name the knowledge base that exists, so they reach past its 404.
        "parameters": {"path.kb": KB},
        # What JSON Schema cannot say: whether a string is a valid template or cron expression.
        # There a schema-valid body may still be refused with 422; every other check holds.
        "operations": [
            {"include-name": ["POST /templates", "POST /templates/validate", "PUT /templates/{name}",
                              "POST /knowledge-bases/{kb}/schedules",
                              "PATCH /knowledge-bases/{kb}/schedules/{schedule_id}"],
             "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "422"]}}},
            # Nor whether an uploaded file's name and bytes make a document of a supported type.
            {"include-name": "POST /knowledge-bases/{kb}/documents",
             "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "413", "415", "422"]}}},
        ],
    }),
)
schema.app, schema.location = APP, "/openapi.json"  # as schemathesis.openapi.from_asgi does


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory):
    """The app on a real SQLite store with one tenant, its key, a knowledge base and a template."""
    app = APP
    app.state.service.data_dir = tmp_path_factory.mktemp("fuzz") / "data"
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with asgi.get_client(app) as client:  # starts the app's lifespan once, for the whole module
        assert client.post("/tenants", json={"name": "acme"}, headers=admin).status_code == 201
        r = client.post("/tenants/acme/keys", json={"name": "fuzz"}, headers=admin)
        key = {"Authorization": f"Bearer {r.json()['key']}"}
        assert client.post("/knowledge-bases", json={"name": KB}, headers=key).status_code == 201
        r = client.post("/templates", json={"yaml": "name: mine\ndescription: fuzz\n"}, headers=key)
        assert r.status_code == 201, r.text
        yield app, admin, key, client
    asgi.shutdown_lifespans()


@pytest.mark.fuzz
@schema.parametrize()
@hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_api_answers_every_generated_request_as_documented(case, fuzz_target):
    _, admin, key, client = fuzz_target
    admin_only = case.path.startswith("/tenants")
    case.call_and_validate(headers=admin if admin_only else key)
    if case.method == "DELETE" and case.path == "/knowledge-bases/{kb}":
        client.post("/knowledge-bases", json={"name": KB}, headers=key)  # for the cases after it
