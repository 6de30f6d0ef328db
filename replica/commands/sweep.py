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
from .simulate import (add_point_options, add_simulation_options,
                       collect_options, collect_params, model_source,
                       parse_int, simulation_hook)

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "grids of theory solves and simulations, as CSV"


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


def grid_from_args(args, entry) -> list[dict]:
    """Cartesian product of the (comma-separated) model options."""
    from ..simulate.sweep import expand_grid, split_list

    params = collect_params(args, entry)
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
    from ..registry import add_model_parsers

    p = subparsers.add_parser("sweep", help=HELP,
                              description="Sweep a grid (every model option may be a comma-"
                                          "separated list). With --seeds, simulate each point "
                                          "at each --ds; otherwise solve the theory only. "
                                          "Cached per job; resumable.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    hook = simulation_hook(_arguments, _run, _arguments, _run,
                           "Solve its equations on a grid (every parameter option may be a "
                           "comma-separated list; the grid is their Cartesian product), verified "
                           "at --dps digits, written as CSV; with --seeds, simulate each point at "
                           "each --ds (its declared SIMULATION). Cached per job; resumable.")
    add_model_parsers(models, "sweep", hook)
    return models


def _arguments(m, entry):
    icl = add_point_options(m, entry, lists=True)
    if icl:
        m.add_argument("--ds", "--d", dest="ds", default=None,
                       help="dimension(s) d, comma-separated (needed with --seeds, and always "
                            "for a model whose theory depends on d)")
    else:
        m.add_argument("--d", "--ds", dest="ds", default=None,
                       help="dimension(s) d, comma-separated (needed with --seeds; the model's "
                            "parameter d, if it has one)")
    m.add_argument("--seeds", default="0", help="seeds per point and d (0: theory only)")
    m.add_argument("--no-theory", action="store_true",
                   help="simulate without solving the theory")
    if icl:
        add_simulation_options(m, entry.simulation)
    add_run_options(m)
    m.add_argument("-o", "--output", required=True, help="CSV file to write")
    m.add_argument("--force", action="store_true", help="overwrite an existing --output")


def _run(args):
    from ..simulate.sweep import make_jobs, run_jobs, write_csv

    from .paths import check_output_file, written

    entry = args.entry
    source = model_source(entry)
    seeds = parse_int(args.seeds, "--seeds", minimum=0)
    if seeds == 0 and args.no_theory:
        raise ParameterError("--no-theory", "nothing to do without --seeds")
    out = check_output_file(args.output, "--output", args.force)
    ds = parse_ds(args.ds) if args.ds else []
    jobs = make_jobs(source, grid_from_args(args, entry), ds, seeds,
                     parse_int(args.seed, "--seed", minimum=0), parse_dps(args.dps),
                     with_theory=not args.no_theory, options=collect_options(args, entry))
    run = run_jobs(jobs, **run_options(args))
    with written(out, "--output"):
        rows = write_csv(out, source, jobs, run)
    failed = sum(1 for job in jobs if job.kind == "theory"
                 and run.results[job].get("status", "converged") != "converged")
    sys.stderr.write(f"replica sweep: {rows} rows written to {args.output} ({run.computed} jobs "
                     f"computed, {run.cached} from the cache, {run.seconds:.1f} s)"
                     + (f"; {failed} solves did not converge: status in the CSV" if failed
                        else "") + "\n")
    return 0
