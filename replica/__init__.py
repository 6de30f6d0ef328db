"""replica: a workbench for the replica and random-matrix theory of in-context learning.

Models (one module each in :mod:`replica.models`): ``alignment`` (paper A, arXiv 2509.26551),
``isotropic`` (paper B, arXiv 2405.11751), ``lowrank`` (arXiv 2510.04548).

>>> import replica
>>> r = replica.solve("isotropic", alpha=2, tau=4, kappa="1/2", rho="1/100", dps=20)
>>> r.converged
True
"""

from __future__ import annotations

from .version import __version__


def solve(model: str, dps: int = 30, **params):
    """Solve ``model`` (``"alignment"``, ``"isotropic"``, ``"lowrank"``) at one parameter point;
    returns a :class:`replica.numerics.SolveResult`."""
    import importlib

    from .errors import ParameterError

    if model not in ("alignment", "isotropic", "lowrank"):
        raise ParameterError("model", f"unknown model {model!r} (alignment, isotropic, lowrank)")
    module = importlib.import_module(f"replica.models.{model}")
    return module.solve(dps=dps, **params)
