"""The package's public surface is exactly what __all__ lists, and a script can drive a compile with it."""

from pathlib import Path

import compendium


def test_all_lists_exactly_the_public_names():
    public = {name for name in vars(compendium) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(compendium, name)).__name__ == "module"}
    assert set(compendium.__all__) - {"__version__"} == public - modules
    assert sorted(compendium.__all__) == compendium.__all__


async def test_a_script_compiles_a_folder_with_the_public_api(tmp_path: Path):
    workspace = compendium.init_workspace(tmp_path / "kb")
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "wal.md").write_text(
        "# Write-Ahead Log\n\nThe Write-Ahead Log (WAL) records every change before data pages "
        "are written. The Checkpointer flushes dirty pages and writes a checkpoint into the WAL. "
        "Crash recovery replays the WAL from the last checkpoint.\n"
    )
    compendium.add_documents(workspace, [docs])
    settings = compendium.load_settings(workspace, env={})
    report = await compendium.compile_workspace(settings)
    assert report.status == "succeeded" and report.documents == 1 and report.chunks >= 1
    status = await compendium.workspace_status(settings)
    assert status["counts"]["documents"] == 1
