"""Python's cyclic garbage collector tuned for a compile: rarer for the whole compile, paused
while a phase builds the whole KB in memory.

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

# A compile keeps hundreds of thousands of records, sentences and sets alive at once, and every
# full collection walks all of them: at the default thresholds (700, 10, 10) the Python manual's
# offline compile spent 2.2 s of 15.8 s CPU in 18 of them, reclaiming 4,051 objects. A first
# generation of 50,000 makes them rare; cycles are still collected, only later.
COMPILE_THRESHOLDS = (50_000, 20, 100)

_running_compiles = 0
_saved: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's thresholds for the duration; the first compile of the process to
    start sets them and the last to end puts the previous ones back (compiles may overlap in
    one server process)."""
    global _running_compiles, _saved
    if _running_compiles == 0:
        _saved = gc.get_threshold()
        gc.set_threshold(*(max(now, wanted) for now, wanted in zip(_saved, COMPILE_THRESHOLDS, strict=True)))
    _running_compiles += 1
    try:
        yield
    finally:
        _running_compiles -= 1
        if _running_compiles == 0:
            gc.set_threshold(*_saved)
