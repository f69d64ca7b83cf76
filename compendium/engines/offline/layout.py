"""The built-in page layout (templates/builtin/prompts/page_layout.md.j2) rendered in Python.

The layout is ours, not a stranger's, so it needs no sandbox; rendering it through Jinja's
sandbox was a fifth of the offline writer's time. A test holds the two renderings equal.
"""

from __future__ import annotations

from typing import Any


def render_default(title: str, lead: Any, sections: list[dict], aliases: list[str], related: list[dict]) -> str:
    """What page_layout.md.j2 renders for these variables (blank lines not yet folded)."""
    parts = [f"# {title}\n\n"]
    if lead:
        parts.append(f"{_cite(lead)}\n\n")
    if aliases:
        parts.append("*Also known as:* " + ", ".join(str(a) for a in aliases) + "\n\n")
    for section in sections:
        paragraphs = section["paragraphs"] if "paragraphs" in section else [section["sentences"]]
        bullets = section["bullets"] if "bullets" in section else []
        if not (any(paragraphs) or bullets):
            continue
        parts.append(f"## {section['heading']}\n\n")
        for paragraph in paragraphs:
            if paragraph:
                parts.append(" ".join(_cite(s) for s in paragraph) + "\n\n\n")
        for s in bullets:
            parts.append(f"- {_cite(s)}\n")
        if bullets:
            parts.append("\n")
    if related:
        parts.append("## Related\n\n")
        parts.extend(f"- [[{link['slug']}|{link['title']}]]\n" for link in related)
    return "".join(parts)


def _cite(s: Any) -> str:
    if isinstance(s, dict) and "text" in s:
        ref = s.get("ref")
        return f"{s['text']}[^{ref}]" if ref is not None else str(s["text"])
    return str(s)
