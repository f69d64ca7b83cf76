"""The numbers agree: created, unchanged and total counts are the same in the compile's output,
`status`, `changes`, the job's progress and the exports, on the sample corpus; and the
smaller things a user reads (no '0 tokens' offline, plurals, the site's title, literal [[...]])."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from compendium.cli import bar_end, main
from compendium.compiler.jobs import ProgressRecorder
from compendium.engines.usage import UsageMeter
from compendium.pipeline.events import PhaseFinished
from compendium.settings import LLMSettings

SUMMARY = re.compile(r"(\d+) documents, (\d+) chunks, (\d+) entities, (\d+) concepts, (\d+) relations, "
                     r"(\d+) topics; pages (\d+) created, (\d+) updated, (\d+) unchanged, (\d+) deleted")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_counts_agree_between_compile_status_changes_and_exports(sample_workspace: Path, tmp_path, capsys):
    ws = str(sample_workspace)
    code, out, err = run(capsys, "-w", ws, "compile", "--plain", "--report", str(tmp_path / "first.json"))
    assert code == 0, err
    first = SUMMARY.search(out)
    assert first, out
    docs, chunks, entities, concepts, relations, topics, created, updated, unchanged, deleted = map(int, first.groups())
    assert created > 0 and updated == unchanged == deleted == 0
    assert " 0 tokens" not in err  # offline: no token column at all

    code, out, _ = run(capsys, "-w", ws, "compile", "--plain")
    again = SUMMARY.search(out)
    assert again and tuple(map(int, again.groups())) == (
        docs, chunks, entities, concepts, relations, topics, 0, 0, created, 0)  # what was created is now unchanged

    code, out, _ = run(capsys, "-w", ws, "status", "--json")
    status = json.loads(out)
    assert (status["counts"]["documents"], status["counts"]["chunks"]) == (docs, chunks)
    assert {k: status["counts"][k] for k in ("pages", "entities", "concepts", "relations", "topics")} == {
        "pages": created, "entities": entities, "concepts": concepts, "relations": relations, "topics": topics}
    assert status["last_compile"]["pages"]["unchanged"] == created

    code, out, _ = run(capsys, "-w", ws, "changes")
    assert f"0 created, 0 updated, {created} unchanged, 0 deleted" in out

    report = json.loads((tmp_path / "first.json").read_text())
    assert report["pages"]["created"] == created and report["counts"]["entities"] == entities

    code, out, _ = run(capsys, "-w", ws, "export", "--format", "json", str(tmp_path / "kb.json"))
    exported = json.loads((tmp_path / "kb.json").read_text())
    assert exported["counts"] == {"pages": created, "entities": entities, "concepts": concepts,
                                  "relations": relations, "topics": topics}
    assert len(exported["pages"]) == created and len(exported["entities"]) == entities + concepts
    assert f"({created} pages, 1 file)" in out  # one file, not '1 files'

    code, out, _ = run(capsys, "-w", ws, "export", "--format", "site", str(tmp_path / "site"))
    index = (tmp_path / "site" / "index.html").read_text()
    assert f"{created} pages in " in index and f"{entities} entities, {concepts} concepts, {topics} topics" in index
    assert f"{entities} entities and {concepts} concepts" in (tmp_path / "site" / "entities.html").read_text()
    # No title: set: the manual's own name (its introduction's title), not the folder's ('Ws').
    assert "<h1>Lumen DB Engineering Handbook</h1>" in index


def test_a_phase_ends_saying_what_was_unchanged_and_what_failed():
    ok = {"items": 243, "done": 1, "skipped": 242, "failed": 0}
    assert bar_end(ok) == {"completed": 243, "total": 243, "detail": "242 unchanged, ✓"}
    failed = {"items": 738, "done": 721, "skipped": 0, "failed": 17, "prompt_tokens": 10, "completion_tokens": 5}
    assert bar_end(failed) == {"completed": 721, "total": 738, "detail": "17 failed, 15 tokens"}
    # REDUCE's bar runs over chunks and its result counts entities: it ends on the chunks
    reduce = {"items": 57, "done": 57, "skipped": 0, "failed": 0}
    assert bar_end(reduce, (29, 29)) == {"completed": 29, "total": 29, "detail": "✓"}
    assert bar_end(ok, (243, 243)) == bar_end(ok)
    recorder = ProgressRecorder(UsageMeter(), LLMSettings())
    recorder.emit(PhaseFinished("map", failed))
    entry = recorder.snapshot()["phases"]["map"]
    assert (entry["done"], entry["skipped"], entry["failed"], entry["total"]) == (721, 0, 17, 738)


def test_literal_double_brackets_in_a_source_are_no_link_in_the_vault(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert run(capsys, "init", str(ws))[0] == 0
    (ws / "documents" / "wiki-syntax.md").write_text(
        "# Wiki syntax\n\nThe Lumen wiki links pages with double brackets: writing [[Checkpointer]] links to a "
        "page, and [[nowhere at all]] to a missing one. The Checkpointer writes dirty pages to disk.\n\n"
        "## Checkpointer\n\nThe Checkpointer is a background process that flushes dirty buffers. "
        "Array access such as `arr[[0]]` is code.\n")
    assert run(capsys, "-w", str(ws), "compile", "--plain")[0] == 0
    assert run(capsys, "-w", str(ws), "export", "--format", "vault", str(tmp_path / "vault"))[0] == 0
    every = "\n".join(p.read_text() for p in (tmp_path / "vault").rglob("*.md"))
    links = set(re.findall(r"(?<!\\)\[\[([^\]|#]+)", re.sub(r"`[^`\n]*`", "", every)))  # code is no link
    notes = {p.relative_to(tmp_path / "vault").with_suffix("").as_posix() for p in (tmp_path / "vault").rglob("*.md")}
    assert links <= notes, links - notes  # every link in the vault leads to a note
    assert "\\[\\[nowhere at all\\]\\]" in every and "`arr[[0]]`" in (tmp_path / "vault" / "sources" / "wiki-syntax.md").read_text()
    # The site quotes the source as written: the brackets shown, no link, code as code.
    assert run(capsys, "-w", str(ws), "export", "--format", "site", str(tmp_path / "site"))[0] == 0
    source = (tmp_path / "site" / "sources" / "wiki-syntax.html").read_text()
    assert "writing [[Checkpointer]] links" in source and "[[nowhere at all]] to" in source
    assert "<code>arr[[0]]</code>" in source


def test_every_phase_ends_full_on_the_terminal_and_the_job_page_and_unchanged_pages_agree(
        sample_workspace: Path, capsys):
    """Each phase's bar ends at its total with nothing failed, on the CLI and on the job page
    alike: REFINE's plans that end withheld (written with no cited fact, never shown) are said,
    not left off the bar ('66/75 ✓'), and REDUCE ends on the chunks its progress ran on, not on
    its entity count. A recompile's REFINE line says as many unchanged as the summary does."""
    from compendium.operations import compile_workspace
    from compendium.settings import load_settings

    recorder = ProgressRecorder(UsageMeter(), LLMSettings())
    report = asyncio.run(compile_workspace(load_settings(sample_workspace, env={}), events=recorder))
    assert report.status == "succeeded", report.error
    phases = recorder.snapshot()["phases"]
    for name, entry in phases.items():
        assert entry["failed"] == 0 and entry["reached"] == entry["total"] > 0, (name, entry)
    assert phases["reduce"]["total"] == report.chunks  # the unit its progress counted in
    refine = phases["refine"]
    assert refine["done"] == report.pages["created"] and refine["withheld"] == refine["total"] - refine["done"]
    assert refine["withheld"] > 0  # the sample corpus has topics with too little to say
    ended = [e for e in recorder.snapshot()["events"] if e["event"] == "PhaseFinished"]
    for e in ended:  # the job page's live stream draws the end its record holds
        assert e["end"] == {k: phases[e["phase"]][k] for k in e["end"]}, e

    code, out, err = run(capsys, "-w", str(sample_workspace), "compile", "--plain")
    assert code == 0, err
    again = SUMMARY.search(out)
    assert again and int(again.group(9)) == report.pages["created"]
    line = next(x for x in err.splitlines() if x.startswith("refine: ") and " done, " in x)
    assert f"0 done, {report.pages['created']} unchanged, {refine['withheld']} withheld, 0 failed" in line, line


def test_a_phase_that_failed_as_a_whole_says_so_not_one_failed(sample_workspace: Path, llm_server, capsys,
                                                              monkeypatch):
    """Every MAP reply prose: the compile fails naming the cause, and MAP's bar and line say
    'failed' where they said '1 failed' of 187 chunks (the one being the phase)."""
    from compendium.operations import compile_workspace
    from compendium.settings import load_settings
    from tests.incremental.corpus import env_for
    from tests.support.llm_server import GARBAGE_MARKDOWN

    default = llm_server.responder
    llm_server.responder = lambda request: GARBAGE_MARKDOWN if request.schema_name == "extraction" else default(request)
    for name, value in {**env_for(llm_server), "COMPENDIUM_LLM_HEDGE": "false"}.items():
        monkeypatch.setenv(name, value)
    recorder = ProgressRecorder(UsageMeter(), LLMSettings())
    report = asyncio.run(compile_workspace(load_settings(sample_workspace), events=recorder))
    assert report.status == "failed" and "every one of the" in report.error
    entry = recorder.snapshot()["phases"]["map"]
    assert entry["stopped"] == "failed" and entry["total"] == report.chunks, entry
    code, _, err = run(capsys, "-w", str(sample_workspace), "compile", "--plain")
    assert code != 0
    line = next(x for x in err.splitlines() if x.startswith("map: ") and " done, " in x)
    assert "0 done, 0 unchanged, failed, " in line and "1 failed" not in line, line
