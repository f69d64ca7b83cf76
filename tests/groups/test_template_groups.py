"""Template groups: documents a group matches are extracted with the group's template."""

from __future__ import annotations

from pathlib import Path

from compendium.operations import compile_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Document, Extract

GROUP_TEMPLATE = """\
name: storage-notes
version: 1
entity_types:
  - name: storage-part
    description: Anything named in the storage chapters.
    patterns: ['.']
relation_types:
  - name: related_to
    description: Mentioned together.
"""


def _add_group(workspace: Path, template_text: str) -> None:
    (workspace / "templates" / "storage-notes.yaml").write_text(template_text)
    config = workspace / "compendium.yaml"
    config.write_text(
        config.read_text() + "\ngroups:\n  - template: storage-notes\n    include: ['corpus/storage/**']\n"
    )


async def _extracts_by_group(settings) -> tuple[dict[str, str], dict[str, Extract]]:
    async with opened_store(settings) as store:
        docs = {d.id: d async for d in store.scan(Document)}
        extracts = {e.id: e async for e in store.scan(Extract)}
    return {d.path: d.template for d in docs.values()}, {
        e.id: (docs[e.document_id].path, e) for e in extracts.values()
    }


async def test_group_documents_are_extracted_with_their_template(sample_workspace: Path):
    _add_group(sample_workspace, GROUP_TEMPLATE)
    settings = load_settings(sample_workspace, env={})
    report = await compile_workspace(settings)
    assert not report.failed

    templates, extracts = await _extracts_by_group(settings)
    storage_docs = {p for p in templates if p.startswith("corpus/storage/")}
    assert storage_docs and all(templates[p] == "storage-notes" for p in storage_docs)
    assert all(t == "" for p, t in templates.items() if p not in storage_docs)  # the compile's own

    in_group = [e for path, e in extracts.values() if path in storage_docs]
    elsewhere = [e for path, e in extracts.values() if path not in storage_docs]
    group_types = {ent["type"] for e in in_group for ent in e.entities}
    assert group_types == {"storage-part"}
    assert "storage-part" not in {ent["type"] for e in elsewhere for ent in e.entities}

    # Editing the group's template re-extracts only the group's documents.
    before = {cid: e.fingerprint for cid, (_, e) in extracts.items()}
    (sample_workspace / "templates" / "storage-notes.yaml").write_text(
        GROUP_TEMPLATE.replace("version: 1", "version: 2").replace(
            "Anything named", "Everything named"
        )
    )
    report = await compile_workspace(settings)
    assert not report.failed
    _, after = await _extracts_by_group(settings)
    changed = {cid for cid, (_, e) in after.items() if before.get(cid) != e.fingerprint}
    assert changed == {e.id for e in in_group}
    assert report.phases["map"]["done"] == len(in_group)
