"""``replica check MODEL ...``: theory against simulation over several d, as a table and a plot.

Model options as in ``replica solve``; at most one may be a comma-separated list (the x-axis of
the plot). Each point is simulated at every ``--ds`` with ``--seeds`` seeds (cached and run in
parallel as ``replica sweep`` does). Writes ``check.csv``, ``check.md`` and the figure
``check.png``, ``check.pdf``, ``check.svg`` into the folder ``-o``. Every model of the registry
that declares a ``SIMULATION`` is offered (a model file: ``--model PATH``).
"""

from __future__ import annotations

import sys

from .common import parse_dps
from .simulate import (add_point_options, add_simulation_options,
                       collect_options, model_source, parse_int,
                       simulation_hook)
from .sweep import add_run_options, grid_from_args, parse_ds, run_options

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "theory vs simulation over several d: table + plot"


def register(subparsers):
    from ..registry import add_model_parsers

    p = subparsers.add_parser("check", help=HELP,
                              description="Compare the theory with finite-size simulations at "
                                          "several d; one model option may be a list (x-axis).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    hook = simulation_hook(_arguments, _run, _arguments, _run,
                           "Compare its theory with its declared SIMULATION at several d; one "
                           "parameter may be a list (x-axis).")
    add_model_parsers(models, "check", hook)
    return models


def _arguments(m, entry):
    icl = add_point_options(m, entry, lists=True)
    m.add_argument("--ds", default="16,24,32", help="dimensions, comma-separated "
                                                    "(default 16,24,32)")
    m.add_argument("--seeds", default="10", help="seeds per point and d (default 10)")
    m.add_argument("--line-points", default="41",
                   help="points of the dense theory line (default 41)")
    if icl:
        add_simulation_options(m, entry.simulation)
    add_run_options(m)
    m.add_argument("-o", "--output", required=True, help="output folder")
    m.add_argument("--force", action="store_true",
                   help="overwrite check.csv, check.md and check.png/.pdf/.svg already "
                        "in -o")


def _run(args):
    from ..simulate.report import run_check, write_report
    from .paths import check_output_dir, written

    entry = args.entry
    source = model_source(entry)
    check_output_dir(args.output, "--output", ["check.csv", "check.md", "check.png", "check.pdf",
                                               "check.svg"], args.force)
    report = run_check(source, grid_from_args(args, entry), parse_ds(args.ds),
                       parse_int(args.seeds, "--seeds", minimum=2),
                       parse_int(args.seed, "--seed", minimum=0), parse_dps(args.dps),
                       collect_options(args, entry),
                       parse_int(args.line_points, "--line-points", minimum=0),
                       **run_options(args))
    with written(args.output, "--output"):
        files = write_report(report, args.output)
    worst = max((abs(r.z) for r in report.rows if r.z is not None), default=None)
    sys.stdout.write(f"replica check {entry.name}: {len(report.rows)} rows; largest |z| = "
                     f"{'-' if worst is None else format(worst, '.2f')}; wrote "
                     + ", ".join(str(f) for f in files) + "\n")
    return 0
