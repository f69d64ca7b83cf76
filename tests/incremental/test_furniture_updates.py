"""A sentence that becomes furniture (written word for word in many documents) costs a page a
rewrite only when the page was written from it: a page whose subject's passages write it
elsewhere keeps its text and costs no call (scripted server, SQLite)."""

from __future__ import annotations

from pathlib import Path

from compendium.engines.tasks import EvidenceItem
from compendium.operations import opened_store
from compendium.phases.claim_index import REPEATED_IN
from compendium.phases.claim_index_keys import text_key
from compendium.phases.evidence import evidence_key
from compendium.phases.refine_furniture import furniture_moved, furniture_reaches, holding_returned
from compendium.settings import load_settings
from compendium.storage.records import Page
from compendium.workspace import init_workspace
from tests.support.llm_server import LLMServer

from .corpus import compile_, env_for

FURNITURE = "Every crate is weighed on the Crate Scale before it leaves the floor."
NAMES = ["Crate Packer", "Crate Sealer", "Crate Shipper", "Crate Sorter", "Crate Weigher", "Crate Stacker"]


def _excerpt(text: str, chunk: str = "k1") -> EvidenceItem:
    return EvidenceItem(0, text, chunk, "Guide", ["Duties"], kind="excerpt")


def test_a_moved_sentence_reaches_a_page_only_through_the_evidence_it_was_written_from():
    became, returned = furniture_moved([], [text_key(FURNITURE)])
    assert (became, returned) == ({text_key(FURNITURE)}, set())
    assert furniture_moved(["a", "b"], ["b", "c"]) == ({"c"}, {"a"})
    near = _excerpt(f"The Depot Ledger records every crate. {FURNITURE}")
    far = _excerpt("The Depot Ledger records every crate. The yard closes at night.", "k2")
    other = _excerpt(f"The Crate Packer reads its options. {FURNITURE}", "k3")
    chunk = f"The Depot Ledger records every crate.\n\nThe Crate Packer reads its options. {FURNITURE}"

    # Chosen: an excerpt that held it before it was cut out, or a claim stating it.
    assert furniture_reaches(became, {evidence_key(near)}, [near, far, other], [chunk])
    assert furniture_reaches(became, {evidence_key(EvidenceItem(0, FURNITURE, "k1"))}, [far], [chunk])
    # Only in passages the page was not written from: the page keeps its text.
    assert not furniture_reaches(became, {evidence_key(far)}, [near, far, other], [chunk])
    assert not furniture_reaches(set(), {evidence_key(near)}, [near], [chunk])
    # Furniture no more: the items holding it are offered again.
    assert holding_returned(became, [near, far, other]) == [near, other]
    assert holding_returned(set(), [near]) == []


def _document(name: str, ledger: bool, far: bool) -> str:
    duty = (f"The {name} sends finished crates to the Depot Ledger. The Depot Ledger records every crate the "
            f"{name} sends." if ledger else f"The {name} keeps its own tally of crates.")
    # Eight sentences more than an excerpt's length between the ledger's sentences and the furniture.
    filler = " ".join(f"On shift {k} the {name.split()[1].lower()} moves crates from bay {k} to bay {k + 1}."
                      for k in range(1, 9)) if far else ""
    return (f"# {name}\n\n## Duties\n\n{duty} The {name} handles crates on the loading floor. {filler}\n\n"
            f"The {name} reads its options from the command line. {FURNITURE}\n")


async def _ledger_page_after_the_sentence_becomes_furniture(root: Path, server: LLMServer, far: bool) -> tuple[Page, Page, int]:
    """The Depot Ledger's page before and after two documents make FURNITURE furniture, and the
    model calls that cost REFINE."""
    workspace = init_workspace(root)
    folder = workspace / "documents" / "manual"
    folder.mkdir(parents=True)
    for name in NAMES[: REPEATED_IN - 1]:
        (folder / _file(name)).write_text(_document(name, True, far), encoding="utf-8")
    await compile_(workspace, server)
    before = await _ledger(workspace, server)
    for name in NAMES[REPEATED_IN - 1 :]:  # they say nothing of the ledger
        (folder / _file(name)).write_text(_document(name, False, far), encoding="utf-8")
    report = await compile_(workspace, server)
    return before, await _ledger(workspace, server), report["phases"]["refine"]["llm_calls"]


def _file(name: str) -> str:
    return f"{name.split()[1].lower()}.md"


async def _ledger(workspace: Path, server: LLMServer) -> Page:
    async with opened_store(load_settings(workspace, env=env_for(server))) as store:
        [page] = await store.get(Page, ["depot-ledger"])
    return page  # type: ignore[return-value]


async def test_a_page_written_from_a_sentence_that_became_furniture_is_written_again_without_it(
        llm_server: LLMServer, tmp_path: Path):
    workspace = tmp_path / "m"
    before, after, _calls = await _ledger_page_after_the_sentence_becomes_furniture(workspace, llm_server, False)
    assert FURNITURE in before.markdown  # its excerpts held the sentence
    assert FURNITURE not in after.markdown and "The Depot Ledger records every crate" in after.markdown
    assert after.status == "active"

    # The two documents go: the sentence is no furniture again, and the page says it again by a
    # small update of the passages it kept, not written anew.
    for name in NAMES[REPEATED_IN - 1 :]:
        (workspace / "documents" / "manual" / _file(name)).unlink()
    report = await compile_(workspace, llm_server)
    again = await _ledger(workspace, llm_server)
    assert FURNITURE in again.markdown
    refine = report["phases"]["refine"]
    assert (refine["updated"], refine["grouped_updates"], refine["updates_asked_alone"]) == (1, 1, 0)
    assert again.version == after.version + 1


async def test_a_page_whose_subject_writes_the_sentence_elsewhere_keeps_its_text_at_no_call(
        llm_server: LLMServer, tmp_path: Path):
    before, after, calls = await _ledger_page_after_the_sentence_becomes_furniture(tmp_path / "m", llm_server, True)
    assert FURNITURE not in before.markdown  # in its subject's passages, past the excerpts it was written from
    assert (after.markdown, after.version, after.status) == (before.markdown, before.version, "active")
    assert after.evidence_fingerprint != before.evidence_fingerprint  # planned as changed, yet no rewrite
    assert calls == 0
