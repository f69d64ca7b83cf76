"""Deterministic answers to Compendium's prompts, for the scripted LLM server.

Every answer is derived by simple rules from the prompt itself, so an end-to-end test can
check it: each claim is a sentence copied from its chunk, each page paragraph is an evidence
text followed by its own citation marker.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .llm_server import ChatRequest


def count_tokens(text: str) -> int:
    from compendium.tokens import count_tokens as shared

    return int(shared(text))

FENCE_LINE = re.compile(r"^</?chunks? \S+(?: \S+)?>$", re.MULTILINE)
CHUNK_HEADER = re.compile(r"^### \[(?P<label>[^\]]+)\] ?(?P<title>.*)$", re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_NAME_WORD = r"[A-Z][\w'&-]*"
MULTI_WORD_NAME = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:of|the|and|for|de|von|van)?\s*{_NAME_WORD})+")
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9&]{1,9}\b")
LONG_WITH_ABBR = re.compile(rf"({_NAME_WORD}(?:\s+(?:of|the|and|for)?\s*{_NAME_WORD})+)\s+\(([A-Z][A-Za-z0-9&]{{1,9}})\)")
# "X, also known (simply) as (the) Y (or (simply) Z)": Y and Z may be lower case ("the optimizer").
_ALIAS = r"([A-Za-z][\w-]*(?: [a-z][\w-]*){0,2}?|[A-Z][\w-]*(?: [A-Z][\w-]*)*)"
ALSO_KNOWN_AS = re.compile(
    rf"({_NAME_WORD}(?:\s+{_NAME_WORD})*),?\s+(?:also known|aka|a\.k\.a\.)(?:\s+simply)?(?:\s+as)?\s+(?:the\s+)?"
    rf"{_ALIAS}(?:\s+or\s+(?:simply\s+)?(?:the\s+)?{_ALIAS})?(?=[,.;:)])"
)
DEFINITION = re.compile(r"^(?:(?:The|A|An)\s+)?(?P<term>[\w][\w '-]{1,60}?)\s+(?:is|are)\s+(?:a|an|the)\s+\w")
LEADING_STOPWORDS = {"The", "A", "An", "In", "On", "At", "By", "For", "From", "With", "This", "That", "These", "Its", "Their", "When", "While", "After", "Before", "Since", "Both", "Each", "Every", "Many", "Most", "Some", "Because", "Without", "Under", "Unlike", "During", "Although", "If", "Once", "Until", "Why", "How", "What", "Where", "Only", "All", "Any", "Like", "Also"}
ORGANISATION_WORDS = {"inc", "corp", "corporation", "company", "ltd", "university", "institute", "agency", "foundation", "group", "bank", "labs", "society"}


def sentences(text: str) -> list[str]:
    """Sentences of each line of prose. A line break ends a sentence (so a heading never runs
    into the paragraph under it); headings, table rows and code blocks are left out."""
    out = []
    in_code = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        flat = " ".join(stripped.lstrip("-*> ").split())
        if in_code or not flat or "|" in flat or not flat.endswith((".", "!", "?", ":")):
            continue
        out.extend(s.strip() for s in SENTENCE_END.split(flat) if s.strip())
    return out


def _strip_leading(name: str) -> str:
    words = name.split()
    while words and (words[0] in LEADING_STOPWORDS or words[0].islower()):
        words.pop(0)
    return " ".join(words)


def _tokens(name: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", name.lower())}


def acronym_of(short: str, long: str) -> bool:
    """'IBM' / 'International Business Machines' (small words like 'of' may be skipped)."""
    letters = short.replace("&", "").upper()
    words = [w for w in re.findall(r"[A-Za-z0-9]+", long) if w]
    full = "".join(w[0] for w in words).upper()
    capitals = "".join(w[0] for w in words if w[0].isupper()).upper()
    return len(letters) >= 2 and letters in (full, capitals)


def same_thing(a: str, b: str, a_aliases: list[str] | None = None, b_aliases: list[str] | None = None) -> bool:
    """The rule the scripted judge uses: acronyms, shared aliases or token overlap (Jaccard) ≥ 0.5."""
    names_a = [a, *(a_aliases or [])]
    names_b = [b, *(b_aliases or [])]
    for x in names_a:
        for y in names_b:
            if x.lower() == y.lower() or acronym_of(x, y) or acronym_of(y, x):
                return True
    ta, tb = _tokens(a), _tokens(b)
    return bool(ta and tb) and len(ta & tb) / len(ta | tb) >= 0.5


# ---- MAP -----------------------------------------------------------------------------------


def parse_chunks(prompt: str) -> list[tuple[str, str, str]]:
    """(label, header, text) of every `### [cN] header` block; a chunk runs to the next header."""
    found = list(CHUNK_HEADER.finditer(prompt))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(prompt)
        text = FENCE_LINE.sub("", prompt[match.end() : end])  # the keyed fence around each chunk
        out.append((match["label"], match["title"].strip(), text.strip()))
    return out


def listed_types(prompt: str, heading: str) -> list[str]:
    section = re.search(rf"^{heading}[^\n]*:\n((?:- [^\n]+\n?)+)", prompt, re.MULTILINE)
    if not section:
        return []
    return [re.match(r"- ([^:\n]+)", line).group(1).strip() for line in section.group(1).splitlines() if line.startswith("- ")]  # type: ignore[union-attr]


def _entity_type(name: str, types: list[str], aliases: set[str]) -> str:
    words = _tokens(name)
    org_like = [t for t in types if t.lower() in ("organization", "organisation", "org", "company")]
    technical = any(t.lower() == "component" for t in types)
    # Outside technical templates, organisations are what acronyms usually abbreviate; in a
    # technical corpus an acronym names a part of the system, and a name keeps one type
    # whether or not its chunk spells out the acronym.
    acronym = not technical and any(ACRONYM.fullmatch(n) for n in (name, *aliases))
    organisation = bool(words & ORGANISATION_WORDS) or acronym
    if organisation:
        return org_like[0] if org_like else (types[0] if types else "organization")
    others = [t for t in types if t not in org_like]
    return (others or types or ["thing"])[0]


def extract(prompt: str) -> dict[str, Any]:
    entity_types = listed_types(prompt, "Entity types")
    relation_types = listed_types(prompt, "Relation types")
    relation_type = "related_to" if "related_to" in relation_types or not relation_types else relation_types[0]
    reply: dict[str, list[Any]] = {"entities": [], "concepts": [], "claims": [], "relations": [], "topics": []}
    for label, header, text in parse_chunks(prompt):
        aliases: dict[str, set[str]] = {}
        alias_of: dict[str, str] = {}
        chunk_sentences = sentences(text)
        for sentence in chunk_sentences:
            for long, short in LONG_WITH_ABBR.findall(sentence):
                long = _strip_leading(long)
                aliases.setdefault(long, set()).add(short)
                alias_of[short] = long
            for long, *others in ALSO_KNOWN_AS.findall(sentence):
                long = _strip_leading(long)
                for other in filter(None, others):
                    aliases.setdefault(long, set()).add(other)
                    alias_of[other] = long
        entities: dict[str, str] = {}  # name -> the sentence describing it
        subjects: set[str] = set()  # names already described by a sentence they lead
        per_sentence: list[tuple[str, list[str]]] = []
        for sentence in chunk_sentences:
            names = []
            introduced = [long for long in aliases if long in sentence]  # may be one word ("Checkpointer")
            for raw in [*introduced, *MULTI_WORD_NAME.findall(sentence), *ACRONYM.findall(sentence)]:
                name = alias_of.get(_strip_leading(raw), _strip_leading(raw))
                if not name or name in names:
                    continue
                if any(name != other and name in other for other in names):
                    continue  # part of a longer name already found
                names.append(name)
            for n, name in enumerate(names):
                # As a model would, describe the thing itself: by a sentence it leads, else by
                # the part of the first sentence that starts at its name.
                if n == 0 and name not in subjects:
                    entities[name] = sentence
                    subjects.add(name)
                elif name not in entities:
                    at = sentence.find(name)
                    entities[name] = sentence[at:] if at > 0 else sentence
            per_sentence.append((sentence, names))
            definition = DEFINITION.match(sentence)
            if definition and len(definition["term"].split()) <= 5:
                reply["concepts"].append({"chunk": label, "term": definition["term"].strip(), "definition": sentence})
        for name, first in entities.items():
            reply["entities"].append(
                {
                    "chunk": label,
                    "name": name,
                    "type": _entity_type(name, entity_types, aliases.get(name, set())),
                    "description": first,
                    "aliases": sorted(aliases.get(name, ())),
                }
            )
        for sentence, names in per_sentence:
            if not names:
                continue
            reply["claims"].append({"chunk": label, "text": sentence, "entities": names})
            for i, source in enumerate(names):
                for target in names[i + 1 :]:
                    reply["relations"].append(
                        {
                            "chunk": label,
                            "source": source,
                            "target": target,
                            "type": relation_type,
                            "description": sentence,
                            "strength": 1.0,
                        }
                    )
        topic = header.split(" › ")[-1] if header else ""
        if topic:
            reply["topics"].append({"chunk": label, "name": topic})
    return reply


# ---- judgments, summaries, topics ----------------------------------------------------------

_SKETCH = re.compile(r"^(?P<side>A|B|Candidate|Page): (?P<name>.+?)(?: \((?P<type>[^()]*)\))?(?: aliases: (?P<aliases>.+?))?(?: — .*)?$")


def _blocks(prompt: str) -> list[tuple[str, dict[str, tuple[str, list[str]]]]]:
    """`[label]` blocks with their A/B or Candidate/Page lines: (name, aliases)."""
    out: list[tuple[str, dict[str, tuple[str, list[str]]]]] = []
    for line in prompt.splitlines():
        head = re.match(r"^\[(\w+)\](?: |$)", line)
        if head:
            out.append((head.group(1), {}))
            continue
        sketch = _SKETCH.match(line)
        if sketch and out:
            aliases = [a.strip() for a in (sketch["aliases"] or "").split(";") if a.strip()]
            out[-1][1][sketch["side"]] = (sketch["name"].strip(), aliases)
    return out


def judge(prompt: str, left: str, right: str, key: str) -> dict[str, Any]:
    decisions = []
    for label, sides in _blocks(prompt):
        if left in sides and right in sides:
            (a, a_aliases), (b, b_aliases) = sides[left], sides[right]
            decisions.append({key: label, "same": same_thing(a, b, a_aliases, b_aliases)})
    return {"decisions": decisions}


def summarize(prompt: str) -> dict[str, Any]:
    limit = re.search(r"at most (\d+) characters", prompt)
    max_chars = int(limit.group(1)) if limit else 400
    parts: list[str] = []
    for line in prompt.splitlines():
        if line.startswith("- "):
            first = (sentences(line[2:]) or [""])[0]
            if first and first not in parts and len(" ".join([*parts, first])) <= max_chars:
                parts.append(first)
    return {"description": " ".join(parts)}


def name_topic(prompt: str) -> dict[str, Any]:
    members = [m.group(1).strip() for m in re.finditer(r"^- (.+?) \([^()]*\)", prompt, re.MULTILINE)]
    title = " and ".join(members[:2]) or "Miscellany"
    return {"title": title, "summary": f"Topic covering {', '.join(members[:5])}." if members else ""}


# ---- pages ---------------------------------------------------------------------------------

EVIDENCE_LINE = re.compile(r"^\[\^(?P<ref>\d+)\] (?P<text>.+)$", re.MULTILINE)  # under a "Source: ..." line
LINK_LINE = re.compile(r"^\[\[(?P<slug>[^\]|]+)\]\] ", re.MULTILINE)


EXISTING_PAGE = "\n\nExisting page:\n"
UPDATE_RULE = "Answer with ONLY the new sentences"
MAX_TOKENS = re.compile(r"At most about (\d+) tokens")


def write_page(prompt: str) -> str:
    paragraphs = [f"{m['text'].strip()} [^{m['ref']}]" for m in EVIDENCE_LINE.finditer(prompt)]
    if UPDATE_RULE in prompt and EXISTING_PAGE in prompt:
        return "\n\n".join(paragraphs)  # an update that asks only for what is new
    # As a model told the page's length would: stop adding evidence once it is long enough.
    limit = MAX_TOKENS.search(prompt)
    if limit:
        budget, used, kept = int(limit.group(1)), 0, []
        for paragraph in paragraphs:
            used += count_tokens(paragraph)
            if used > budget and kept:
                break
            kept.append(paragraph)
        paragraphs = kept
    links = [m["slug"] for m in LINK_LINE.finditer(prompt)][:3]
    if links:
        paragraphs.append("See also " + ", ".join(f"[[{slug}]]" for slug in links) + ".")
    return "\n\n".join(paragraphs)


SENTENCE_EVIDENCE = re.compile(r"^\[(?P<ref>\d+)\] (?P<text>.+)$", re.MULTILINE)  # a page asked as sentences


def page_sentences(prompt: str) -> dict[str, Any]:
    """A page asked as JSON sentences: each evidence item restated, citing its label."""
    return {"sentences": [{"text": m["text"].strip(), "cites": [m["ref"]]} for m in SENTENCE_EVIDENCE.finditer(prompt)]}


UPDATE_PAGE = re.compile(r"^### \[(?P<label>[^\]]+)\] ", re.MULTILINE)


def update_pages(prompt: str) -> dict[str, Any]:
    """A grouped update: for each `### [uN] Title` block, its new evidence as paragraphs."""
    found = list(UPDATE_PAGE.finditer(prompt))
    items = []
    for i, match in enumerate(found):
        block = prompt[match.end() : found[i + 1].start() if i + 1 < len(found) else len(prompt)]
        paragraphs = [f"{m['text'].strip()} [^{m['ref']}]" for m in EVIDENCE_LINE.finditer(block)]
        items.append({"page": match["label"], "markdown": "\n\n".join(paragraphs)})
    return {"pages": items}


class KnowledgeResponder:
    """Answers each task by its schema name (json) or as a page (plain text)."""

    def __call__(self, request: ChatRequest) -> str:
        prompt = request.prompt
        name = request.schema_name
        if name is None:
            return write_page(prompt)
        if name == "extraction":
            answer = extract(prompt)
        elif name == "pairs":
            answer = judge(prompt, "A", "B", "pair")
        elif name == "matches":
            answer = judge(prompt, "Candidate", "Page", "question")
        elif name == "description":
            answer = summarize(prompt)
        elif name == "topic":
            answer = name_topic(prompt)
        elif name == "page_additions":
            answer = update_pages(prompt)
        elif name == "page_sentences":
            answer = page_sentences(prompt)
        else:
            answer = {}
        return json.dumps(answer)
