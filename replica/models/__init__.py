"""The built-in models, each a declaration (:class:`replica.problem.Problem`) of its mathematics:
``alignment`` (paper A), ``isotropic`` (paper B), ``lowrank``. :func:`get` loads one by name.

Their parameter schemas are in :mod:`replica.models.parameters` (no SymPy needed to read them).
Each model's :class:`~replica.problem.Problem` is declared in ``<name>_problem`` (no SymPy either)
and its equations in ``<name>``, imported only when code has to be generated: a solve whose
generated code is cached never imports SymPy.
"""

from __future__ import annotations

import importlib
import sys

NAMES = ("alignment", "isotropic", "lowrank")
TITLES = {
    "alignment": "paper A: arbitrary C_train, C_test (arXiv 2509.26551)",
    "isotropic": "paper B: closed forms, C = I (arXiv 2405.11751)",
    "lowrank": "low-rank tasks: RS saddle point, TM/IDG/ODG errors (arXiv 2510.04548)",
}

DECLARATIONS = {name: f"{name}_problem" for name in NAMES}
"""The module declaring each model's :class:`~replica.problem.Problem`, apart from its
equations."""


def get(name: str):
    """The :class:`~replica.problem.Problem` of the built-in model ``name``."""
    if name not in NAMES:
        from ..errors import ParameterError

        raise ParameterError("model", f"unknown model {name!r} ({', '.join(NAMES)})")
    module = sys.modules.get(f"{__name__}.{DECLARATIONS[name]}")  # (imported: as below)
    if module is None:
        module = importlib.import_module(f"{__name__}.{DECLARATIONS[name]}")
    return module.PROBLEM
