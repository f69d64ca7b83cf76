"""The package's public surface is exactly what __all__ lists, and a script can drive a compile with it."""

import subprocess
import sys
from pathlib import Path

import compendium


def test_all_lists_exactly_the_public_names():
    public = {name for name in dir(compendium) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(compendium, name)).__name__ == "module"}
    assert set(compendium.__all__) - {"__version__"} == public - modules
    assert sorted(compendium.__all__) == compendium.__all__
    assert all(getattr(compendium, name) is not None for name in compendium.__all__)


def test_an_unknown_name_is_an_attribute_error():
    try:
        compendium.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_compiler():
    """The public names load on first use, so a command that needs one of them pays for it alone."""
    probe = (
        "import sys, compendium; "
        "print(sorted(m for m in sys.modules if m.startswith(('compendium.compiler', 'compendium.templates', "
        "'pydantic', 'numpy', 'jinja2'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    from compendium import CompileReport  # the names still import the ordinary way

    assert CompileReport.__module__ == "compendium.compiler.report"


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
