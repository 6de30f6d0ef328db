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

    _register_lowrank(models)
    return models


# -- lowrank (arXiv 2510.04548) -----------------------------------------------------------------
def _register_lowrank(models):
    lr = models.add_parser(
        "lowrank", help="low-rank tasks: RS saddle point, TM/IDG/ODG errors (arXiv 2510.04548)",
        description="Replica-symmetric saddle point of linear attention trained on low-rank "
                    "tasks (Takanami, Takahashi, Kabashima). Notation of that paper: --rho is "
                    "the task-RANK RATIO r/D and --sigma the label-noise STANDARD DEVIATION "
                    "(in the alignment/isotropic models --rho is the noise variance).")
    lr.add_argument("--alpha", required=True, help="pretraining context length ratio L/D")
    lr.add_argument("--tau", required=True, help="pretraining prompts M/D^2 (tau = gamma*kappa)")
    lr.add_argument("--kappa", required=True, help="distinct pretraining tasks M0/D ('inf': a "
                                                   "fresh task per prompt; needs --lam 0)")
    lr.add_argument("--rho", required=True, help="task-RANK RATIO r/D in (0, 1] (NOT the noise "
                                                 "variance of papers A/B)")
    lr.add_argument("--sigma", required=True, help="pretraining label-noise STANDARD DEVIATION "
                                                   "(variance sigma^2)")
    lr.add_argument("--lam", default="0", help="ridge lambda per distinct task (objective "
                                               "lambda*M0*||Gamma||^2/2; default 0)")
    lr.add_argument("--alpha-test", default=None, help="test context length ratio (default "
                                                       "alpha)")
    lr.add_argument("--sigma-test", default="0", help="test label-noise standard deviation "
                                                      "(default 0)")
    add_dps(lr)
    lr.set_defaults(run=_run_lowrank)


def _run_lowrank(args):
    from ..models import lowrank

    res = lowrank.solve(args.alpha, args.tau, args.kappa, args.rho, args.sigma, args.lam,
                        args.alpha_test, args.sigma_test, dps=parse_dps(args.dps))
    print_result(res, args.json)
    return 0


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
