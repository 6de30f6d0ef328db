"""Numerical back ends: precision contexts, root finders, result objects."""

from .precision import agreement_digits, precision
from .result import SolveResult
from .roots import (NewtonReport, bracketed_newton, bracketed_newton_vec, newton_system,
                    system_report)

__all__ = [
    "agreement_digits",
    "precision",
    "SolveResult",
    "NewtonReport",
    "bracketed_newton",
    "bracketed_newton_vec",
    "newton_system",
    "system_report",
]
