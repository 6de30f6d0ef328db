"""``replica appendix {alignment,lowrank} -o DIR [--pdf]``: write a derivation's LaTeX appendix.

Every step's check runs first; a failing check writes nothing and exits with status 1, naming the
step. ``--pdf`` compiles with ``latexmk -pdf -interaction=nonstopmode -halt-on-error``; without
``latexmk`` on ``PATH`` it exits with status 2 and one line saying what to install.
"""

from __future__ import annotations

import sys

#: The derivations' names, written out so that building the parser does not import SymPy;
#: ``tests/test_cli_startup.py`` checks they equal :data:`replica.derivations.DERIVATIONS`.
DERIVATION_NAMES = ("alignment", "lowrank")


def register(subparsers):
    p = subparsers.add_parser(
        "appendix", help="write a derivation's LaTeX appendix (and PDF)",
        description="Write the LaTeX appendix of a paper's derivation, generated step by step from "
                    "the library's SymPy objects; every step's check runs first. alignment: paper "
                    "A (rho = noise variance); lowrank: the low-rank paper (rho = rank ratio, "
                    "sigma^2 = noise variance).")
    p.add_argument("derivation", choices=DERIVATION_NAMES,
                   metavar="{%s}" % ",".join(DERIVATION_NAMES), help="which paper's derivation")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--pdf", action="store_true",
                   help="also compile NAME.pdf with latexmk (TeX Live)")
    p.set_defaults(run=_run)
    return p


def _run(args):
    from ..derivations.appendix import write_appendix

    result = write_appendix(args.derivation, args.out, pdf=args.pdf)
    passed = sum(o.passed for o in result.outcomes)
    sys.stdout.write(f"{result.tex}  ({passed}/{len(result.outcomes)} step checks passed)\n")
    if result.pdf is not None:
        sys.stdout.write(f"{result.pdf.pdf}  (latexmk, {result.pdf.seconds:.1f} s)\n")
    return 0
