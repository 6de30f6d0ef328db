"""The low-rank model as the engine sees it: schema, variants, reported groups and notes --
everything but the replica free energy, its saddle point and the reported expressions, which are
in :mod:`replica.models.lowrank` and are built only when code has to be generated (or when the
saddle point or the symbols' display names are asked for).

This module imports no SymPy (see :mod:`replica.models.alignment_problem`).
"""

from __future__ import annotations

import os

from ..problem import Note, Problem
from .parameters import LOWRANK as SCHEMA
from .parameters import RIDGE_STABILITY
from .parameters import LOWRANK_ALL_ERROR_KEYS as ALL_ERROR_KEYS
from .parameters import LOWRANK_PART_KEYS as PART_KEYS
from .parameters import LOWRANK_REPORTED_ORDER as REPORTED_ORDER

SOURCE_FILES = [os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
                for name in ("lowrank.py", "lowrank_problem.py", "unified.py")]
"""The files the expressions and this declaration come from (the code cache's key)."""


def _system(variant: str):
    """The :class:`~replica.problem.System` of ``variant``, from the equations module (imported
    here, on first use: it derives the saddle point with SymPy)."""
    from . import lowrank

    return lowrank.system_of(variant)


def _saddle_point():
    from . import lowrank

    return lowrank.SADDLE


def _symbol_names():
    from . import lowrank

    return lowrank.SYMBOL_NAMES


NOTES = (
    Note("rho is the task-rank ratio r/D and sigma the label-noise standard deviation (papers "
         "A/B use rho for the noise variance)"),
    Note("decomposition labels: memorization = the T-terms (prop. to chihat), structural = the "
         "R-terms (prop. to chibarhat), signal = the S-terms; this mapping is INFERRED from the "
         "structure of the equations, not checked against the paper's text"),
    Note("noise = sigma_test^2 is a separate part; with sigma_test != 0 the factor "
         "(1 + sigma_test^2)/alpha_test multiplies the qbar pieces (the paper's placement is not "
         "reproduced)"),
    Note("kappa = inf: the conjugates qhat, mhat, chihat, qbarhat, chibarhat vanish like 1/kappa "
         "and are reported as their limit 0", lambda p: p.kappa == float("inf")),
    Note("lambda = 0: the solution also has the closed form (T1)-(T5) (system 'lambda0')",
         lambda p: p.lam == 0),
    Note("test: a law with a fraction phi of its power outside the task subspace; at D -> oo "
         "outside:PHI, shared:F and rotation:DEGREES with the same phi share this value (a "
         "symmetry argument, checked by finite-size simulations)",
         lambda p: getattr(p, "test", 0) > 0),
    Note("free_energy: the replica-symmetric free energy (R1) at the saddle point, the minimal "
         "ridge training objective (1/2) sum_mu (y_mu - yhat_mu)^2 + (lambda kappa D/2) "
         "|Gamma|_F^2 over the tau D^2 prompts, divided by kappa D^2, as D -> oo; (R1) is "
         "stationary there, not minimal, in its ten variables (a saddle of index 5 at the "
         "authors' golden points); 'min' ranks solutions, not the variables"),
    Note("free_energy at kappa = inf: per kappa D^2 the minimal objective vanishes; reported as "
         "its limit 0", lambda p: p.kappa == float("inf")),
)

PROBLEM = Problem(
    "lowrank", SCHEMA, title="Linear attention on low-rank tasks (arXiv 2510.04548)",
    variants=[("kappa_infinite", lambda p: p.kappa == float("inf")), ("finite", None)],
    systems=_system,
    groups={"order_parameters": list(REPORTED_ORDER) + ["q_perp"],
            "errors": list(ALL_ERROR_KEYS),
            "decomposition": {p_: {k_: f"{p_}_{k_}" for k_ in PART_KEYS}
                              for p_ in ALL_ERROR_KEYS},
            "free_energy": ["free_energy"]},
    nonnegative=tuple(ALL_ERROR_KEYS),
    notes=NOTES, source_files=SOURCE_FILES, saddle_point=_saddle_point,
    free_energy="free_energy", extremum="min",
    symbol_names=_symbol_names,
    description="Replica-symmetric saddle point of linear attention trained on low-rank tasks.",
    stability=RIDGE_STABILITY)
"""The low-rank model, declared."""
