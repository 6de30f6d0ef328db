"""replica: a workbench for the replica and random-matrix theory of in-context learning.

Models are declarations (:class:`replica.problem.Problem`): the built-in ones are ``alignment``
(paper A, arXiv 2509.26551), ``isotropic`` (paper B, arXiv 2405.11751) and ``lowrank``
(arXiv 2510.04548), in :mod:`replica.models`. One engine solves them all
(:mod:`replica.numerics.driver`). ``help(replica.solve)`` lists the models with their
parameters and describes the result; the documentation site (``make docs``) has the theory of
each model and the command-line and API references.

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


def solve(model, dps: int = 30, verify: bool = True, certify: bool = False, **params):
    """Solve ``model`` at one parameter point to ``dps`` significant digits.

    ``model`` is a built-in model's name (``"alignment"``, ``"isotropic"``, ``"lowrank"``), the
    path of a model file (``"examples/ridge_regression.py"``), a declared model
    (:class:`replica.modeling.SaddlePointModel`, :class:`~replica.modeling.FixedPointModel`) or a
    :class:`~replica.problem.Problem`. ``params`` are its parameters by keyword: strings such as
    ``"3/10"`` or ``"1e-3"`` (read exactly), ints, Fractions, or floats (read through their
    shortest decimal, so ``0.1`` is one tenth); ``"inf"`` where a parameter allows it.
    ``verify=False`` skips the re-solve that guarantees the digits (status ``not-verified``);
    ``certify=True`` proves the digits by ball arithmetic instead (see ``certificate`` below).

    Bad input raises :class:`replica.errors.ParameterError` (one line naming the parameter; exit
    status 2 on the command line); a solve that fails raises
    :class:`replica.errors.ConvergenceError`, whose ``status`` says why (exit status 3).

    {MODELS}

    **The result** is a :class:`replica.numerics.result.Result`:

    * ``r["e_icl"]`` -- a value by name, from any group (``mpmath.mpf`` at the working
      precision); ``r.groups`` -- the values by group, as in the JSON output of ``replica
      solve --json`` (``errors``, ``intermediates``, ``measures``; for ``lowrank``
      ``order_parameters``, ``errors``, ``decomposition``; every built-in model's
      ``free_energy``: the free energy (R1) at the solution, the minimal ridge training objective
      per kappa d^2, see :data:`replica.models.lowrank.FREE_ENERGY_NAME`); ``r.values()`` --
      every scalar value; ``r.to_json_dict()`` -- everything as decimal strings with the
      guaranteed digits;
    * ``r.status`` -- a :class:`replica.numerics.result.Status`: ``converged`` (Newton converged
      and a complete re-solve at higher precision agreed), ``not-verified`` (no re-solve asked
      for), ``not-certified`` (a requested proof failed); the failures ``no-digits``,
      ``max-iterations``, ``singular-jacobian``, ``stalled``, ``inadmissible``,
      ``non-finite`` are raised as ``ConvergenceError``; ``r.converged`` is true exactly for
      the first two;
    * ``r.digits`` -- significant digits guaranteed for every reported value: their agreement
      with a re-solve at ``w + max(10, w/2)`` digits (``w`` the working precision with its
      guard digits) that also survive the rounding of their evaluation, or, with
      ``certify=True``, the digits the enclosures prove; ``r.digits_how`` says which;
    * ``r.certificate`` -- with ``certify=True``, the proof
      (:class:`replica.numerics.certify.Certificate`): ``certified``, ``reason`` (why not),
      ``box`` (the unknowns' box, in which a Krawczyk test shows exactly one solution),
      ``enclosures`` (a ball for every reported value), ``precision``, ``radius``; ``None``
      otherwise;
    * ``r.residual``, ``r.condition`` (of the scaled Jacobian), ``r.iterations``,
      ``r.notes`` (caveats, e.g. a conjectured formula), ``r.variant`` (the system that was
      solved), ``r.model``, ``r.params`` (exact strings), ``r.dps``.

    Example:

    >>> import mpmath, replica
    >>> r = replica.solve("isotropic", alpha=2, tau=4, kappa="1/2", rho="1/100", dps=20)
    >>> r.status.value, r.converged, r.digits
    ('converged', True, 20)
    >>> print(mpmath.nstr(r["e_icl"], 12))
    0.822484681722
    >>> sorted(r.groups)
    ['errors', 'free_energy', 'intermediates']
    """
    from .errors import ParameterError, did_you_mean
    from .numerics.driver import solve_params

    problem = _problem(model)
    names = problem.schema.names
    for key in params:  # a misspelled keyword of solve itself (dsp=20) is named as such
        if key not in names:
            raise ParameterError(key, f"unknown parameter"
                                      f"{did_you_mean(key, names + ('dps', 'verify', 'certify'))}"
                                      f" (this model has {', '.join(names)}; replica.solve "
                                      "also takes dps, verify, certify)")
    return solve_params(problem, problem.schema.parse(params), dps=dps, verify=verify,
                        certify=certify)


def _models_section() -> str:
    """The built-in models and their parameters, from their schemas (for :func:`solve`)."""
    from .models import NAMES, TITLES
    from .models.parameters import SCHEMAS
    from .problem import REQUIRED, SameAs

    def default(p):
        if p.default is REQUIRED:
            return "required"
        if isinstance(p.default, SameAs):
            return f"default: {p.default.name}"
        return f"default {p.default}"

    lines = ["**The built-in models** (``replica.models.NAMES``) and their parameters, from their",
             "schemas (``replica.models.parameters.SCHEMAS[name].parameters``, or",
             "``replica solve MODEL --help``); ``replica.models.get(name)`` returns a model's",
             "declaration::", ""]
    for name in NAMES:
        lines.append(f"    {name}: {TITLES[name]}")
        for p in SCHEMAS[name].parameters:
            lines.append(f"        {p.name:<11} {p.help} ({default(p)})")
        lines.append("")
    return "\n    ".join(lines).rstrip()


if solve.__doc__:  # absent under python -OO
    solve.__doc__ = solve.__doc__.replace("{MODELS}", _models_section())


def solve_float64(model, **params) -> dict:
    """Vectorised float64 solution of ``model`` over NumPy parameter grids (see
    :func:`replica.numerics.driver.solve_float64`): a dict of arrays with every reported value,
    ``status``, ``converged``, ``iterations``, ``residual``, ``condition`` and ``error_estimate``
    per point. A fast start, not an answer: a point is ``converged`` only where its estimated
    relative error (an extended-precision re-evaluation after one Newton correction) is at most
    1e-8 for every reported value, its condition is bounded and no mean-squared error is
    negative; other solved points are ``not-verified`` (their float64 values kept as a start).
    ``refine=True`` re-solves those with the verified mpmath :func:`solve`."""
    from .numerics.driver import solve_float64 as engine_solve_float64

    return engine_solve_float64(_problem(model), **params)
