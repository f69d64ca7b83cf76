"""Does one statement of the evidence say a sentence, with the same names and the same actor?

Content-word overlap (support.overlap) cannot see a swapped actor: "The checkpointer freezes
tuples whose `xmin` is older than `vacuum_freeze_min_age`" shares all its words but one with
the source's "Vacuum freezes a tuple when its `xmin` is older than `vacuum_freeze_min_age`",
and "the Visibility Map records the free space on the page" shares all of its words with
"Vacuum records each page's free space in the Free Space Map, sets the bits in the Visibility
Map ...". A cited evidence item carries a sentence only when:
- names: every code span, capitalised term, acronym and number of the sentence occurs in the
  item (a term of several words as a run of words); an acronym is held by the capitalised term
  whose words' initials spell it ("MVCC" by a passage under the heading "Multi-Version
  Concurrency Control": a passage's heading path names what it is about);
- one statement: one sentence of the item holds STATEMENT_SHARE of the sentence's content
  words (or the caller's threshold, when higher), or all of them but one, and its subject. A
  joined word ("variable-length", `max_wal_size`) counts once: counted as its parts too, it
  made "Variable-length columns are stored in a separate table" hold 6 of its 8 words in
  "Every table that has at least one variable-length column gets its own TOAST table". A sentence that gives a
  cause ("because", "therefore", "which is why", "X, so Y") needs a statement that gives one: a small
  model adds causes the sources never state. "This is because ..." gives the cause of what another
  sentence said, which the check cannot see: not supported. An item's sentence that opens with a pronoun ("It never blocks
  writes") is read with the actor of the sentence before it, and only that: words scattered
  over several sentences of a passage do not add up to a statement;
- the same actor: when that statement has the sentence's verb, the sentence's subject (the
  agent of a passive: "... by Vacuum") is who does it there: the subject of a clause with that
  verb, or the agent after "by". A verb with no subject of its own ("..., and updates X")
  belongs to the subject before it. A statement that says the thing with another verb is not
  compared by roles: the paraphrase is free to turn "Y flushes records to disk" into "records
  reach disk", unless another statement of the item says that verb of someone else: then the
  sentence joined one statement's subject to another's verb ("Variable-length columns are
  stored ..." where the item stores its chunks, not its columns);
- what undergoes it: a passive that names no agent ("the modified page must be flushed") is
  said of its subject only where the statement has that subject undergoing the verb (its
  passive subject or its object): "... until the WAL records ... have been flushed" flushes
  the records, not the page;
- a sentence opening with a pronoun, in running text (a page, an answer): the pronoun is the
  subject of the sentence kept before it (`antecedent`), which the evidence must name and
  say it of; with no sentence before it, nothing a reader can check, so not supported.

The sentences are read by clauses.py; where it finds no subject (a pronoun, a fragment) or the
verb is a copula ("X is the Y that ..."), only the names and the one statement are asked.

Pure and dependency-free, like support.py that calls it; both read words by words.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .clauses import (
    Clause,
    Token,
    clause_starts,
    fold_phrase,
    main_clause,
    plain,
    read_clause,
    stems,
    subject_head,
    subject_phrase,
    tokens,
)
from .words import content_words, fold, split_sentences

_JOINED = re.compile(r"[^\W_]+(?:[_.'-][^\W_]+)+")  # a word of parts (variable-length, max_wal_size)
_JOINER = re.compile(r"[_.'-]")
_LINE_MARK = re.compile(r"^\s*(?:#+\s+|>\s*|[-*+]\s+|\d+[.)]\s+)")
# The share of a sentence's content words a statement that says it with another verb must hold.
OTHER_VERB_SHARE = 0.75
# The share of a sentence's content words one statement must hold. Half let a 1.5B model's
# "The position of each segment file is stored in the WAL header." stand on "Segment file names
# encode the timeline and the position of the segment in the WAL stream." (4 of 6 words): the
# complement it made up is the part left out. Its 63 true cited sentences each had 0.75 or
# quoted their evidence (benchmarks/reports/real_model.md).
STATEMENT_SHARE = 0.75
_CAPITALISED_RUN = re.compile(r"\b[A-Z][^\W_]*(?:[ -][A-Z][^\W_]*)+")
# "This is because ...", "That is why ...": the cause of what another sentence said.
_CAUSE_OF_BEFORE = re.compile(r"\s*(?:this|that|it)\s+(?:is|was)\s+(?:because|why|due to)\b", re.IGNORECASE)
_CAUSE = re.compile(r"\b(?:because|therefore|thus|hence|consequently|due to|as a result|so that|which is why|"
                    r"the reason)\b|,\s+so\s+(?!far\b|much\b|many\b|long\b)", re.IGNORECASE)  # "X, so Y": X is why


@dataclass
class Statement:
    """One sentence of an evidence item: its words, and who does what in it."""

    words: set[str]  # content words, for the share (support.overlap)
    stems: set[str]  # for names, subjects, objects and verbs
    doers: list[tuple[str, str]]  # (actor phrase, verb) of its clauses, as stems
    causal: bool = False  # it gives a cause ("because", "which is why")
    # (what undergoes the verb, verb) of its clauses: a passive's subject, an active verb's object
    patients: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Evidence:
    """An evidence item read for the statement check."""

    stems: set[str]
    phrase: str  # its stems in order, space-joined, for terms of several words
    statements: list[Statement]
    quoted: str = ""  # its words (_quoted), space-padded: a sentence found in it quotes it


def _quoted(text: str) -> str:
    """The text's words only, lowercased, for telling a quotation: markup, marks and spacing out."""
    return " ".join(re.findall(r"[^\W_]+", plain(text).casefold()))


def _roles(toks: list[Token], previous: Statement | None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(actor, verb) and (patient, verb) of each clause of a sentence. A verb with no subject of
    its own belongs to the last actor before it ("Vacuum records X, sets Y and updates Z"); a
    leading pronoun stands for the first actor of the sentence before. A passive's subject is
    what undergoes its verb, as an active verb's object is."""
    doers: list[tuple[str, str]] = []
    patients: list[tuple[str, str]] = []
    main = ""  # the main clause's actor: a verb with no subject of its own is its
    for at, start in enumerate(clause_starts(toks)):
        for clause in main_clause(toks) if at == 0 else read_clause(toks, start, inner=True):
            if clause.pronoun:
                actor = previous.doers[0][0] if at == 0 and previous is not None and previous.doers else main
            else:
                actor = subject_phrase(clause.subject) or main
            if at == 0:
                main = main or actor  # "X is the Y that removes Z": X removes Z
            if clause.passive:
                if actor and clause.action:
                    patients.append((actor, clause.action))
                actor = subject_phrase(clause.agent)
            elif clause.action:
                patients.extend((role, clause.action) for role in (clause.object, clause.recipient) if role)
            if actor and clause.action:
                doers.append((actor, clause.action))
    return list(dict.fromkeys(doers)), list(dict.fromkeys(patients))


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line.strip() or line.lstrip().startswith("|"):
            continue
        line = re.sub(r"\*\*|__", "", _LINE_MARK.sub("", line))
        out.extend(s for s in split_sentences(line) if s.strip())
    return out


def initialisms(text: str) -> set[str]:
    """The acronyms a text's capitalised terms spell, folded: the initials of each run of two or
    more of a term's words ("The Oversized-Attribute Storage Technique": toast, oast, ...)."""
    out: set[str] = set()
    for match in _CAPITALISED_RUN.finditer(text):
        initials = "".join(word[0] for word in re.split(r"[ -]", match.group(0)))
        out.update(initials[i:j].casefold() for i in range(len(initials)) for j in range(i + 2, len(initials) + 1))
    return {folded for folded in (fold_phrase(a) for a in out) if folded}


@lru_cache(maxsize=4096)
def read_evidence(text: str) -> Evidence:
    """An evidence text read into statements (cached: a page cites one item many times)."""
    statements: list[Statement] = []
    previous: Statement | None = None  # the last statement with an actor ("Heap scan." has none)
    for sentence in _sentences(text):
        toks = tokens(sentence)
        doers, patients = _roles(toks, previous)
        statement = Statement(content_words(sentence), stems(sentence), doers, bool(_CAUSE.search(sentence)), patients)
        if previous is not None and previous.doers and any(c.pronoun for c in main_clause(toks)):
            statement.stems |= set(previous.doers[0][0].split())  # "It also ...": who "it" is
            statement.words |= content_words(previous.doers[0][0])
        statements.append(statement)
        if statement.doers:
            previous = statement
    return Evidence(stems(text) | initialisms(plain(text)), f" {fold_phrase(plain(text))} ", statements,
                    f" {_quoted(text)} ")


@dataclass
class Reading:
    """A sentence read for the statement check."""

    words: set[str]
    names: dict[str, str]  # stemmed phrase -> as written: the names that must occur in the evidence
    units: dict[str, frozenset[str]]  # the words the share counts (counted_words)
    clauses: list[Clause]  # readings of its main clause
    causal: bool = False  # it gives a cause


@lru_cache(maxsize=4096)
def read_sentence(sentence: str) -> Reading:
    toks = tokens(sentence)
    names = {fold_phrase(t.text): t.text for t in toks if t.kind in ("code", "name", "number")}
    return Reading(content_words(sentence), {k: v for k, v in names.items() if k}, counted_words(sentence),
                   main_clause(toks), bool(_CAUSE.search(plain(sentence))))


def counted_words(sentence: str) -> dict[str, frozenset[str]]:
    """The content words of a sentence as the statement share counts them, each with its parts:
    a joined word is one word, held by a statement that writes it or all of its parts
    (content_words lists a joined word's parts beside it, for matching, not for counting)."""
    words = content_words(sentence)
    units: dict[str, frozenset[str]] = {w: frozenset() for w in content_words(_JOINED.sub(" ", sentence))}
    for match in _JOINED.finditer(sentence):
        word = fold(match.group(0))
        if word in words:
            units[word] = frozenset(content_words(_JOINER.sub(" ", match.group(0))))
    return units


def held_share(units: dict[str, frozenset[str]], words: set[str]) -> tuple[float, int]:
    """The share of a sentence's counted words a statement holds, and how many it lacks. A
    word ending in "e" is its plural's fold too ("tuple", "tuples" -> "tupl")."""
    bases = {_base(w) for w in words}
    missing = sum(1 for unit, parts in units.items()
                  if _base(unit) not in bases and not (parts and {_base(p) for p in parts} <= bases))
    return (1 - missing / len(units) if units else 1.0), missing


def _base(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


# Personal pronouns only: "This is the rule ...: X", "This lets a backend ..." stand for what the
# sentence before said as a whole, or for what follows them, not for its subject.
_OPENING_PRONOUNS = frozenset("it they he she".split())
NO_ANTECEDENT = ""  # `antecedent` of a sentence that opens a text: a pronoun there stands for nothing
PRONOUN_ALONE = "its subject is a pronoun, and no sentence before it says what it stands for"


def subject_of(sentence: str, antecedent: str | None = None) -> str:
    """The folded subject phrase of a sentence's main clause ("" when none is read); a pronoun
    subject is read as `antecedent`. What a pronoun in the next sentence stands for."""
    for clause in read_sentence(sentence).clauses:
        if clause.pronoun:
            return (antecedent or "") if opens_with_pronoun(sentence) else ""
        phrase = subject_phrase(clause.subject)
        if phrase:
            return phrase
    return ""


def statement_problem(sentence: str, evidence: str | Evidence, threshold: float,
                      antecedent: str | None = None) -> str | None:
    """Why `evidence` does not carry `sentence` as one statement with its names and actor
    (None: it does). See the module docstring. With `antecedent` (the subject of the sentence
    before it in the text, subject_of; NO_ANTECEDENT for the first), a sentence whose subject is
    a pronoun is read as saying it of that subject, and refused when there is none: "It is
    created when ..." names no one a reader can check."""
    item = evidence if isinstance(evidence, Evidence) else read_evidence(evidence)
    pronoun = antecedent is not None and opens_with_pronoun(sentence)
    if pronoun and not antecedent:
        return PRONOUN_ALONE
    if pronoun and not set(antecedent.split()) <= item.stems:  # type: ignore[union-attr]
        return f"the evidence does not name what its pronoun stands for ({antecedent})"
    quoted = _quoted(sentence)
    if quoted and f" {quoted} " in item.quoted:
        return None  # the evidence's own words: a quotation gives no one else's role
    return read_problem(sentence, item, threshold, antecedent if pronoun else None)


def opens_with_pronoun(sentence: str) -> bool:
    """Whether the sentence's subject is a pronoun that opens it ("It is created when ..."): it
    stands for something said before. One after an opening clause ("When an agent wins, it
    promotes ...") mostly stands for that clause's subject, and is read as now."""
    toks = tokens(sentence)
    return bool(toks) and toks[0].low in _OPENING_PRONOUNS and any(c.pronoun for c in read_sentence(sentence).clauses)


def read_problem(sentence: str, item: Evidence, threshold: float, antecedent: str | None = None) -> str | None:
    """statement_problem by the reading alone, for a sentence that does not quote its evidence."""
    reading = read_sentence(sentence)
    missing = [shown for n, shown in reading.names.items() if not _holds_name(item, n)]
    if missing:
        return f"the evidence does not name {', '.join(missing[:3])}"
    share = max(threshold, STATEMENT_SHARE)
    held = [s for s in item.statements
            if (counted := held_share(reading.units, s.words))[0] >= share or counted[1] <= 1]
    if not held:
        return "no one sentence of the evidence says this"
    if reading.causal:
        if _CAUSE_OF_BEFORE.match(plain(sentence)):
            return "the evidence gives no such cause"  # of what a sentence before said, which it cannot see
        held = [s for s in held if s.causal]
        if not held:
            return "the evidence gives no such cause"
    for statement in held:
        # Of two readings ("data pages | flush" or "data | pages"), the one whose verb is a verb
        # of the statement is the one the statement decides.
        verbs = {verb for _, verb in statement.doers} | {verb for _, verb in statement.patients}
        clauses = [c for c in reading.clauses if c.action in verbs] or reading.clauses
        for clause in clauses:
            subject = antecedent if clause.pronoun and antecedent else subject_phrase(clause.subject)
            # The subject and what the verb acts on are said in the one statement.
            core = set(subject.split()) | set(clause.object.split())
            if core <= statement.stems and _same_doer(clause, statement, sentence, subject, item):
                return None
    first = reading.clauses[0]
    shown = " ".join(t.text for t in (first.agent or first.subject)) or (f"what it stands for ({antecedent})" if first.pronoun and antecedent else "")
    return f"the evidence does not say this of {shown or 'its subject'}"


def _same_doer(clause: Clause, statement: Statement, sentence: str, subject: str, item: Evidence) -> bool:
    """Whether the statement has the clause's actor doing its verb, or, for a passive that names
    no agent, the clause's subject undergoing it ("the modified page must be flushed" is not
    said by "... until the WAL records ... have been flushed"). A statement that says it with
    another verb cannot be compared by roles: the clause's subject must take part in it (as actor
    or patient: "Records reach disk" for "Y flushes records to disk"), or it must hold
    OTHER_VERB_SHARE of the clause's words; and the clause must say more than its verb."""
    if not clause.action:
        return True
    own = subject.split()[-1] if clause.pronoun and subject else subject_head(clause.subject)
    if clause.passive and not clause.agent:
        who, roles = own, statement.patients  # what undergoes the verb
    else:
        who, roles = (subject_head(clause.agent) if clause.passive else own), statement.doers
    if not who or (clause.pronoun and not subject):
        return True
    acts = [verb for role, verb in roles if f" {who} " in f" {role} "]
    if clause.action in statement.stems:
        return clause.action in acts
    elsewhere = [role for other in item.statements if other is not statement
                 for role, verb in (*other.doers, *other.patients) if verb == clause.action]
    if elsewhere and not any(f" {who} " in f" {role} " for role in elsewhere):
        return False  # the item says this verb, of someone else
    own, after = _clause_words(sentence, clause)
    if not after:
        return False  # all it says is the verb ("Each column is cut up."), which the statement does not say
    # Another verb may turn the voice ("records reach disk"): its subject is in either role.
    takes_part = any(f" {who} " in f" {role} " for role, _ in (*statement.doers, *statement.patients))
    return takes_part or held_share(own, statement.words)[0] >= OTHER_VERB_SHARE


def _clause_words(sentence: str, clause: Clause) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """The counted words of the clause (its subject, its verb and what follows up to the next
    clause), and of what follows its verb in the sentence. A clause joined to a true one
    ("..., which is created automatically for every table ...") lends it none of its words."""
    toks = tokens(sentence)
    if clause.verb_at < 0:
        return read_sentence(sentence).units, read_sentence(sentence).units
    end = next((k for k in clause_starts(toks) if k > clause.verb_at), len(toks))
    # verb_at is where the verb starts: a passive's auxiliary ("is cut") or the verb itself
    after = counted_words(" ".join(t.text for t in toks[clause.verb_at + 1:] if stems(t.text) != {clause.action}))
    return counted_words(" ".join(t.text for t in (*clause.subject, *toks[clause.verb_at:end]))), after


def _holds_name(item: Evidence, name: str) -> bool:
    return set(name.split()) <= item.stems if " " not in name else f" {name} " in item.phrase
