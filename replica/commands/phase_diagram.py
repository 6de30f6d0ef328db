"""``replica phase-diagram MODEL -o DIR``: regions and boundary curves as figures (PNG, PDF,
SVG) and CSV.

``replica phase-diagram MODEL --x NAME:LO:HI[:N][:log] --y ... --quantity Q [--PARAM V ...]``
maps any reported quantity over any two continuous parameters of any model
(:func:`replica.analysis.scan.plane`; ``--model PATH`` for a model file).
``replica phase-diagram MODEL -o DIR`` draws a model's own diagram where it declares one (the
papers' diagrams of the built-in models, :mod:`replica.registry`); with one of the plane options
such a model is routed to the generic plane (:func:`route_builtin_plane`).
"""

from __future__ import annotations

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "phase diagrams as figures (PNG, PDF, SVG) + CSV"


#: The file formats of every figure (:data:`replica.figures.FORMATS`, without importing it).
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")
#: Options that select the generic plane of a built-in model.
PLANE_OPTIONS = ("--x", "--y", "--quantity")


def route_builtin_plane(argv: list) -> list:
    """``argv`` with ``phase-diagram MODEL ...`` rewritten to ``phase-diagram --model MODEL ...``
    when ``MODEL`` is a built-in model and one of :data:`PLANE_OPTIONS` is given: the paper's
    diagram has fixed axes, any other plane goes through the generic command."""
    argv = list(argv)
    words = [i for i, t in enumerate(argv) if not t.startswith("-")]
    if len(words) < 2 or argv[words[0]] != "phase-diagram" or words[1] != words[0] + 1:
        return argv
    if not any(t == o or t.startswith(o + "=") for t in argv for o in PLANE_OPTIONS):
        return argv
    from ..registry import BUILTIN

    if argv[words[1]] not in BUILTIN or "--model" in argv:
        return argv
    argv.insert(words[1], "--model")
    return argv


def _figure_files(stem):
    return [stem + s for s in FIGURE_SUFFIXES]


def register(subparsers):
    from ..registry import CommandHook, add_model_parsers

    p = subparsers.add_parser("phase-diagram", help=HELP,
        description="Draw a model's phase diagram: regions and traced boundaries, written as "
                    "PNG, PDF, SVG and CSV files to -o DIR. Any plane of any model: "
                    "replica phase-diagram MODEL --x NAME:LO:HI[:N][:log] --y NAME:LO:HI[:N][:log]"
                    " --quantity Q [--level L | --trace-max] [--PARAM VALUE ...] -o DIR "
                    "(options: replica phase-diagram --model MODEL --help); a model may also "
                    "draw its paper's diagram (replica phase-diagram MODEL -o DIR).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    generic = CommandHook(
        _plane_arguments, _run_model_file,
        description="Map a reported quantity over two parameters (float64 grid), written as CSV "
                    "and as a figure (PNG, PDF, SVG), with a level set (--level) or the line of "
                    "maxima along x (--trace-max), each also written as _boundary.csv; when the "
                    "model declares a replicon, the de Almeida-Thouless line (replicon = 0) is "
                    "drawn and written as _at_line.csv.")
    add_model_parsers(models, "phase-diagram", lambda entry: generic)
    return models


def _plane_arguments(sp):
    from .common import add_schema_options

    entry = sp.get_default("entry")
    sp.add_argument("-o", "--out", required=True, help="output folder")
    sp.add_argument("--force", action="store_true", help="overwrite files already in --out")
    sp.add_argument("--x", required=True, metavar="NAME:LO:HI[:N][:log]",
                    help="horizontal axis, e.g. alpha:0.2:5:60")
    sp.add_argument("--y", required=True, metavar="NAME:LO:HI[:N][:log]",
                    help="vertical axis, e.g. lam:1e-3:1:40:log")
    sp.add_argument("--quantity", required=True,
                    help=f"a reported value: {', '.join(entry.problem.report_names())}"
                    if entry.is_file else "a reported value (see replica solve)")
    sp.add_argument("--level", default=None,
                    help="draw the level set quantity = LEVEL (written as _boundary.csv)")
    sp.add_argument("--trace-max", action="store_true",
                    help="trace the maximum along x for each y (written as _boundary.csv)")
    add_schema_options(sp, entry.schema, " (fixed)")


def parse_axis(text: str, option: str) -> tuple:
    """``(name, lo, hi, n, log)`` from ``NAME:LO:HI[:N][:log]``."""
    from ..errors import ParameterError

    parts = [t.strip() for t in str(text).split(":")]
    log = parts[-1].lower() == "log"
    if log:
        parts = parts[:-1]
    if len(parts) not in (3, 4) or not all(parts):
        raise ParameterError(option, f"expected NAME:LO:HI[:N][:log], got {text!r}")
    n = 40
    if len(parts) == 4:
        try:
            n = int(parts[3])
        except ValueError:
            raise ParameterError(option, f"N must be an integer, got {parts[3]!r}") from None
    return parts[0].replace("-", "_"), parts[1], parts[2], n, log


def _run_model_file(args):
    from ..analysis.scan import plane
    from .common import given_values, progress_bar
    from .paths import check_output_dir

    problem = args.entry.problem
    x, y = parse_axis(args.x, "--x"), parse_axis(args.y, "--y")
    stem = f"{problem.name}_{args.quantity}_{x[0]}_{y[0]}"
    check_output_dir(args.out, "--out", [stem + ".csv", stem + "_boundary.csv",
                                         stem + "_at_line.csv"]
                     + _figure_files(stem), args.force)
    paths = plane(problem, given_values(args, problem.schema), x, y, args.quantity, args.out,
                  level=args.level,
                  trace_max=args.trace_max, progress=progress_bar("grid rows", unit="row"))
    print("wrote " + ", ".join(paths[k] for k in sorted(paths)))
    print(status_summary(paths["csv"]))
    if "at_line" in paths:
        print("stability: " + stability_summary(paths["csv"], paths["at_line"]))
    return 0


def stability_summary(csv_path: str, at_line_path: str) -> str:
    """The sentence of :func:`replica.analysis.scan.replicon_summary` from the files of a grid
    whose model declares a replicon: the ``replicon`` column at the converged points of
    ``csv_path`` and the number of segments of the AT line in ``at_line_path``."""
    import csv

    from ..analysis.scan import replicon_summary
    from ..problem import REPLICON

    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    column = REPLICON if rows and REPLICON in rows[0] else None
    values = [float(r[column]) for r in rows if column and r["converged"] == "True"]
    with open(at_line_path, newline="") as fh:
        segments = {r["segment"] for r in csv.DictReader(fh)}
    return replicon_summary(values, len(segments))


def status_summary(csv_path: str) -> str:
    """One line counting the points of a grid CSV by their ``status`` column: how many the
    float64 path verified (``converged``: every value to a relative 1e-8) and how many it did
    not (drawn grey, values in the CSV only as a start) or could not solve."""
    import csv
    from collections import Counter

    with open(csv_path, newline="") as fh:
        counts = Counter(row["status"] for row in csv.DictReader(fh))
    total = sum(counts.values())
    good = counts.pop("converged", 0)
    unverified = counts.pop("not-verified", 0)
    failed = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return (f"float64 status: {good} of {total} points converged (relative error <= 1e-8), "
            f"{unverified} not verified" + (f", {failed}" if failed else "")
            + (" (not verified: shown grey; solve them with 'replica solve')"
               if unverified else ""))

