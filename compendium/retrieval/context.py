"""The ready-to-paste Markdown context block of a retrieval, under a token budget.

Every item carries a label a RAG prompt (and `ask`) cites it by: E1.. entities, R1..
relations, P1.. pages, T1.. topics, C1.. passages, numbered in the order of the result's
lists, so a label always names the same item of the JSON.
"""

from __future__ import annotations

from typing import Any

from ..tokens import count_tokens

# Share of the budget each section may take; passages get what the others leave.
_SHARES = (("entities", 0.2), ("relations", 0.1), ("pages", 0.15), ("topics", 0.1))
PASSAGE_TOKENS = 350  # one passage at most: several sources beat one long one


def label(kind: str, index: int) -> str:
    return f"{kind[0].upper()}{index + 1}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _clip(text: str, tokens: int) -> str:
    """At most about `tokens` tokens of text, cut at a sentence end when there is one."""
    if count_tokens(text) <= tokens:
        return text
    cut = text[: max(40, tokens * 4)]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    return cut[: end + 1] if end > len(cut) // 2 else cut.rstrip() + "…"


DESCRIPTION_TOKENS = 70  # of an entity's, relation's, page's or topic's text


def _said(item: dict[str, Any], key: str, lead: str) -> str:
    """The item's description or summary on one clipped line after `lead`; "" when it has none."""
    return f"{lead}{_clip(_one_line(item[key]), DESCRIPTION_TOKENS)}" if item.get(key) else ""


def _entity(item: dict[str, Any], ref: str) -> str:
    return f"- [{ref}] **{item['name']}** ({item['type'] or 'entity'}){_said(item, 'description', ': ')}"


def _relation(item: dict[str, Any], ref: str) -> str:
    return (f"- [{ref}] {item['source_name']} → {item['type'] or 'related to'} → {item['target_name']}"
            f"{_said(item, 'description', ' — ')}")


def _page(item: dict[str, Any], ref: str) -> str:
    return f"- [{ref}] [[{item['slug']}]] {item['title']}{_said(item, 'summary', ': ')}"


def _topic(item: dict[str, Any], ref: str) -> str:
    return f"- [{ref}] {item['title']}{_said(item, 'summary', ': ')}"


def _passage(item: dict[str, Any], ref: str) -> str:
    where = " › ".join([item["document"], *item["heading_path"]])
    return f"[{ref}] {where}\n{_clip(item['text'].strip(), PASSAGE_TOKENS)}\n"


_SECTIONS = (
    ("entities", "Entities", _entity),
    ("relations", "Relations", _relation),
    ("pages", "Pages", _page),
    ("topics", "Topics", _topic),
    ("chunks", "Passages", _passage),
)


def build_context(question: str, parts: dict[str, list[dict[str, Any]]], budget: int) -> tuple[str, list[str]]:
    """The Markdown block and the labels it holds. Items are added best first, section by
    section, while they fit their share; passages fill the rest of the budget."""
    head = f"# Knowledge for: {_one_line(question)}\n"
    used = count_tokens(head)
    shares = dict(_SHARES)
    blocks, labels = [head], []
    for key, title, render in _SECTIONS:
        items = parts.get(key) or []
        if not items:
            continue
        heading = f"\n## {title}\n"
        allowance = (budget - used) if key == "chunks" else int(budget * shares[key])
        lines, spent = [], count_tokens(heading)
        for index, item in enumerate(items):
            line = render(item, label(key, index))
            cost = count_tokens(line) + 1
            if spent + cost > allowance or used + spent + cost > budget:
                break
            lines.append(line)
            labels.append(label(key, index))
            spent += cost
        if lines:
            blocks.append(heading + "\n".join(lines) + "\n")
            used += spent
    return "".join(blocks).rstrip() + "\n", labels
