"""Typed errors of the workbench.

Two kinds of failure reach a user, and the command line maps each to its own exit status:

* :class:`ParameterError` -- bad input (a non-number, a value outside its domain, a covariance that
  is not PSD, a ridgeless solve at the interpolation threshold ...). Exit status 2, one line that
  names the parameter.
* :class:`ConvergenceError` -- a well-posed solve that did not converge. Exit status 3, one line that
  says what was tried.
"""

from __future__ import annotations


class ReplicaError(Exception):
    """Base class of the errors the command line turns into a one-line message."""

    exit_status = 1


class ParameterError(ReplicaError, ValueError):
    """A user-supplied parameter is malformed or outside the model's domain.

    ``parameter`` names the offending parameter as the user typed it (``--alpha``, ``alpha``).
    """

    exit_status = 2

    def __init__(self, parameter: str, message: str):
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}")


class ConvergenceError(ReplicaError, ArithmeticError):
    """A solver did not converge; ``tried`` says what was attempted, ``status`` (a
    :class:`replica.numerics.result.Status` value such as ``"max-iterations"``) what happened."""

    exit_status = 3

    def __init__(self, message: str, tried: str = "", status: str = "stalled"):
        self.tried = tried
        self.status = getattr(status, "value", status)
        text = message if not tried else f"{message} (tried: {tried})"
        super().__init__(text)
