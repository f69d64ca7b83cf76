"""`compendium status` names what the last compile could not do, and why."""

from __future__ import annotations

import json
from pathlib import Path

from compendium.cli import main


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_status_lists_failed_documents_with_their_reason(tmp_path: Path, capsys):
    workspace = tmp_path / "kb"
    assert _run(capsys, "init", str(workspace))[0] == 0
    documents = workspace / "documents"
    (documents / "wal.md").write_text("# Write-Ahead Log\n\nThe Write-Ahead Log records every change.\n",
                                      encoding="utf-8")
    (documents / "broken.docx").write_bytes(b"not a zip archive")  # put there by hand, not by `add`
    assert _run(capsys, "-w", str(workspace), "compile")[0] == 8  # partial

    code, out = _run(capsys, "-w", str(workspace), "status")
    assert code == 0
    failed = [line for line in out.splitlines() if "broken.docx" in line]
    assert len(failed) == 1 and failed[0].startswith("Failed:") and "not a .docx file" in failed[0]
    data = json.loads(_run(capsys, "-w", str(workspace), "status", "--json")[1])
    assert list(data["failed"]["documents"]) == ["broken.docx"]

    (documents / "broken.docx").unlink()
    assert _run(capsys, "-w", str(workspace), "compile")[0] == 0
    code, out = _run(capsys, "-w", str(workspace), "status")
    assert "Failed" not in out and json.loads(_run(capsys, "-w", str(workspace), "status", "--json")[1])["failed"] == {}
