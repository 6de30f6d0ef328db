"""replica: a workbench for the replica and random-matrix theory of in-context learning.

Models are declarations (:class:`replica.problem.Problem`): the built-in ones are ``alignment``
(paper A, arXiv 2509.26551), ``isotropic`` (paper B, arXiv 2405.11751) and ``lowrank``
(arXiv 2510.04548), in :mod:`replica.models`. One engine solves them all
(:mod:`replica.numerics.driver`).

>>> import replica
>>> r = replica.solve("isotropic", alpha=2, tau=4, kappa="1/2", rho="1/100", dps=20)
>>> r.status.value, r.converged
('converged', True)
"""

from __future__ import annotations

from .version import __version__

__all__ = ["__version__", "solve", "solve_float64", "load_model"]


def _problem(model):
    """A built-in model's name, a model file's path (``*.py``), a declared model or a problem."""
    if isinstance(model, str):
        if model.endswith(".py"):
            from .modeling import load_model_file

            return load_model_file(model)
        from .models import get

        return get(model)
    from .modeling import as_problem

    return as_problem(model)


def load_model(path: str):
    """The :class:`~replica.problem.Problem` declared by the model file ``path`` (see
    :mod:`replica.modeling`)."""
    from .modeling import load_model_file

    return load_model_file(path)


def solve(model, dps: int = 30, verify: bool = True, **params):
    """Solve ``model`` at one parameter point to ``dps`` digits.

    ``model`` is a built-in model's name (``"alignment"``, ``"isotropic"``, ``"lowrank"``), the
    path of a model file (``"examples/ridge_regression.py"``), a declared model
    (:class:`replica.modeling.SaddlePointModel`, :class:`~replica.modeling.FixedPointModel`) or a
    :class:`~replica.problem.Problem`; ``params`` are its parameters by name (strings such as
    ``"3/10"``, ints, Fractions, floats read through their shortest decimal). Returns a
    :class:`replica.numerics.Result`: the values by name (``r["e_icl"]``), ``status``,
    ``digits`` (verified by a re-solve at higher precision), ``residual``, ``condition`` and
    ``notes``. Bad input raises :class:`replica.errors.ParameterError`; a solve that fails raises
    :class:`replica.errors.ConvergenceError` with its status.
    """
    from .numerics.driver import solve as engine_solve

    return engine_solve(_problem(model), dps=dps, verify=verify, **params)


def solve_float64(model, **params) -> dict:
    """Vectorised float64 solution of ``model`` over NumPy parameter grids (see
    :func:`replica.numerics.driver.solve_float64`): a dict of arrays with every reported value,
    ``converged``, ``status``, ``iterations`` and ``residual`` per point."""
    from .numerics.driver import solve_float64 as engine_solve_float64

    return engine_solve_float64(_problem(model), **params)
