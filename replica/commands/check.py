"""``replica check MODEL ...``: theory against simulation over several d, as a table and a plot.

Model options as in ``replica solve``; at most one may be a comma-separated list (the x-axis of
the plot). Each point is simulated at every ``--ds`` with ``--seeds`` seeds (cached and run in
parallel as ``replica sweep`` does). Writes ``check.csv``, ``check.md`` and the figure
``check.png``, ``check.pdf``, ``check.svg`` into the folder ``-o``.
"""

from __future__ import annotations

import sys

from .common import parse_dps
from .simulate import (MODEL_HELP, add_model_options, add_simulation_options, collect_options,
                       parse_int)
from .sweep import add_run_options, grid_from_args, parse_ds, run_options


def register(subparsers):
    p = subparsers.add_parser("check", help="theory vs simulation over several d: table + plot",
                              description="Compare the theory with finite-size simulations at "
                                          "several d; one model option may be a list (x-axis).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    for model in ("lowrank", "alignment", "isotropic"):
        m = models.add_parser(model, help=MODEL_HELP[model], description=MODEL_HELP[model])
        add_model_options(m, model, lists=True)
        m.add_argument("--ds", default="16,24,32", help="dimensions, comma-separated "
                                                        "(default 16,24,32)")
        m.add_argument("--seeds", default="10", help="seeds per point and d (default 10)")
        m.add_argument("--line-points", default="41",
                       help="points of the dense theory line (default 41)")
        add_simulation_options(m, model)
        add_run_options(m)
        m.add_argument("-o", "--output", required=True, help="output folder")
        m.add_argument("--force", action="store_true",
                       help="overwrite check.csv, check.md and check.png/.pdf/.svg already "
                            "in -o")
        m.set_defaults(run=_run, sim_model=model)
    return models


def _run(args):
    from ..simulate.report import run_check, write_report
    from .paths import check_output_dir, written

    model = args.sim_model
    check_output_dir(args.output, "--output", ["check.csv", "check.md", "check.png", "check.pdf",
                                               "check.svg"], args.force)
    report = run_check(model, grid_from_args(args, model), parse_ds(args.ds),
                       parse_int(args.seeds, "--seeds", minimum=2),
                       parse_int(args.seed, "--seed", minimum=0), parse_dps(args.dps),
                       collect_options(args, model),
                       parse_int(args.line_points, "--line-points", minimum=0),
                       **run_options(args))
    with written(args.output, "--output"):
        files = write_report(report, args.output)
    worst = max((abs(r.z) for r in report.rows if r.z is not None), default=None)
    sys.stdout.write(f"replica check {model}: {len(report.rows)} rows; largest |z| = "
                     f"{'-' if worst is None else format(worst, '.2f')}; wrote "
                     + ", ".join(str(f) for f in files) + "\n")
    return 0
