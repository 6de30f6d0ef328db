"""``replica expand MODEL``: series of a model's solution in one of its parameters (a model's own
expansions, such as the low-rank model's alpha -> oo series on one side of its transition, are
its variant of the command, :mod:`replica.registry`)."""

from __future__ import annotations

#: The command's one-line help (the top-level parser lists it without building the command).
HELP = "series expansions (SymPy) of a model's solution"


def register(subparsers):
    from ..registry import CommandHook, add_model_parsers

    p = subparsers.add_parser("expand", help=HELP,
        description="Power series of a model's solution and of a reported quantity in one "
                    "parameter, derived order by order from its equations; a model may offer its "
                    "own expansions (replica expand MODEL --help).")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)

    generic = CommandHook(
        _arguments, _run_model_file,
        description="Power series of its solution and of a reported quantity in one parameter, "
                    "derived order by order from its equations (other parameters symbolic "
                    "unless given).")
    add_model_parsers(models, "expand", lambda entry: generic)
    return models


def _arguments(sp):
    from .common import add_schema_options

    sp.add_argument("--parameter", required=True, help="the expansion parameter")
    sp.add_argument("--at", default="inf", help="inf (series in 1/x, default), 0, or a value x0")
    sp.add_argument("--quantity", default=None, help="a reported value to expand")
    sp.add_argument("--order", default="3", help="highest power kept (default 3)")
    sp.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    add_schema_options(sp, sp.get_default("entry").schema, " (fixed; symbolic if omitted)")


def _run_model_file(args):
    import sympy

    from ..analysis.series import series
    from ..errors import ParameterError
    from .common import given_values, progress_bar

    problem = args.entry.problem
    try:
        order = int(args.order)
    except ValueError:
        raise ParameterError("--order", f"must be an integer, got {args.order!r}") from None
    fixed = given_values(args, problem.schema)
    name = args.parameter.replace("-", "_")
    if name in fixed:
        raise ParameterError("--parameter", f"{name!r} is also given a value")
    values = {}
    for k, v in fixed.items():
        p = problem.schema[k]
        if p.is_covariance or p.resolved_domain().integer:
            raise ParameterError(p.option, "series keep spectra abstract; omit this option")
        if p.is_spec:
            values[k] = p.parse(v, {})
            continue
        values[k] = p.parse(v, {})
    out = series(problem, name, order, args.quantity, at=args.at, values=values,
                 progress=progress_bar(f"expand {problem.name}", unit="order"))
    if out["series"] is not None and out["series"].has(sympy.nan, sympy.zoo):
        from ..errors import ConvergenceError

        raise ConvergenceError(
            f"the series of {args.quantity} in {name} at {args.at} is not finite with the "
            "spectra kept abstract (a spectral function is singular at the expansion point, "
            "e.g. a transform at 0 of a spectrum with an atom at 0)"
            + ("" if args.entry.declared("COMMANDS", {}).get("expand") is None else
               f": the model's own expansions are `replica expand {args.entry.name}`"),
            tried="the series order by order from the model's equations")
    show = sympy.latex if args.latex else sympy.sstr
    var = {"inf": f"1/{name}", "0": name}.get(args.at, f"({name} - {args.at})")
    print(f"{problem.name}: series in {var}, to order {order}")
    for u, cs in out["unknowns"].items():
        print(f"  {u}: " + ", ".join(show(c) for c in cs))
    if out["series"] is not None:
        half = out.get("half_powers")
        if half:
            print(f"  ({args.quantity} is a series in the square root of {name})")
        rest = f"{var}^({2 * order + 1}/2)" if half else f"{var}^{order + 1}"
        print(f"{args.quantity} = " + show(out["series"]) + f" + O({rest})")
    for g, v in (out.get("numeric") or {}).items():
        print(f"  numeric: int Dz ({sympy.sstr(g)}) = {v} (mpmath.quad to "
              f"{out['numeric_dps']} digits, two subdivisions agreeing)")
    return 0

