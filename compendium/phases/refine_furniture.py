"""Whether a change in a manual's furniture sentences reaches the evidence a standing page was written from."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..engines.offline.sentences import split_sentences
from ..engines.tasks import EvidenceItem
from .claim_index_keys import text_key
from .evidence import evidence_key


def furniture_moved(before: Collection[str], now: Collection[str]) -> tuple[set[str], set[str]]:
    """Pure: the text keys of sentences that became furniture, and of those that stopped being it."""
    return set(now) - set(before), set(before) - set(now)


def sentences_in(texts: Iterable[str], keys: Collection[str]) -> list[str]:
    """Pure: the sentences of `texts` whose text key is in `keys`, read as passages are cut at
    furniture (block by block, sentence by sentence)."""
    if not keys:
        return []
    return [sentence for text in texts for block in text.split("\n\n")
            for sentence in split_sentences(block) if text_key(sentence) in keys]


def furniture_reaches(became: Collection[str], chosen: Collection[str], items: Iterable[EvidenceItem],
                      chosen_texts: Iterable[str]) -> bool:
    """Pure: whether a sentence that became furniture (`became`) is in the evidence the page was
    written from, so the page may say it: the page is written anew without it.

    `chosen`: the keys of the items the page was written from; `items`: the page's candidates
    cut at the furniture as it was (an excerpt it chose held the sentence then); `chosen_texts`:
    the passages those items come from (a claim it chose that is furniture now is among no
    candidates: it is found by its sentence). A sentence that became furniture elsewhere in the
    subject's documents leaves what the page says as it is, and the page keeps its text.
    """
    if not became:
        return False
    if sentences_in((i.text for i in items if evidence_key(i) in chosen), became):
        return True
    return any(evidence_key(EvidenceItem(0, sentence, "")) in chosen for sentence in sentences_in(chosen_texts, became))


def holding_returned(returned: Collection[str], items: Iterable[EvidenceItem]) -> list[EvidenceItem]:
    """Pure: the items that hold a sentence which stopped being furniture (`returned`). A page
    kept them without it; offered again as new evidence, the sentence costs a small update."""
    return [item for item in items if sentences_in([item.text], returned)] if returned else []
