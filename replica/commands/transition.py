"""``replica transition MODEL ...``: locate a phase transition (or finite-alpha crossover)."""

from __future__ import annotations

import json
import sys

from .common import add_dps, parse_dps


def _add_certify(p):
    p.add_argument("--certify", action="store_true",
                   help="prove the location in ball arithmetic where the indicator has a closed "
                        "form (interval Newton on the defining condition; for alpha -> oo the "
                        "kink of the closed-form limit); exit 3 with the reason otherwise")


def register(subparsers):
    p = subparsers.add_parser(
        "transition", help="locate a phase transition numerically",
        description="Locate a model's phase transition. Without --alpha: the non-analytic point of "
                    "the alpha -> oo limit (found numerically, never substituted). With --alpha A: "
                    "the finite-alpha crossover, by the definition printed in the output.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    a = models.add_parser("alignment", help="kappa_c for C_train = lowrank:F (paper A)",
                          description="Task-diversity transition of paper A with a low-rank "
                                      "C_train = P/F. --rho is the label-noise variance.")
    a.add_argument("--rank-fraction", required=True, help="F = rank(C_train)/d, in (0, 1]")
    a.add_argument("--tau", required=True, help="pretraining contexts n/d^2 (> 1)")
    a.add_argument("--rho", required=True, help="label-noise variance")
    a.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    add_dps(a)
    _add_certify(a)
    a.set_defaults(run=_run_alignment)
    lr = models.add_parser("lowrank", help="rho_c of the low-rank model (rho = rank ratio)",
                           description="Task-rank transition of the low-rank model "
                                       "(arXiv 2510.04548). Here rho is the task-RANK ratio and "
                                       "sigma the label-noise standard deviation.")
    lr.add_argument("--kappa", required=True, help="task diversity M0/D, in (0, 1)")
    lr.add_argument("--tau", required=True, help="pretraining prompts M/D^2 (> 1)")
    lr.add_argument("--sigma", required=True, help="label-noise standard deviation")
    lr.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    lr.add_argument("--indicator", default="m0", choices=["m0", "idg_over_alpha"],
                    help="quantity whose kink (alpha -> oo) or curvature peak defines the "
                         "transition (default m0)")
    add_dps(lr)
    _add_certify(lr)
    lr.set_defaults(run=_run_lowrank)
    i = models.add_parser("isotropic", help="kappa_c of paper B (memorisation -> ICL)",
                          description="Task-diversity transition of paper B (C = I). --rho is "
                                      "the label-noise variance.")
    i.add_argument("--tau", default=None, help="pretraining contexts n/d^2 (> 1); required "
                                               "unless --interpolation-peak")
    i.add_argument("--rho", required=True, help="label-noise variance")
    i.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    i.add_argument("--interpolation-peak", action="store_true",
                   help="instead locate the tau of the double-descent peak of e_ICL "
                        "(needs --alpha, --kappa and a ridge --lam > 0)")
    i.add_argument("--kappa", default=None, help="task diversity (with --interpolation-peak)")
    i.add_argument("--lam", default=None, help="ridge > 0 (with --interpolation-peak)")
    add_dps(i)
    _add_certify(i)
    i.set_defaults(run=_run_isotropic)
    _register_model_file(models)
    return models


def _register_model_file(models):
    from .common import add_schema_options, add_user_model_parser

    sp = add_user_model_parser(
        models, "transition",
        "Locate where a reported quantity has an interior maximum or minimum in one parameter, "
        "or crosses a level, the other parameters fixed.")
    if sp is None:
        return
    sp.add_argument("--vary", required=True, metavar="NAME", help="the parameter to vary")
    sp.add_argument("--between", required=True, metavar="LO,HI",
                    help="the interval of the varied parameter")
    sp.add_argument("--quantity", required=True, help="a reported value (see replica solve)")
    sp.add_argument("--kind", default="max", choices=["max", "min", "level"],
                    help="interior maximum (default), minimum, or crossing of --level")
    sp.add_argument("--level", default=None, help="the level, with --kind level")
    sp.add_argument("--points", default="64", help="float64 scan points that bracket it "
                                                   "(default 64)")
    sp.add_argument("--log", action="store_true", help="scan on a logarithmic grid")
    add_schema_options(sp, sp.get_default("problem").schema, " (fixed)")
    add_dps(sp)
    sp.set_defaults(run=_run_model_file)


def _run_model_file(args):
    from ..analysis.scan import locate
    from ..errors import ParameterError
    from .common import given_values, progress_bar
    from .simulate import parse_int

    problem = args.problem
    parts = [t.strip() for t in args.between.split(",")]
    if len(parts) != 2 or not all(parts):
        raise ParameterError("--between", f"expected LO,HI, got {args.between!r}")
    res = locate(problem, given_values(args, problem.schema), args.vary.replace("-", "_"),
                 parts[0], parts[1], args.quantity, kind=args.kind, level=args.level,
                 dps=parse_dps(args.dps), points=parse_int(args.points, "--points", minimum=5),
                 log=True if args.log else None,
                 progress=progress_bar(f"transition {problem.name}: refinements",
                                       unit="refinement"))
    data = res.to_json_dict()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    params = ", ".join(f"{k}={v}" for k, v in data["params"].items())
    sys.stdout.write(f"{data['model']} ({params})\n  {data['vary']} = {data['location']}  "
                     f"({data['digits']} digits; {data['quantity']} = {data['value']})\n"
                     f"  definition: {data['definition']}\n  method: {data['method']}\n")
    return 0


def print_transition(res, as_json):
    """Print a transition (JSON or text); a requested proof that failed exits 3 afterwards."""
    data = res.to_json_dict()
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        key = next(k for k in ("kappa_c", "rho_c", "tau_peak") if k in data)
        params = ", ".join(f"{k}={v}" for k, v in data["params"].items())
        sys.stdout.write(f"{data['model']} transition ({params})\n"
                         f"  {key} = {data[key]}  (error bound {data['error_bound']}, "
                         f"{data['digits']} digits)\n  definition: {data['definition']}\n"
                         f"  method: {data['method']}\n")
        if "certificate" in data:
            c = data["certificate"]
            if c["certified"]:
                lo, hi = c["enclosure"]
                sys.stdout.write(f"  certified: {key} in [{lo}, {hi}] ({c['method']})\n")
                for line in c["checks"]:
                    sys.stdout.write(f"    - {line}\n")
            else:
                sys.stdout.write(f"  certified: no ({c['reason']})\n")
        for n in data["notes"]:
            sys.stdout.write(f"  note: {n}\n")
    if "certificate" in data and not data["certified"]:
        from ..errors import ConvergenceError

        raise ConvergenceError(f"{res.model}: not certified: {data['certificate']['reason']}",
                               status="not-certified")


def _run_alignment(args):
    from ..analysis.transitions import alignment_transition

    res = alignment_transition(args.rank_fraction, args.tau, args.rho, args.alpha,
                               dps=parse_dps(args.dps), certify=args.certify)
    print_transition(res, args.json)
    return 0


def _run_isotropic(args):
    from ..errors import ParameterError
    from ..analysis.transitions import isotropic_interpolation_peak, isotropic_transition

    if args.interpolation_peak:
        if args.tau is not None:
            raise ParameterError("--tau", "--interpolation-peak locates the tau of the peak; "
                                          "do not pass --tau with it")
        for flag in ("alpha", "kappa"):
            if getattr(args, flag) is None:
                raise ParameterError(f"--{flag}", "is required with --interpolation-peak")
        res = isotropic_interpolation_peak(args.alpha, args.kappa, args.rho,
                                           "0" if args.lam is None else args.lam,
                                           dps=parse_dps(args.dps))
        if args.certify:
            from ..analysis.certified import TransitionCertificate

            res.certificate = TransitionCertificate(
                False, "e_ICL(tau) is defined through a solved equation (the effective ridge), "
                       "not a closed form: the error bound is numerical")
        print_transition(res, args.json)
        return 0
    for flag in ("kappa", "lam"):  # the kappa_c search varies kappa and is ridgeless
        if getattr(args, flag) is not None:
            raise ParameterError(f"--{flag}", "is only used with --interpolation-peak (the "
                                              "kappa_c transition varies kappa at lambda = 0)")
    if args.tau is None:
        raise ParameterError("--tau", "is required (or pass --interpolation-peak)")
    res = isotropic_transition(args.tau, args.rho, args.alpha, dps=parse_dps(args.dps),
                               certify=args.certify)
    print_transition(res, args.json)
    return 0


def _run_lowrank(args):
    from ..analysis.transitions import lowrank_transition

    res = lowrank_transition(args.kappa, args.tau, args.sigma, args.alpha, dps=parse_dps(args.dps),
                             indicator=args.indicator, certify=args.certify)
    print_transition(res, args.json)
    return 0
