"""MAP without a model: entities, concepts, claims, relations and topics of a chunk by rules."""

from __future__ import annotations

import re

from ...templates.schema import Template
from ..tasks import (
    ChunkInput,
    ConceptItem,
    EntityItem,
    ExtractionBatch,
    ExtractionReply,
    TopicItem,
)
from .aliases import find_aliases
from .chunk_layout import (
    glossary_term,
    is_heading_line,
    purpose_headings,
    signature_parameters,
    with_purpose_name,
)
from .chunk_names import (
    LOWER_WORD,
    Item,
    alias_text,
    drop_common_code_words,
    drop_never_subjects,
    find_word_mentions,
    prefer_name,
    rank,
)
from .chunk_relations import document_relations, sentence_relations
from .claims import claim_items, is_claim_sentence
from .definitions import is_purpose_line, purpose_name
from .member_names import qualify_members
from .names import (
    Span,
    TypeRules,
    cached_type,
    entity_type_rules,
    entity_type_specs,
    find_spans,
    name_key,
    relation_type_rules,
)
from .phrases import Mention, definition_of, key_phrases, word_tokens
from .sentence_subjects import subjects_by_sentence
from .sentences import clean_heading, sentences_of
from .subjects import licence_text, man_page_name, release_notes
from .words import BOILERPLATE

_MID_CAP = re.compile(r"(?<=[\s(\"'])(?<!: )[A-Z][\w'-]*")  # not opening a clause after a colon


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
    every = [*purpose_headings(chunk), *sentences_of(chunk.text, chunk.blocks)]
    purpose = [purpose_name(s.text) for s in every]
    # A glossary's term ("Checkpoint" over its definition) is title-like but no section label.
    heading_line = [not s.term and not purpose[i] and is_heading_line(s.text, chunk.heading_path)
                    for i, s in enumerate(every)]
    limit = template.map.max_items_per_chunk
    # a term is title-cased like a heading ("Range Partitioning"): its capitals say nothing
    mid_caps = {w for s in every if not s.term for w in _MID_CAP.findall(s.text)}
    lowercase = set(LOWER_WORD.findall(chunk.text))
    every_spans = [with_purpose_name(find_spans(s.text, mid_caps, lowercase), purpose[i]) for i, s in enumerate(every)]
    # Aliases are read from headings and glossary entries too ("Write-Ahead Logging (WAL)",
    # "GIN" over "Generalized Inverted Index"), though their lines are neither names nor claims.
    alias_of = find_aliases(every, every_spans, mid_caps)  # key -> canonical key; adds long forms
    kept = [i for i, heading in enumerate(heading_line) if not heading]
    sentences = [every[i] for i in kept]
    spans = [every_spans[i] for i in kept]
    purposes = [purpose[i] for i in kept]
    # A definition block's first sentence is the authors' definition, with or without a full stop.
    claim_like = [not s.term and (is_claim_sentence(s.text) or bool(purposes[i])
                                  or (bool(s.defines) and s.position == 0 and is_purpose_line(s.text)))
                  for i, s in enumerate(sentences)]
    tokens = [word_tokens(s.text, mid_caps) for s in sentences]
    headings = " ".join(chunk.heading_path).lower()
    parameters = signature_parameters(sentences)

    items: dict[str, Item] = {}
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
                item = items[canonical] = Item(canonical, span.text, span.kind, i)
            elif span.text != item.name and canonical != key and span.text not in item.aliases:
                item.aliases.append(span.text)
            prefer_name(item, span, key)
            found.append(Mention(span.start, span.end, canonical))
        mentions.append(found)

    # Glossary entries: a lone term over the block that defines it ("decorator" / "A function
    # returning another function ..."), as a definition list or glossary page writes them.
    for i in range(len(sentences) - 1):
        term = glossary_term(sentences[i], sentences[i + 1])
        if term is None:
            continue
        key = alias_of.get(name_key(term), name_key(term))
        item = items.get(key)
        if item is None:
            item = items[key] = Item(key, term, "defined", i)
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
            continue  # a definition block defines its own term (or its owner's member): see subjects_by_sentence
        term = purposes[i] or definition_of(sentence.text, spans[i], mid_caps)
        if term is None or parameters.get(name_key(term), ("", ""))[1] == term.strip("`"):
            continue  # "`headers` is a `dict` of ...": a parameter of the signature above
        key = alias_of.get(name_key(term), name_key(term))
        item = items.get(key)
        if item is None:
            item = items[key] = Item(key, term, "defined", i)
        if not item.definition:
            item.definition = sentence.text
    for phrase in key_phrases([s.text for s in sentences], tokens, mentions, headings):
        key = name_key(phrase)
        if key not in items:
            items[key] = Item(key, phrase, "phrase", 10**6)
    find_word_mentions(items, tokens, mentions)
    drop_common_code_words(items, sentences, mentions, headings, chunk.text)
    drop_never_subjects(items, mentions, parameters)
    for i, found in enumerate(mentions):
        for mention in found:
            item = items[mention.key]
            if not item.sentences or item.sentences[-1] != i:
                item.sentences.append(i)
            item.first = min(item.first, i)
    about = subjects_by_sentence(chunk, items, sentences, mentions, alias_of, claim_like, parameters)
    for key, item in items.items():
        if name_key(item.name) != key:  # named by its short form: the long form may be in a heading
            long = alias_text(key, every_spans, item)
            if long:
                item.aliases.append(item.name)
                item.name = long
        for alias_key, target in alias_of.items():
            if target == key and alias_key != key:
                alias = alias_text(alias_key, every_spans, item)
                if alias and alias not in item.aliases and alias != item.name:
                    item.aliases.append(alias)
    members = qualify_members(chunk, items, sentences, alias_of)

    # Every name stays an entity (a link target, an alias); the claims name only their subjects.
    ranked = rank([it for it in items.values() if it.sentences or it.definition], headings)
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
    claims = claim_items(label, sentences, claim_like, about, names, limit)
    relations = sentence_relations(label, sentences, mentions, names, relation_rules, limit) if entities or concepts else []
    relations += document_relations(label, chunk, sentences, about, names, relation_rules, relations, limit)
    topics = [TopicItem(chunk=label, name=t) for t in _topics(chunk, ranked, names, members)] if entities or concepts else []
    return ExtractionReply(
        entities=entities, concepts=concepts, claims=claims, relations=relations, topics=topics
    )


def _topics(chunk: ChunkInput, ranked: list[Item], names: dict[str, str], members: dict[str, str]) -> list[str]:
    topics: list[str] = []
    for heading in reversed(chunk.heading_path):
        text = clean_heading(heading)
        if text and text.lower() not in BOILERPLATE and len(text.split()) <= 8:
            topics.append(members.get(text, text))  # a member's heading names the member, with its owner
            break
    for item in ranked:
        if len(topics) >= 4:
            break
        if item.key in names and len(item.sentences) >= 2 and item.name not in topics:
            topics.append(item.name)
    return topics
