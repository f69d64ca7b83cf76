"""BLAS on one thread unless the environment chooses: set before numpy first loads OpenBLAS.

Compendium's matrix products are small (candidate pairs run under threadpoolctl's one-thread
limit; nearest-neighbour scores are einsum, not BLAS). OpenBLAS nonetheless starts a thread per
core when numpy is imported, and each spins ~0.1 s of CPU waiting for work that never comes:
0.1 s of every CLI call, API start and worker on a 2-core machine, a core-second per ten cores
on a large one. A process that imported numpy before Compendium keeps its own threads.
"""

from __future__ import annotations

import os
import sys

_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def prefer_one_thread() -> None:
    if "numpy" in sys.modules or any(name in os.environ for name in _VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


prefer_one_thread()
