"""``replica solve MODEL ...``: solve a model's equations at one parameter point.

The options of each model are its declared parameter schema (:mod:`replica.models.parameters`),
so the parsers are built without loading a model; the solve itself goes through the engine
(:func:`replica.numerics.driver.solve_params`).
"""

from __future__ import annotations

from .common import add_dps, parse_dps, run_solve

DESCRIPTIONS = {
    "alignment": "Paper A's asymptotic ICL error for arbitrary pretraining and test task "
                 "covariances. Notation of paper A: --rho is the label-noise variance.",
    "isotropic": "Paper B's closed forms (isotropic tasks). --rho is the label-noise variance.",
    "lowrank": "Replica-symmetric saddle point of linear attention trained on low-rank tasks "
               "(Takanami, Takahashi, Kabashima). Notation of that paper: --rho is the task-RANK "
               "RATIO r/D and --sigma the label-noise STANDARD DEVIATION (in the "
               "alignment/isotropic models --rho is the noise variance).",
}


def register(subparsers):
    from ..models import NAMES, TITLES
    from ..models.parameters import SCHEMAS

    p = subparsers.add_parser("solve", help="solve a model's equations at one point",
                              description="Solve the order-parameter equations of a model at one "
                                          "parameter point, to --dps digits.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    for name in NAMES:
        sp = models.add_parser(name, help=TITLES[name], description=DESCRIPTIONS[name])
        SCHEMAS[name].add_arguments(sp)
        add_dps(sp)
        sp.set_defaults(run=_run, schema=SCHEMAS[name])
    return models


def _run(args):
    from .. import models

    problem = models.get(args.model)
    return run_solve(problem, args.schema.raw_from_namespace(args), parse_dps(args.dps),
                     args.json)
