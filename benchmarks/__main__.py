"""``python -m benchmarks``: run every benchmark and rewrite its README section."""

from __future__ import annotations

import importlib
import sys
import time

MODULES = [
    "benchmarks.alignment_speed",
    "benchmarks.authors_baselines",
    "benchmarks.transition_precision",
    "benchmarks.lowrank_speed",
    "benchmarks.simulate_speed",
    "benchmarks.cost_growth",
    "benchmarks.simulate_vs_theory",
    "benchmarks.dask_scaling",
    "benchmarks.engine_redesign",
    "benchmarks.certify_speed",
    "benchmarks.lowrank_test_laws",
    "benchmarks.float64_honest",
    "benchmarks.quadrature_speed",
]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    names = [m for m in MODULES if not argv or any(a in m for a in argv)]
    for i, name in enumerate(names, 1):
        t = time.perf_counter()
        print(f"[{i}/{len(names)}] {name} ...", flush=True)
        importlib.import_module(name).main()
        print(f"    done in {time.perf_counter() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
