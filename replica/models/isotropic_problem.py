"""Paper B's model as the engine sees it: schema, variants, reported groups and notes -- everything
but the equations, which are in :mod:`replica.models.isotropic` (the paper A instance of the
unified free energy at C = I, :mod:`replica.models.alignment`) and are built only when code has
to be generated.

This module imports no SymPy (see :mod:`replica.models.alignment_problem`).
"""

from __future__ import annotations

import os

from ..problem import Note, Problem
from .parameters import ISOTROPIC as SCHEMA
from .parameters import RIDGE_STABILITY, UNIFIED_FREE_ENERGY

SOURCE_FILES = [os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
                for name in ("isotropic.py", "alignment.py", "isotropic_problem.py",
                             "lowrank.py", "unified.py",
                             os.path.join("..", "symbolic", "deterministic_equivalent.py"))]
"""The files the expressions and this declaration come from (the code cache's key)."""


def _system(variant: str):
    """The :class:`~replica.problem.System` of ``variant``, from the closed forms' module
    (imported here, on first use: it builds the SymPy expressions)."""
    from . import isotropic

    return isotropic.system_of(variant)


_KINF = float("inf")
PROBLEM = Problem(
    "isotropic", SCHEMA, title="Isotropic ICL theory, closed forms (arXiv 2405.11751)",
    variants=[("ridge_kappa_infinite", lambda p: (p.kappa == _KINF) & (p.lam > 0)),
              ("ridge", lambda p: p.lam > 0),
              ("ridgeless_below_kappa_infinite", lambda p: (p.kappa == _KINF) & (p.tau < 1)),
              ("ridgeless_below", lambda p: p.tau < 1),
              ("ridgeless_above_kappa_infinite", lambda p: p.kappa == _KINF),
              ("ridgeless_above", None)],
    systems=_system,
    groups={"errors": ["e_icl", "e_scalar", "e_misalign", "e_idg"],
            "intermediates": ["q", "sigma", "lambda_tilde", "M", "M_prime"],
            "free_energy": ["free_energy"]},
    notes=(Note("e_icl = e_scalar + e_misalign of the unified free energy's paper A instance "
                "at C = I (paper B's closed forms agree: the tests compare them to 30 digits)"),
           Note("with ridge lambda > 0, e_idg = tau*q, the task-memorisation error derived for "
                "every C_train and lambda (paper B itself gives no finite-lambda IDG formula)",
                lambda p: p.lam > 0),
           *UNIFIED_FREE_ENERGY),
    nonnegative=("e_icl", "e_scalar", "e_misalign", "e_idg"),
    source_files=SOURCE_FILES, guard_digits=5, free_energy="free_energy", extremum="min",
    description="Paper B's closed forms for isotropic tasks.",
    stability=RIDGE_STABILITY)
"""Paper B's theory, declared."""
