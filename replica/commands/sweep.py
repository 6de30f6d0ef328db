"""``replica sweep MODEL ...``: a grid of parameters (x d x seeds), cached, written as CSV.

Every model option accepts a comma-separated list; the grid is their Cartesian product. With
``--seeds N`` and ``--ds`` each point is simulated at each d with N seeds (and the theory solved
once per point); without ``--seeds`` only the theory is solved. Finished jobs are cached under
``--cache`` (default ``.replica-cache``), so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import sys

from ..errors import ParameterError
from .common import parse_dps
from .simulate import (MODEL_HELP, add_model_options, add_simulation_options, collect_options,
                       collect_params, parse_int)

DEFAULT_CACHE = ".replica-cache"


def add_run_options(p):
    """Options shared by ``sweep`` and ``check``: seeds, precision, cache and executors."""
    p.add_argument("--seed", default="0", help="base seed (default 0)")
    p.add_argument("--dps", default="30", help="digits of the theory solves (default 30)")
    p.add_argument("--cache", default=DEFAULT_CACHE,
                   help=f"cache folder (default {DEFAULT_CACHE}); 'none' disables caching")
    p.add_argument("--workers", default=None,
                   help="local worker processes (default: number of cores)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler ADDRESS (e.g. tcp://host:8786): run the jobs there")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def parse_ds(text, name="--ds") -> list[int]:
    from ..simulate.sweep import split_list

    out = []
    for item in split_list(text, name):
        out.append(parse_int(item, name, minimum=2))
    return out


def grid_from_args(args, model: str) -> list[dict]:
    """Cartesian product of the (comma-separated) model options."""
    from ..simulate.sweep import expand_grid, split_list

    params = collect_params(args, model)
    lists = {}
    for k, v in params.items():
        lists[k] = split_list(v, "--" + k.replace("_", "-"))
    return expand_grid(lists)


def run_options(args) -> dict:
    """Executor options from ``add_run_options``: the cache folder and the scheduler address are
    checked here, before any work (exit 2 for an unusable folder or a malformed address)."""
    from ..simulate.sweep import parse_scheduler_address
    from .paths import check_cache_dir

    cache = None if str(args.cache).lower() == "none" else check_cache_dir(args.cache)
    workers = parse_int(args.workers, "--workers", minimum=1) if args.workers else None
    scheduler = None if args.scheduler is None else parse_scheduler_address(args.scheduler)
    return {"cache_dir": cache, "workers": workers, "scheduler": scheduler,
            "executor": "dask" if scheduler else "process",
            "progress": not args.no_progress}


def register(subparsers):
    p = subparsers.add_parser("sweep", help="grids of theory solves and simulations, as CSV",
                              description="Sweep a grid (every model option may be a comma-"
                                          "separated list). With --seeds, simulate each point "
                                          "at each --ds; otherwise solve the theory only. "
                                          "Cached per job; resumable.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    for model in ("lowrank", "alignment", "isotropic"):
        m = models.add_parser(model, help=MODEL_HELP[model], description=MODEL_HELP[model])
        add_model_options(m, model, lists=True)
        m.add_argument("--ds", "--d", dest="ds", default=None,
                       help="dimension(s) d, comma-separated (needed with --seeds, and always "
                            "for alignment)")
        m.add_argument("--seeds", default="0", help="seeds per point and d (0: theory only)")
        m.add_argument("--no-theory", action="store_true",
                       help="simulate without solving the theory")
        add_simulation_options(m, model)
        add_run_options(m)
        m.add_argument("-o", "--output", required=True, help="CSV file to write")
        m.add_argument("--force", action="store_true", help="overwrite an existing --output")
        m.set_defaults(run=_run, sim_model=model)
    _register_model_file(models)
    return models


def _register_model_file(models):
    from .common import add_schema_options, add_user_model_parser

    sp = add_user_model_parser(
        models, "sweep",
        "Solve its equations on a grid (every parameter option may be a comma-separated list; "
        "the grid is their Cartesian product), verified at --dps digits, written as CSV.")
    if sp is None:
        return
    add_schema_options(sp, sp.get_default("problem").schema, " (comma-separated list allowed)")
    sp.add_argument("--dps", default="30", help="digits of each solve (default 30)")
    sp.add_argument("-o", "--output", required=True, help="CSV file to write")
    sp.add_argument("--force", action="store_true", help="overwrite an existing --output")
    sp.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    sp.set_defaults(run=_run_model_file)


def _run_model_file(args):
    from ..analysis.scan import sweep_rows, write_sweep_csv
    from .paths import check_output_file, written
    from ..simulate.sweep import expand_grid, split_list
    from .common import given_values, progress_bar

    problem = args.problem
    out = check_output_file(args.output, "--output", args.force)
    lists = {k: split_list(v, "--" + k.replace("_", "-"))
             for k, v in given_values(args, problem.schema).items()}
    grid = expand_grid(lists)
    for point in grid:  # every point is validated before any work
        problem.schema.parse(point)
    rows = sweep_rows(problem, grid, parse_dps(args.dps),
                      progress=None if args.no_progress else progress_bar("sweep"))
    with written(out, "--output"):
        write_sweep_csv(out, problem, rows)
    failed = sum(1 for r in rows if r["status"] != "converged")
    sys.stderr.write(f"replica sweep: {len(rows)} rows written to {out}"
                     + (f" ({failed} did not converge: status in the CSV)" if failed else "")
                     + "\n")
    return 0


def _run(args):
    from ..simulate.sweep import make_jobs, run_jobs, write_csv

    from .paths import check_output_file, written

    model = args.sim_model
    seeds = parse_int(args.seeds, "--seeds", minimum=0)
    if seeds == 0 and args.no_theory:
        raise ParameterError("--no-theory", "nothing to do without --seeds")
    out = check_output_file(args.output, "--output", args.force)
    ds = parse_ds(args.ds) if args.ds else []
    jobs = make_jobs(model, grid_from_args(args, model), ds, seeds,
                     parse_int(args.seed, "--seed", minimum=0), parse_dps(args.dps),
                     with_theory=not args.no_theory, options=collect_options(args, model))
    run = run_jobs(jobs, **run_options(args))
    with written(out, "--output"):
        rows = write_csv(out, model, jobs, run)
    sys.stderr.write(f"replica sweep: {rows} rows written to {args.output} ({run.computed} jobs "
                     f"computed, {run.cached} from the cache, {run.seconds:.1f} s)\n")
    return 0
