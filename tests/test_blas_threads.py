"""Importing Compendium leaves BLAS on one thread, unless the environment chose otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_PROBE = (
    "import json, os, compendium, numpy;"
    "print(json.dumps({'threads': len(os.listdir('/proc/self/task')),"
    " 'openblas': os.environ.get('OPENBLAS_NUM_THREADS')}))"
)


def _probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_import_starts_no_blas_threads():
    seen = _probe()
    assert seen["openblas"] == "1"
    assert seen["threads"] == 1  # OpenBLAS would start one per core, each spinning ~0.1 s of CPU


def test_the_environment_keeps_its_choice():
    assert _probe(OPENBLAS_NUM_THREADS="2")["openblas"] == "2"
    assert _probe(OMP_NUM_THREADS="3")["openblas"] is None  # a choice made another way is left alone
