r"""What a float64 solution may claim (:func:`replica.numerics.driver.solve_float64`): a point is
``converged`` only when one Newton correction in extended precision (``longdouble``) and the
re-evaluation of the reported formulas (:func:`call_longdouble`) bound every reported value's
relative error by :data:`CLAIM_RTOL`, with the condition at most :data:`CONDITION_MAX`
(:func:`honest_status`); :meth:`replica.numerics.machine.Machine.assess` computes both (and, in
a fused kernel, :mod:`replica.numerics.fused_check` computes them in double-double, with the
same thresholds).
"""

from __future__ import annotations


import numpy as np

from ..problem import Problem
from ..symbolic.codegen import Evaluator, current_split
from .result import Status




CLAIM_RTOL = 1e-8
"""The relative accuracy a float64 point marked ``converged`` claims for every reported value
(:func:`~replica.numerics.driver.solve_float64`): its estimated relative error (:meth:`~replica.numerics.machine.Machine.assess`) is at most this."""
LD_WIDER = np.finfo(np.longdouble).nmant >= 63
"""Whether NumPy's ``longdouble`` has at least a 64-bit significand (x86 extended precision, or
quadruple): the error estimate needs it; where it is plain float64 no point is ``converged``."""
_U_LD = float(np.finfo(np.longdouble).eps) / 2 if LD_WIDER else 1.0
CONDITION_MAX = CLAIM_RTOL / (1000 * _U_LD)
"""The largest condition of the scaled Jacobian at a ``converged`` float64 point: the extended
precision solution's own error, about ``condition * u_64``, stays 1000 times below
:data:`CLAIM_RTOL` (about 1.8e8 with x86's 64-bit significand)."""
STEP_MAX = 1e-4
"""The largest relative Newton correction ``max_j |delta_j / x_j|`` for which the corrected
solution is trusted: the neglected second-order term is of order ``step**2`` (1e-8 relative,
times the curvature in the scaled unknowns) -- and a step this large already makes the estimated
error exceed :data:`CLAIM_RTOL` at any value that depends on the unknowns."""
RULE_RTOL = 1e-11
"""The largest relative difference between the float64 path's equations with its Gaussian
integrals' fixed rule and with a rule :data:`~replica.symbolic.codegen.CHECK_SPLIT` times finer
at which a solved point is not solved again with the finer rule
(:meth:`~replica.numerics.machine.Machine.grid`): rounding differences are about 1e-15; a rule
that does not resolve its integrand differs by far more (0.77 of the right-hand side at the
Rademacher perceptron's spurious point)."""
RULE_SPLIT_MAX = 64
"""The finest float64 rule: each piece of the fixed rule cut in at most this many parts."""
STATUS_DTYPE = "<U16"


def call_longdouble(ev: Evaluator, values, arrays) -> list:
    """Evaluate the generated NumPy code of ``ev`` with ``longdouble`` arguments (the
    computation of ``Machine.evaluate``'s float64 code, in
    extended precision; its Gaussian integrals by the float64 path's own rule, the one that
    :class:`~replica.symbolic.codegen.np_rule_split` holds, at the same nodes: what this
    recomputation sees is the float64 rounding, and the rule's own truncation error is
    estimated apart, :meth:`~replica.numerics.machine.Machine.assess`; spectral averages
    summed in ``longdouble`` over the float64 pairs ``arrays = (lam, mu, weight)``)."""
    outer, inners = ev.functions("np")
    vals = [np.asarray(v, dtype=np.longdouble) for v in values]
    vals += ev.gaussian_values("np", vals, np.longdouble, split=current_split())
    avgs: list = []
    if inners:
        lam, mu, w = (np.asarray(a, dtype=np.longdouble) for a in arrays[:3])
        expanded = [v[..., None] for v in vals]
        prev: list = []
        for f in inners:
            a = np.add.reduce(w * np.asarray(f(lam, mu, *expanded, *prev),
                                             dtype=np.longdouble), axis=-1)
            avgs.append(a)
            prev.append(np.asarray(a)[..., None])
    return [np.asarray(o, dtype=np.longdouble) for o in outer(*vals, *avgs)]


def honest_status(problem: Problem, report: dict, cond, err, shape):
    """The status of float64 points that the iteration solved, from their condition and error
    estimate (:meth:`~replica.numerics.machine.Machine.assess`): ``converged`` where the estimated relative error of every
    reported value is at most :data:`CLAIM_RTOL`, the condition at most :data:`CONDITION_MAX`
    and no declared non-negative value (``problem.nonnegative``: the mean-squared errors) is
    negative; ``inadmissible`` where such a value is negative although its estimate is
    accurate (the solution itself violates the model's conditions); ``not-verified``
    elsewhere."""
    good = (err <= CLAIM_RTOL) & (cond <= CONDITION_MAX)
    negative = np.zeros(shape, bool)
    for name in getattr(problem, "nonnegative", ()):
        if name in report:
            negative |= np.asarray(report[name]) < 0
    status = np.full(shape, Status.NOT_VERIFIED.value, dtype=STATUS_DTYPE)
    status[good & ~negative] = Status.CONVERGED.value
    status[good & negative] = Status.INADMISSIBLE.value
    return status


_STATUS_CODES = np.array([Status.CONVERGED.value, Status.NOT_VERIFIED.value,
                          Status.INADMISSIBLE.value, Status.NON_FINITE.value,
                          Status.MAX_ITERATIONS.value, Status.INADMISSIBLE.value],
                         dtype=STATUS_DTYPE)


def status_of_codes(code):
    """``(status, done)`` of points given as status codes (the compiled kernel's, as
    :func:`point_status` computes them): 0 ``converged``, 1 ``not-verified``, 2 ``inadmissible``
    with every value a result (a negative mean-squared error), 3 ``non-finite``, 4
    ``max-iterations``, 5 ``inadmissible`` (the admissibility conditions fail); ``done``: the
    points whose values are results (codes 0-2)."""
    return _STATUS_CODES[code], code <= 2


def converged_of_codes(code):
    """``status_of_codes(code)[0] == "converged"`` without comparing strings: code 0 is the
    only code named ``converged`` (:func:`status_of_codes`), so the boolean array is
    ``code == 0``, the same array bit for bit (a tenth of the string comparison's time on a
    10^4-point grid)."""
    return code == 0


def start_not_finite(code, iterated: bool):
    """The codes of a fused kernel's points (:func:`status_of_codes`) with 4 (``max-iterations``)
    made 3 (``non-finite``) for a kernel that does not iterate (``iterated`` false: an exact
    declared start, evaluated once): there a point is not a result only where its start's
    values or equations are not finite -- no sweep ran out (the NumPy path,
    :meth:`~replica.numerics.machine.Machine.grid`, names such a point the same)."""
    if iterated:
        return code
    return np.where(code == 4, 3, code)


def point_status(problem: Problem, report: dict, cond, err, iterated, admissible, done):
    """The status of every float64 point: ``max-iterations`` where the iteration did not
    converge, ``inadmissible`` where the admissibility conditions fail, ``non-finite`` where a
    reported value is not finite, and elsewhere (``done``) :func:`honest_status` -- the same
    statuses, computed as small integer codes and named once."""
    good = (err <= CLAIM_RTOL) & (cond <= CONDITION_MAX)
    negative = None
    for name in getattr(problem, "nonnegative", ()):
        if name in report:
            neg = np.asarray(report[name]) < 0
            negative = neg if negative is None else negative | neg
    if negative is None:
        honest = np.where(good, 0, 1)
    else:
        honest = np.where(good, np.where(negative, 2, 0), 1)
    code = np.where(done, honest, np.where(iterated, np.where(admissible, 3, 5), 4))
    return _STATUS_CODES[code]
