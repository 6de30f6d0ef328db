"""``replica solve MODEL ...``: solve a model's equations at one parameter point."""

from __future__ import annotations

from .common import add_dps, parse_dps, print_result

NOISE_HELP = "label-noise VARIANCE (papers A/B notation; not the low-rank rank ratio)"


def register(subparsers):
    p = subparsers.add_parser("solve", help="solve a model's equations at one point",
                              description="Solve the order-parameter equations of a model at one "
                                          "parameter point, to --dps digits.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    a = models.add_parser("alignment", help="paper A: arbitrary C_train, C_test (arXiv 2509.26551)",
                          description="Paper A's asymptotic ICL error for arbitrary pretraining "
                                      "and test task covariances. Notation of paper A: --rho is the "
                                      "label-noise variance.")
    _common_ak(a)
    a.add_argument("--d", required=True, help="token dimension (size of the covariances)")
    a.add_argument("--train", required=True, help="C_train SPEC: identity, powerlaw:P, lowrank:F, "
                                                  "spike:J, piano, file:PATH[:raw]")
    a.add_argument("--test", required=True, help="C_test SPEC (same forms as --train)")
    a.add_argument("--alpha-test", default=None, help="test context length ratio (default alpha)")
    add_dps(a)
    a.set_defaults(run=_run_alignment)

    i = models.add_parser("isotropic", help="paper B: closed forms, C = I (arXiv 2405.11751)",
                          description="Paper B's closed forms (isotropic tasks). --rho is the "
                                      "label-noise variance.")
    _common_ak(i)
    add_dps(i)
    i.set_defaults(run=_run_isotropic)
    return models


def _common_ak(p):
    p.add_argument("--alpha", required=True, help="context length ratio l/d")
    p.add_argument("--tau", required=True, help="pretraining contexts n/d^2")
    p.add_argument("--kappa", required=True, help="task diversity k/d ('inf': a fresh task per "
                                                  "context)")
    p.add_argument("--rho", required=True, help=NOISE_HELP)
    p.add_argument("--lam", default="0", help="ridge lambda (default 0: ridgeless limit)")


def _run_alignment(args):
    from ..models import alignment

    res = alignment.solve(args.alpha, args.tau, args.kappa, args.rho, args.lam, args.d,
                          args.train, args.test, args.alpha_test, dps=parse_dps(args.dps))
    print_result(res, args.json)
    return 0


def _run_isotropic(args):
    from ..models import isotropic

    res = isotropic.solve(args.alpha, args.tau, args.kappa, args.rho, args.lam,
                          dps=parse_dps(args.dps))
    print_result(res, args.json)
    return 0
