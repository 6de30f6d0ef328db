"""``replica solve MODEL ...``: solve a model's equations at one parameter point.

The options of each model are its declared parameter schema (:mod:`replica.models.parameters`),
so the parsers are built without loading a model (``--model PATH`` loads a model file and offers
its schema's options); the solve itself goes through the engine
(:func:`replica.numerics.driver.solve_params`).
"""

from __future__ import annotations

from .common import add_dps, add_user_model_parser, parse_dps, run_solve


def _add_certify(p):
    p.add_argument("--certify", action="store_true",
                   help="prove the result: a Krawczyk inclusion in ball arithmetic (python-flint "
                        "arb) shows that a unique solution lies in a small box, and every "
                        "reported value is enclosed over it; digits are then those the "
                        "enclosures prove (exit 3 with the reason if the proof fails)")

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
        _add_certify(sp)
        sp.set_defaults(run=_run, schema=SCHEMAS[name])
    sp = add_user_model_parser(models, "solve", "Solve its equations at one point.")
    if sp is not None:
        sp.set_defaults(run=_run, schema=sp.get_default("problem").schema)
        sp.get_default("problem").schema.add_arguments(sp)
        add_dps(sp)
        _add_certify(sp)
    return models


def _run(args):
    from .. import models

    problem = getattr(args, "problem", None) or models.get(args.model)
    return run_solve(problem, args.schema.raw_from_namespace(args), parse_dps(args.dps),
                     args.json, certify=args.certify)
