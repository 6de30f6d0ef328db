"""Paper B's model (isotropic tasks, closed forms; arXiv 2405.11751) as the package ships it: its
declaration (:mod:`replica.models.isotropic_problem`) and what it can do besides being solved."""

from __future__ import annotations

from ..models.parameters import SCHEMAS
from . import CommandHook
from . import _shared

NAME = "isotropic"
TITLE = "paper B: closed forms, C = I (arXiv 2405.11751)"
DESCRIPTION = "Paper B's closed forms (isotropic tasks). --rho is the label-noise variance."
SCHEMA = SCHEMAS[NAME]
DERIVATION = None  # no appendix of its own: paper A's derivation covers C = I


def load_problem():
    from ..models import get

    return get(NAME)


# --- replica phase-diagram isotropic: paper B's region of non-monotone error ---------------------
def _diagram_arguments(p):
    from ..analysis.parameters import ISOTROPIC_DIAGRAM

    _shared.add_out(p)
    ISOTROPIC_DIAGRAM.add_arguments(p)
    p.add_argument("--error", choices=["e_icl", "e_idg"], default="e_icl")


def _diagram(args):
    from ..analysis.parameters import ISOTROPIC_DIAGRAM
    from ..analysis.phase_diagram import isotropic_nonmonotone, isotropic_tag
    from ..commands.paths import check_output_dir
    from ..commands.phase_diagram import status_summary

    args.tau = args.tau or ISOTROPIC_DIAGRAM["tau"].default
    ISOTROPIC_DIAGRAM.parse(ISOTROPIC_DIAGRAM.raw_from_namespace(args))
    tag = isotropic_tag(args.tau, args.error)
    check_output_dir(args.out, "--out", _shared.diagram_outputs(tag), args.force)
    _, b = isotropic_nonmonotone(args.out, tau=args.tau, which=args.error,
                                 progress=_shared.progress("boundary rows"))
    print(f"wrote {args.out}/{tag}.png, .pdf, .svg, _grid.csv, _boundary.csv "
          f"({len(b)} boundary points)")
    print(status_summary(f"{args.out}/{tag}_grid.csv"))
    return 0


COMMANDS = {
    "phase-diagram": CommandHook(_diagram_arguments, _diagram,
                                 help="region of non-monotone error in alpha over (kappa, rho)",
                                 epilog=_shared.plane_epilog(NAME)),
}


# --- transitions --- replica transition isotropic: kappa_c, or the interpolation peak ----------
def _transition_arguments(p):
    from ..commands.common import add_dps
    from ..commands.transition import add_certify

    p.add_argument("--tau", default=None, help="pretraining contexts n/d^2 (> 1); required "
                                               "unless --interpolation-peak")
    p.add_argument("--rho", required=True, help="label-noise variance")
    p.add_argument("--alpha", default=None, help="finite context length: locate the crossover")
    p.add_argument("--interpolation-peak", action="store_true",
                   help="instead locate the tau of the double-descent peak of e_ICL "
                        "(needs --alpha, --kappa and a ridge --lam > 0)")
    p.add_argument("--kappa", default=None, help="task diversity (with --interpolation-peak)")
    p.add_argument("--lam", default=None, help="ridge > 0 (with --interpolation-peak)")
    add_dps(p)
    add_certify(p)


def _transition(args):
    from ..analysis.transitions import isotropic_interpolation_peak, isotropic_transition
    from ..commands.common import parse_dps
    from ..commands.transition import print_transition
    from ..errors import ParameterError

    if args.interpolation_peak:
        if args.tau is not None:
            raise ParameterError("--tau", "--interpolation-peak locates the tau of the peak; "
                                          "do not pass --tau with it")
        for flag in ("alpha", "kappa"):
            if getattr(args, flag) is None:
                raise ParameterError(f"--{flag}", "is required with --interpolation-peak")
        res = isotropic_interpolation_peak(args.alpha, args.kappa, args.rho,
                                           "0" if args.lam is None else args.lam,
                                           dps=parse_dps(args.dps))
        if args.certify:
            from ..analysis.certified import TransitionCertificate
            from ..numerics.result import Status

            res.certificate = TransitionCertificate(
                False, "e_ICL(tau) is defined through a solved equation (the effective ridge), "
                       "not a closed form: the error bound is numerical")
            res.status = Status.NOT_CERTIFIED
        print_transition(res, args.json)
        return 0
    for flag in ("kappa", "lam"):  # the kappa_c search varies kappa and is ridgeless
        if getattr(args, flag) is not None:
            raise ParameterError(f"--{flag}", "is only used with --interpolation-peak (the "
                                              "kappa_c transition varies kappa at lambda = 0)")
    if args.tau is None:
        raise ParameterError("--tau", "is required (or pass --interpolation-peak)")
    res = isotropic_transition(args.tau, args.rho, args.alpha, dps=parse_dps(args.dps),
                               certify=args.certify)
    print_transition(res, args.json)
    return 0


COMMANDS["transition"] = CommandHook(
    _transition_arguments, _transition, help="kappa_c of paper B (memorisation -> ICL)",
    description="Task-diversity transition of paper B (C = I). --rho is the label-noise "
                "variance.",
    epilog=_shared.transition_epilog(NAME))


# --- simulation ---------------------------------------------------------------------------------
def SIMULATION():  # noqa: N802 - a declaration, read on first use (replica.registry)
    """The model's simulation, declared with it in :mod:`replica.models.simulations`."""
    from ..models.simulations import SIMULATIONS

    return SIMULATIONS[NAME]
