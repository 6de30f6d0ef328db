"""Every quadrature example's 30-digit point and 100-point float64 curve (issue 26: "a 30-digit
point of a quadrature model costs <= 1 s"; "a float64 learning curve of 100 points <= 1 s").

For each example of ``examples/`` whose equations hold a Gaussian integral (``gauss``, or the
GLM builders' derived channel and prior terms), at the point its docstring uses (the committee
machine excepted: its own benchmark), one fresh Python process per run, with ``PYTHONPATH`` the
tree and a code cache of the tree's own (``REPLICA_LAMBDIFY_CACHE``, kept between runs, so
after the first run of a model it is warm):

1. ``replica.load_model(path)`` (CPU seconds, not part of the point's cost);
2. ``replica.solve(model, dps=30, **point)`` -- the point, timed (CPU, ``time.process_time``);
   then ``--inner`` more solves of the same point in the same process (what a script that
   solves several points pays per point once the process is warm);
3. ``replica.solve_float64(model, **{param: grid})`` over 100 values of the model's main
   parameter (one untimed two-point call first, which loads the generated code, and SciPy's
   error functions imported untimed, as in :mod:`benchmarks.quadrature_speed`), timed.

The first run of a model per tree warms the code cache and is not timed (its CPU is printed as
``cold``); then ``--repeats`` runs, the trees alternating where ``--baseline`` is given. The
table gives the median (and min) over the runs of the point's first solve in the process, the
median of the in-process repeats, the curve's CPU, the statuses, and (with a baseline) whether
the printed 30-digit values are identical between the trees.

``python -m benchmarks.quad30_points [--baseline DIR] [--repeats 3] [--inner 2]
[--only NAME,...] [--timeout CPU_SECONDS] [--no-write] [--section quad30] [--tree DIR]``
(``--tree``: the tree measured as "this", default this checkout).

``--parts NAME,...`` instead prints where the time goes, one process per model (:func:`parts`):
the point's CPU by ``Machine.evaluate`` group and backend and the ball ``polygamma`` (and
``digamma_difference``) calls, the curve's CPU and what
:func:`replica.numerics.newton._second_look` spent on which points.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile

try:
    from ._util import machine_line, table, write_section
except ImportError:  # run as a script
    from _util import machine_line, table, write_section  # type: ignore

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "quad30"

# name: (model file, the point (exact strings), the curve's parameter, its range, the curve's
# other parameters as floats)
MODELS = {
    "perceptron_capacity": ("examples/perceptron_capacity.py", {"kappa": "0"},
                            "kappa", (0.0, 2.0), {}),
    "perceptron_gardner": ("examples/perceptron_gardner.py", {"alpha": "2", "kappa": "-1/2"},
                           "alpha", (0.2, 3.0), {"kappa": -0.5}),
    "perceptron_teacher_gaussian": ("examples/perceptron_teacher.py",
                                    {"alpha": "1", "prior": "gaussian"},
                                    "alpha", (0.2, 3.0), {"prior": "gaussian"}),
    "perceptron_teacher_rademacher": ("examples/perceptron_teacher.py",
                                      {"alpha": "1", "prior": "rademacher"},
                                      "alpha", (0.2, 3.0), {"prior": "rademacher"}),
    # (the m < 1 branch ends at alpha_alg ~ 1.4925: above it every point is inadmissible; the
    # same point, the curve over the branch only)
    "perceptron_teacher_rademacher_branch": ("examples/perceptron_teacher.py",
                                             {"alpha": "1", "prior": "rademacher"},
                                             "alpha", (0.2, 1.45), {"prior": "rademacher"}),
    "logistic_regression": ("examples/logistic_regression.py",
                            {"alpha": "2", "lam": "1/10", "eta": "1"},
                            "alpha", (0.2, 3.0), {"lam": 0.1, "eta": 1}),
    "logistic_separability": ("examples/logistic_separability.py", {"eta": "1/2"},
                              "eta", (0.1, 0.9), {}),
    "lasso": ("examples/lasso.py", {"alpha": "1/2", "eps": "1/10", "lam": "1/2", "sigma": "1/10"},
              "alpha", (0.2, 3.0), {"eps": 0.1, "lam": 0.5, "sigma": 0.1}),
    "lasso_phase_transition": ("examples/lasso_phase_transition.py",
                               {"delta": "1/2", "rho": "1/10"},
                               "rho", (0.05, 0.9), {"delta": 0.5}),
    "glm_lasso": ("examples/glm_lasso.py",
                  {"alpha": "1/2", "eps": "1/10", "lam": "1/2", "sigma": "1/10"},
                  "alpha", (0.2, 3.0), {"eps": 0.1, "lam": 0.5, "sigma": 0.1}),
    "glm_logistic": ("examples/glm_logistic.py", {"alpha": "2", "lam": "1/10", "eta": "9/10"},
                     "alpha", (0.2, 3.0), {"lam": 0.1, "eta": 0.9}),
    "glm_relu": ("examples/glm_relu.py", {"alpha": "2", "lam": "1/10", "sigma": "1/2"},
                 "alpha", (0.2, 3.0), {"lam": 0.1, "sigma": 0.5}),
    "glm_relu_huber": ("examples/glm_relu_huber.py",
                       {"alpha": "2", "lam": "1/10", "sigma": "1/2", "delta": "1"},
                       "alpha", (0.2, 3.0), {"lam": 0.1, "sigma": 0.5, "delta": 1}),
    "glm_bayes_relu": ("examples/glm_bayes_relu.py", {"alpha": "1"}, "alpha", (0.2, 1.9), {}),
    "glm_bayes_relu_noisy": ("examples/glm_bayes_relu_noisy.py", {"alpha": "1", "sigma": "1/2"},
                             "alpha", (0.2, 3.0), {"sigma": 0.5}),
    "glm_bayes_sign": ("examples/glm_bayes_sign.py", {"alpha": "1"}, "alpha", (0.2, 3.0), {}),
    "glm_bayes_sign_branch": ("examples/glm_bayes_sign.py", {"alpha": "1"}, "alpha", (0.2, 1.45),
                              {}),
    "hinge_svm": ("examples/hinge_svm.py", {"alpha": "2"}, "alpha", (0.2, 3.0), {}),
    "phase_retrieval": ("examples/phase_retrieval.py", {"alpha": "4/5"}, "alpha", (0.55, 1.15),
                        {}),
    "phase_retrieval_noisy": ("examples/phase_retrieval_noisy.py",
                              {"alpha": "1", "sigma": "1/2"}, "alpha", (0.2, 3.0),
                              {"sigma": 0.5}),
}

CHILD = r"""
import json, sys, time
import numpy as np
path, point, param, lo, hi, extra, inner, what = sys.argv[1:9]
point, extra, inner = json.loads(point), json.loads(extra), int(inner)
import replica
from replica.errors import ReplicaError
out = {}
t = time.process_time()
model = replica.load_model(path)
out["load"] = time.process_time() - t
def solve():
    t = time.process_time()
    try:
        r = replica.solve(model, dps=30, **point)
        doc = r.to_json_dict()
        got = {"status": doc["status"], "digits": doc["digits"],
               "values": {k: v for k, v in doc.items() if isinstance(v, dict)
                          and k not in ("params",)}}
    except ReplicaError as e:
        got = {"status": "error: " + type(e).__name__ + ": " + str(e)[:120], "digits": 0,
               "values": {}}
    got["cpu"] = time.process_time() - t
    return got
if "point" in what:
    first = solve()
    out["point"] = first
    out["inner"] = [solve()["cpu"] for _ in range(inner)] if first["cpu"] < 30 else []
if "curve" in what:
    grid = np.linspace(float(lo), float(hi), 100)
    try:
        replica.solve_float64(model, **{param: grid[:2]}, strict=False, **extra)
        try:
            import scipy.special  # noqa: F401 - imported untimed, as in quadrature_speed
        except ImportError:
            pass
        t = time.process_time()
        r = replica.solve_float64(model, **{param: grid}, strict=False, **extra)
        cpu = time.process_time() - t
        st = [str(getattr(s, "value", s)) for s in r["status"]]
        out["curve"] = {"cpu": cpu, "converged": int(np.sum(r["converged"])),
                        "statuses": {s: st.count(s) for s in sorted(set(st))}}
    except ReplicaError as e:
        out["curve"] = {"cpu": float("nan"), "converged": 0,
                        "statuses": {"error: " + type(e).__name__ + ": " + str(e)[:100]: 100}}
print("QUAD30 " + json.dumps(out))
"""


PARTS = r"""
import collections, json, sys, time
import numpy as np
path, point, param, lo, hi, extra = sys.argv[1:7]
point, extra = json.loads(point), json.loads(extra)
import replica
import replica.numerics.machine as machine
import replica.numerics.newton as newton
import replica.symbolic.codegen as codegen
cpu = collections.Counter(); calls = collections.Counter(); looked = []
def timed(key, f):
    def g(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            cpu[key] += time.process_time() - t
            calls[key] += 1
    return g
second_look = getattr(newton, "_second_look", None)  # (none since curves32: in place)
def look(phi, jac, X0, X, done, iters, rel, drift, **kw):
    sub = np.flatnonzero(drift.stopped & (drift.falls == 0) & ~drift.unresolved)
    evals = [0]
    def counted(xv, ix):
        evals[0] += np.size(ix)
        return phi(xv, ix)
    t = time.process_time()
    second_look(counted, jac, X0, X, done, iters, rel, drift, **kw)
    if sub.size:
        looked.append({"points": sub.tolist(), "phi_point_evaluations": evals[0],
                       "converged": [bool(done[i]) for i in sub],
                       "cpu": time.process_time() - t})
if second_look is not None:
    newton._second_look = look
evaluate = machine.Machine.evaluate
def evaluated(self, group, backend, *a, **k):
    t = time.process_time()
    try:
        return evaluate(self, group, backend, *a, **k)
    finally:
        cpu[f"evaluate {group} {backend}"] += time.process_time() - t
        calls[f"evaluate {group} {backend}"] += 1
machine.Machine.evaluate = evaluated
polygamma = codegen._ball_polygamma
namespace = codegen._arb_namespace
def with_timed_polygamma():
    ns = namespace()
    ns["polygamma"] = lambda n, x: timed(f"ball polygamma({int(n)}, x)", polygamma)(n, x)
    if "digamma_difference" in ns:  # (psi32: the digamma difference as one function)
        dd = ns["digamma_difference"]
        ns["digamma_difference"] = lambda n, z: timed(f"ball digamma_difference({int(n)}, z)",
                                                      dd)(n, z)
    return ns
codegen._arb_namespace = with_timed_polygamma
model = replica.load_model(path)
replica.solve(model, dps=30, **point)  # the code loaded (and generated if the cache is cold)
cpu.clear(); calls.clear()
t = time.process_time()
replica.solve(model, dps=30, **point)
out = {"point": {"cpu": time.process_time() - t,
                 "parts": {k: [round(cpu[k], 4), calls[k]] for k in sorted(cpu, key=cpu.get)[::-1]}}}
grid = np.linspace(float(lo), float(hi), 100)
replica.solve_float64(model, **{param: grid[:2]}, strict=False, **extra)
cpu.clear(); calls.clear()
t = time.process_time()
r = replica.solve_float64(model, **{param: grid}, strict=False, **extra)
out["curve"] = {"cpu": time.process_time() - t, "second_look": looked,
                "looked_at": [float(grid[i]) for d in looked for i in d["points"]]}
print("QUAD30 " + json.dumps(out))
"""


def parts(tree: str, name: str) -> dict:
    """Where one model's time goes, in one process of ``tree`` (warm code cache): the point's
    CPU with the CPU of each ``Machine.evaluate`` group and backend and of the ball-arithmetic
    ``polygamma`` calls (both nested: not a partition), then the 100-point curve's CPU with
    the CPU and the points of :func:`replica.numerics.newton._second_look`."""
    path, point, param, (lo, hi), extra = MODELS[name]
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache_dir(tree),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", PARTS, path, json.dumps(point), param, str(lo),
                           str(hi), json.dumps(extra)], cwd=tree, env=env, capture_output=True,
                          text=True, check=True)
    return json.loads([t for t in proc.stdout.splitlines() if t.startswith("QUAD30 ")][-1][7:])


def cache_dir(tree: str) -> str:
    key = hashlib.sha1(os.path.abspath(tree).encode()).hexdigest()[:10]
    return os.path.join(tempfile.gettempdir(), f"quad30-cache-{key}")


def run(tree: str, name: str, inner: int, timeout: float, what: str = "point,curve") -> dict:
    path, point, param, (lo, hi), extra = MODELS[name]
    env = dict(os.environ, PYTHONPATH=tree, REPLICA_LAMBDIFY_CACHE=cache_dir(tree),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    argv = [sys.executable, "-c", CHILD, path, json.dumps(point), param, str(lo), str(hi),
            json.dumps(extra), str(inner), what]
    def limit():  # the limit is CPU seconds (SIGXCPU), not wall time: the machine is shared
        resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 5))

    try:
        proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=20 * timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    lines = [t for t in proc.stdout.splitlines() if t.startswith("QUAD30 ")]
    if not lines and proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"timeout": timeout}
    if not lines:
        return {"failed": (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(lines[-1][7:])


def _fmt(x):
    return f"{x:.2f}" if x == x else "-"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.quad30_points")
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--inner", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--section", default=NAME)
    ap.add_argument("--tree", default=HERE, help="the tree measured as 'this' (default: this one)")
    ap.add_argument("--parts", default="", help="NAME,...: where the time goes (no table)")
    ap.add_argument("--point-only", action="store_true",
                    help="time the 30-digit point only (no float64 curve)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.parts:
        for name in args.parts.split(","):
            print(name, json.dumps(parts(os.path.abspath(args.tree), name), indent=1))
        return
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    what = "point" if args.point_only else "point,curve"
    trees = {"this": os.path.abspath(args.tree)}
    if args.baseline:
        trees = {"baseline": os.path.abspath(args.baseline), "this": os.path.abspath(args.tree)}
    load0 = os.getloadavg()[0]
    rows = []
    for name in names:
        runs = {side: [] for side in trees}
        cold = {}
        for side, tree in trees.items():
            cold[side] = run(tree, name, 0, args.timeout, what)
            print(name, side, "cold", json.dumps(cold[side])[:300], flush=True)
        for i in range(args.repeats):
            order = list(trees.items())
            for side, tree in (order if i % 2 == 0 else order[::-1]):
                if "timeout" in cold[side] or "failed" in cold[side]:
                    continue
                got = run(tree, name, args.inner, args.timeout, what)
                print(name, side, json.dumps(got)[:300], flush=True)
                runs[side].append(got)
        for side in trees:
            rs = [r for r in runs[side] if "point" in r]
            path, point = MODELS[name][:2]
            where = ", ".join(f"{k} = {v}" for k, v in point.items())
            if not rs:
                why = cold[side].get("timeout") and f"> {args.timeout:.0f} s CPU (stopped)" \
                    or cold[side].get("failed", "failed")
                rows.append([name, where, side, why, "-", "-", "-", "-", "-", "-"])
                continue
            firsts = [r["point"]["cpu"] for r in rs]
            inner = [c for r in rs for c in r["inner"]]
            curves = [r["curve"]["cpu"] for r in rs if "curve" in r] or [float("nan")]
            last = rs[-1]
            same = "-"
            if len(trees) == 2:
                vals = {s: [r["point"]["values"] for r in runs[s] if "point" in r]
                        for s in trees}
                flat = [v for s in trees for v in vals[s]]
                same = "identical" if flat and all(v == flat[0] for v in flat) else "DIFFERENT"
            cold_cpu = cold[side].get("point", {}).get("cpu", float("nan"))
            rows.append([name, where, side, f"{statistics.median(firsts):.2f} "
                         f"({min(firsts):.2f})",
                         _fmt(statistics.median(inner)) if inner else "-",
                         f"{last['point']['status']} ({last['point']['digits']})",
                         _fmt(statistics.median(curves)),
                         (f"{last['curve']['converged']}/100 "
                          + ", ".join(f"{k} {v}" for k, v in last["curve"]["statuses"].items()
                                      if k != "converged")) if "curve" in last else "-",
                         f"{_fmt(cold_cpu)} / {_fmt(statistics.median(r['load'] for r in rs))}",
                         same])
        print(json.dumps(rows[-len(trees):]), flush=True)
    load1 = os.getloadavg()[0]
    md = [f"## {args.section}", "",
          f"Every quadrature example's 30-digit point and 100-point float64 curve "
          f"(``python -m benchmarks.quad30_points --repeats {args.repeats} --inner "
          f"{args.inner}{' --baseline DIR' if args.baseline else ''}``). Machine: "
          f"{machine_line()}; load average {load0:.1f} at the start, {load1:.1f} at the end "
          f"(shared machine). CPU seconds. 'point': the first `replica.solve(..., dps=30)` "
          f"in a fresh process with a warm code cache, the model loaded, median (min) of "
          f"{args.repeats} processes; 'again': the same solve repeated in that process "
          f"(median); 'curve': `solve_float64` over 100 values of the parameter, the code "
          f"loaded by a two-point call first; 'cold / load': the first run's solve (code "
          f"generation) and the model file's load.", "",
          table(["model", "point", "tree", "point (s)", "again (s)", "status (digits)",
                 "curve (s)", "curve statuses", "cold / load (s)", "30 digits"], rows)]
    if not args.no_write:
        write_section(args.section, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
