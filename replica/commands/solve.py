"""``replica solve MODEL ...``: solve a model's equations at one parameter point.

The options of each model of the registry (:mod:`replica.registry`) are its declared parameter
schema, so the parsers are built without loading a built-in model (``--model PATH`` loads a model
file and offers its schema's options); the solve itself goes through the engine
(:func:`replica.numerics.driver.solve_params`).
"""

from __future__ import annotations

from .common import add_dps, parse_dps, run_solve

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "solve a model's equations at one point"


def _add_certify(p):
    p.add_argument("--certify", action="store_true",
                   help="prove the result: a Krawczyk inclusion in ball arithmetic (python-flint "
                        "arb) shows that a unique solution lies in a small box, and every "
                        "reported value is enclosed over it; digits are then those the "
                        "enclosures prove (exit 3 with the reason if the proof fails)")

def register(subparsers):
    from ..registry import CommandHook, add_model_parsers

    p = subparsers.add_parser("solve", help=HELP,
                              description="Solve the order-parameter equations of a model at one "
                                          "parameter point, to --dps digits. --model PATH for a "
                                          "model file.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    def generic(entry):
        def arguments(sp):
            entry.schema.add_arguments(sp)
            add_dps(sp)
            _add_certify(sp)
            sp.add_argument("--start", action="append", default=None,
                            metavar="NAME=VALUE[,NAME=VALUE...]",
                            help="solve from this start of Newton's method (a value for every "
                                 "unknown of the solved system); repeat it to solve from several "
                                 "starts: the distinct solutions are reported with their free "
                                 "energies, and the equilibrium one (the smallest free energy, "
                                 "or the largest free entropy, as the model declares) is named")
            sp.add_argument("--follow", default=None, metavar="NAME:TO[:N[:log]]",
                            help="with one --start: follow the branch through that start, from "
                                 "the given value of the parameter NAME to TO in N equal steps "
                                 "(default 10), each solved from the extrapolation of the "
                                 "previous solutions (continuation: a metastable branch is "
                                 "kept); with :log the steps are equal in log(NAME) (geometric, "
                                 "values rounded to 6 significant digits; both ends nonzero, of "
                                 "one sign) and positive unknowns are extrapolated in their "
                                 "logarithms (exact for powers of NAME: e.g. a ridge lam -> 0, "
                                 "lam:1/10000:9:log); a step whose solve fails, or lands far "
                                 "from the "
                                 "extrapolation, is halved (up to 8 times) and the branch "
                                 "followed through the intermediate values; stops where the "
                                 "branch is still lost")

        return CommandHook(arguments, _run, description="Solve its equations at one point.")

    add_model_parsers(models, "solve", generic)
    return models


def _run(args):
    entry = args.entry
    raw = entry.schema.raw_from_namespace(args)
    if getattr(args, "follow", None):
        from .common import run_follow

        return run_follow(entry.problem, raw, parse_dps(args.dps), args.json, args.start,
                          args.follow)
    if getattr(args, "start", None):
        from ..errors import ParameterError
        from .common import run_from_starts

        if args.certify:
            raise ParameterError("--certify", "is for one solve: drop --start, or --certify")
        return run_from_starts(entry.problem, raw, parse_dps(args.dps), args.json, args.start,
                               branches=entry.branches)
    return run_solve(entry.problem, raw, parse_dps(args.dps), args.json, certify=args.certify,
                     branches=entry.branches)
