"""``replica phase-diagram MODEL -o DIR``: regions and boundary curves as PNG + CSV."""

from __future__ import annotations

import sys


def _progress(label):
    def report(i, n):
        width = 30
        done = int(width * i / n)
        sys.stderr.write(f"\r{label} [{'#' * done}{'.' * (width - done)}] {i}/{n}")
        if i == n:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report


def register(subparsers):
    p = subparsers.add_parser("phase-diagram", help="phase diagrams as PNG + CSV",
                              description="Draw a model's phase diagram: regions and traced "
                                          "boundaries, written as PNG and CSV files to -o DIR.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    a = models.add_parser("alignment", help="power-law specialisation: where a steeper "
                                            "pretraining spectrum beats matched pretraining")
    a.add_argument("-o", "--out", required=True, help="output folder")
    a.add_argument("--d", default="32")
    a.add_argument("--alpha", default="1")
    a.add_argument("--tau", default="4")
    a.add_argument("--rho", default="0.01", help="label-noise variance")
    a.add_argument("--p-test", default="0.9", help="test power-law exponent")
    a.set_defaults(run=_run_alignment)
    lr = models.add_parser("lowrank", help="(kappa, rho) diagram: task-rich / task-scarce regions, "
                                           "located transition and finite-alpha crossovers",
                           description="Low-rank model (rho = task-rank ratio, sigma = noise "
                                       "std), lambda = 0.")
    lr.add_argument("-o", "--out", required=True, help="output folder")
    lr.add_argument("--tau", default="9/4")
    lr.add_argument("--sigma", default="3/10")
    lr.add_argument("--alphas", default="1e2,1e3,1e4", help="comma-separated alphas for the "
                                                            "crossover lines")
    lr.add_argument("--dps", default="30")
    lr.set_defaults(run=_run_lowrank)
    i = models.add_parser("isotropic", help="region of non-monotone error in alpha over "
                                            "(kappa, rho)")
    i.add_argument("-o", "--out", required=True, help="output folder")
    i.add_argument("--tau", default="0.5")
    i.add_argument("--error", choices=["e_icl", "e_idg"], default="e_icl")
    i.set_defaults(run=_run_isotropic)
    return models


def _run_alignment(args):
    from ..errors import ParameterError
    from ..params import parse_exact, require_nonnegative, require_positive
    from ..analysis.phase_diagram import alignment_specialisation

    d = require_positive(parse_exact(args.d, "--d"), "--d")
    if d.denominator != 1:
        raise ParameterError("--d", "must be an integer")
    for name in ("alpha", "tau"):
        require_positive(parse_exact(getattr(args, name), f"--{name}"), f"--{name}")
    require_nonnegative(parse_exact(args.rho, "--rho"), "--rho")
    require_positive(parse_exact(args.p_test, "--p-test"), "--p-test")
    pts = alignment_specialisation(args.out, d=int(d), alpha=args.alpha, tau=args.tau,
                                   rho=args.rho, p_test=args.p_test,
                                   progress=_progress("power-law grid"))
    print(f"wrote {args.out}/alignment_specialisation.png, _grid.csv, _boundary.csv "
          f"({len(pts)} boundary points)")
    return 0


def _run_isotropic(args):
    from ..params import parse_exact, require_positive
    from ..analysis.phase_diagram import isotropic_nonmonotone

    require_positive(parse_exact(args.tau, "--tau"), "--tau")
    _, b = isotropic_nonmonotone(args.out, tau=args.tau, which=args.error,
                                 progress=_progress("boundary rows"))
    print(f"wrote {args.out}/isotropic_nonmonotone_{args.error}_tau{args.tau}.png, _grid.csv, "
          f"_boundary.csv ({len(b)} boundary points)")
    return 0


def _run_lowrank(args):
    from ..params import parse_exact, require_nonnegative, require_positive
    from ..analysis.phase_diagram import lowrank_phase_diagram
    from .common import parse_dps

    t = require_positive(parse_exact(args.tau, "--tau"), "--tau")
    if t <= 1:
        from ..errors import ParameterError

        raise ParameterError("--tau", "the lambda = 0 diagram needs tau > 1")
    require_nonnegative(parse_exact(args.sigma, "--sigma"), "--sigma")
    alphas = tuple(a.strip() for a in args.alphas.split(",") if a.strip())
    for a in alphas:
        require_positive(parse_exact(a, "--alphas"), "--alphas")
    rows = lowrank_phase_diagram(args.out, tau=args.tau, sigma=args.sigma, alphas=alphas,
                                 dps=parse_dps(args.dps), progress=_progress("transitions"))
    print(f"wrote {args.out}/lowrank_phase_diagram.png and _boundary.csv ({len(rows)} rows)")
    return 0
