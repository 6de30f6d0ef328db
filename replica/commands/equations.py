"""``replica equations MODEL``: a model's stationarity conditions and fixed-point form."""

from __future__ import annotations

import sys

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "print a model's saddle-point equations (text, LaTeX or JSON)"


def register(subparsers):
    from ..registry import CommandHook, add_model_parsers

    p = subparsers.add_parser("equations", help=HELP,
        description="Print a model's equations: for a model with a free energy, its stationarity "
                    "conditions and their fixed-point form (derived by SymPy); for a model "
                    "declared by its equations, the system each variant solves. "
                    "--model PATH for a model file.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    add_model_parsers(models, "equations",
                      lambda entry: CommandHook(_arguments, _run,
                                                description="Print its equations."))
    return models


def _arguments(q):
    fmt = q.add_mutually_exclusive_group()
    fmt.add_argument("--latex", action="store_true", help="LaTeX (align* environments)")
    fmt.add_argument("--json", action="store_true",
                     help="JSON: every expression as text and as SymPy srepr")
    q.add_argument("--systems", action="store_true",
                   help="also print the solved system of every variant (for a free-energy "
                        "model: the closed map the engine iterates)")


def _run(args):
    from ..derivations.equations import as_json, as_latex, as_text, equation_blocks

    problem = args.entry.problem
    blocks = equation_blocks(problem, systems=args.systems)
    render = as_latex if args.latex else as_json if args.json else as_text
    sys.stdout.write(render(problem, blocks))
    return 0
