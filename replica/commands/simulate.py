"""``replica simulate MODEL ...``: finite-size linear attention against the theory.

The model options are those of ``replica solve`` (same names, same notation: in ``alignment`` and
``isotropic`` ``--rho`` is the noise variance, in ``lowrank`` the rank ratio and ``--sigma`` the
noise standard deviation), plus ``--d`` and ``--seeds``. The helpers here are shared with
``replica sweep`` and ``replica check``, where each model option may be a comma-separated list.
"""

from __future__ import annotations

import json
import sys

from ..errors import ParameterError
from .common import parse_dps, progress_bar

NOISE_HELP = "label-noise VARIANCE (papers A/B notation; not the low-rank rank ratio)"

MODEL_HELP = {
    "lowrank": "low-rank tasks (arXiv 2510.04548): TM/IDG/ODG errors and order parameters",
    "alignment": "paper A: tasks N(0, C_train), tests N(0, C_test) (arXiv 2509.26551)",
    "isotropic": "paper B: isotropic tasks (arXiv 2405.11751)",
}


def add_model_options(p, model: str, lists: bool = False, scores: bool = False):
    """The model's parameter options (as in ``replica solve``). With ``lists``, each value may be
    a comma-separated list (a grid); with ``scores`` the test options may be lists on which one
    trained Gamma is scored (``replica simulate``)."""
    many = " (comma-separated list for a grid)" if lists else ""
    scored = (" (comma-separated list: the same trained Gamma is scored on each)" if scores
              else many)
    p.add_argument("--alpha", required=True, help="context length ratio l/d" + many)
    p.add_argument("--tau", required=True, help="pretraining contexts n/d^2" + many)
    p.add_argument("--kappa", required=True,
                   help="task diversity k/d ('inf': a fresh task per context)" + many)
    if model == "lowrank":
        p.add_argument("--rho", required=True, help="task-rank ratio r/D in (0, 1]" + many)
        p.add_argument("--sigma", required=True, help="label-noise standard deviation" + many)
    else:
        p.add_argument("--rho", required=True, help=NOISE_HELP + many)
    p.add_argument("--lam", default="0", help="ridge lambda (default 0: ridgeless limit; "
                   + ("lowrank normalisation lambda*M0/2" if model == "lowrank" else
                      "normalisation (n/d) lambda") + ")" + many)
    if model == "alignment":
        p.add_argument("--train", required=True, help="C_train SPEC: identity, powerlaw:P, "
                       "lowrank:F[:piano], spike:J, piano, file:PATH[:raw]" + many)
        p.add_argument("--test", required=True, help="C_test SPEC (same forms)" + scored)
    if model in ("alignment", "lowrank"):
        p.add_argument("--alpha-test", default=None, help="test context length ratio "
                       "(default alpha)" + scored)
    if model == "lowrank":
        p.add_argument("--sigma-test", default="0",
                       help="test label-noise standard deviation (default 0)" + many)
        p.add_argument("--test", default="idg",
                       help="test-task law relative to the task subspace, reported as the "
                            "error 'test': idg (default), outside:PHI, shared:F, "
                            "rotation:DEGREES" + scored)


def add_simulation_options(p, model: str):
    """Options of the simulation itself (not model parameters)."""
    if model == "isotropic":
        p.add_argument("--task-law", default="gaussian", choices=("gaussian", "sphere"),
                       help="pretraining task law: N(0, I) (default) or uniform on the sphere "
                            "|w| = sqrt(d) (paper B's code)")
    p.add_argument("--balanced", action="store_true",
                   help="use every pretraining task equally often (paper B) instead of uniform "
                        "random assignment")
    p.add_argument("--sampler", default="fast", choices=("fast", "direct"),
                   help="context statistics: exact-in-law O(d) sampler (default) or the "
                        "direct l x d construction")
    p.add_argument("--solver", default="auto",
                   choices=("auto", "direct", "cg", "primal", "dual", "naive"),
                   help="ridge solver: direct (dual kernel solve if n < P = d*p, else Cholesky "
                        "of the chunked primal Gram), cg (preconditioned conjugate gradients on "
                        "the primal, relative residual 1e-10), naive (dense reference); "
                        "default auto: dual if n < P, cg if P >= 1000 and n >= 2P, else direct")
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch"),
                   help="arrays of the cg solver: numpy (default) or torch (optional extra "
                        "'gpu'; a CUDA device if torch sees one, else the CPU)")
    p.add_argument("--test-prompts", default="0",
                   help="0: exact closed-form test errors (default); N: Monte Carlo over N "
                        "sampled test prompts per error and seed")


def model_param_names(model: str) -> tuple:
    from ..simulate.experiment import PARAM_NAMES

    return PARAM_NAMES[model]


def collect_params(args, model: str) -> dict:
    """The model parameters from parsed arguments, as strings (``None`` left out)."""
    out = {}
    for name in model_param_names(model):
        val = getattr(args, name, None)
        if val is not None:
            out[name] = val
    return out


def collect_options(args, model: str) -> dict:
    return {"task_law": getattr(args, "task_law", "gaussian"),
            "balanced": bool(getattr(args, "balanced", False)),
            "sampler": args.sampler, "solver": args.solver,
            "backend": getattr(args, "backend", "numpy"),
            "test_prompts": parse_int(args.test_prompts, "--test-prompts", minimum=0)}


def parse_int(text, name: str, minimum: int | None = None) -> int:
    try:
        v = int(str(text).strip())
    except ValueError:
        raise ParameterError(name, f"must be an integer, got {text!r}") from None
    if minimum is not None and v < minimum:
        raise ParameterError(name, f"must be at least {minimum}, got {v}")
    return v


def register(subparsers):
    p = subparsers.add_parser("simulate", help="finite-size linear attention vs the theory",
                              description="Train linear attention by exact ridge regression at "
                                          "dimension --d over --seeds independent draws and "
                                          "compare each error with the theory (mean, standard "
                                          "error, z-score).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    for model in ("lowrank", "alignment", "isotropic"):
        m = models.add_parser(model, help=MODEL_HELP[model], description=MODEL_HELP[model])
        add_model_options(m, model, scores=True)
        m.add_argument("--d", required=True, help="token dimension d (D)")
        m.add_argument("--seeds", required=True, help="number of independent draws")
        m.add_argument("--seed", default="0", help="base seed S0 (seed i is "
                                                   "SeedSequence(S0).spawn(N)[i]; default 0)")
        add_simulation_options(m, model)
        m.add_argument("--no-theory", action="store_true", help="skip the theory solve")
        m.add_argument("--theory-at", default="nominal", choices=("nominal", "realised"),
                       help="theory at the nominal ratios (default) or at those the integer "
                            "sizes realise (ell/d, n/d^2, k/d, r/D)")
        m.add_argument("--dps", default="30", help="digits of the theory solve (default 30)")
        m.add_argument("--json", action="store_true", help="print one JSON object")
        m.add_argument("--csv", default=None, metavar="PATH",
                       help="also write one CSV row per (test, test length, error) with its "
                            "theory")
        m.set_defaults(run=_run, sim_model=model)
    return models


def _run(args):
    from ..simulate import simulate

    model = args.sim_model
    dps = parse_dps(args.dps)
    res = simulate(model, args.d, parse_int(args.seeds, "--seeds", minimum=1),
                   parse_int(args.seed, "--seed", minimum=0), with_theory=not args.no_theory,
                   dps=dps, theory_at=args.theory_at,
                   progress=progress_bar(f"simulate {model} d={args.d}", unit="seed"),
                   **collect_options(args, model),
                   **collect_params(args, model))
    if args.csv:
        write_scores_csv(args.csv, res)
    if args.json:
        sys.stdout.write(json.dumps(res.to_json_dict(), indent=2) + "\n")
        return 0
    print_result(res)
    return 0


def write_scores_csv(path, res):
    """One CSV row per (test, test length, error key): the row's parameters (a numeric one as a
    float ``NAME`` and exactly ``NAME_exact``, a SPEC as text), ``key``, ``mean``, ``sem``,
    ``seeds``, ``theory``, ``z``. Without lists, the rows are the errors themselves."""
    import csv

    rows = res.score_table()
    if not rows:
        rows = [{"key": k, "mean": e.mean, "sem": e.sem, "seeds": e.seeds, "theory": e.theory,
                 "z": e.z} for k, e in res.errors.items()]
    # a numeric parameter as a float column and its exact string in NAME_exact (SPECs as text)
    from ..params import numeric_columns

    values = ("key", "mean", "sem", "seeds", "theory", "z")
    header, columns = [], []
    for name in [k for k in rows[0] if k not in values]:
        h, cols = numeric_columns(name, [r[name] for r in rows])
        header += h
        columns += cols
    header += list(values)
    try:
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows([col[i] for col in columns]
                             + ["" if r[k] is None else r[k] for k in values]
                             for i, r in enumerate(rows))
    except OSError as exc:
        raise ParameterError("--csv", f"cannot write {path!r}: {exc.strerror}") from None


def _fmt(x, spec=".6g"):
    return "-" if x is None else format(x, spec)


def print_result(res, stream=None):
    """A readable table of a :class:`replica.simulate.SimulationResult`."""
    stream = stream or sys.stdout
    params = ", ".join(f"{k}={v}" for k, v in res.params.items())
    sizes = " ".join(f"{k}={v}" for k, v in res.sizes.items())
    stream.write(f"simulate {res.model} ({params})\n")
    stream.write(f"  d={res.d}, {len(res.per_seed)} seeds from seed {res.seed}; {sizes}\n")
    groups = [("errors", res.errors)]
    if res.order_parameters:
        groups.append(("order parameters", res.order_parameters))
    for title, group in groups:
        stream.write(f"  {title}:\n")
        stream.write(f"    {'key':<8} {'mean':>12} {'sem':>10} {'theory':>12} {'z':>8}\n")
        for k, e in group.items():
            stream.write(f"    {k:<8} {_fmt(e.mean):>12} {_fmt(e.sem, '.3g'):>10} "
                         f"{_fmt(e.theory):>12} {_fmt(e.z, '.2f'):>8}\n")
    if res.scores:
        stream.write("  scores of the same trained Gamma:\n")
        for row in res.score_table():
            label = " ".join(f"{k}={row[k]}" for k in ("test", "alpha_test", "ell_test")
                             if k in row)
            stream.write(f"    {label:<34} {row['key']:<6} {_fmt(row['mean']):>12} "
                         f"{_fmt(row['sem'], '.3g'):>10} {_fmt(row['theory']):>12} "
                         f"{_fmt(row['z'], '.2f'):>8}\n")
    for n in res.notes:
        stream.write(f"  note: {n}\n")
