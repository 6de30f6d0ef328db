"""``replica expand lowrank``: the alpha -> oo series of a low-rank quantity on one side."""

from __future__ import annotations

#: The choices of ``--side`` and ``--quantity``, written out so that building the parser does not
#: import SymPy; ``tests/test_cli_startup.py`` checks they equal
#: :data:`replica.analysis.asymptotics.SIDES` and :data:`~replica.analysis.asymptotics.QUANTITIES`.
SIDES = ("scarce", "rich", "critical")
QUANTITIES = ("m", "mbar", "m0", "q", "qbar", "q0", "chi", "chibar", "tm", "idg", "odg")


def register(subparsers):
    p = subparsers.add_parser("expand", help="large-alpha expansions (SymPy series)",
                              description="Series in 1/alpha (lambda = 0, tau > 1) of a low-rank "
                                          "order parameter or error, derived with SymPy from the "
                                          "closed form (T1)-(T5), on one side of rho = kappa.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    lr = models.add_parser("lowrank", help="low-rank model (rho = task-rank ratio)")
    lr.add_argument("--quantity", required=True, choices=QUANTITIES)
    lr.add_argument("--side", required=True, choices=SIDES,
                    help="scarce: rho > kappa; rich: rho < kappa; critical: rho = kappa")
    lr.add_argument("--order", default="3", help="keep powers of (1+sigma^2)/alpha below this")
    lr.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    lr.set_defaults(run=_run)
    _register_model_file(models)
    return models


def _register_model_file(models):
    from .common import add_schema_options, add_user_model_parser

    sp = add_user_model_parser(
        models, "expand",
        "Power series of its solution and of a reported quantity in one parameter, derived "
        "order by order from its equations (other parameters symbolic unless given).")
    if sp is None:
        return
    sp.add_argument("--parameter", required=True, help="the expansion parameter")
    sp.add_argument("--at", default="inf", help="inf (series in 1/x, default), 0, or a value x0")
    sp.add_argument("--quantity", default=None, help="a reported value to expand")
    sp.add_argument("--order", default="3", help="highest power kept (default 3)")
    sp.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    add_schema_options(sp, sp.get_default("problem").schema, " (fixed; symbolic if omitted)")
    sp.set_defaults(run=_run_model_file)


def _run_model_file(args):
    import sympy

    from ..analysis.series import series
    from ..errors import ParameterError
    from .common import given_values, progress_bar

    problem = args.problem
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
        if p.is_covariance or p._domain().integer:
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
            + (": the built-in large-alpha expansions are `replica expand lowrank`"
               if problem.name == "lowrank" else ""),
            tried="the series order by order from the model's equations")
    show = sympy.latex if args.latex else sympy.sstr
    var = {"inf": f"1/{name}", "0": name}.get(args.at, f"({name} - {args.at})")
    print(f"{problem.name}: series in {var}, to order {order}")
    for u, cs in out["unknowns"].items():
        print(f"  {u}: " + ", ".join(show(c) for c in cs))
    if out["series"] is not None:
        print(f"{args.quantity} = " + show(out["series"]) + f" + O({var}^{order + 1})")
    return 0


def _run(args):
    import sympy

    from ..analysis.asymptotics import EXPANSION_STAGES, expansion, powers_of_alpha
    from ..errors import ParameterError
    from ..progress import Progress

    try:
        order = int(args.order)
    except ValueError:
        raise ParameterError("--order", f"must be an integer, got {args.order!r}") from None
    if not 1 <= order <= 6:
        raise ParameterError("--order", "must lie in 1..6")
    with Progress(f"expand lowrank {args.quantity}", EXPANSION_STAGES, "stage"):
        ex = expansion(args.quantity, args.side, order)   # advances the bar stage by stage
    pw = powers_of_alpha(args.quantity, args.side, order)
    print(f"{args.quantity} ({args.side} side), powers of alpha: "
          + ", ".join(str(p) for p in pw))
    print(sympy.latex(ex) if args.latex else sympy.pretty(ex, use_unicode=False))
    return 0
