"""The low-rank model (linear attention on low-rank tasks, replica-symmetric saddle point;
arXiv 2510.04548) as the package ships it: its declaration (:mod:`replica.models.lowrank_problem`)
and what it can do besides being solved."""

from __future__ import annotations

from ..models.parameters import SCHEMAS
from . import CommandHook
from . import _shared

NAME = "lowrank"
TITLE = "low-rank tasks: RS saddle point, TM/IDG/ODG errors (arXiv 2510.04548)"
DESCRIPTION = ("Replica-symmetric saddle point of linear attention trained on low-rank tasks "
               "(Takanami, Takahashi, Kabashima). Notation of that paper: --rho is the task-RANK "
               "RATIO r/D and --sigma the label-noise STANDARD DEVIATION (in the "
               "alignment/isotropic models --rho is the noise variance).")
SCHEMA = SCHEMAS[NAME]
DERIVATION = NAME  # replica.derivations.get(DERIVATION): the appendix

#: The choices of ``replica expand lowrank --side/--quantity``, written out so that building the
#: parser does not import SymPy; ``tests/test_cli_startup.py`` checks they equal
#: ``SIDES`` and ``QUANTITIES`` of :mod:`replica.analysis.asymptotics`.
SIDES = ("scarce", "rich", "critical")
QUANTITIES = ("m", "mbar", "m0", "q", "qbar", "q0", "chi", "chibar", "tm", "idg", "odg")


def load_problem():
    from ..models import get

    return get(NAME)


# --- replica phase-diagram lowrank: the (kappa, rho) diagram ------------------------------------
def _diagram_arguments(p):
    from ..analysis.parameters import LOWRANK_DIAGRAM

    _shared.add_out(p)
    LOWRANK_DIAGRAM.add_arguments(p)
    p.add_argument("--alphas", default="1e2,1e3,1e4",
                   help="comma-separated alphas for the crossover lines")
    p.add_argument("--dps", default="30")


def _diagram(args):
    from ..analysis.parameters import LOWRANK_DIAGRAM
    from ..analysis.phase_diagram import lowrank_phase_diagram
    from ..commands.common import parse_dps
    from ..commands.paths import check_output_dir
    from ..commands.phase_diagram import status_summary
    from ..errors import ParameterError
    from ..params import exact_str
    from ..problem import Parameter

    p = LOWRANK_DIAGRAM.parse(LOWRANK_DIAGRAM.raw_from_namespace(args))
    items = [a.strip() for a in args.alphas.split(",")]
    if not any(items) or not all(items):
        raise ParameterError("--alphas", f"expected a comma-separated list of alphas such as "
                                         f"1e2,1e3, got {args.alphas!r}")
    alpha = Parameter("alphas", "a crossover line's context length")
    alphas = tuple(exact_str(alpha.parse(a, {})) for a in items)
    dps = parse_dps(args.dps)
    stem = f"{NAME}_phase_diagram"
    check_output_dir(args.out, "--out", _shared.diagram_outputs(stem), args.force)
    rows = lowrank_phase_diagram(args.out, tau=exact_str(p.tau), sigma=exact_str(p.sigma),
                                 alphas=alphas,
                                 dps=dps, progress=_shared.progress("transitions"))
    print(f"wrote {args.out}/{stem}.png, .pdf, .svg, _grid.csv and _boundary.csv "
          f"({len(rows)} boundary rows)")
    print(status_summary(f"{args.out}/{stem}_grid.csv"))
    return 0


# --- replica expand lowrank: the alpha -> oo series on one side of rho = kappa ------------------
def _expand_arguments(p):
    p.add_argument("--quantity", required=True, choices=QUANTITIES)
    p.add_argument("--side", required=True, choices=SIDES,
                   help="scarce: rho > kappa; rich: rho < kappa; critical: rho = kappa")
    p.add_argument("--order", default="3", help="keep powers of (1+sigma^2)/alpha below this")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


def _expand(args):
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
    with Progress(f"expand {NAME} {args.quantity}", EXPANSION_STAGES, "stage"):
        ex = expansion(args.quantity, args.side, order)   # advances the bar stage by stage
    pw = powers_of_alpha(args.quantity, args.side, order)
    print(f"{args.quantity} ({args.side} side), powers of alpha: "
          + ", ".join(str(p) for p in pw))
    print(sympy.latex(ex) if args.latex else sympy.pretty(ex, use_unicode=False))
    return 0


COMMANDS = {
    "phase-diagram": CommandHook(_diagram_arguments, _diagram,
                                 help="(kappa, rho) diagram: task-rich / task-scarce regions, "
                                      "located transition and finite-alpha crossovers",
                                 description="Low-rank model (rho = task-rank ratio, sigma = "
                                             "noise std), lambda = 0.",
                                 epilog=_shared.plane_epilog(NAME)),
    "expand": CommandHook(_expand_arguments, _expand,
                          help="low-rank model (rho = task-rank ratio)",
                          description="Series in 1/alpha (lambda = 0, tau > 1) of a low-rank "
                                      "order parameter or error, derived with SymPy from the "
                                      "closed form (T1)-(T5), on one side of rho = kappa."),
}


# --- transitions --- replica transition lowrank: rho_c (rho = task-rank ratio) -----------------
def _transition_arguments(p):
    from ..commands.common import add_dps
    from ..commands.transition import add_certify

    p.add_argument("--kappa", required=True, help="task diversity M0/D, in (0, 1)")
    p.add_argument("--tau", required=True, help="pretraining prompts M/D^2 (> 1)")
    p.add_argument("--sigma", required=True, help="label-noise standard deviation")
    p.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    p.add_argument("--indicator", default="m0", choices=["m0", "idg_over_alpha"],
                   help="quantity whose kink (alpha -> oo) or curvature peak defines the "
                        "transition (default m0)")
    add_dps(p)
    add_certify(p)


def _transition(args):
    from ..analysis.transitions import lowrank_transition
    from ..commands.common import parse_dps
    from ..commands.transition import print_transition

    res = lowrank_transition(args.kappa, args.tau, args.sigma, args.alpha,
                             dps=parse_dps(args.dps), indicator=args.indicator,
                             certify=args.certify)
    print_transition(res, args.json)
    return 0


COMMANDS["transition"] = CommandHook(
    _transition_arguments, _transition, help="rho_c of the low-rank model (rho = rank ratio)",
    description="Task-rank transition of the low-rank model (arXiv 2510.04548). Here rho is the "
                "task-RANK ratio and sigma the label-noise standard deviation.",
    epilog=_shared.transition_epilog(NAME))


# --- simulation ---------------------------------------------------------------------------------
def SIMULATION():  # noqa: N802 - a declaration, read on first use (replica.registry)
    """The model's simulation, declared with it in :mod:`replica.models.simulations`."""
    from ..models.simulations import SIMULATIONS

    return SIMULATIONS[NAME]
