"""``replica simulate MODEL ...``: finite-size simulations against the theory.

Every model of the registry that declares a ``SIMULATION`` (:mod:`replica.capabilities`) is
offered. A linear-attention model (:class:`~replica.capabilities.LinearAttentionICL`) has the
options of ``replica solve`` (same names, same notation: its declaration gives each option's
help), plus ``--d``, ``--seeds`` and the options of the simulation itself; a model file's
``Simulation(sample, train, measure)`` has its parameters, ``--d`` and ``--seeds``. The helpers
here are shared with ``replica sweep`` and ``replica check``, where each model option may be a
comma-separated list.
"""

from __future__ import annotations

import json
import sys

from ..errors import ParameterError
from .common import parse_dps, progress_bar

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "finite-size linear attention vs the theory"


LISTS = " (comma-separated list for a grid)"
SCORED = " (comma-separated list: the same trained Gamma is scored on each)"


def is_linear_attention(entry) -> bool:
    """Whether the model's simulation is declared as linear attention (its own options)."""
    from ..capabilities import LinearAttentionICL

    return isinstance(entry.simulation, LinearAttentionICL)


def add_model_options(p, sim, lists: bool = False, scores: bool = False):
    """The parameter options a :class:`~replica.capabilities.LinearAttentionICL` declares (as in
    ``replica solve``). With ``lists``, each value may be a comma-separated list (a grid); with
    ``scores`` the test options may be lists on which one trained Gamma is scored (``replica
    simulate``)."""
    many = LISTS if lists else ""
    scored = SCORED if scores else many
    for o in sim.options:
        kwargs = {"help": o.help + (scored if o.scored else many)}
        if o.required:
            kwargs["required"] = True
        else:
            kwargs["default"] = o.default
        p.add_argument("--" + o.name.replace("_", "-"), **kwargs)


def add_file_options(p, schema, lists: bool = False):
    """A model file's parameters as optional ``--NAME`` options (their requiredness is checked
    when the values are parsed); the parameter ``d``, if the model has one, is the simulation's
    ``--d``."""
    note = LISTS if lists else ""
    for prm in schema.parameters:
        if prm.name == "d":
            continue
        p.add_argument(prm.option, dest=prm.name, default=None, metavar=prm.name.upper(),
                       help=prm.help + note)


def add_simulation_options(p, sim):
    """Options of a linear-attention simulation itself (not model parameters)."""
    if len(sim.task_laws) > 1:
        p.add_argument("--task-law", default=sim.task_laws[0], choices=sim.task_laws,
                       help=sim.task_law_help)
    p.add_argument("--balanced", action="store_true",
                   help="use every pretraining task equally often (paper B) instead of uniform "
                        "random assignment")
    p.add_argument("--sampler", default="fast", choices=("fast", "direct"),
                   help="context statistics: exact-in-law O(d) sampler (default) or the "
                        "direct l x d construction")
    p.add_argument("--solver", default="auto",
                   choices=("auto", "direct", "cg", "primal", "dual", "naive"),
                   help="ridge solver: direct (dual kernel solve if n < P = d*p, else Cholesky "
                        "of the chunked primal Gram), cg (preconditioned conjugate gradients on "
                        "the primal, relative residual 1e-10), naive (dense reference); "
                        "default auto: dual if n < P, cg if P >= 1000 and n >= 2P, else direct")
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch"),
                   help="arrays of the cg solver: numpy (default) or torch (optional extra "
                        "'gpu'; a CUDA device if torch sees one, else the CPU)")
    p.add_argument("--test-prompts", default="0",
                   help="0: exact closed-form test errors (default); N: Monte Carlo over N "
                        "sampled test prompts per error and seed")


def model_param_names(entry) -> tuple:
    """The names of the model's parameter options."""
    if is_linear_attention(entry):
        return entry.simulation.parameters
    return tuple(p.name for p in entry.schema.parameters if p.name != "d")


def collect_params(args, entry) -> dict:
    """The model parameters from parsed arguments, as strings (``None`` left out)."""
    out = {}
    for name in model_param_names(entry):
        val = getattr(args, name, None)
        if val is not None:
            out[name] = val
    return out


def collect_options(args, entry=None) -> dict:
    """The options of a linear-attention simulation (none for a model file's own)."""
    if entry is not None and not is_linear_attention(entry):
        return {}
    return {"task_law": getattr(args, "task_law", "gaussian"),
            "balanced": bool(getattr(args, "balanced", False)),
            "sampler": args.sampler, "solver": args.solver,
            "backend": getattr(args, "backend", "numpy"),
            "test_prompts": parse_int(args.test_prompts, "--test-prompts", minimum=0)}


def model_source(entry):
    """The :class:`~replica.simulate.source.ModelSource` of a registry entry (a model file is
    handed over to the simulation layer, so it is not loaded twice)."""
    from ..simulate.source import as_source

    return as_source(entry)


def parse_int(text, name: str, minimum: int | None = None) -> int:
    try:
        v = int(str(text).strip())
    except ValueError:
        raise ParameterError(name, f"must be an integer, got {text!r}") from None
    if minimum is not None and v < minimum:
        raise ParameterError(name, f"must be at least {minimum}, got {v}")
    return v


def add_point_options(m, entry, lists: bool = False) -> bool:
    """The parameter options of ``entry``: a linear-attention model's declared options, or a
    model file's schema; returns whether the model is linear attention."""
    icl = is_linear_attention(entry)
    if icl:
        add_model_options(m, entry.simulation, lists=lists)
    else:
        add_file_options(m, entry.schema, lists=lists)
    return icl


def simulation_hook(icl_arguments, icl_run, file_arguments, file_run, file_description):
    """The ``generic`` of :func:`replica.registry.add_model_parsers` for the commands that
    simulate (``simulate``, ``check``, ``sweep``): a model whose simulation is linear attention
    gets ``icl_arguments(parser, entry)`` and ``icl_run``; a model file gets
    ``file_arguments(parser, entry)`` and ``file_run``; a built-in model without a simulation
    gets no parser."""
    from ..registry import CommandHook

    def hook(entry):
        if is_linear_attention(entry):
            sim = entry.simulation
            return CommandHook(lambda sp: icl_arguments(sp, entry), icl_run, help=sim.help,
                               description=sim.help)
        if not entry.is_file:
            return None
        return CommandHook(lambda sp: file_arguments(sp, entry), file_run,
                           description=file_description)

    return hook


def register(subparsers):
    from ..registry import add_model_parsers

    p = subparsers.add_parser("simulate", help=HELP,
                              description="Train linear attention by exact ridge regression at "
                                          "dimension --d over --seeds independent draws and "
                                          "compare each error with the theory (mean, standard "
                                          "error, z-score). A model file simulates its declared "
                                          "SIMULATION (--model PATH).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    hook = simulation_hook(
        lambda sp, entry: _icl_arguments(sp, entry.simulation), _run, _file_arguments,
        _run_declared,
        "Simulate its declared SIMULATION at dimension --d over --seeds independent draws and "
        "compare each measured value with the theory (mean, standard error, z-score).")
    add_model_parsers(models, "simulate", hook)
    return models


def _seed_options(m):
    m.add_argument("--seed", default="0", help="base seed S0 (seed i is "
                                               "SeedSequence(S0).spawn(N)[i]; default 0)")


def _icl_arguments(m, sim):
    add_model_options(m, sim, scores=True)
    m.add_argument("--d", required=True, help="token dimension d (D)")
    m.add_argument("--seeds", required=True, help="number of independent draws")
    _seed_options(m)
    add_simulation_options(m, sim)
    m.add_argument("--no-theory", action="store_true", help="skip the theory solve")
    m.add_argument("--theory-at", default="nominal", choices=("nominal", "realised"),
                   help="theory at the nominal ratios (default) or at those the integer "
                        "sizes realise (ell/d, n/d^2, k/d, r/D)")
    m.add_argument("--dps", default="30", help="digits of the theory solve (default 30)")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.add_argument("--csv", default=None, metavar="PATH",
                   help="also write one CSV row per (test, test length, error) with its "
                        "theory")


def _file_arguments(m, entry):
    add_file_options(m, entry.schema)
    m.add_argument("--d", default=None, help="dimension d of the simulated instances (the "
                                             "model's parameter d, if it has one)")
    m.add_argument("--seeds", default=None, help="number of independent draws")
    _seed_options(m)
    m.add_argument("--no-theory", action="store_true", help="skip the theory solve")
    m.add_argument("--dps", default="30", help="digits of the theory solve (default 30)")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.add_argument("--csv", default=None, metavar="PATH",
                   help="also write one CSV row per measured value with its theory")


def _run(args):
    from ..simulate import simulate

    entry = args.entry
    dps = parse_dps(args.dps)
    res = simulate(model_source(entry), args.d, parse_int(args.seeds, "--seeds", minimum=1),
                   parse_int(args.seed, "--seed", minimum=0), with_theory=not args.no_theory,
                   dps=dps, theory_at=args.theory_at,
                   progress=progress_bar(f"simulate {entry.name} d={args.d}", unit="seed"),
                   **collect_options(args, entry),
                   **collect_params(args, entry))
    return _report(res, args)


def _run_declared(args):
    from ..simulate.declared import declared_simulation, simulate_declared

    entry = args.entry
    source = model_source(entry)
    declared_simulation(source)  # a model without SIMULATION: one line naming what to declare
    for option, value in (("--d", args.d), ("--seeds", args.seeds)):
        if value is None:
            raise ParameterError(option, "is required to simulate")
    dps = parse_dps(args.dps)
    res = simulate_declared(source, args.d, parse_int(args.seeds, "--seeds", minimum=1),
                            parse_int(args.seed, "--seed", minimum=0),
                            with_theory=not args.no_theory, dps=dps,
                            progress=progress_bar(f"simulate {entry.name} d={args.d}",
                                                  unit="seed"),
                            **collect_params(args, entry))
    return _report(res, args)


def _report(res, args) -> int:
    if args.csv:
        write_scores_csv(args.csv, res)
    if args.json:
        sys.stdout.write(json.dumps(res.to_json_dict(), indent=2) + "\n")
        return 0
    print_result(res)
    return 0


def write_scores_csv(path, res):
    """One CSV row per (test, test length, error key): the row's parameters (a numeric one as a
    float ``NAME`` and exactly ``NAME_exact``, a SPEC as text), ``key``, ``mean``, ``sem``,
    ``seeds``, ``theory``, ``z``. Without lists, the rows are the errors themselves."""
    import csv

    rows = res.score_table()
    if not rows:
        rows = [{"key": k, "mean": e.mean, "sem": e.sem, "seeds": e.seeds, "theory": e.theory,
                 "z": e.z} for k, e in res.errors.items()]
    # a numeric parameter as a float column and its exact string in NAME_exact (SPECs as text)
    from ..params import numeric_columns

    values = ("key", "mean", "sem", "seeds", "theory", "z")
    header, columns = [], []
    for name in [k for k in rows[0] if k not in values]:
        h, cols = numeric_columns(name, [r[name] for r in rows])
        header += h
        columns += cols
    header += list(values)
    try:
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows([col[i] for col in columns]
                             + ["" if r[k] is None else r[k] for k in values]
                             for i, r in enumerate(rows))
    except OSError as exc:
        raise ParameterError("--csv", f"cannot write {path!r}: {exc.strerror}") from None


def _fmt(x, spec=".6g"):
    return "-" if x is None else format(x, spec)


def print_result(res, stream=None):
    """A readable table of a :class:`replica.simulate.SimulationResult`."""
    stream = stream or sys.stdout
    from ..params import compact_str

    params = ", ".join(f"{k}={compact_str(v)}" for k, v in res.params.items())
    sizes = " ".join(f"{k}={compact_str(v)}" for k, v in res.sizes.items())
    stream.write(f"simulate {res.model} ({params})\n")
    stream.write(f"  d={res.d}, {len(res.per_seed)} seeds from seed {res.seed}; {sizes}\n")
    groups = [("errors", res.errors)]
    if res.order_parameters:
        groups.append(("order parameters", res.order_parameters))
    for title, group in groups:
        stream.write(f"  {title}:\n")
        stream.write(f"    {'key':<8} {'mean':>12} {'sem':>10} {'theory':>12} {'z':>8}\n")
        for k, e in group.items():
            stream.write(f"    {k:<8} {_fmt(e.mean):>12} {_fmt(e.sem, '.3g'):>10} "
                         f"{_fmt(e.theory):>12} {_fmt(e.z, '.2f'):>8}\n")
    if res.scores:
        stream.write("  scores of the same trained Gamma:\n")
        for row in res.score_table():
            label = " ".join(f"{k}={row[k]}" for k in ("test", "alpha_test", "ell_test")
                             if k in row)
            stream.write(f"    {label:<34} {row['key']:<6} {_fmt(row['mean']):>12} "
                         f"{_fmt(row['sem'], '.3g'):>10} {_fmt(row['theory']):>12} "
                         f"{_fmt(row['z'], '.2f'):>8}\n")
    for n in res.notes:
        stream.write(f"  note: {n}\n")
