"""Fewer outline nodes: a group joins the one it is most tied to, or was with last time, under
a size cap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from .parts import Group, as_parts


def _was(trail: Mapping[str, list[str]], items: Sequence[str], depth: int) -> str | None:
    """The node at `depth` (1 = root topic) most of these subjects were in last time."""
    seen = Counter(t[depth - 1] for s in items if len(t := trail.get(s, ())) >= depth)
    return min(seen, key=lambda k: (-seen[k], k)) if seen else None


def merge_groups(groups: list[Group], most: int, cap: int | None, depth: int, rank: Mapping[str, int],
                 trail: Mapping[str, list[str]], neighbours: Mapping[str, Mapping[str, float]]) -> list[Group]:
    """Fewer groups: the smallest joins the group it is most tied to (by edge weight over
    size), else its neighbour in reading order, until at most `most` are left. With `cap`,
    no merge makes a group past that many subjects. Groups that shared a node at this
    `depth` in the previous outline join again first, so a small change merges as before."""
    members = [g.items() for g in groups]
    start = [min((rank[s] for s in m), default=0) for m in members]
    in_order = sorted(range(len(groups)), key=start.__getitem__)
    groups = [groups[k] for k in in_order]
    members = [members[k] for k in in_order]
    # Each group's items, where they were before and a label that stays through merges.
    was = [_was(trail, m, depth) for m in members]
    labels = list(range(len(groups)))
    label_of = {s: labels[j] for j, m in enumerate(members) for s in m}
    while len(groups) > most:
        sizes = [len(m) for m in members]
        again = Counter(w for w in was if w is not None)
        order = sorted(range(len(groups)), key=lambda i: (again[was[i]] < 2, sizes[i], i))
        position = {label: j for j, label in enumerate(labels)}
        done = False
        for i in order:
            target = _best_partner(neighbours, members, labels, label_of, position, i, sizes, cap, was)
            if target is not None:
                first, second = sorted((i, target))
                merged = Group([*as_parts(groups[first]), *as_parts(groups[second])],
                                split_depth=max(groups[i].split_depth, groups[target].split_depth))
                for s in members[second]:
                    label_of[s] = labels[first]
                groups[first] = merged
                members[first] = merged.items()
                was[first] = _was(trail, members[first], depth)
                for column in (groups, members, was, labels):
                    del column[second]
                done = True
                break
        if not done:
            break
    return groups


def _best_partner(neighbours: Mapping[str, Mapping[str, float]], members: list[list[str]], labels: list[int], label_of: dict[str, int],
                  position: dict[int, int], i: int, sizes: list[int], cap: int | None,
                  was: list[str | None]) -> int | None:
    mine = labels[i]
    ties: Counter[int] = Counter()
    for s in set(members[i]):
        for other, w in neighbours.get(s, {}).items():
            label = label_of.get(other)
            if label is not None and label != mine:
                ties[position[label]] += w
    fits = [j for j in range(len(members)) if j != i and (cap is None or sizes[i] + sizes[j] <= cap)]
    if not fits:
        return None
    before = [j for j in fits if was[i] is not None and was[j] == was[i]]
    if before:
        return max(before, key=lambda j: (ties[j], -abs(j - i), -j))
    tied = [j for j in fits if ties[j] > 0]
    if tied:
        return max(tied, key=lambda j: (ties[j] / (sizes[j] ** 0.5), -j))
    return min(fits, key=lambda j: (abs(j - i), sizes[j], j))  # reading-order neighbour

