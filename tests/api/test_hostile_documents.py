"""Documents are data from strangers: a file whose bytes are not its type is refused, a zip bomb
is refused with the limit named (declared and actual sizes, per file and per upload), and a
bomb in a compile fails alone while the server's memory stays where it was."""

from __future__ import annotations

import pytest

from compendium.storage.records import Document
from compendium.tenancy import kb_records
from tests.ingest.documents import write_docx
from tests.ingest.test_bounded_reading import _resident, bomb

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.fixture
async def tenant(make_api):
    async with make_api(run_worker=False, max_unpacked_bytes=10_000_000, max_upload_unpacked=15_000_000) as api:
        key = await api.tenant_key("acme")
        r = await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=api.as_(key))
        assert r.status_code == 201, r.text
        yield api, api.as_(key)


def _written(api) -> list[str]:
    root = api.data_dir / "tenants"
    return sorted(p.name for p in root.rglob("*") if p.is_file() and "documents" in p.parts) if root.exists() else []


@pytest.mark.parametrize(("name", "content", "content_type", "said"), [
    ("report.md", PDF, "text/markdown", "its content is a PDF, not a .md text file"),
    ("notes.txt", PDF, "text/plain", "its content is a PDF"),
    ("page.html", b"PK\x03\x04" + bytes(40), "text/html", "zip archive"),
    ("paper.pdf", b"# Markdown\n", "application/pdf", "not a .pdf file"),
    ("letter.docx", PDF, DOCX_TYPE, "not a .docx file but a PDF"),
])
async def test_a_file_whose_bytes_are_not_its_type_is_a_415(tenant, name, content, content_type, said):
    api, headers = tenant
    r = await api.client.post("/knowledge-bases/kb/documents", files=[("files", (name, content, content_type))],
                              headers=headers)
    assert r.status_code == 415, r.text
    assert said in r.json()["error"]["message"]
    assert _written(api) == []


async def test_a_docx_bomb_lying_about_its_size_is_a_413_naming_the_limit(tenant, tmp_path):
    api, headers = tenant
    bomb(tmp_path / "bomb.docx", 40 << 20, lie=True)  # headers say 1 KB; it unpacks to 40 MB
    good = write_docx(tmp_path / "good.docx", [("Heading 1", "Good"), ("", "A real document.")])
    files = [("files", ("good.docx", good.read_bytes(), DOCX_TYPE)),
             ("files", ("bomb.docx", (tmp_path / "bomb.docx").read_bytes(), DOCX_TYPE))]
    r = await api.client.post("/knowledge-bases/kb/documents", files=files, headers=headers)
    assert r.status_code == 413, r.text
    assert "bomb.docx: unpacks to more than the 10 MB limit" in r.json()["error"]["message"]
    assert _written(api) == []  # nothing of a refused upload is kept
    r = await api.client.post("/knowledge-bases/kb/documents", files=files[:1], headers=headers)
    assert r.status_code == 201, r.text


async def test_an_upload_whose_files_unpack_past_the_upload_limit_is_a_413(tenant, tmp_path):
    api, headers = tenant
    files = []
    for n in range(3):  # 6 MB each: each under the file limit, 18 MB together over the upload's
        bomb(tmp_path / f"part{n}.docx", 6 << 20)
        files.append(("files", (f"part{n}.docx", (tmp_path / f"part{n}.docx").read_bytes(), DOCX_TYPE)))
    r = await api.client.post("/knowledge-bases/kb/documents", files=files, headers=headers)
    assert r.status_code == 413, r.text
    assert "unpack to more than the 15 MB limit of one upload" in r.json()["error"]["message"]
    assert _written(api) == []


async def test_a_bomb_in_the_documents_folder_fails_alone_and_the_server_keeps_its_memory(make_api, tmp_path):
    async with make_api() as api:
        key = await api.tenant_key("acme")
        headers = api.as_(key)
        r = await api.client.post("/knowledge-bases", json={"name": "kb", "engine": "offline"}, headers=headers)
        assert r.status_code == 201, r.text
        r = await api.client.post("/knowledge-bases/kb/documents", files=[
            ("files", ("fine.md", b"# Fine\n\nA fine document about ducks.\n", "text/markdown"))], headers=headers)
        assert r.status_code == 201
        # Put beside the upload by other means than the API (a shared folder, an older version).
        folder = next(p for p in api.data_dir.rglob("fine.md")).parent
        bomb(folder / "bomb.docx", 200 << 20, lie=True)
        before = _resident()
        job = (await api.client.post("/knowledge-bases/kb/compile", headers=headers)).json()
        final = (await api.follow(job["id"], key))[-1][1]
        grown = _resident() - before
        docs = [d.path async for d in kb_records(api.store, await _kb(api)).scan(Document)]
    failed = final["report"]["phases"]["ingest"]["failed_documents"]
    assert docs == ["fine.md"]
    assert "unpacks to more than the 128 MB limit" in failed["bomb.docx"], failed
    assert grown < 100 << 20, f"the server grew by {grown >> 20} MB"


async def _kb(api):
    from compendium.storage.records import KnowledgeBase
    from compendium.tenancy import system_store

    async for kb in system_store(api.store).scan(KnowledgeBase):
        return kb
    raise AssertionError("no knowledge base was stored")
