"""``replica phase-diagram MODEL -o DIR``: regions and boundary curves as figures (PNG, PDF,
SVG) and CSV.

``replica phase-diagram MODEL -o DIR`` draws the paper's diagram of a built-in model;
``replica phase-diagram MODEL --x NAME:LO:HI[:N][:log] --y ... --quantity Q [--PARAM V ...]``
maps any reported quantity over any two continuous parameters of a built-in model (the same as
``--model MODEL``, :func:`replica.analysis.scan.plane`), and ``--model PATH`` does so for a
model file.
"""

from __future__ import annotations

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
    from ..models import NAMES

    if argv[words[1]] not in NAMES or "--model" in argv:
        return argv
    argv.insert(words[1], "--model")
    return argv


def _figure_files(stem):
    return [stem + s for s in FIGURE_SUFFIXES]


_TAU_ONE = ("the ridgeless (lambda = 0) diagram diverges at tau = 1, the interpolation threshold: "
            "choose tau != 1")


def _progress(label):
    from .common import progress_bar

    return progress_bar(label, unit="row")


def register(subparsers):
    p = subparsers.add_parser(
        "phase-diagram", help="phase diagrams as figures (PNG, PDF, SVG) + CSV",
        description="Draw a model's phase diagram: regions and traced boundaries, written as "
                    "PNG, PDF, SVG and CSV files to -o DIR. Any plane of a built-in model: "
                    "replica phase-diagram MODEL --x NAME:LO:HI[:N][:log] --y NAME:LO:HI[:N][:log]"
                    " --quantity Q [--level L | --trace-max] [--PARAM VALUE ...] -o DIR "
                    "(options: replica phase-diagram --model MODEL --help).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    a = models.add_parser("alignment", help="power-law specialisation: where a steeper "
                                            "pretraining spectrum beats matched pretraining")
    a.add_argument("-o", "--out", required=True, help="output folder")
    a.add_argument("--force", action="store_true", help="overwrite files already in --out")
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
    lr.add_argument("--force", action="store_true", help="overwrite files already in --out")
    lr.add_argument("--tau", default="9/4")
    lr.add_argument("--sigma", default="3/10")
    lr.add_argument("--alphas", default="1e2,1e3,1e4", help="comma-separated alphas for the "
                                                            "crossover lines")
    lr.add_argument("--dps", default="30")
    lr.set_defaults(run=_run_lowrank)
    i = models.add_parser("isotropic", help="region of non-monotone error in alpha over "
                                            "(kappa, rho)")
    i.add_argument("-o", "--out", required=True, help="output folder")
    i.add_argument("--force", action="store_true", help="overwrite files already in --out")
    i.add_argument("--tau", default="0.5")
    i.add_argument("--error", choices=["e_icl", "e_idg"], default="e_icl")
    i.set_defaults(run=_run_isotropic)
    for sub in (a, lr, i):
        sub.epilog = (f"Any two parameters and any reported quantity: replica phase-diagram "
                      f"{sub.prog.split()[-1]} --x NAME:LO:HI[:N][:log] --y NAME:LO:HI[:N][:log] "
                      f"--quantity Q -o DIR (see replica phase-diagram --model "
                      f"{sub.prog.split()[-1]} --help).")
    _register_model_file(models)
    return models


def _register_model_file(models):
    from .common import add_schema_options, add_user_model_parser

    sp = add_user_model_parser(
        models, "phase-diagram",
        "Map a reported quantity over two parameters (float64 grid), written as CSV and as a "
        "figure (PNG, PDF, SVG), with a level set (--level) or the line of maxima along x "
        "(--trace-max), each also written as _boundary.csv.")
    if sp is None:
        return
    sp.add_argument("-o", "--out", required=True, help="output folder")
    sp.add_argument("--force", action="store_true", help="overwrite files already in --out")
    sp.add_argument("--x", required=True, metavar="NAME:LO:HI[:N][:log]",
                    help="horizontal axis, e.g. alpha:0.2:5:60")
    sp.add_argument("--y", required=True, metavar="NAME:LO:HI[:N][:log]",
                    help="vertical axis, e.g. lam:1e-3:1:40:log")
    names = sp.get_default("problem").report_names()
    sp.add_argument("--quantity", required=True,
                    help=f"a reported value: {', '.join(names)}")
    sp.add_argument("--level", default=None,
                    help="draw the level set quantity = LEVEL (written as _boundary.csv)")
    sp.add_argument("--trace-max", action="store_true",
                    help="trace the maximum along x for each y (written as _boundary.csv)")
    add_schema_options(sp, sp.get_default("problem").schema, " (fixed)")
    sp.set_defaults(run=_run_model_file)


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

    problem = args.problem
    x, y = parse_axis(args.x, "--x"), parse_axis(args.y, "--y")
    stem = f"{problem.name}_{args.quantity}_{x[0]}_{y[0]}"
    check_output_dir(args.out, "--out", [stem + ".csv", stem + "_boundary.csv"]
                     + _figure_files(stem), args.force)
    paths = plane(problem, given_values(args, problem.schema), x, y, args.quantity, args.out,
                  level=args.level,
                  trace_max=args.trace_max, progress=progress_bar("grid rows", unit="row"))
    print("wrote " + ", ".join(paths[k] for k in sorted(paths)))
    print(status_summary(paths["csv"]))
    return 0


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


def _run_alignment(args):
    from ..errors import ParameterError
    from ..params import parse_exact, require_nonnegative, require_positive
    from ..analysis.phase_diagram import alignment_specialisation

    from ..params import exact_str
    from ..spectra import check_theory_d
    from .paths import check_output_dir

    d = require_positive(parse_exact(args.d, "--d"), "--d")
    if d.denominator != 1:
        raise ParameterError("--d", "must be an integer")
    check_theory_d(int(d))
    v = {name: exact_str(require_positive(parse_exact(getattr(args, name), f"--{name}"),
                                          f"--{name}")) for name in ("alpha", "tau")}
    if v["tau"] == "1":
        raise ParameterError("--tau", _TAU_ONE)
    rho = exact_str(require_nonnegative(parse_exact(args.rho, "--rho"), "--rho"))
    p_test = exact_str(require_positive(parse_exact(args.p_test, "--p-test"), "--p-test"))
    stem = "alignment_specialisation"
    check_output_dir(args.out, "--out", _figure_files(stem) + [stem + "_grid.csv",
                                                               stem + "_boundary.csv"],
                     args.force)
    pts = alignment_specialisation(args.out, d=int(d), alpha=v["alpha"], tau=v["tau"],
                                   rho=rho, p_test=p_test,
                                   progress=_progress("power-law grid"))
    print(f"wrote {args.out}/alignment_specialisation.png, .pdf, .svg, _grid.csv, _boundary.csv "
          f"({len(pts)} boundary points)")
    print(status_summary(f"{args.out}/{stem}_grid.csv"))
    return 0


def _run_isotropic(args):
    from ..errors import ParameterError
    from ..params import parse_exact, require_positive
    from ..analysis.phase_diagram import isotropic_nonmonotone, isotropic_tag
    from .paths import check_output_dir

    if require_positive(parse_exact(args.tau, "--tau"), "--tau") == 1:
        raise ParameterError("--tau", _TAU_ONE)
    tag = isotropic_tag(args.tau, args.error)
    check_output_dir(args.out, "--out", _figure_files(tag) + [tag + "_grid.csv",
                                                              tag + "_boundary.csv"], args.force)
    _, b = isotropic_nonmonotone(args.out, tau=args.tau, which=args.error,
                                 progress=_progress("boundary rows"))
    print(f"wrote {args.out}/{tag}.png, .pdf, .svg, _grid.csv, _boundary.csv "
          f"({len(b)} boundary points)")
    print(status_summary(f"{args.out}/{tag}_grid.csv"))
    return 0


def _run_lowrank(args):
    from ..params import parse_exact, require_nonnegative, require_positive
    from ..analysis.phase_diagram import lowrank_phase_diagram
    from .common import parse_dps

    from ..errors import ParameterError
    from ..params import exact_str
    from .paths import check_output_dir

    t = require_positive(parse_exact(args.tau, "--tau"), "--tau")
    if t <= 1:
        raise ParameterError("--tau", "the lambda = 0 diagram needs tau > 1")
    sigma = exact_str(require_nonnegative(parse_exact(args.sigma, "--sigma"), "--sigma"))
    items = [a.strip() for a in args.alphas.split(",")]
    if not any(items) or not all(items):
        raise ParameterError("--alphas", f"expected a comma-separated list of alphas such as "
                                         f"1e2,1e3, got {args.alphas!r}")
    alphas = tuple(exact_str(require_positive(parse_exact(a, "--alphas"), "--alphas"))
                   for a in items)
    dps = parse_dps(args.dps)
    stem = "lowrank_phase_diagram"
    check_output_dir(args.out, "--out", _figure_files(stem) + [stem + "_grid.csv",
                                                               stem + "_boundary.csv"],
                     args.force)
    rows = lowrank_phase_diagram(args.out, tau=exact_str(t), sigma=sigma, alphas=alphas,
                                 dps=dps, progress=_progress("transitions"))
    print(f"wrote {args.out}/lowrank_phase_diagram.png, .pdf, .svg, _grid.csv and _boundary.csv "
          f"({len(rows)} boundary rows)")
    print(status_summary(f"{args.out}/{stem}_grid.csv"))
    return 0
