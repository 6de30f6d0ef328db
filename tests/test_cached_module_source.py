"""Functions loaded from a sealed module of the code cache have their own source.

The float64 kernels are built from the source of the generated functions
(``inspect.getsource``, which reads the file the functions' code names). A sealed module's file
starts with a line the module's source does not have (``# sha256 ...``); compiled without it,
every loaded function's line numbers were one too small, its "source" began on the line above
its ``def``, the kernel's renamed functions were never defined, and Numba's ``NameError`` sent
every process after the first to the NumPy path -- silently, since the values are the same
(stop 42's CI: 14 kernel tests failed in the worker that loaded the cache another had written).
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from replica.symbolic.codegen import CodeCache

MODULE = "x = 1\n\n\ndef first(a):\n    return [a + 1]\n\n\ndef second(a, b):\n    return [a * b]\n"


def test_a_loaded_function_has_its_own_source(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    CodeCache.folder.cache_clear()
    try:
        cache = CodeCache("k")
        cache.store("m", MODULE, sealed=True)
        ns = cache.load("m", "np")
        assert ns is not None and ns["second"](2, 3) == [6]
        assert inspect.getsource(ns["first"]) == "def first(a):\n    return [a + 1]\n"
        assert inspect.getsource(ns["second"]).startswith("def second(a, b):")
    finally:
        CodeCache.folder.cache_clear()


PROBE = """
import json, numpy as np, replica
from replica.numerics import kernels
r = replica.solve_float64("examples/ridge_regression.py", alpha=np.linspace(0.5, 3, 4), lam=0.1,
                          sigma=0.5)
print(json.dumps({"reasons": {str(k): v for k, v in kernels.FALLBACK_REASONS.items()},
                  "kernels": len(kernels._KERNELS), "status": list(map(str, r["status"]))}))
"""


@pytest.mark.slow
def test_the_second_process_compiles_the_kernel(tmp_path):
    """Two processes on one fresh cache: the first generates the code, the second loads it from
    the disk; both build the model's kernel (no fallback reason recorded)."""
    pytest.importorskip("numba")
    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=str(tmp_path / "cache"), REPLICA_NUMBA="1",
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    for run in ("generates", "loads"):
        out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, check=True,
                             capture_output=True, text=True, timeout=900).stdout
        got = json.loads(out.strip().splitlines()[-1])
        assert got["reasons"] == {} and got["kernels"] >= 1, (run, got)
        assert got["status"] == ["converged"] * 4, (run, got)
