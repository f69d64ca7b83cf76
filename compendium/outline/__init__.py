"""The outline: a tree of topics over the wiki's pages, following the authors' own structure
(folders, documents, headings) first and Leiden communities of the entity graph where it gives none."""

from .build import build_outline
from .limits import OutlineLimits
from .parts import Leaf
from .tree import OutlineNode, outline_json, page_depths

__all__ = ["Leaf", "OutlineLimits", "OutlineNode", "build_outline", "outline_json", "page_depths"]
