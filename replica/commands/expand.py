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
    return models


def _run(args):
    import sympy

    from ..analysis.asymptotics import expansion, powers_of_alpha
    from ..errors import ParameterError

    try:
        order = int(args.order)
    except ValueError:
        raise ParameterError("--order", f"must be an integer, got {args.order!r}") from None
    if not 1 <= order <= 6:
        raise ParameterError("--order", "must lie in 1..6")
    ex = expansion(args.quantity, args.side, order)
    pw = powers_of_alpha(args.quantity, args.side, order)
    print(f"{args.quantity} ({args.side} side), powers of alpha: "
          + ", ".join(str(p) for p in pw))
    print(sympy.latex(ex) if args.latex else sympy.pretty(ex, use_unicode=False))
    return 0
