"""The compiled double-double check against the ``longdouble`` one, point by point.

Issue 29 moved the extended-precision check of a float64 point
(:meth:`replica.numerics.machine.Machine.assess`, NumPy ``longdouble``) into the fused kernel, in
double-double (:mod:`replica.numerics.fused_check`). Both checks are run here on the **same**
float64 solutions and reported values (the kernel's), over a few hundred points of both models
-- random parameters over many decades and hard ones (tau near 1, lambda near 0, large alpha) --
and compared: every point's status, and the error estimates (the compiled one must agree with
the ``longdouble`` one within a factor 2, or be larger: more conservative). Needs Numba.

Run ``python -m benchmarks.check_agreement`` (rewrites its section of ``benchmarks/README.md``).
"""

from __future__ import annotations

import inspect
import os

import numpy as np

import replica
from replica.numerics import kernels
from replica.numerics.float64_checks import point_status

try:
    from ._util import machine_line, table, write_section
except ImportError:  # run as a script
    from _util import machine_line, table, write_section  # type: ignore

NAME = "check_agreement"


def _test_module(name: str):
    """A module of ``tests/`` (the points are drawn as the tests draw them, in one place)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                        f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_replica_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def alignment_points(n=200, seed=3):
    """Random paper A points, half of them hard: tau within 1e-14 to 1e-2 of 1, lambda down to
    1e-16, alpha up to 1e8, rho down to 1e-8 (``tests/test_fused_check.py``'s points)."""
    return _test_module("test_fused_check").hard_alignment_points(n, seed)


def lowrank_points(n=240, seed=11):
    """Random low-rank points over many decades (``tests/test_float64_kernels.py``'s points:
    some converge, some fail the check, some do not converge)."""
    return _test_module("test_float64_kernels")._lowrank_random_points(n, seed)


def paired(model, **kw):
    """Solve ``model`` on the float64 path with the fused kernel and its compiled check, and run
    the ``longdouble`` check (``Machine.assess``) on each kernel call's own solutions: a list of
    ``(variant, statuses compiled, statuses longdouble, estimates compiled, estimates
    longdouble, done)`` per kernel call."""
    calls = []
    orig = kernels.Kernel.__call__

    def spy(self, P, spec, shape, rtol=1e-13, check=False, iterated=True):
        # (always the complete outputs: the lean path asks iterated=False and ignores them)
        kw = dict(iterated=True) if "iterated" in inspect.signature(orig).parameters else {}
        got = orig(self, P, spec, shape, rtol=rtol, check=check, **kw)
        calls.append((self, P, spec, shape, got))
        return got

    saved = os.environ.get("REPLICA_NUMBA")
    os.environ["REPLICA_NUMBA"] = "1"
    kernels.Kernel.__call__ = spy
    try:
        replica.solve_float64(model, **dict({"strict": False}, **kw))  # (the points may say)
    finally:
        kernels.Kernel.__call__ = orig
        if saved is None:
            os.environ.pop("REPLICA_NUMBA", None)
        else:
            os.environ["REPLICA_NUMBA"] = saved
    out = []
    for k, P, spec, shape, got in calls:
        if len(got) < 8:
            continue  # a variant without a compiled check
        m = k.machine
        x, _it, _rel, iterated, rep, adm, _left, (cond, err, _code) = got
        report = dict(zip(m.report_names, rep))
        done = iterated & adm & np.isfinite(rep).all(axis=0)
        cond_ld, err_ld = m.assess(x, P, spec, shape, report)
        s_dd = point_status(m.problem, report, cond, err, iterated, adm, done)
        s_ld = point_status(m.problem, report, cond_ld, err_ld, iterated, adm, done)
        out.append((m.variant, s_dd, s_ld, np.where(done, err, np.nan),
                    np.where(done, err_ld, np.nan), done))
    return out


def summary(model, rows):
    """Table rows: per variant, points, statuses equal, estimates within a factor 2 or more
    conservative, the largest ratios."""
    table_rows = []
    for variant, s_dd, s_ld, e_dd, e_ld, done in rows:
        same = int(np.sum(s_dd == s_ld))
        both = done & np.isfinite(e_dd) & np.isfinite(e_ld) & (e_ld > 1e-15)
        ratio = e_dd[both] / e_ld[both]
        within = int(np.sum((ratio >= 0.5) & (ratio <= 2))) if ratio.size else 0
        conservative = int(np.sum(ratio > 2)) if ratio.size else 0
        low = int(np.sum(ratio < 0.5)) if ratio.size else 0
        kinds = ", ".join(f"{s} {int(np.sum(s_ld == s))}" for s in sorted(set(s_ld)))
        above = e_ld[both][ratio > 2] if ratio.size else ratio
        floor = f"{above.min():.3g}" if above.size else "-"
        table_rows.append([model, variant, s_dd.size, kinds, f"{same}/{s_dd.size}",
                           int(both.sum()), within, conservative, floor, low,
                           f"{ratio.min():.3g} - {ratio.max():.3g}" if ratio.size else "-"])
    return table_rows


def main():
    rows = []
    rows += summary("alignment (d=40, piano / spike:3)", paired(
        "alignment", d=40, train="piano", test="spike:3", **alignment_points()))
    rows += summary("alignment (d=120, piano / piano)", paired(
        "alignment", d=120, train="piano", test="piano", **alignment_points(seed=5)))
    rows += summary("lowrank", paired("lowrank", **lowrank_points()))
    md = [f"Machine: {machine_line()}", "",
          "The compiled double-double check (issue 29, `replica.numerics.fused_check`) and the "
          "`longdouble` check (`Machine.assess`) on the same float64 solutions (the kernel's), "
          "point by point. Estimates compared where both are finite and the longdouble one "
          "is above 1e-15 (below it, both are rounding noise of the float64 values); where the "
          "compiled estimate is more than twice the longdouble one, the smallest longdouble "
          "estimate among those points is shown (above 1: values without a correct digit, "
          "not-verified by both checks).", "",
          table(["model", "variant", "points", "statuses (longdouble)", "same status",
                 "estimates compared", "within 2x", "compiled > 2x (conservative)",
                 "smallest longdouble estimate there", "compiled < 1/2 x", "ratio compiled / longdouble"], rows)]
    write_section(NAME, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
