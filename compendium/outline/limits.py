"""How large, wide and deep the outline may grow, and the margins that keep it steady."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutlineLimits:
    max_roots: int = 12  # roots that are not all the authors' parts are merged down to this many
    min_roots: int = 5  # fewer authors' parts than this over a large KB: the largest is opened up
    fan_out: int = 50  # children plus pages of any node
    leaf_pages: int = 50  # a subtopic holds at most this many pages
    max_depth: int = 3  # levels of topics; the third is opened only where 50 x 50 pages do not fit
    max_share: float = 0.25  # a root topic past this share of all pages is opened into its parts
    # A root's published share also counts its nodes' overview pages, and REFINE withholds pages
    # the outline counted (an overview no sentence describes): the cap keeps this fraction of
    # max_share in hand (git's "Main porcelain commands": 24.7% of subjects, 25.1% of pages).
    share_margin: float = 0.05
    share_floor: int = 20  # a root of at most this many pages is never opened for its share
    min_group: int = 3  # smaller groups become pages of their parent
    keep_title_overlap: float = 0.8  # a matched node keeps its title at this membership overlap
    run_slack: float = 0.1  # a run of whole sections may pass an even cut of its part by this share
    reopen_share: float = 0.8  # a node that had subtopics keeps them down to this share of leaf_pages
    resolution: float = 1.0
