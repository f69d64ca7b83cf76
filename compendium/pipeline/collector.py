"""Python's cyclic garbage collector paused while a phase builds the whole KB in memory.

REDUCE and PLAN build millions of small dicts, lists and records (the JSON of every extract,
every mention and claim), none of which form reference cycles: they are freed by reference
counting alone. The collector still walks all of them again and again as they pile up: on a
100k-chunk KB, decoding the extracts took 8.5 s of CPU with it and 1.6 s without. Pausing it
changes no result.

What the paused phases leave alive (the KB handed on to PLAN and REFINE) would then be walked
by the collector's first rounds after it resumes (3 s of REFINE's CPU at 100k chunks): it is
frozen instead (`gc.freeze`, which costs nothing). A later compile's first pause thaws it and
collects once, so cycles made meanwhile (few, small) are still reclaimed, a compile later.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_depth = 0  # phases of concurrent compiles in one process pause it together
_was_enabled = False
_frozen_by: int | None = None  # the compile whose survivors are frozen


@contextmanager
def collector_paused(compile_: object) -> Iterator[None]:
    """The collector off inside, back to what it was once the last pausing phase has ended.

    `compile_` (the compile's context) tells its own phases apart from another compile's:
    what REDUCE left frozen stays frozen through PLAN rather than being collected in between."""
    global _depth, _was_enabled, _frozen_by
    if _depth == 0:
        _was_enabled = gc.isenabled()
        gc.unfreeze()
        if _was_enabled and _frozen_by not in (None, id(compile_)):
            gc.collect()  # another compile's survivors: most are gone by now, the rest are checked
        gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _was_enabled:
            gc.freeze()
            _frozen_by = id(compile_)
            gc.enable()
