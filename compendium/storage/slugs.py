"""Page slugs: lowercase ASCII words joined by hyphens, unique within a knowledge base."""

from __future__ import annotations

import re
import unicodedata

from ..fingerprint import short_id

_NOT_WORD = re.compile(r"[^a-z0-9]+")
MAX_SLUG_CHARS = 80


def slugify(text: str) -> str:
    """'Café Müller (band)' -> 'cafe-muller-band'; never empty ('page' when nothing is left)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_WORD.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > MAX_SLUG_CHARS:
        slug = slug[:MAX_SLUG_CHARS].rsplit("-", 1)[0] or slug[:MAX_SLUG_CHARS]
    return slug or "page"


def unique_slug(title: str, kind_or_type: str, taken: set[str], *, key: str = "") -> str:
    """A slug for `title` not in `taken` (which it is added to).

    A collision first gets the type appended ('mercury-planet'), then a short hash of `key`
    (the subject's id), so the same subject asks for the same slug on every run.
    """
    base = slugify(title)
    candidates = [base]
    suffix = slugify(kind_or_type) if kind_or_type else ""
    if suffix and suffix != "page" and not base.endswith(f"-{suffix}") and base != suffix:
        candidates.append(f"{base}-{suffix}")
    candidates.append(f"{base}-{short_id(key or title, length=6)}")
    for slug in candidates:
        if slug not in taken:
            taken.add(slug)
            return slug
    n = 2
    while f"{candidates[-1]}-{n}" in taken:
        n += 1
    slug = f"{candidates[-1]}-{n}"
    taken.add(slug)
    return slug
