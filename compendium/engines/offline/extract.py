"""MAP without a model: entities, concepts, claims, relations and topics of a chunk by rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...templates.schema import Template
from ..tasks import (
    ChunkInput,
    ClaimItem,
    ConceptItem,
    EntityItem,
    ExtractionBatch,
    ExtractionReply,
    RelationItem,
    TopicItem,
)
from .aliases import find_aliases
from .definitions import is_purpose_line, purpose_name
from .names import (
    Span,
    TypeRules,
    cached_type,
    entity_type_rules,
    entity_type_specs,
    find_spans,
    is_acronym,
    name_key,
    relation_type_rules,
)
from .phrases import Mention, definition_of, key_phrases, word_tokens
from .relations import Typed, describe_between, relation_type
from .sentences import Sentence, clean_heading, sentences_of, starts_mid_sentence
from .standalone import ABOUT_ITSELF, OWN_KIND
from .subjects import (
    is_member,
    is_option,
    is_type,
    licence_text,
    man_page_name,
    never_subject,
    owner_name,
    release_notes,
    scope_of,
    term_name,
    value_literal,
)
from .words import (
    BOILERPLATE,
    FUNCTION_WORDS,
    GENERIC_HEADS,
    SENTENCE_STARTERS,
    VERBS,
    WEAK_MODIFIERS,
)

_MID_CAP = re.compile(r"(?<=[\s(\"'])(?<!: )[A-Z][\w'-]*")  # not opening a clause after a colon
_CLAUSE_BREAK = re.compile(r"[;:]|\s[—–-]\s")
_LOWER_WORD = re.compile(r"\b[a-z][a-z-]+\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_CLAIM_WORDS = (5, 70)
_MAX_GAP_WORDS = 15  # names further apart than this in a sentence are not related by it
_SUBJECT_OFFSET = 12  # characters allowed before a subject ("The ", "An ", "**")
_WINDOW = 3  # a mention is paired with at most the next three mentions of its sentence


@dataclass(slots=True)
class _Item:
    key: str
    name: str
    kind: str  # span kind, "phrase" or "defined"
    first: int  # sentence index of the first mention
    aliases: list[str] = field(default_factory=list)
    sentences: list[int] = field(default_factory=list)
    definition: str = ""

    @property
    def is_concept(self) -> bool:
        return self.kind in ("phrase", "defined") or (self.kind == "term" and self.name.islower())


def extract(batch: ExtractionBatch, template: Template) -> ExtractionReply:
    """Extraction of every chunk of a batch, labelled with the chunk's label."""
    reply = ExtractionReply(entities=[], concepts=[], claims=[], relations=[], topics=[])
    rules = (entity_type_rules(template), relation_type_rules(template))
    for chunk in batch.chunks:
        part = extract_chunk(chunk, template, rules=rules)
        reply.entities.extend(part.entities)
        reply.concepts.extend(part.concepts)
        reply.claims.extend(part.claims)
        reply.relations.extend(part.relations)
        reply.topics.extend(part.topics)
    return reply


def _is_heading_line(text: str, heading_path: list[str]) -> bool:
    """A heading that reached the text as a plain line (HTML, PDF, DOCX): a section label, not
    prose, so its words are neither names nor claims ("Return Value", "See Also")."""
    line = text.strip()
    if line.endswith((".", "!", "?", ":", ";", ",")) or len(line.split()) > 8:
        return False
    return line.lower() in {h.strip().lower() for h in heading_path} or line.istitle()


def extract_chunk(
    chunk: ChunkInput, template: Template, *, rules: tuple[TypeRules, TypeRules] | None = None
) -> ExtractionReply:
    """Extraction of one chunk; `rules` (entity and relation type rules) saves recompiling."""
    _entity_rules, relation_rules = rules or (  # entity rules: checked here, cached by specs
        entity_type_rules(template),
        relation_type_rules(template),
    )
    specs = entity_type_specs(template)
    # A reference page's title "pathlib — Object-oriented filesystem paths" is its definition.
    every = [*_purpose_headings(chunk), *sentences_of(chunk.text, chunk.blocks)]
    purpose = [purpose_name(s.text) for s in every]
    # A glossary's term ("Checkpoint" over its definition) is title-like but no section label.
    heading_line = [not s.term and not purpose[i] and _is_heading_line(s.text, chunk.heading_path)
                    for i, s in enumerate(every)]
    limit = template.map.max_items_per_chunk
    # a term is title-cased like a heading ("Range Partitioning"): its capitals say nothing
    mid_caps = {w for s in every if not s.term for w in _MID_CAP.findall(s.text)}
    lowercase = set(_LOWER_WORD.findall(chunk.text))
    every_spans = [_with_purpose_name(find_spans(s.text, mid_caps, lowercase), purpose[i]) for i, s in enumerate(every)]
    # Aliases are read from headings and glossary entries too ("Write-Ahead Logging (WAL)",
    # "GIN" over "Generalized Inverted Index"), though their lines are neither names nor claims.
    alias_of = find_aliases(every, every_spans, mid_caps)  # key -> canonical key; adds long forms
    kept = [i for i, heading in enumerate(heading_line) if not heading]
    sentences = [every[i] for i in kept]
    spans = [every_spans[i] for i in kept]
    purposes = [purpose[i] for i in kept]
    # A definition block's first sentence is the authors' definition, with or without a full stop.
    claim_like = [not s.term and (_is_claim_sentence(s.text) or bool(purposes[i])
                                  or (bool(s.defines) and s.position == 0 and is_purpose_line(s.text)))
                  for i, s in enumerate(sentences)]
    tokens = [word_tokens(s.text, mid_caps) for s in sentences]
    headings = " ".join(chunk.heading_path).lower()
    parameters = _signature_parameters(sentences)

    items: dict[str, _Item] = {}
    mentions: list[list[Mention]] = []
    for i, sentence_spans in enumerate(spans):
        found: list[Mention] = []
        for span in sentence_spans:
            bare = man_page_name(span.text)
            if bare != span.text:  # "git-config(1)" names the git-config page
                span = Span(span.start, span.end, bare, span.kind)
            key = name_key(span.text)
            if not key:
                continue
            canonical = alias_of.get(key, key)
            item = items.get(canonical)
            if item is None:
                item = items[canonical] = _Item(canonical, span.text, span.kind, i)
            elif span.text != item.name and canonical != key and span.text not in item.aliases:
                item.aliases.append(span.text)
            _prefer_name(item, span, key)
            found.append(Mention(span.start, span.end, canonical))
        mentions.append(found)

    # Glossary entries: a lone term over the block that defines it ("decorator" / "A function
    # returning another function ..."), as a definition list or glossary page writes them.
    for i in range(len(sentences) - 1):
        term = _glossary_term(sentences[i], sentences[i + 1])
        if term is None:
            continue
        key = alias_of.get(name_key(term), name_key(term))
        item = items.get(key)
        if item is None:
            item = items[key] = _Item(key, term, "defined", i)
            mentions[i].append(Mention(0, len(sentences[i].text), key))
        elif item.kind == "code" and not item.definition:
            # The glossary defines the term ("Checkpoint"); inline code of the same words in the
            # entry (`CHECKPOINT`) is the command named after it, not what is defined here.
            item.name, item.kind = term, "defined"
        if not item.definition:
            item.definition = sentences[i + 1].text
    # Terms defined by a sentence ("A checkpoint is a point in ...") and key phrases.
    for i, sentence in enumerate(sentences):
        if sentence.defines:
            continue  # a definition block defines its own term (or its owner's member): see _about
        term = purposes[i] or definition_of(sentence.text, spans[i], mid_caps)
        if term is None or parameters.get(name_key(term), ("", ""))[1] == term.strip("`"):
            continue  # "`headers` is a `dict` of ...": a parameter of the signature above
        key = alias_of.get(name_key(term), name_key(term))
        item = items.get(key)
        if item is None:
            item = items[key] = _Item(key, term, "defined", i)
        if not item.definition:
            item.definition = sentence.text
    for phrase in key_phrases([s.text for s in sentences], tokens, mentions, headings):
        key = name_key(phrase)
        if key not in items:
            items[key] = _Item(key, phrase, "phrase", 10**6)
    _find_word_mentions(items, tokens, mentions)
    _drop_common_code_words(items, sentences, mentions, headings, chunk.text)
    _drop_never_subjects(items, mentions, parameters)
    for i, found in enumerate(mentions):
        for mention in found:
            item = items[mention.key]
            if not item.sentences or item.sentences[-1] != i:
                item.sentences.append(i)
            item.first = min(item.first, i)
    about = _about(chunk, items, sentences, mentions, alias_of, claim_like, parameters)
    for key, item in items.items():
        if name_key(item.name) != key:  # named by its short form: the long form may be in a heading
            long = _alias_text(key, every_spans, item)
            if long:
                item.aliases.append(item.name)
                item.name = long
        for alias_key, target in alias_of.items():
            if target == key and alias_key != key:
                alias = _alias_text(alias_key, every_spans, item)
                if alias and alias not in item.aliases and alias != item.name:
                    item.aliases.append(alias)

    # Every name stays an entity (a link target, an alias); the claims name only their subjects.
    ranked = _rank([it for it in items.values() if it.sentences or it.definition], headings)
    kept = {it.key for it in ranked[: 2 * limit]}
    label = chunk.label
    entities: list[EntityItem] = []
    concepts: list[ConceptItem] = []
    for item in ranked:
        if item.key not in kept:
            continue
        # Only what the authors define describes a subject: a sentence merely naming it first
        # is a fact of its page, not what it is.
        description = item.definition
        if item.is_concept and not item.aliases:  # a concept cannot carry aliases: keep them
            if len(concepts) < limit:
                concepts.append(ConceptItem(chunk=label, term=item.name, definition=description))
        elif len(entities) < limit:
            entities.append(
                EntityItem(
                    chunk=label,
                    name=item.name,
                    type=cached_type(specs, item.name, item.kind, tuple(item.aliases)),
                    description=description,
                    aliases=item.aliases,
                )
            )
    named = {e.name for e in entities} | {c.term for c in concepts}
    names = {key: it.name for key, it in items.items() if it.name in named}
    if release_notes(chunk.document_title, chunk.heading_path):
        # Release notes define nothing and earn no page: their items are history of subjects
        # defined elsewhere (REDUCE finds them by name), never a name of their own.
        names = {k: items[k].name for keys in about for k in keys if k in items}
        entities, concepts = [], []
    if licence_text(chunk.document_title, chunk.heading_path):
        # A licence's text names and defines (its "Secondary Sections", "Program"), but a reader
        # of the manual looks none of it up: nothing of it is a subject or a subject's fact.
        return ExtractionReply(entities=[], concepts=[], claims=[], relations=[], topics=[])
    claims = _claims(label, sentences, claim_like, about, names, limit)
    relations = _relations(label, sentences, mentions, names, relation_rules, limit) if entities or concepts else []
    relations += _document_relations(label, chunk, sentences, about, names, relation_rules, relations, limit)
    topics = [TopicItem(chunk=label, name=t) for t in _topics(chunk, ranked, names)] if entities or concepts else []
    return ExtractionReply(
        entities=entities, concepts=concepts, claims=claims, relations=relations, topics=topics
    )


def _purpose_headings(chunk: ChunkInput) -> list[Sentence]:
    """The chunk's headings shaped as purpose lines ("json — JSON encoder and decoder"), read
    as sentences: the text holds them verbatim, so they can be cited."""
    out = []
    for kind, start, end, *_ in chunk.blocks or ():  # a definition adds its term and scope
        if kind == "heading":
            line = " ".join(chunk.text[start:end].split())
            if purpose_name(line):
                out.append(Sentence(line, -1, 0))
    return out


def _with_purpose_name(spans: list[Span], name: str | None) -> list[Span]:
    """A purpose line names its subject before the dash, however it is written (`pathlib`)."""
    if not name:
        return spans
    inner = name.strip("`*")  # "`xml.dom.pulldom` — ...": the marks are markup
    if not inner or any(s.text == inner and s.start <= 1 for s in spans):
        return spans
    start = name.index(inner)
    kind = "code" if _IDENTIFIER.fullmatch(inner) else "name"
    return [Span(start, start + len(inner), inner, kind), *[s for s in spans if s.start >= len(name)]]


_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")
_GLOSSARY_DEFINITION = re.compile(r"^(?:An?|The|One|Any)\s+\w")


def _glossary_term(term: Sentence, following: Sentence) -> str | None:
    """The term of a glossary entry: a block of one to four plain words, no sentence of its
    own, followed by a block opening like a definition ("A ...", "The ...")."""
    text = term.text.strip().rstrip("¶").strip()  # Sphinx marks a glossary term's anchor with ¶
    words = text.split()
    if term.position != 0 or following.position != 0 or not 1 <= len(words) <= 4:
        return None
    if text[-1:] in ".!?:;," or not all(w.replace("-", "").replace("/", "").isalnum() for w in words):
        return None
    lowered = [w.lower() for w in words]
    if lowered[0] in FUNCTION_WORDS or lowered[-1] in FUNCTION_WORDS or " ".join(lowered) in BOILERPLATE:
        return None
    if any(w in VERBS for w in lowered) or lowered[-1] in GENERIC_HEADS:
        return None
    if len(following.text.split()) < 5 or not following.text[:1].isupper():
        return None
    if not (_GLOSSARY_DEFINITION.match(following.text) or text.islower()):
        return None  # a capitalised line over prose is as often a heading as a term
    return text


def _prefer_name(item: _Item, span: Span, key: str) -> None:
    """Keep the most name-like spelling: the long form over an acronym, capitals over lowercase."""
    if key != item.key:
        return  # an alias spelling
    current_key = name_key(item.name)
    if current_key != item.key or (item.name.islower() and not span.text.islower()):
        if current_key != item.key and item.name not in item.aliases:
            item.aliases.append(item.name)
        item.name, item.kind = span.text, span.kind


def _find_word_mentions(items: dict[str, _Item], tokens, mentions: list[list[Mention]]) -> None:
    """Mentions of lowercase phrases and defined terms, looked up as word n-grams."""
    wanted = {key for key, it in items.items() if it.kind in ("phrase", "defined", "term")}
    if not wanted:
        return
    lengths: dict[str, set[int]] = {}  # first word -> lengths of the wanted phrases it opens
    for key in wanted:
        words = key.split()
        if words:  # a name of symbols only has an empty key (seen in the Python manual)
            lengths.setdefault(words[0], set()).add(len(words))
    for i, words in enumerate(tokens):
        found = mentions[i]
        added = False
        for j, word in enumerate(words):
            sizes = lengths.get(word.key)
            if not sizes:
                continue
            for n in sorted(sizes, reverse=True):
                if j + n > len(words):
                    continue
                key = " ".join(w.key for w in words[j : j + n])
                if key not in wanted:
                    continue
                start, end = word.start, words[j + n - 1].end
                if any(m.start < end and start < m.end for m in found):
                    continue
                found.append(Mention(start, end, key))
                added = True
                break
        if added:
            found.sort(key=lambda m: m.start)


_PLAIN_CODE_WORD = re.compile(r"^[a-z]+$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_COMMON_WORDS = FUNCTION_WORDS | VERBS | GENERIC_HEADS | BOILERPLATE | WEAK_MODIFIERS | SENTENCE_STARTERS


def _drop_common_code_words(
    items: dict[str, _Item], sentences: list[Sentence], mentions: list[list[Mention]], headings: str, text: str
) -> None:
    """A lone lowercase code word that is also an English word (`current`, `always`, `on`: an
    enum value) needs more than its backticks to be a name: a definition, a heading or a
    glossary term naming it, or code marks in two sentences. Its mentions go with it."""
    prose: set[str] | None = None
    dropped = set()
    for key, item in items.items():
        if item.kind != "code" or not _PLAIN_CODE_WORD.match(item.name) or item.definition:
            continue
        if prose is None:  # the chunk's words outside inline code, read once
            prose = set(_LOWER_WORD.findall(_CODE_SPAN.sub(" ", text)))
        if item.name not in _COMMON_WORDS and item.name not in prose:
            continue  # a word only ever written as code (`asyncio`, `pathlib`)
        in_sentences = [i for i, found in enumerate(mentions) if any(m.key == key for m in found)]
        if len(in_sentences) >= 2 or re.search(rf"\b{re.escape(item.name)}\b", headings):
            continue
        if any(sentences[i].term for i in in_sentences):
            continue
        dropped.add(key)
    if dropped:
        for key in dropped:
            del items[key]
        for found in mentions:
            found[:] = [m for m in found if m.key not in dropped]


def _alias_text(alias_key: str, spans: list[list[Span]], item: _Item) -> str:
    for sentence_spans in spans:
        for span in sentence_spans:
            if name_key(span.text) == alias_key:
                return span.text
    return ""


def _rank(items: list[_Item], headings: str) -> list[_Item]:
    def score(it: _Item) -> tuple[float, int]:
        value = len(it.sentences) + (2.0 if it.definition else 0.0) + 0.5 * len(it.aliases)
        if it.kind in ("name", "acronym", "ident", "code", "file"):
            value += 1.0
        if it.name.lower() in headings:
            value += 1.5
        return (-value, it.first)

    return sorted(items, key=score)


def _is_claim_sentence(text: str) -> bool:
    """Informative prose: bounded length, ends like a sentence, has a verb, not a question."""
    words = _WORD.findall(text)
    if not _CLAIM_WORDS[0] <= len(words) <= _CLAIM_WORDS[1]:
        return False
    if text.endswith(("?", ":", ",", ";")) or text[-1:] not in ".!)\"'”`":
        return False
    if text.count("`") > 6 or text.count("=") > 1 or starts_mid_sentence(text):
        return False
    lower = [w.lower() for w in words]
    if lower[0] in BOILERPLATE and len(lower) < 8:
        return False
    content = [w for w in lower if w not in FUNCTION_WORDS]
    if len(content) < 3:
        return False
    return any(w in VERBS or (len(w) > 4 and w.endswith("ed")) for w in lower)


def _claims(label: str, sentences, claim_like, about: list[list[str]], names, limit: int) -> list[ClaimItem]:
    """The chunk's claim sentences, each naming only the subjects it is about, in text order."""
    out = []
    for i, sentence in enumerate(sentences):
        if not claim_like[i]:
            continue
        subjects = [names[k] for k in about[i] if k in names]
        if subjects:
            out.append(ClaimItem(chunk=label, text=sentence.text, entities=list(dict.fromkeys(subjects))))
        if len(out) >= limit:
            break
    return out


def _names_in(found: list[Mention], names: dict[str, str]) -> list[str]:
    out: list[str] = []
    for mention in found:
        name = names.get(mention.key)
        if name and name not in out:
            out.append(name)
    return out


def _relations(
    label, sentences, mentions, names, rules: TypeRules, limit: int
) -> list[RelationItem]:
    pairs: dict[tuple[str, str], dict] = {}
    for i, sentence in enumerate(sentences):
        found = _merge_repeats([m for m in mentions[i] if m.key in names])
        for a in range(len(found)):
            for b in range(a + 1, min(len(found), a + 1 + _WINDOW)):
                first, second = found[a], found[b]
                if first.key == second.key or second.start < first.end:
                    continue
                between = sentence.text[first.end : second.start]
                if len(between.split()) > _MAX_GAP_WORDS or _CLAUSE_BREAK.search(between):
                    continue
                key = (min(first.key, second.key), max(first.key, second.key))
                entry = pairs.get(key)
                if entry is None:
                    entry = pairs[key] = {"sentences": set(), "typed": None, "order": len(pairs)}
                entry["sentences"].add(i)
                typed = relation_type(between, rules)
                if (
                    "," in between and typed.cued
                ):  # a cue in another clause says nothing of these two
                    typed = Typed(relation_type("", rules).type, False, False)
                if entry["typed"] is None or (typed.cued and not entry["typed"][0].cued):
                    source, target = (second, first) if typed.reverse else (first, second)
                    description = describe_between(between) or sentence.text
                    entry["typed"] = (typed, source.key, target.key, description)
    ranked = sorted(pairs.values(), key=lambda e: (-len(e["sentences"]), e["order"]))[:limit]
    out = []
    for entry in sorted(ranked, key=lambda e: e["order"]):
        typed, source, target, description = entry["typed"]
        out.append(
            RelationItem(
                chunk=label,
                source=names[source],
                target=names[target],
                type=typed.type,
                description=description,
                strength=float(len(entry["sentences"])),
            )
        )
    return out


def _merge_repeats(found: list[Mention]) -> list[Mention]:
    """ "Write-Ahead Log (WAL)" is one mention, not two: merge neighbours naming one item."""
    merged: list[Mention] = []
    for mention in found:
        if merged and merged[-1].key == mention.key:
            merged[-1] = Mention(merged[-1].start, max(merged[-1].end, mention.end), mention.key)
        else:
            merged.append(mention)
    return merged


def _topics(chunk: ChunkInput, ranked: list[_Item], names: dict[str, str]) -> list[str]:
    topics: list[str] = []
    for heading in reversed(chunk.heading_path):
        text = clean_heading(heading)
        if text and text.lower() not in BOILERPLATE and len(text.split()) <= 8:
            topics.append(text)
            break
    for item in ranked:
        if len(topics) >= 4:
            break
        if item.key in names and len(item.sentences) >= 2 and item.name not in topics:
            topics.append(item.name)
    return topics


# What may stand before a sentence's grammatical subject: an article or determiner, markup.
_BEFORE_SUBJECT = re.compile(r"^(?:(?:the|a|an|this|each|every|all|both|only|any|some|no)\s+)?[`*\"'“(]*$", re.IGNORECASE)


_PREPOSITIONS = frozenset("of for to with in on from by at as into than".split())


def _drop_never_subjects(items: dict[str, _Item], mentions: list[list[Mention]],
                         parameters: dict[str, tuple[str, str]]) -> None:
    """Options, contractions, single letters and lone adjectives are never subjects: an option
    is a part of its owner, the rest are words. Nor is a literal value no one defines here, nor
    a parameter of a signature in the chunk (a part of its function, as an option is)."""
    dropped = {key for key, item in items.items()
               if never_subject(item.name) or (value_literal(item.name) and not item.definition)
               or (parameters.get(key, ("", ""))[1] == item.name.strip("`") and not item.definition)}
    if dropped:
        for key in dropped:
            del items[key]
        for found in mentions:
            found[:] = [m for m in found if m.key not in dropped]


_SIGNATURE = re.compile(r"^`+([^`(]+)\(([^`)]*)\)`*")
_PARAMETER_OPENING = re.compile(r"^(?:The\s+)?`+\**([A-Za-z_]\w*)`+")


# The sections of a man page ("NAME", "SYNOPSIS", "DESCRIPTION", ...), as man(7) lists them.
_MAN_SECTIONS = frozenset({"name", "synopsis", "description", "options", "exit status", "return value", "errors",
                           "environment", "files", "see also", "bugs", "author", "authors", "examples", "notes",
                           "reporting bugs", "copyright", "commands"})


def _man_page_spelling(owner: str, heading_path: list[str]) -> str:
    """A man page's title in capitals ("NGETTEXT") names a command or function written in small
    letters, as its NAME line has it: the chunks without that line spell it the same."""
    if owner.isupper() and re.fullmatch(r"[A-Z][A-Z0-9_.+-]*", owner) and any(
            h.strip().lower() in _MAN_SECTIONS for h in heading_path[1:]):
        return owner.lower()
    return owner


def _own_function(sentence: Sentence, chunk: ChunkInput, term: str, owner: str) -> bool:
    """A function's signature defined where nothing written as code owns it (a C API's
    "`gcry_error_t gcry_cipher_open (...)`: This function creates ..." in a chapter titled
    "Working with cipher handles"): a subject of its own, not a member of the chapter."""
    return (not sentence.scope and "(" in sentence.defines and sentence.defines.rstrip().endswith(")")
            and not _code_owner(sentence, chunk, term) and not (owner and _IDENTIFIER.fullmatch(owner)))


def _signature_parameters(sentences: list[Sentence]) -> dict[str, tuple[str, str]]:
    """The parameters of the signatures that open the chunk's definition blocks
    ("`HttpResponse.__init__(content=b'', headers=None)`: ..."), by key: their owner (the
    block's scope, else the function itself) and their name as written. A name written
    otherwise ("HttpOnly" beside `httponly=False`) is a subject of its own."""
    out: dict[str, tuple[str, str]] = {}
    for sentence in sentences:
        match = _SIGNATURE.match(sentence.text) if sentence.defines and sentence.position == 0 else None
        if match is None:
            continue
        owner = sentence.scope or match[1].strip()
        for part in match[2].split(","):
            name = re.split(r"[=:]", part, maxsplit=1)[0].strip(" *")
            if name.isidentifier() and name not in ("self", "cls"):
                out.setdefault(name_key(name), (owner, name))
    return out


def _subject_of(sentence: Sentence, found: list[Mention]) -> str | None:
    """The key of the sentence's grammatical subject: the name it opens with, after at most an
    article or determiner ("The `-s` option ..." is about what follows "The")."""
    if not found:
        return None
    first = min(found, key=lambda m: m.start)
    if first.start > _SUBJECT_OFFSET or not _BEFORE_SUBJECT.match(sentence.text[: first.start]):
        return None
    after = sentence.text[first.end : first.end + 2]
    if after.startswith(("’s", "'s")):
        return None  # "Git's object store ...": the possessor is not the subject
    following = sentence.text[first.end :].split(None, 1)
    if following and following[0].lower() in _PREPOSITIONS:
        return None  # "A `dict` of values ...": the name qualifies the subject, it is not it
    return first.key


def _about(
    chunk: ChunkInput,
    items: dict[str, _Item],
    sentences: list[Sentence],
    mentions: list[list[Mention]],
    alias_of: dict[str, str],
    claim_like: list[bool],
    parameters: dict[str, tuple[str, str]],
) -> list[list[str]]:
    """For each sentence, the keys of the subjects it is about: the term a definition block
    defines (its owner's, for a member such as an option or a method), the subject the
    sentence opens with, and the subject whose home the section is (the heading naming it, or
    the document's own subject). A release note is about what it opens with only."""
    owner = _man_page_spelling(owner_name(chunk.document_title), chunk.heading_path)
    owner_key = name_key(owner) if owner and not never_subject(owner) else ""
    owner_key = alias_of.get(owner_key, owner_key)
    notes = release_notes(chunk.document_title, chunk.heading_path)
    out: list[list[str]] = []
    member_of: dict[str, str] = {}  # key of a member defined here -> key of its owner
    for i, sentence in enumerate(sentences):
        keys: list[str] = []
        section = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
        if sentence.term or section.lower().rstrip(":") in _FURNITURE:
            out.append(keys)  # a term line; a colophon's copyright, credits or bug address
            continue
        if sentence.defines:
            term = term_name(sentence.defines)
            if owner_key and name_key(term) == owner_key:
                # The document's own subject defined (a man page's NAME line): its definition.
                if owner_key not in items:
                    items[owner_key] = _Item(owner_key, owner, "code" if _IDENTIFIER.fullmatch(owner) else "name", i)
                if not items[owner_key].definition and sentence.position == 0:
                    items[owner_key].definition = sentence.text
                    if items[owner_key].name.isupper() and not term.isupper():
                        items[owner_key].name = term  # a title in capitals ("MSGCONV"): its NAME line's spelling
                keys.append(owner_key)
            elif is_option(sentence.scope) and not _headed_by(sentence, chunk, term):
                # a value an option takes ("--sentence-end"'s `double-space`): never a subject,
                # it is said of whatever the option belongs to
                if value_owner := member_of.get(name_key(sentence.scope)) or owner_key:
                    keys.append(value_owner)
                    member_of[name_key(term)] = value_owner
            elif not is_type(sentence.defines) and not _own_function(sentence, chunk, term, owner) and (
                    bool(_code_owner(sentence, chunk, term)) or (
                    not _headed_by(sentence, chunk, term) and not _expanded(term, alias_of) and (
                        is_member(sentence.defines)
                        or (owner_key and _PLAIN_TERM.match(term) and not _defines_a_thing(sentence, term))))):
                scope = _code_owner(sentence, chunk, term) or sentence.scope or scope_of(term)
                if scope and not never_subject(scope):
                    key = alias_of.get(name_key(scope), name_key(scope))
                    if key not in items:
                        items[key] = _Item(key, scope, "code", i)
                    keys.append(key)
                elif owner_key:
                    keys.append(owner_key)
                if keys and name_key(term):
                    member_of[name_key(term)] = keys[-1]  # its section's other sentences are the owner's too
            elif term and not never_subject(term):
                key = alias_of.get(name_key(term), name_key(term))
                if key:
                    item = items.get(key)
                    if item is None:
                        item = items[key] = _Item(key, term, "defined", i)
                    if not item.definition and sentence.position == 0 and not _describes_by_reference(sentence.text):
                        item.definition = sentence.text
                    keys.append(key)
        subject = None if sentence.defines else _subject_of(sentence, mentions[i])
        if subject is None and not sentence.defines and (opening := _PARAMETER_OPENING.match(sentence.text)):
            # "`headers` is a `dict` of ...", "The `headers` parameter was added.": its function's
            owner, name = parameters.get(name_key(opening[1]), ("", ""))
            if owner and name == opening[1] and not never_subject(owner):
                subject = alias_of.get(name_key(owner), name_key(owner))
                if subject not in items:
                    items[subject] = _Item(subject, owner, "code", i)
        if subject and subject not in keys:
            keys.append(subject)
        if notes:
            out.append(keys[:1])  # a release note is history of what it opens with, nothing more
            continue
        heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
        home = alias_of.get(name_key(heading), name_key(heading)) if heading else ""
        home = member_of.get(home, home)
        if home and home in items and not sentence.defines and not never_subject(items[home].name):
            if home not in keys:
                keys.append(home)
        elif owner_key and not keys and claim_like[i]:
            keys.append(owner_key)  # a sentence of the document about nothing else is its subject's
        out.append(keys)
    if owner_key and owner_key not in items and any(owner_key in keys for keys in out):
        kind = "code" if _IDENTIFIER.fullmatch(owner) else "name"
        items[owner_key] = _Item(owner_key, owner, kind, 0)
    if owner_key in items and not items[owner_key].definition:
        # A document's title names what its authors define there: its introduction, or the
        # section describing it, says what it is where no sentence defines it.
        path = chunk.heading_path
        top = not path or clean_heading(path[-1]).lower() in _DESCRIBING or (
            len(path) == 1 and name_key(owner_name(path[0])) == owner_key)
        # The document saying what it is itself ("This article describes ...") first, else
        # its first sentence that stands alone.
        candidates = [i for i, keys in enumerate(out) if top and owner_key in keys and claim_like[i] and (
            not sentence_leans(sentences[i]) or OWN_KIND.match(sentences[i].text))]
        chosen = next((i for i in candidates if ABOUT_ITSELF.match(sentences[i].text)
                       and not _WHOLE_WORK.match(sentences[i].text)), candidates[0] if candidates else None)
        if chosen is not None:
            items[owner_key].definition = sentences[chosen].text
    for i, keys in enumerate(out):
        for key in keys:
            item = items.get(key)
            if item is not None and (not item.sentences or item.sentences[-1] != i) and i not in item.sentences:
                item.sentences.append(i)
                item.sentences.sort()
                item.first = min(item.first, i)
    return out


# How a description of a thing opens: an article or determiner ("A class that ...", "The
# default ..."), where an option's, a value's or a subcommand's opens with what it does
# ("Remove a matching credential", "Generate a diff ...", "This option forces ...").
_THING_OPENING = re.compile(r"^(?:`[^`]+`:\s+)?(?:an?|the|one|any|each|every|some)\s", re.IGNORECASE)


def _defines_a_thing(sentence: Sentence, term: str) -> bool:
    """Whether a definition block describes its term as a thing of its own (a glossary entry),
    not as a member of the document's subject: it opens with an article, or with the term."""
    text = sentence.text
    if _THING_OPENING.match(text):
        return True
    opening = _TERM_OPENING.match(text)
    if opening is not None:  # "`term`: description", "term: description": what follows says
        text = text[opening.end():]
        if _THING_OPENING.match(text):
            return True
    return bool(term) and text.lower().lstrip("`*").startswith(term.lower())


_TERM_OPENING = re.compile(r"^(?:`+[^`]+`+|[^\s:`][^:`]{0,80}?):\s+")
# A description that only points at another entry ("Likewise for Lua, see ...", "Same as
# `--quiet`"): the term is a member of the list it stands in, not a subject defined here.
_BY_REFERENCE = re.compile(r"^(?:Likewise|Similarly|Ditto|Idem|Same\s+as|As\s+above|As\s+for|See\s+above|"
                           r"Alias\s+(?:for|of)|Synonym\s+(?:for|of))\b", re.IGNORECASE)


def _describes_by_reference(text: str) -> bool:
    at = text.find(": ", 0, 160)  # after the term, however many names it lists
    return bool(_BY_REFERENCE.match(text[at + 2 :] if at >= 0 else text))


# A document's furniture, the same in every page of a manual: its copyright and licence, its
# authors and credits, where to report bugs, where else to read. No sentence there is a fact of a subject, and the
# people it names are not subjects (the judging rules' "people's names from credits").
_FURNITURE = frozenset({"copyright", "license", "licence", "licensing", "author", "authors", "credits",
                        "acknowledgements", "acknowledgments", "reporting bugs", "colophon", "thanks",
                        "see also"})  # (a man page's pointers to other pages and manuals)
# Sections whose first sentence says what the document's subject is (a man page's
# "DESCRIPTION" opens on how it is used: its NAME line says what it is).
_DESCRIBING = frozenset({"overview", "introduction", "name", "purpose", "summary", "about"})
_LEANS = re.compile(r"^(?:It|Its|This|These|That|Those|They|Otherwise|However|But|And|Or|So|Also|Then)\b")


# "This manual is free documentation.": said in any of its chapters, of the whole work.
_WHOLE_WORK = re.compile(r"^(?:This|The\s+present)\s+(?:manual|book)\b")


def sentence_leans(sentence: Sentence) -> bool:
    """A sentence that leans on the one before ("It ...", "Otherwise ..."): no description alone.
    "This document ..." says what its document is."""
    return bool(_LEANS.match(sentence.text)) and not ABOUT_ITSELF.match(sentence.text)


# A term of plain words ("list", "erase", "merge backend"): described by what it does, it is a
# subcommand or value of the document's subject; an identifier (`max_wal_size`) names a thing.
_PLAIN_TERM = re.compile(r"^[A-Za-z][a-z]*(?: [a-z]+){0,3}$")
_CODE_NAME = re.compile(r"^[A-Za-z_][\w.:$-]*(?:\(\))?$")


def _code_owner(sentence: Sentence, chunk: ChunkInput, term: str) -> str:
    """The code name a definition list's term is a member of: the scope the reader gives (one
    token), or the heading above it when written like code ("CheckMessage" over its `hint`,
    "CACHES" over its `BACKEND`). A group heading ("Core Settings", "Glossary") owns nothing:
    its terms are subjects of their own."""
    heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
    for owner, given in ((sentence.scope, True), (heading, False)):
        owner = owner.strip().strip("`")
        if not owner or not _CODE_NAME.match(owner) or name_key(owner) == name_key(term):
            continue
        camel = any(c.isupper() for c in owner[1:]) and not owner.isupper()
        if given or camel or any(c in owner for c in "_.:("):
            # The reader's scope of one token is a code name ("Conversion", the class of its
            # methods); a heading is one only when written like code (a heading in capitals
            # is a man page's section: "OPTIONS").
            return owner
    return ""


def _headed_by(sentence: Sentence, chunk: ChunkInput, term: str) -> bool:
    """Whether the authors gave the term a heading of its own (a reference heading: Django's
    `ALLOWED_HOSTS` under "Core Settings"): a subject with its own section, whatever its shape."""
    heading = clean_heading(sentence.heading or (chunk.heading_path[-1] if chunk.heading_path else ""))
    return bool(term) and name_key(heading.strip("`")) == name_key(term)


def _expanded(term: str, alias_of: dict[str, str]) -> bool:
    """An acronym whose definition spells it out ("`GIN`: Generalized Inverted Index"): a
    subject of its own. A code list's entry ("`MO`: Macao") spells nothing: a value."""
    if not is_acronym(term):
        return False
    key = name_key(term)
    return alias_of.get(key, key) != key


def _document_relations(label: str, chunk: ChunkInput, sentences: list[Sentence], about: list[list[str]],
                        names: dict[str, str], rules: TypeRules, found: list[RelationItem],
                        limit: int) -> list[RelationItem]:
    """The document's subject is related to each subject its passage says something about (a
    command to the settings and terms its page defines), by the first sentence about it: what
    ties a wiki's pages to the page of the document that defines them."""
    owner = owner_name(chunk.document_title)
    owner_key = name_key(owner) if owner else ""
    if owner_key not in names:
        return []
    have = {(r.source, r.target) for r in found} | {(r.target, r.source) for r in found}
    out: list[RelationItem] = []
    default = relation_type("", rules).type
    for i, keys in enumerate(about):
        for key in keys:
            if key == owner_key or key not in names or len(found) + len(out) >= limit:
                continue
            pair = (names[owner_key], names[key])
            if pair in have:
                continue
            have.add(pair)
            have.add(pair[::-1])
            out.append(RelationItem(chunk=label, source=pair[0], target=pair[1], type=default,
                                    description=sentences[i].text, strength=1.0))
    return out
