"""`compendium worker --tasks` as a person starts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from compendium.cli import main


def test_a_task_worker_without_a_broker_says_which_variable_to_set(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("COMPENDIUM_BROKER", raising=False)
    monkeypatch.chdir(tmp_path)  # no workspace here: settings come from the environment alone
    code = main(["worker", "--tasks"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no broker configured" in err and "COMPENDIUM_BROKER=redis://" in err


def test_worker_help_names_the_task_options(capsys):
    with pytest.raises(SystemExit):
        main(["worker", "--help"])
    out = capsys.readouterr().out
    assert "--tasks" in out and "--concurrency" in out and "COMPENDIUM_BROKER" in out
