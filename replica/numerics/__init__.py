"""The numerical engine: precision contexts, root finders, Newton's method, the solver driver that
takes every declared problem from a float64 start to a verified result, and result objects."""

from .precision import agreement_digits, precision
from .result import Result, Status, decimal_string
from .roots import bracketed_newton, bracketed_newton_vec
from .newton import NewtonReport, damped_mp, iterate_grid, newton_mp

__all__ = [
    "agreement_digits",
    "precision",
    "Result",
    "Status",
    "decimal_string",
    "bracketed_newton",
    "bracketed_newton_vec",
    "NewtonReport",
    "damped_mp",
    "iterate_grid",
    "newton_mp",
]
