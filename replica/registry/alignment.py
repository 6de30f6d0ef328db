"""Paper A's model (arbitrary pretraining and test task covariances; arXiv 2509.26551) as the
package ships it: its declaration (:mod:`replica.models.alignment_problem`) and what it can do
besides being solved."""

from __future__ import annotations

from ..models.parameters import SCHEMAS
from . import CommandHook
from . import _shared

NAME = "alignment"
TITLE = "paper A: arbitrary C_train, C_test (arXiv 2509.26551)"
DESCRIPTION = ("Paper A's asymptotic ICL error for arbitrary pretraining and test task "
               "covariances. Notation of paper A: --rho is the label-noise variance.")
SCHEMA = SCHEMAS[NAME]
DERIVATION = NAME  # replica.derivations.get(DERIVATION): the appendix


def load_problem():
    from ..models import get

    return get(NAME)


# --- replica phase-diagram alignment: the power-law specialisation diagram -----------------------
def _diagram_arguments(p):
    from ..analysis.parameters import ALIGNMENT_DIAGRAM

    _shared.add_out(p)
    ALIGNMENT_DIAGRAM.add_arguments(p)


def _diagram(args):
    from ..analysis.parameters import ALIGNMENT_DIAGRAM
    from ..analysis.phase_diagram import alignment_specialisation
    from ..commands.paths import check_output_dir
    from ..commands.phase_diagram import status_summary
    from ..params import exact_str
    from ..spectra import check_theory_d

    p = ALIGNMENT_DIAGRAM.parse(ALIGNMENT_DIAGRAM.raw_from_namespace(args))
    check_theory_d(int(p.d))
    stem = f"{NAME}_specialisation"
    check_output_dir(args.out, "--out", _shared.diagram_outputs(stem), args.force)
    pts = alignment_specialisation(args.out, d=int(p.d), alpha=exact_str(p.alpha),
                                   tau=exact_str(p.tau), rho=exact_str(p.rho),
                                   p_test=exact_str(p.p_test),
                                   progress=_shared.progress("power-law grid"))
    print(f"wrote {args.out}/{stem}.png, .pdf, .svg, _grid.csv, _boundary.csv "
          f"({len(pts)} boundary points)")
    print(status_summary(f"{args.out}/{stem}_grid.csv"))
    return 0


COMMANDS = {
    "phase-diagram": CommandHook(_diagram_arguments, _diagram,
                                 help="power-law specialisation: where a steeper pretraining "
                                      "spectrum beats matched pretraining",
                                 epilog=_shared.plane_epilog(NAME)),
}


# --- transitions --- replica transition alignment: kappa_c for C_train = lowrank:F --------------
def _transition_arguments(p):
    from ..commands.common import add_dps
    from ..commands.transition import add_certify

    p.add_argument("--rank-fraction", required=True, help="F = rank(C_train)/d, in (0, 1]")
    p.add_argument("--tau", required=True, help="pretraining contexts n/d^2 (> 1)")
    p.add_argument("--rho", required=True, help="label-noise variance")
    p.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    add_dps(p)
    add_certify(p)


def _transition(args):
    from ..analysis.transitions import alignment_transition
    from ..commands.common import parse_dps
    from ..commands.transition import print_transition

    res = alignment_transition(args.rank_fraction, args.tau, args.rho, args.alpha,
                               dps=parse_dps(args.dps), certify=args.certify)
    print_transition(res, args.json)
    return 0


COMMANDS["transition"] = CommandHook(
    _transition_arguments, _transition, help="kappa_c for C_train = lowrank:F (paper A)",
    description="Task-diversity transition of paper A with a low-rank C_train = P/F. --rho is "
                "the label-noise variance.",
    epilog=_shared.transition_epilog(NAME))


# --- simulation ---------------------------------------------------------------------------------
def SIMULATION():  # noqa: N802 - a declaration, read on first use (replica.registry)
    """The model's simulation, declared with it in :mod:`replica.models.simulations`."""
    from ..models.simulations import SIMULATIONS

    return SIMULATIONS[NAME]
