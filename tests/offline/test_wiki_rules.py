"""What a published page may hold: no noise entities, a defining lead, no sentence twice."""

from __future__ import annotations

import re

from compendium.engines.offline import OfflineEngine
from compendium.engines.offline.extract import extract_chunk
from compendium.engines.tasks import ChunkInput, EvidenceItem, PageRequest
from compendium.templates.schema import Template

TEMPLATE = Template(name="docs")


def names_of(text: str, headings: list[str] | None = None) -> tuple[set[str], list]:
    reply = extract_chunk(ChunkInput("c1", text, headings or ["Checkpoints"]), TEMPLATE)
    return {e.name for e in reply.entities} | {c.term for c in reply.concepts}, reply.entities


def test_noise_tokens_get_no_entity_and_identifiers_do():
    text = (
        "Raising max_wal_size makes checkpoints rarer, and pg_stat_activity shows one row per server "
        "process.\n\n"
        'Use the format string "%s-%d" to print the time using the log_line_prefix setting. Version '
        "15.2 fixed the problem, see release-15-2.html and wal-intro.md for details.\n\n"
        "Call open() to get a file object. The value of x = 42; y = f(x) is printed by the server.\n\n"
        "The checkpointer writes max_wal_size worth of WAL at most between two checkpoints."
    )
    names, _ = names_of(text)
    for wanted in ("max_wal_size", "pg_stat_activity", "open()", "log_line_prefix"):
        assert wanted in names
    lowered = {n.lower() for n in names}
    for noise in ("%s-%d", "15.2", "release-15-2.html", "wal-intro.md", "time using", "x = 42", "f(x)", "y"):
        assert noise not in lowered, noise
    assert not any(re.search(r"[=;%]|\.html$|\.md$", n) for n in names)


def test_a_glossary_entry_makes_an_acronym_an_alias_of_its_expansion():
    text = ("This is a list of acronyms.\n\nANSI\n\nAmerican National Standards Institute\n\nGUC\n\n"
            "Grand Unified Configuration, the subsystem that handles server configuration\n\nPITR\n\n"
            "This is not an expansion of the acronym above")
    _, entities = names_of(text, ["Acronyms"])
    by_name = {e.name: e for e in entities}
    assert by_name["American National Standards Institute"].aliases == ["ANSI"]
    assert by_name["Grand Unified Configuration"].aliases == ["GUC"]
    assert "PITR" in by_name and not by_name["PITR"].aliases


def request(evidence: list[EvidenceItem], title: str = "checkpoint", aliases: list[str] | None = None) -> PageRequest:
    return PageRequest(slug="checkpoint", title=title, kind="concept", description="", aliases=aliases or [],
                       evidence=evidence, links=[])


def lead_of(markdown: str) -> str:
    body = [ln for ln in markdown.splitlines() if ln.strip() and not ln.startswith(("#", "[^"))]
    return re.sub(r"\[\^\d+\]", "", body[0]).strip()


async def test_the_definition_leads_even_when_other_facts_are_better_supported():
    evidence = [
        EvidenceItem(ref=1, text="However, a checkpoint also flushes all dirty pages to disk.", chunk_id="a",
                     support=5, heading_path=["WAL Configuration"]),
        EvidenceItem(ref=2, text="The checkpoint interval is set by checkpoint_timeout and max_wal_size.",
                     chunk_id="b", support=4, heading_path=["WAL Configuration"]),
        EvidenceItem(ref=3, text="A checkpoint is a point in the write-ahead log sequence at which all data "
                     "files have been updated.", chunk_id="c", support=1, heading_path=["Glossary"]),
    ]
    page = await OfflineEngine().write_page(request(evidence), TEMPLATE)
    assert lead_of(page).startswith("A checkpoint is a point in the write-ahead log sequence")


async def test_a_glossary_entry_leads_and_a_connective_never_does():
    evidence = [
        EvidenceItem(ref=1, text="Also, the autovacuum daemon runs ANALYZE on tables it processes.", chunk_id="a",
                     support=6, heading_path=["Maintenance"]),
        EvidenceItem(ref=2, text="It is made of a launcher and several workers.", chunk_id="b", support=5,
                     heading_path=["Maintenance"]),
        EvidenceItem(ref=3, text="A background process that runs VACUUM and ANALYZE when tables change enough.",
                     chunk_id="c", support=1, heading_path=["Glossary", "Autovacuum"], kind="excerpt"),
    ]
    page = await OfflineEngine().write_page(request(evidence, "autovacuum daemon", ["Autovacuum"]), TEMPLATE)
    assert lead_of(page).startswith("A background process that runs VACUUM")


async def test_no_sentence_appears_twice_nor_inside_another():
    claim = "The checkpointer writes dirty buffers to disk at every checkpoint."
    evidence = [
        EvidenceItem(ref=1, text=claim, chunk_id="a", support=2, heading_path=["Checkpoints"]),
        EvidenceItem(ref=2, text=f"A checkpoint is a point in the WAL sequence. {claim} It then writes a "
                     "checkpoint record to the WAL.", chunk_id="a", heading_path=["Checkpoints"], kind="excerpt"),
        EvidenceItem(ref=3, text="The checkpointer writes dirty buffers to disk at every checkpoint and at "
                     "shutdown.", chunk_id="b", heading_path=["Shutdown"]),
        EvidenceItem(ref=4, text=claim, chunk_id="c", heading_path=["Checkpoints"]),
    ]
    page = await OfflineEngine().write_page(request(evidence), TEMPLATE)
    cited = [re.sub(r"\s+", " ", s).strip().lower()
             for s in re.split(r"\[\^\d+\]", "\n".join(ln for ln in page.splitlines() if not ln.startswith("[^")))
             if s.strip() and not s.strip().startswith("#")]
    cited = [re.sub(r"^[#\-* ]+|^.*\n", "", s).strip() for s in cited]
    sentences = [s for s in cited if len(s.split()) >= 4]
    assert len(sentences) == len(set(sentences))
    assert page.lower().count("writes dirty buffers to disk at every checkpoint") == 1
