"""The OpenAPI schema states the rules the server enforces: what it calls valid is accepted."""

from __future__ import annotations

import re

import hypothesis
from croniter import croniter
from hypothesis import strategies as st

from compendium.api.documents import FOLDER_PATTERN
from compendium.compiler.schedules import CRON_PATTERN, NEVER


@hypothesis.settings(max_examples=500, deadline=None, derandomize=True, database=None)
@hypothesis.given(st.from_regex(CRON_PATTERN, fullmatch=True))
def test_every_cron_the_schema_allows_is_one_the_server_reads(cron):
    assert croniter.is_valid(cron.strip()), cron


async def test_a_cron_naming_no_date_that_exists_is_a_schedule_that_never_fires(make_api):
    async with make_api(run_worker=False) as api:
        h = api.as_(await api.tenant_key("acme"))
        assert (await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)).status_code == 201
        r = await api.client.post("/knowledge-bases/kb/schedules", json={"cron": "0 0 30 2 *"}, headers=h)
        assert r.status_code == 201, r.text
        assert r.json()["next_run_at"] == NEVER
        for cron in ("0 9 * * MON-FRI", "@daily", "*/15 0-6 1,15 jan-jun/2 0"):
            r = await api.client.post("/knowledge-bases/kb/schedules", json={"cron": cron}, headers=h)
            assert r.status_code == 201, (cron, r.text)
        for cron in ("61 * * * *", "* * * *", "0 0 L * *"):  # what the schema's pattern leaves out
            r = await api.client.post("/knowledge-bases/kb/schedules", json={"cron": cron}, headers=h)
            assert r.status_code == 422 and r.json()["error"]["field"] == "cron", cron


async def test_an_upload_takes_only_the_fields_and_folders_its_schema_names(make_api):
    async with make_api(run_worker=False) as api:
        h = api.as_(await api.tenant_key("acme"))
        assert (await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)).status_code == 201
        schema = api.app.openapi()["paths"]["/knowledge-bases/{kb}/documents"]["post"]["requestBody"]
        form = schema["content"]["multipart/form-data"]["schema"]
        assert form["additionalProperties"] is False and form["properties"]["folder"]["pattern"] == FOLDER_PATTERN
        files = [("files", ("a.md", b"# A\n", "text/markdown"))]
        r = await api.client.post("/knowledge-bases/kb/documents", files=files, data={"extra": "1"}, headers=h)
        assert r.status_code == 422 and "unknown form field 'extra'" in r.text
        for folder in ("notes", "a/b/c/d", "é/ü"):
            assert re.fullmatch(FOLDER_PATTERN, folder)
            r = await api.client.post("/knowledge-bases/kb/documents", files=files, data={"folder": folder},
                                      headers=h)
            assert r.status_code == 201, (folder, r.text)


async def test_template_and_question_rules_are_in_the_schema(make_api):
    async with make_api(run_worker=False) as api:
        paths = api.app.openapi()["paths"]
        schemas = api.app.openapi()["components"]["schemas"]
        assert schemas["TemplateIn"]["properties"]["yaml"]["format"] == "compendium-template"
        assert schemas["NamedTemplateIn"]["properties"]["yaml"]["format"] == "compendium-template-named"
        put = paths["/templates/{name}"]["put"]["parameters"][0]
        assert put["name"] == "name" and put["schema"]["pattern"]
        h = api.as_(await api.tenant_key("acme"))
        r = await api.client.post("/templates", json={"yaml": "name: mine\n"}, headers=h)
        assert r.status_code == 201, r.text
        r = await api.client.put("/templates/mine", json={"yaml": "description: no name, the URL's\n"}, headers=h)
        assert r.status_code == 200 and r.json()["name"] == "mine", r.text
