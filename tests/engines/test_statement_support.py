"""The statement check (compendium/statements.py): a cited sentence is said by one statement of
its evidence, with the sentence's names and actor. Sentences from the real-model report
(benchmarks/reports/real_model.md) against the passages they cited."""

from __future__ import annotations

import pytest

from compendium.engines.page_support import supported_text
from compendium.statements import NO_ANTECEDENT, counted_words, held_share, statement_problem
from compendium.support import SUPPORT_THRESHOLD, check_text

# The sample corpus's passages, as REFINE sends them (chunk excerpts).
FREEZING = (
    "Vacuum prevents XID wraparound by freezing tuples. Freezing marks a tuple's `xmin` as frozen, which "
    "means it is older than every normal XID and visible to everyone. Vacuum freezes a tuple when its "
    "`xmin` is older than `vacuum_freeze_min_age`, which defaults to 50 million transactions."
)
CHECKPOINTS = (
    "The Checkpointer writes every dirty page in the Buffer Pool to disk and then records the checkpoint's "
    "position in the WAL. After a checkpoint, recovery only has to replay the WAL from that position."
)
VACUUM_RUN = (
    "A plain `VACUUM` on a table works in phases:\n\n"
    "1. **Heap scan.** Vacuum reads the table's Heap Files page by page, skipping pages that the Visibility "
    "Map marks all-visible. On each page it prunes dead tuples, collects their tuple identifiers, and freezes "
    "tuples older than `vacuum_freeze_min_age`.\n"
    "2. **Index cleanup.** For every index on the table, Vacuum removes the entries pointing to the dead "
    "tuples it collected. For a B-tree index this is a full pass over the index, which is why tables with "
    "many indexes take longer to vacuum.\n"
    "3. **Heap cleanup.** Vacuum revisits the pages with dead tuples and marks their line pointers unused, so "
    "the space can be reused.\n"
    "4. **Bookkeeping.** Vacuum records each page's free space in the Free Space Map, sets the all-visible and "
    "all-frozen bits in the Visibility Map, and updates the table's `relfrozenxid`."
)
WAL = "The WAL writer flushes write-ahead log records to disk before the data pages are written."

# What the 1.5B model wrote, each passing the content-word check (report, lines 240-280).
SWAPPED = [
    ("The checkpointer also freezes tuples when their `xmin` is older than `vacuum_freeze_min_age`.",
     FREEZING + "\n\n" + CHECKPOINTS),
    ("In addition, the Visibility Map records the free space on the page.", VACUUM_RUN),
    ("The Visibility Map is used to remove entries pointing to dead tuples.", VACUUM_RUN),
]
# The same kind of error, made up: another actor doing what the passage says someone else does.
MORE_SWAPS = [
    ("The Visibility Map reads the table's Heap Files page by page.", VACUUM_RUN),
    ("Each page's free space is recorded in the Free Space Map by the Visibility Map.", VACUUM_RUN),
    ("The data pages flush write-ahead log records to disk.", WAL),
    ("The Checkpointer freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.", FREEZING),
]
# Honest restatements: the source's order, another voice, another verb, a pronoun resolved, a
# clause of a longer sentence, an opening adverbial.
FAITHFUL = [
    ("Vacuum freezes tuples when their `xmin` is older than `vacuum_freeze_min_age`.", FREEZING),
    ("Vacuum records the free space of each page in the Free Space Map.", VACUUM_RUN),
    ("Vacuum removes the entries pointing to dead tuples from every index.", VACUUM_RUN),
    ("Each page's free space is recorded in the Free Space Map by Vacuum.", VACUUM_RUN),
    ("The Visibility Map marks pages all-visible, and Vacuum skips them.", VACUUM_RUN),
    ("On each page, Vacuum prunes dead tuples and collects their tuple identifiers.", VACUUM_RUN),
    ("Vacuum also sets the all-visible and all-frozen bits in the Visibility Map.", VACUUM_RUN),
    ("Vacuum updates the table's `relfrozenxid`.", VACUUM_RUN),
    ("Write-ahead log records reach disk before the data pages.", WAL),
    ("Data pages are written after the WAL writer flushes log records to disk.", WAL),
    ("The Checkpointer writes dirty pages from the Buffer Pool to disk.", CHECKPOINTS),
    ("After a checkpoint, recovery replays the WAL only from the checkpoint's position.", CHECKPOINTS),
    ("Freezing marks the `xmin` of a tuple as frozen.", FREEZING),
]


@pytest.mark.parametrize(("sentence", "evidence"), SWAPPED + MORE_SWAPS)
def test_a_sentence_giving_the_evidence_to_another_actor_is_not_supported(sentence, evidence):
    report = check_text(f"{sentence}[^1]", {"1": evidence})
    assert report.sentences[0].scores["1"] >= SUPPORT_THRESHOLD  # the words alone would pass it
    assert report.kept_text == "" and report.dropped == 1 and report.supported_citations == 0
    assert report.sentences[0].misread["1"]


@pytest.mark.parametrize(("sentence", "evidence"), FAITHFUL)
def test_a_faithful_restatement_is_supported(sentence, evidence):
    assert statement_problem(sentence, evidence, SUPPORT_THRESHOLD) is None
    assert check_text(f"{sentence}[^1]", {"1": evidence}).kept_text == f"{sentence}[^1]"


def test_the_reasons_name_what_is_missing():
    assert "checkpointer" in statement_problem(SWAPPED[0][0], FREEZING, SUPPORT_THRESHOLD)
    assert "Visibility Map" in statement_problem(SWAPPED[1][0], VACUUM_RUN, SUPPORT_THRESHOLD)
    # A name, a code span or a number the evidence does not hold.
    assert "Autovacuum Daemon" in statement_problem(
        "The Autovacuum Daemon freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.",
        FREEZING, SUPPORT_THRESHOLD)
    assert "100" in statement_problem(
        "Vacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`, 100 million transactions.",
        FREEZING, SUPPORT_THRESHOLD)
    assert "vacuum_freeze_max_age" in statement_problem(
        "Vacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_max_age`.", FREEZING, SUPPORT_THRESHOLD)


def test_words_gathered_from_several_sentences_of_a_passage_are_not_a_statement():
    # Every content word is in the passage, half of them in each of two sentences.
    sentence = "Recovery replays every dirty page in the Buffer Pool."
    assert check_text(f"{sentence}[^1]", {"1": CHECKPOINTS}).sentences[0].scores["1"] >= SUPPORT_THRESHOLD
    assert statement_problem(sentence, CHECKPOINTS, SUPPORT_THRESHOLD) is not None


def test_a_page_keeps_its_faithful_sentences_and_loses_the_swapped_one():
    evidence = {"1": FREEZING, "2": VACUUM_RUN}
    page = ("# Freezing\n\nVacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.[^1] "
            "The checkpointer also freezes tuples when their `xmin` is older than `vacuum_freeze_min_age`.[^1]\n\n"
            "Vacuum records each page's free space in the Free Space Map.[^2] "
            "The Visibility Map records the free space on the page.[^2]\n")
    kept = supported_text(page, evidence)
    assert kept == ("# Freezing\n\nVacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.[^1]\n\n"
                    "Vacuum records each page's free space in the Free Space Map.[^2]")


def test_a_swapped_sentence_is_not_moved_to_another_marker():
    # recite_from finds the item that restates a sentence; a swapped actor restates none.
    evidence = {"1": WAL, "2": FREEZING}
    report = check_text("The checkpointer freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.[^1]",
                        evidence, recite_from=evidence)
    assert report.kept_text == "" and not report.sentences[0].recited


def _passage(path: str, opening: str) -> str:
    """The paragraph of a sample-corpus document that opens with `opening`, as a chunk holds it."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "samples" / "corpus" / path).read_text(encoding="utf-8")
    return next(p for p in text.split("\n\n") if p.startswith(opening))


# What the 1.5B model wrote on its pages that the sources do not say (real_model.md, the fourth
# compile): a complement made up, an inverted condition, a cause added. The content words and
# the actor of each are in the passage.
SEGMENTS = _passage("durability/write-ahead-log.md", "WAL records are written into segment files")
TOAST_ACTS = _passage("storage/toast.md", "TOAST is triggered when a row")
MULTIXACT = _passage("transactions/transaction-ids.md", "When several transactions lock the same row")
NOT_SAID = [
    ("The position of each segment file is stored in the WAL header.", SEGMENTS,
     "no one sentence of the evidence says this"),
    ("If the column is large enough to fit under `toast_tuple_target`, it is stored in the TOAST table.", TOAST_ACTS,
     "no one sentence of the evidence says this"),
    ("This is because multixact IDs are 32 bits wide and wrap around the same way, so Vacuum freezes them too.",
     MULTIXACT, "the evidence gives no such cause"),
]


@pytest.mark.parametrize(("sentence", "evidence", "why"), NOT_SAID)
def test_a_made_up_complement_or_cause_is_not_supported(sentence, evidence, why):
    assert statement_problem(sentence, evidence, SUPPORT_THRESHOLD) == why


@pytest.mark.parametrize(("sentence", "evidence"), [
    ("Segment file names encode the position of the segment in the WAL stream.", SEGMENTS),
    ("Lumen processes the row's variable-length columns, largest first, until the row fits under "
     "`toast_tuple_target`.", TOAST_ACTS),
    ("Multixact IDs are 32 bits wide and wrap around the same way, so Vacuum freezes them too.", MULTIXACT),
    ("It keeps them in a separate table.", "TOAST stores large column values out of line, in a separate table."),
])
def test_the_same_passages_support_what_they_say(sentence, evidence):
    assert statement_problem(sentence, evidence, SUPPORT_THRESHOLD) is None


# The two false sentences the statement check let through on the real models (real_model.md,
# sixth session), with the passages they cited.
WAL_RULE = _passage("durability/write-ahead-log.md", "The Write-Ahead Log (WAL) is the append-only journal")
SNAPSHOTS = _passage("transactions/mvcc.md", "A snapshot records which transactions")
VISIBILITY = _passage("transactions/mvcc.md", "A tuple version is visible to a snapshot")


def test_a_passive_without_agent_is_said_of_what_undergoes_the_verb():
    # The source: "a modified page may not reach disk until the WAL records describing its
    # modification have been flushed". The model (1.5B) had the page flushed.
    false = "To write to the Write-Ahead Log (WAL) before a data page reaches disk, the modified page must be flushed."
    assert statement_problem(false, WAL_RULE, SUPPORT_THRESHOLD) == "the evidence does not say this of modified page"
    assert check_text(f"{false}[^1]", {"1": WAL_RULE}).kept_text == ""
    for true in ("The WAL records must be flushed before a modified page reaches disk.",
                 "A modified page may not reach disk until the WAL records describing its modification are flushed."):
        assert statement_problem(true, WAL_RULE, SUPPORT_THRESHOLD) is None, true
    # An active source says what is acted on by its object: "Vacuum removes the entries pointing
    # to the dead tuples it collected" removes entries, not tuples.
    assert statement_problem("The entries pointing to dead tuples are removed from every index.", VACUUM_RUN,
                             SUPPORT_THRESHOLD) is None
    assert statement_problem("Dead tuples are removed from every index.", VACUUM_RUN, SUPPORT_THRESHOLD)
    # What a verb gives "to" something is what that thing is given in the passive (the 1.5B model's
    # restatement, on the probe of this session), and "that" after a noun opens a relative clause.
    assigns = "A Transaction ID (XID) is the number that Lumen DB assigns to a transaction the first time it writes."
    said = "Each transaction is assigned an XID the first time it writes."
    assert statement_problem(said, assigns, SUPPORT_THRESHOLD) is None
    assert statement_problem("The database is assigned an XID the first time it writes.", assigns, SUPPORT_THRESHOLD)
    assert statement_problem(said, "Every transaction that writes is assigned an XID the first time it writes.",
                             SUPPORT_THRESHOLD) is None


def test_a_sentence_opening_with_a_pronoun_is_said_of_the_subject_before_it():
    # The 0.5B model's answer, its only sentence: "It" stands for nothing a reader can check.
    false = ("It is created when a transaction commits before the snapshot and its deleting transaction, if any, "
             "had not committed before the snapshot.")
    evidence = {"1": f"{SNAPSHOTS}\n\n{VISIBILITY}"}
    assert check_text(f"{false}[^1]", evidence).kept_text == ""
    assert check_text(f"{false}[^1]", evidence).sentences[0].misread["1"].startswith("its subject is a pronoun")
    # After a sentence about the snapshot, it is read as the snapshot's, which the passage does not say.
    page = f"A snapshot records which transactions were finished at a given moment.[^1] {false}[^1]"
    assert check_text(page, evidence).kept_text == "A snapshot records which transactions were finished at a given moment.[^1]"
    # What the passage says of the subject before it stands.
    freezing = "Vacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`.[^1] " \
               "It prevents XID wraparound by freezing tuples.[^1]"
    assert check_text(freezing, {"1": FREEZING}).kept_text == freezing
    assert check_text("It prevents XID wraparound by freezing tuples.[^1]", {"1": FREEZING}).kept_text == ""
    # A demonstrative stands for what was said, or what follows: not a subject to compare.
    rule = ("This is the rule that gives the WAL its name: a modified page may not reach disk until the WAL "
            "records describing its modification have been flushed.")
    assert statement_problem(rule, WAL_RULE, SUPPORT_THRESHOLD, NO_ANTECEDENT) is None
    # A pronoun after an opening clause stands for that clause's subject, as before.
    assert statement_problem("When Vacuum runs, it prevents XID wraparound by freezing tuples.", FREEZING,
                             SUPPORT_THRESHOLD, NO_ANTECEDENT) is None


# The false sentences the 1.5B model published on its `variable-length-columns` page (real_model.md,
# eighth session): each shares its words with the passage, but joins one statement's subject (the
# columns) to another's verb (the chunks are stored, a value is cut), or says nothing but that verb.
TOAST_TABLE = _passage("storage/toast.md", "Every table that has at least one variable-length column")


@pytest.mark.parametrize(("sentence", "evidence"), [
    ("Variable-length columns are stored in a separate table called the TOAST table.", TOAST_TABLE),
    ("Variable-length columns are stored in a separate table called the TOAST table, which is created "
     "automatically for every table that has at least one variable-length column.", TOAST_TABLE),
    ("Each variable-length column is cut up.", TOAST_TABLE),
    ("Each variable-length column is cut up.", TOAST_ACTS),
    # The same made up of another passage: a verb the passage says of another subject.
    ("Dead tuples are frozen.", VACUUM_RUN),
    ("Tuple identifiers are frozen.", VACUUM_RUN),
    ("The checkpoint position is flushed to disk.", f"{CHECKPOINTS} {WAL}"),
])
def test_a_subject_given_another_statements_verb_is_not_supported(sentence, evidence):
    assert statement_problem(sentence, evidence, SUPPORT_THRESHOLD) is not None


@pytest.mark.parametrize(("sentence", "evidence"), [
    ("An out-of-line value is cut into chunks of just under 2 KB.", TOAST_TABLE),
    ("Each chunk is stored as a row of the TOAST table.", TOAST_TABLE),
    ("Out-of-line values are cut into chunks of just under 2 KB, and each chunk is stored as a row of the TOAST "
     "table.", TOAST_TABLE),
    # Another verb for the one the passage says, of the same subject, with what it acts on.
    ("Records reach disk before the data pages are written.", WAL),
])
def test_what_the_toast_passage_says_is_supported(sentence, evidence):
    assert statement_problem(sentence, evidence, SUPPORT_THRESHOLD) is None


def test_a_joined_word_counts_once_in_the_share():
    # "variable-length" was counted as three words (it and its parts), so a sentence naming it
    # held three quarters of its words in any statement naming it.
    words = counted_words("Variable-length columns are stored in a separate table.")
    assert set(words) == {"variable-length", "column", "stor", "separate", "table"}
    assert words["variable-length"] == {"variable", "length"}
    # A joined word is held by a statement writing its parts apart, and a plural by its singular.
    assert held_share(words, {"variable", "length", "column", "stor", "separate", "table"}) == (1.0, 0)
    assert held_share(counted_words("Tuples are frozen."), {"tuple", "frozen"}) == (1.0, 0)


def test_an_intensive_pronoun_is_not_read_as_the_verb():
    # "The TOAST table is itself stored in Heap Files": `itself` was read as the verb, so the 1.5B
    # model's restatement was refused, and its swap was not told from it by roles.
    assert statement_problem("The TOAST table is stored in Heap Files.", TOAST_TABLE, SUPPORT_THRESHOLD) is None
    assert statement_problem("Heap Files are stored in the TOAST table.", TOAST_TABLE, SUPPORT_THRESHOLD) == (
        "the evidence does not say this of Heap Files")


def test_a_relative_clause_of_the_subject_does_not_hide_the_main_verb():
    # "that has at least one ..." was read as the main clause ("has"), so the passage said nothing
    # of the table getting anything, and its own sentence, reworded, was refused.
    restated = "Every table with at least one variable-length column gets its own TOAST table."
    assert statement_problem(restated, TOAST_TABLE, SUPPORT_THRESHOLD) is None
    # The main verb is still the table's: given to another subject, it is refused.
    assert statement_problem("Every variable-length column gets its own TOAST table.", TOAST_TABLE,
                             SUPPORT_THRESHOLD) is not None


def test_an_acronym_is_held_by_the_capitalised_term_its_initials_spell():
    # A passage under "Multi-Version Concurrency Control › Snapshots" is about MVCC's snapshots,
    # though its text never writes "MVCC".
    under_heading = f"Multi-Version Concurrency Control\nSnapshots\n{SNAPSHOTS}"
    said = "A snapshot in MVCC is a record of which transactions were finished at a given moment."
    assert statement_problem(said, under_heading, SUPPORT_THRESHOLD) is None
    assert statement_problem(said, SNAPSHOTS, SUPPORT_THRESHOLD) == "the evidence does not name MVCC"
    # Initials of words that are not one capitalised term spell nothing.
    assert statement_problem(said.replace("MVCC", "WAL"), under_heading, SUPPORT_THRESHOLD) is not None
    # The same in running text: a hyphen parts a term's words too.
    said = "Lumen DB records every change to data pages in the WAL before the pages are written to disk."
    source = "Lumen DB records every change to data pages in the {} before the pages themselves are written to disk."
    assert statement_problem(said, source.format("Write-Ahead Log"), SUPPORT_THRESHOLD) is None
    assert statement_problem(said, source.format("journal"), SUPPORT_THRESHOLD) == "the evidence does not name WAL"


def test_a_clause_after_so_gives_a_cause():
    # "The counter is 32 bits wide, so Vacuum must freeze old tuples ..." gives the reason the
    # 1.5B model's answer gave with "because": it was refused as a cause the evidence never states.
    price = _passage("transactions/mvcc.md", "MVCC also depends on the XID counter")
    answer = ("Old tuples must be frozen before the transaction ID counter wraps around because the counter is 32 "
              "bits wide, and Vacuum must freeze old tuples before their XIDs become ambiguous.")
    assert statement_problem(answer, price, SUPPORT_THRESHOLD) is None
    # A cause joined with "so" is a cause: the evidence must give it.
    apart = "The counter is 32 bits wide and Vacuum must freeze old tuples before their XIDs become ambiguous."
    assert statement_problem("The counter is 32 bits wide, so Vacuum must freeze old tuples.", apart,
                             SUPPORT_THRESHOLD) == "the evidence gives no such cause"
