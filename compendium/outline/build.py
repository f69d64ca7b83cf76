"""Build the outline tree: the authors' structure first, Leiden communities where it gives none,
then fan-out and depth bounds, titles and ids kept from the previous outline."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from ..fingerprint import short_id
from ..graph.communities import WeightedGraph, leiden, update_communities
from ..titles import names_a_subject
from .limits import OutlineLimits
from .merging import merge_groups
from .node_names import assign_ids, distinct_titles, name_parts_with_their_parent
from .parts import Group, Leaf, Part, are_parts, as_parts, is_document, key_of, part_tree
from .runs import Block, balanced_cut, blocks, largest_run
from .tree import OutlineNode, by_version


class _Builder:
    def __init__(self, leaves: Sequence[Leaf], edges: Iterable[tuple[str, str, float]],
                 limits: OutlineLimits, previous: Sequence[OutlineNode]) -> None:
        self.leaf = {lf.id: lf for lf in leaves}
        self.graph = WeightedGraph(self.leaf, edges)
        self.ties = self.graph.neighbours(self.leaf)
        self.limits = limits
        self.rank = {lf.id: i for i, lf in enumerate(sorted(leaves, key=lambda lf: (lf.order, lf.id)))}
        # Where each subject was before, so communities start from the previous split.
        self.was_in: dict[str, str] = {}
        self.trail: dict[str, list[str]] = {}  # subject -> ids of the nodes above it, root first
        for root in previous:
            stack = [(root, [root.id])]
            while stack:
                node, ids = stack.pop()
                for s in node.subjects:
                    self.was_in[s] = node.id
                    self.trail[s] = ids
                stack.extend((c, [*ids, c.id]) for c in node.children)

    def _stays_open(self, items: Sequence[str], depth: int) -> bool:
        """Whether a group at or under a leaf's size keeps the subtopics it had: it had them last
        time (most of its subjects sat deeper than this level) and it is still past
        `limits.reopen_share` of a leaf. Without that margin one page more or less flips a node of
        about 50 pages between a leaf and its subtopics, moving every page in it."""
        if len(items) <= self.limits.reopen_share * self.limits.leaf_pages:
            return False
        placed = [len(t) for s in items if (t := self.trail.get(s))]
        return len(placed) * 2 > len(items) and sum(n > depth for n in placed) * 2 > len(placed)

    def _stays_spread(self, items: Sequence[str], depth: int, cap: int) -> bool:
        """Whether a part that fits under `cap` as one node at `depth` stays opened into its own
        parts, as it was last time (less than `limits.reopen_share` of its subjects were in one node
        at that depth), while it is past that share of the cap: the margin of `_stays_open`."""
        if len(items) <= self.limits.reopen_share * cap:
            return False
        placed = [t for s in items if (t := self.trail.get(s))]
        if len(placed) * 2 <= len(items):
            return False
        together = Counter(t[depth - 1] for t in placed if len(t) >= depth)
        return not together or together.most_common(1)[0][1] < self.limits.reopen_share * len(placed)

    # -- splitting ------------------------------------------------------------------------------
    def expand(self, group: Group, depth: int) -> list[Group]:
        """The group's natural parts: its structure nodes' children, else its communities."""
        if len(group.parts) == 1 and not group.loose:
            part = group.parts[0]
            while len(part.children) == 1 and not part.items:  # a single folder: look inside
                part = next(iter(part.children.values()))
            out = [Group([c], key=c.key, title=c.title) for c in part.children.values()]
            if part.items:
                out.append(Group([], list(part.items), key=part.key + "#own", title=part.title))
            if len(out) > 1 or not out:
                return out
            return self._flat(Group([part], key=part.key, title=part.title) if part.key else out[0], out[0], depth)
        if group.parts:
            out = [Group([p], key=p.key, title=p.title) for p in group.parts]
            if group.loose:
                out.append(Group([], list(group.loose)))
            return out
        return self._flat(group, group, depth)

    def _flat(self, part: Group, loose: Group, depth: int) -> list[Group]:
        """A part of the authors with no parts of its own (a reference page's settings, a section's
        pages), opened below the roots: cut in their reading order into runs titled by its title and
        their first and last members, "Core settings (ABSOLUTE_URL_OVERRIDES – DEBUG)". Its
        communities would each be named after a member ("DATE_FORMAT" over its sibling settings),
        which says what one page is, not what the group is. A group the authors gave no title, or a
        root (communities never decide a root), is split into communities (`loose`)."""
        if depth >= 2 and part.key and part.title:
            items = part.items()
            cap = max(self.limits.leaf_pages, math.ceil(len(items) / self.limits.fan_out))
            runs = self._runs(part, cap, depth, least=2)
            if len(runs) > 1:
                return runs
        return self.communities(loose, depth)

    def communities(self, group: Group, depth: int) -> list[Group]:
        """The group's communities, as nodes at `depth`: where the previous outline split the
        same subjects at that depth, its groups stand and new subjects join the one they are
        most tied to (the flat topics' rule); otherwise Leiden from scratch."""
        items = group.items()
        if len(items) <= 1:
            return [group]
        sub = self.graph.subgraph(items)
        resolution = self.limits.resolution * (1 + group.split_depth)
        before: dict[str, list[str]] = defaultdict(list)
        for s in items:
            trail = self.trail.get(s, ())
            if len(trail) >= depth:
                before[trail[depth - 1]].append(s)
        if len(before) > 1:
            found = update_communities(sub.nodes, sub.edge_list(), before, [s for m in before.values() for s in m],
                                       resolution=resolution, min_size=1, max_topics=len(items))
        else:
            found = leiden(sub, resolution=resolution) if sub.edges else [[s] for s in items]
        # Communities leave out subjects tied to nothing (a new one no relation reaches is in no
        # topic): every page needs a place, so they come back as singletons and pool below.
        grouped = {s for m in found for s in m}
        found = [*found, *([s] for s in items if s not in grouped)]
        found = self._absorb_small(found)
        if len(found) <= 1:
            # One tight community (or none at all): cut it in reading order.
            ordered = sorted(items, key=self.rank.__getitem__)
            size = self.limits.leaf_pages
            found = [ordered[i:i + size] for i in range(0, len(ordered), size)]
        return [Group([], sorted(m, key=self.rank.__getitem__), split_depth=group.split_depth + 1)
                for m in found]

    def _absorb_small(self, groups: list[list[str]]) -> list[list[str]]:
        """Communities below the minimum join the one they are most tied to; untied ones pool."""
        big = [list(g) for g in groups if len(g) >= self.limits.min_group]
        small = [s for g in groups if len(g) < self.limits.min_group for s in g]
        if not big:
            return [sorted(small)] if small else []
        home = {s: i for i, g in enumerate(big) for s in g}
        pool: list[str] = []
        for s in sorted(small, key=self.rank.__getitem__):
            ties: Counter[int] = Counter()
            for other, w in self.ties.get(s, {}).items():
                if other in home:
                    ties[home[other]] += w
            if ties:
                best = max(sorted(ties), key=lambda i: ties[i])
                big[best].append(s)
                home[s] = best
            else:
                pool.append(s)
        if pool:
            big.append(pool)
        return big

    # -- merging --------------------------------------------------------------------------------
    def merge(self, groups: list[Group], most: int, cap: int | None, depth: int = 1) -> list[Group]:
        return merge_groups(groups, most, cap, depth, self.rank, self.trail, self.ties)

    # -- the tree -------------------------------------------------------------------------------
    def roots(self) -> list[OutlineNode]:
        limits = self.limits
        top = part_tree(list(self.leaf.values()))
        whole = Group([top])
        groups = [whole]
        # Open the structure while it is one part (a single folder or document).
        while len(groups) == 1:
            opened = self.expand(groups[0], 1)
            if len(opened) <= 1:
                break
            groups = opened
        total = len(self.leaf)
        while len(groups) < limits.min_roots and total > limits.min_roots * limits.leaf_pages:
            largest = max(range(len(groups)), key=lambda i: len(groups[i].items()))
            opened = self.expand(groups[largest], 1)
            if len(opened) <= 1 or len(groups) - 1 + len(opened) > limits.max_roots * 4 or not are_parts(opened):
                break
            groups[largest:largest + 1] = opened
        # A root past its share of the pages is opened into the authors' parts (never into a
        # document's headings or communities: those name no part of the manual), and no merge
        # makes one past it again; up to `fan_out` roots then stand. A part whose parts would
        # pass that stays whole: merging them again would name roots after a member.
        # (past max_share less its margin: the published share also counts the nodes' overview
        # pages, and REFINE withholds pages the outline counted, both unknown here)
        share = limits.max_share * (1 - limits.share_margin)
        cap = max(share * total, limits.share_floor) if limits.max_roots * limits.max_share > 1 else None
        room = limits.fan_out
        # Groups opened (or cut) once, by identity; held here so that no later group can take
        # the address of one dropped from `groups` and pass for it (run to run, by chance).
        opened_once: dict[int, Group] = {}
        while cap is not None and len(groups) < room:
            over = [i for i, g in enumerate(groups) if id(g) not in opened_once
                    and (len(g.items()) > cap or self._stays_spread(g.items(), 1, cap))]
            if not over:
                break
            largest = max(over, key=lambda i: len(groups[i].items()))
            opened = self.expand(groups[largest], 1)
            opened_once[id(groups[largest])] = groups[largest]
            # Its parts that have parts of their own first ("Models" of "API Reference"); the
            # rest stays under its title, and is opened in turn only if it is still too big.
            partly = self._open_partly(groups[largest], opened)
            if len(partly) > 1:
                opened = partly
            elif len(groups) - 1 + len(opened) <= room and all(is_document(g) for g in opened):
                # Its parts are documents (the man pages of "Commands", the pages of a guide):
                # those big enough to stand as roots are lifted, the others stay together under
                # its title, or, where none is, it is cut into runs under its title: lifted, a
                # page or two each, they would be roots beside the manual's parts, and the part a
                # reader looks for them in would be gone.
                big = self._lifted(opened, cap)
                small = [t for g in opened if not any(g is b for b in big) for t in as_parts(g)]
                kept = Group(small, key=groups[largest].key, title=self.title(groups[largest], groups[largest].items(), set()))
                opened = [*big, kept] if big and small else (big or [groups[largest]])
            if len(opened) <= 1 or not are_parts(opened) or len(groups) - 1 + len(opened) > room:
                # Its parts cannot be roots (a document's headings, or more than the fan-out):
                # it is cut in reading order into runs under the cap, each under its own title.
                runs = self._runs(groups[largest], cap)
                if len(runs) > 1 and len(groups) - 1 + len(runs) <= room:
                    groups[largest:largest + 1] = runs
                    opened_once.update((id(r), r) for r in runs)  # kept as cut last time, within the margin
                continue
            groups[largest:largest + 1] = opened
        # The authors' parts are merged only past the fan-out: a merged part is named after a member.
        most = limits.fan_out if cap is not None and are_parts(groups) else limits.max_roots
        groups = self.merge(groups, most, cap, 1)
        if len(groups) > limits.fan_out:
            groups = self.merge(groups, limits.fan_out, None, 1)
        shared = self._shared_keys(list(self.leaf))
        roots = [self.node(g, 1, shared) for g in groups if g.items()]
        distinct_titles(roots, self.leaf, "")
        return roots

    def _runs(self, group: Group, cap: float, depth: int = 1, least: int = 0) -> list[Group]:
        """A part past the cap whose parts cannot be roots, cut into the fewest runs under the cap,
        in reading order and between its own parts (documents, sections, headings), each titled by
        the part's title and the first and last parts it holds: "Main porcelain commands (git-add(1)
        – git-merge(1))". A part of it bigger than an even run is cut between its authors' sections,
        then its pages; a run cut from one document is titled by that document ("Configuration
        (Project information – Build directories)"). Where the previous outline cut the same part into as
        many runs, each part stays in its run, and a new one joins the run of the part before it."""
        items = sorted(group.items(), key=self.rank.__getitem__)
        count = max(math.ceil(len(items) / cap), least)  # (`least`: a node opened within its margin)
        if count < 2 or len(items) < 2 * self.limits.min_group:
            return [group]
        base = key_of(group) or group.title
        title = group.title or self.title(group, items, set())
        # Runs about as even as a cut among pages (the published share counts overview pages and
        # loses withheld ones, so an uneven run can pass the share the cap keeps it under): a part
        # bigger than an even run is cut between its sections, and one run more is taken while the
        # sections leave the largest past an even run by more than `run_slack` and one run more
        # makes it smaller.
        blocks, sizes, largest = self._cut_for(items, base, count)
        while largest > len(items) / count * (1 + self.limits.run_slack) and count < len(blocks):
            more = self._cut_for(items, base, count + 1)
            if more[2] >= largest:
                break
            count += 1
            blocks, sizes, largest = more
        ids = [short_id("outline", f"run:{base}#{i}") for i in range(count)]
        cut = self._runs_before([(k, n, m) for k, n, m, _o, _c in blocks], ids, cap, depth)
        if cut is None:
            cut = balanced_cut(sizes, largest)
        out = []
        for i in range(max(cut) + 1):
            mine = [b for b, r in zip(blocks, cut, strict=True) if r == i]
            if not mine:
                continue
            # Named by the documents it holds, else its sections (a page's own where it was cut
            # among its pages), not by the pages between them.
            ends = [n for k, n, _m, _o, _c in mine if not k.startswith(("item:", "heading:", "subsection:"))] or \
                [n if not k.startswith("item:") else c[1] for k, n, _m, _o, c in mine
                 if c or not k.startswith("item:")] or [n for _k, n, _m, _o, _c in mine]
            outer = {o for _k, _n, _m, o, _c in mine}
            one = next(iter(outer)) if len(outer) == 1 else None
            # (a document's title, never a heading's from inside it)
            named = one[1] if one and not one[0].startswith(("heading:", "subsection:")) else title
            ends = [n for n in ends if n != named]
            if ends:
                first, last = ends[0], ends[-1]
                name = f"{named} ({first} – {last})" if first != last else f"{named} ({first})"
            else:
                name = named
            # One part per part of the group in a run, however its pages interleave with others'
            # in reading order: two parts of one title, the second would be named after a member.
            parts: list[Part] = []
            by_key: dict[str, Part] = {}
            for k, n, m, o, _c in mine:
                k, n = o or (("", "") if k.startswith("item:") else (k, n))
                if k in by_key:
                    by_key[k].items.extend(m)
                    continue
                parts.append(Part(k, n, list(m)))
                if k:
                    by_key[k] = parts[-1]
            out.append(Group(parts, key=f"run:{base}#{i}", title=name))
        named_count = Counter(g.title for g in out)
        for g in out:  # runs alike at their ends (its parts alternate): named by their first and last pages
            if named_count[g.title] > 1:
                ends = sorted(g.items(), key=self.rank.__getitem__)
                g.title = f"{title} ({self.leaf[ends[0]].title} – {self.leaf[ends[-1]].title})"
        return out if len(out) > 1 else [group]

    def _cut_for(self, items: Sequence[str], base: str, count: int) -> tuple[list[Block], list[int], int]:
        """The blocks for `count` even runs, their sizes, and the largest run they allow."""
        found = blocks(self.leaf, self.rank, items, base, len(items) / count)
        sizes = [len(m) for _k, _n, m, _o, _c in found]
        return found, sizes, largest_run(sizes, count)

    def _runs_before(self, blocks: list[tuple[str, str, list[str]]], ids: list[str], cap: float,
                     depth: int = 1) -> list[int] | None:
        """Each block's run as the previous outline had it (its node at `depth`), where most pages
        were in these runs and no run passes the cap by more than the reopen margin; else None."""
        run_of = {i: n for n, i in enumerate(ids)}
        cut: list[int] = []
        known = 0
        for _k, _n, members in blocks:
            seen = Counter(run_of[t[depth - 1]] for s in members
                           if len(t := self.trail.get(s, ())) >= depth and t[depth - 1] in run_of)
            if seen:
                known += sum(seen.values())
                cut.append(max(seen, key=lambda r: (seen[r], -r)))
            else:
                cut.append(cut[-1] if cut else 0)
        total = sum(len(m) for _k, _n, m in blocks)
        sizes = Counter()
        for (_k, _n, members), r in zip(blocks, cut, strict=True):
            sizes[r] += len(members)
        if known * 2 <= total or cut != sorted(cut) or max(sizes.values()) > cap / self.limits.reopen_share:
            return None
        return cut

    def _lifted(self, documents: list[Group], cap: float) -> list[Group]:
        """Of a part's documents, those lifted to stand as roots: the biggest, one by one, until
        the rest fits under the cap; each at least two groups' worth of pages (a smaller one would
        be a root of a page or two beside the manual's parts)."""
        rest = sum(len(g.items()) for g in documents)
        lifted: list[Group] = []
        for g in sorted(documents, key=lambda g: -len(g.items())):
            if rest <= cap or len(g.items()) < 2 * self.limits.min_group:
                break
            lifted.append(g)
            rest -= len(g.items())
        return lifted

    def _open_partly(self, group: Group, opened: list[Group]) -> list[Group]:
        """A part too big to be one root and with too many parts to list them all as roots: its
        parts that have parts of their own (a package's subpackages) become roots, the rest stay
        together under the part's own title (the package's classes)."""
        nested = [g for g in opened if len(g.parts) == 1
                  and any(not k.startswith("heading:") for k in g.parts[0].children)]
        rest = [g for g in opened if not any(g is n for n in nested)]
        if not nested or not rest or not group.key:
            return [group]
        kept = Group([t for g in rest for t in as_parts(g)], key=group.key, title=self.title(group, group.items(), set()))
        return [*nested, kept]

    def _shared_keys(self, items: Sequence[str]) -> set[str]:
        """Structure keys every one of the items sits under: they name the parent, not a part."""
        if not items:
            return set()
        common = {k for k, _t in self.leaf[items[0]].path}
        for s in items[1:]:
            common &= {k for k, _t in self.leaf[s].path}
            if not common:
                break
        return common

    def node(self, group: Group, depth: int, ancestors: set[str]) -> OutlineNode:
        limits = self.limits
        items = group.items()
        title = self.title(group, items, ancestors)
        node = OutlineNode(id="", title=title, key=group.key)
        node.central = self.central(items)[:12]
        if depth >= limits.max_depth or (len(items) <= limits.leaf_pages and not self._stays_open(items, depth)):
            node.subjects = sorted(items, key=self.rank.__getitem__)
            return node
        # What one child can hold: a leaf's pages, times the fan-out for each level left below it.
        # Parts that fit stay whole (a chapter stays a chapter); bigger ones are opened up.
        child_cap = limits.leaf_pages * limits.fan_out ** max(0, limits.max_depth - depth - 1)
        parts = self.expand(group, depth + 1)
        ready: list[Group] = []
        while parts:
            part = parts.pop(0)
            if len(part.items()) > child_cap or self._stays_spread(part.items(), depth + 1, child_cap):
                opened = self.expand(part, depth + 1)
                if len(opened) > 1:
                    parts[:0] = opened
                    continue
            ready.append(part)
        sized = [(p, p.items()) for p in ready]
        loose = [s for _p, m in sized if len(m) < limits.min_group for s in m]
        big = [p for p, m in sized if len(m) >= limits.min_group]
        if len(big) + len(loose) <= limits.fan_out:
            ready = big  # tiny parts are pages of this node
            # So are the pages of the node's own document (a chapter's index page), where they
            # fit: as a child they would take the chapter's title, then a member's ("heappush()").
            mine = key_of(group) + "#own"
            own = next((p for p, m in sized if p in big and p.key == mine
                        and len(m) <= limits.leaf_pages and len(big) - 1 + len(loose) + len(m) <= limits.fan_out),
                       None)
            if own is not None:
                ready = [p for p in big if p is not own]
                loose = [*loose, *own.items()]
        else:
            loose = []  # no room: tiny parts join the groups they are tied to
            ready = self.merge(ready, limits.fan_out, child_cap, depth + 1)
            if len(ready) > limits.fan_out:  # no merge fits under the cap: past it, then
                ready = self.merge(ready, limits.fan_out, None, depth + 1)
        ready, loose, spliced = self._splice_namesake(ready, loose, title, depth)
        below = ancestors | {key_of(group)} | self._shared_keys(items) | spliced
        node.subjects = sorted(loose, key=self.rank.__getitem__)
        node.children = by_version([self.node(p, depth + 1, below) for p in ready])
        distinct_titles(node.children, self.leaf, node.title)
        return node

    def _splice_namesake(self, ready: list[Group], loose: list[str], title: str,
                         depth: int) -> tuple[list[Group], list[str], set[str]]:
        """A node named after the part most of its members sit under ("Server Programming"
        over that chapter and two small ones) lists that part's own parts beside the others,
        where they fit, and its own pages as its pages: not a child of the same name."""
        for i, part in enumerate(ready):
            if not part.key or part.title != title:
                continue
            opened = self.expand(part, depth + 1)
            if any(not g.key or g.key.startswith("run:") for g in opened):  # so do its runs and communities
                continue
            # Its own pages, and parts too small to be nodes, are pages of this node.
            parts, pages = [], list(loose)
            for g in opened:
                if g.key.endswith("#own") or len(g.items()) < self.limits.min_group:
                    pages.extend(g.items())
                else:
                    parts.append(g)
            if not parts or len(ready) - 1 + len(parts) + len(pages) > self.limits.fan_out:
                continue
            return [*ready[:i], *parts, *ready[i + 1:]], pages, {part.key}
        return ready, loose, set()

    def central(self, items: Sequence[str]) -> list[str]:
        """Members by their ties inside the group, then importance: who says most about it."""
        inside = set(items)
        weight = {s: sum(w for o, w in self.ties.get(s, {}).items() if o in inside) for s in items}
        return sorted(items, key=lambda s: (-weight[s], -self.leaf[s].importance, self.rank[s]))

    def title(self, group: Group, items: Sequence[str], ancestors: set[str]) -> str:
        """The structure's own title when the group is one of its parts; else the heading or
        folder most of its members sit under; else its most central member's name."""
        if group.title:
            return group.title
        if len(group.parts) == 1 and group.parts[0].title and not group.loose:
            return group.parts[0].title
        covered: Counter[tuple[str, str]] = Counter()
        for s in items:
            for key, title in dict.fromkeys(self.leaf[s].path):
                if key not in ancestors and title:
                    covered[(key, title)] += 1
        if covered:
            (key, title), count = min(covered.items(), key=lambda kv: (-kv[1], kv[0][0]))
            if count * 2 >= len(items):
                return title
        ranked = self.central(items)
        return next((self.leaf[s].title for s in ranked if names_a_subject(self.leaf[s].title)),
                    self.leaf[ranked[0]].title if ranked else "")


def build_outline(leaves: Sequence[Leaf], edges: Iterable[tuple[str, str, float]], *,
                  limits: OutlineLimits | None = None,
                  previous: Sequence[OutlineNode] = ()) -> list[OutlineNode]:
    """The root topics of the outline over `leaves` (one per page subject), with `edges`
    between subjects weighting communities. `previous` is the last outline, which communities
    start from and whose ids and titles are kept where the membership is still theirs."""
    limits = limits or OutlineLimits()
    if not leaves:
        return []
    builder = _Builder(leaves, edges, limits, previous)
    roots = builder.roots()
    assign_ids(roots, previous, limits, {lf.title for lf in leaves})
    name_parts_with_their_parent(roots)
    return roots
