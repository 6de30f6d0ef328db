r"""``replica appendix MODEL -o DIR [--pdf] [--fragment] [--class revtex]``: write a model's
derivation as a LaTeX appendix (the models with a derivation of their own,
:mod:`replica.registry`, or ``--model PATH``).

Every step's check runs first; a failing check writes nothing and exits with status 1, naming the
step. ``NAME.tex`` is a standalone document with its bibliography ``replica-papers.bib``; ``--fragment`` also
writes ``NAME-body.tex`` (to ``\input`` into a paper) and ``NAME-macros.tex`` (its notation, for
the paper's preamble). ``--class revtex`` makes ``NAME.tex`` a two-column ``revtex4-2`` paper (the
displays of NAME-body.tex always fit a two-column journal's column). ``--pdf`` compiles with
``latexmk -pdf -interaction=nonstopmode -halt-on-error``; without ``latexmk`` on ``PATH`` it exits with status 2 and one line saying what
to install. LaTeX's warnings (and overfull boxes over 1 pt) are printed to stderr, one a line.
"""

from __future__ import annotations

import sys

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "write a derivation's LaTeX appendix (and PDF)"


def register(subparsers):
    from ..registry import CommandHook, add_model_parsers

    p = subparsers.add_parser("appendix", help=HELP,
        description="Write the LaTeX appendix of a model's derivation, generated step by step "
                    "from the library's SymPy objects; every step's check runs first. MODEL: a "
                    "model with a derivation, or --model PATH (the derivation of a model file).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    def generic(entry):
        if not entry.is_file and entry.declared("DERIVATION") is None:
            return None  # a built-in model without a derivation of its own
        return CommandHook(_arguments, _run, description="Write the appendix of its derivation.")

    add_model_parsers(models, "appendix", generic)
    return models


def _arguments(p):
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--force", action="store_true", help="overwrite files already in -o DIR")
    p.add_argument("--pdf", action="store_true",
                   help="also compile NAME.pdf with latexmk (TeX Live); LaTeX warnings go to "
                        "stderr")
    p.add_argument("--fragment", action="store_true",
                   help="also write NAME-body.tex (no preamble: \\input it into a paper) and "
                        "NAME-macros.tex (its notation, \\providecommand; \\input it in the "
                        "preamble)")
    p.add_argument("--class", dest="document_class", choices=("article", "revtex"),
                   default="article", help="class of NAME.tex: article (one column, default) or "
                   "revtex (two-column revtex4-2; needs texlive-publishers)")
    p.add_argument("--at", default=None, metavar="NAME=VALUE,...",
                   help="with --model: also tabulate the solution at this parameter point")
    p.add_argument("--dps", default="30", help="with --at: digits of the solve (default 30)")


def parse_point(text: str, problem) -> dict:
    """``{name: value}`` from ``"alpha=2,lam=1/10"`` (validated by the problem's schema)."""
    from ..errors import ParameterError

    out = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, eq, value = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        if not eq or not value.strip():
            raise ParameterError("--at", f"expected NAME=VALUE, got {item!r}")
        if name not in problem.schema:
            raise ParameterError("--at", f"unknown parameter {name!r} (this model has "
                                         f"{', '.join(problem.schema.names)})")
        out[name] = value.strip()
    problem.schema.parse(out)
    return out


def _run(args):
    from ..derivations.appendix import appendix_files, write_appendix
    from ..errors import ParameterError
    from .common import parse_dps, progress_bar
    from .paths import check_output_dir

    entry = args.entry
    derivation = None if entry.is_file else entry.declared("DERIVATION")
    problem = entry.problem if derivation is None else None
    name = problem.name.replace("_", "-") if problem is not None else derivation
    progress = progress_bar(f"appendix {name}", unit="step")
    check_output_dir(args.out, "--out", appendix_files(name, args.fragment)
                     + ([f"{name}.pdf"] if args.pdf else []), args.force)
    if problem is not None:
        point = parse_point(args.at, problem) if args.at else None
        result = write_appendix(problem, args.out, pdf=args.pdf, point=point,
                                dps=parse_dps(args.dps), progress=progress,
                                fragment=args.fragment, document_class=args.document_class)
    else:
        if args.at is not None:
            raise ParameterError("--at", "is only for --model PATH")
        result = write_appendix(derivation, args.out, pdf=args.pdf, progress=progress,
                                fragment=args.fragment, document_class=args.document_class)
    passed = sum(o.passed for o in result.outcomes)
    sys.stdout.write(f"{result.tex}  ({passed}/{len(result.outcomes)} step checks passed)\n")
    for path in result.files[1:]:
        sys.stdout.write(f"{path}\n")
    if result.pdf is not None:
        sys.stdout.write(f"{result.pdf.pdf}  (latexmk, {result.pdf.seconds:.1f} s, "
                         f"{len(result.pdf.warnings)} LaTeX warning(s))\n")
        for warning in result.pdf.warnings:
            sys.stderr.write(f"{result.pdf.log}: {warning}\n")
    return 0
