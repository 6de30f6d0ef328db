"""Newton's predicted stop (``newton_mp(..., predict=...)``, session 52): a chord step whose
matrix's contraction was observed is taken without evaluating the equations after it, when
four times that contraction times the step is below the stopping tolerance; the verified
solve (:func:`replica.numerics.driver.solve_params`) uses it in the first solve and in the
verifying re-solve. Checked against a hand-written system's root found independently
(mpmath's ``findroot`` at twice the digits): the predicted solutions are within the tolerance,
the re-solve's agreement with the first solve reads the first solve's true error, and a matrix
that contracts poorly is never trusted to predict."""

import os

import mpmath
import pytest

import replica
from replica.numerics.newton import jacobian_digits, newton_mp
from replica.numerics.precision import agreement_digits, precision

HERE = os.path.dirname(os.path.abspath(__file__))
LOGISTIC = os.path.join(HERE, "..", "examples", "logistic_regression.py")


def _system(calls, jacobian_factor=1):
    """A hand-written system F(y) = 0 (its root near (1.2, 0.9)), its evaluations recorded in
    ``calls``; its Jacobian at :func:`jacobian_digits` of the working precision, as the solver
    evaluates it (times ``jacobian_factor``: a poor iteration matrix)."""
    def F(y):
        calls.append([+v for v in y])
        a, b = y
        return [a * a + mpmath.sin(b) - 2, mpmath.exp(a - 1) - b * b - mpmath.mpf(1) / 3]

    def J(y):
        with mpmath.workdps(jacobian_digits(mpmath.mp.dps)):
            a, b = (+v for v in y)
            return mpmath.matrix([[2 * a, mpmath.cos(b)],
                                  [mpmath.exp(a - 1), -2 * b]]) * jacobian_factor
    return F, J


def _exact():
    with mpmath.workdps(120):
        return mpmath.findroot(lambda a, b: _system([])[0]([a, b]),
                               (mpmath.mpf("1.2"), mpmath.mpf("0.9")))


def _float64_start(exact):
    return [mpmath.mpf(float(exact[0] * (1 + mpmath.mpf(3) * 10 ** -15))),
            mpmath.mpf(float(exact[1]))]


def _rel_error(x, exact):
    return max(abs(a - b) / abs(b) for a, b in zip(x, exact))


def test_the_first_solve_stops_on_a_predicted_step_within_the_tolerance():
    """35 digits from a float64 start (the driver's first solve): the Newton step, then one
    chord step whose size times the contraction already seen is below 1000 eps; its end is
    returned unevaluated (two evaluations of F where the evaluated stop takes four), and it is
    within 1000 eps of the independent root."""
    exact = _exact()
    with precision(35):
        calls, full_calls = [], []
        rep = newton_mp(*_system(calls), _float64_start(exact), predict=True)
        full = newton_mp(*_system(full_calls), _float64_start(exact))
        eps = mpmath.eps
        assert rep.residual is None and full.residual is not None
        assert rep.rate is not None and rep.rate < mpmath.mpf(10) ** -10, rep.rate
        assert len(calls) == 2 and len(full_calls) == 4, (len(calls), len(full_calls))
        assert rep.x not in calls  # F was not evaluated at the solution returned
        assert _rel_error(rep.x, exact) <= 1000 * eps, _rel_error(rep.x, exact)
        assert _rel_error(full.x, exact) <= 4 * eps
        # the residual at the start, as the evaluation there gave it
        assert rep.start_residual == max(abs(v) for v in _system([])[0](_float64_start(exact)))


def test_the_re_solve_takes_one_chord_step_and_reads_the_first_solves_error():
    """The verifying re-solve at 52 digits from that solution with its last matrix and its
    contraction (``J0``, ``rate``) and the driver's tolerance ``10**-(35 + 10)``: one evaluation
    of F (at the start: the residual of the first solve's solution at 52 digits), one chord
    step, and the point it reaches is within the tolerance of the independent root -- so the
    agreement of the two solutions is the first solve's own error, digit for digit."""
    exact = _exact()
    with precision(35):
        low = newton_mp(*_system([]), _float64_start(exact), predict=True)
    with precision(52):
        calls = []
        F, J = _system(calls)
        high = newton_mp(F, J, low.x, condition=False, residual=False, last_step=False,
                         J0=low.chord, rate=low.rate, predict=mpmath.mpf(10) ** -45)
        assert len(calls) == 1 and calls[0] == low.x, calls
        assert high.residual is None
        assert high.start_residual == max(abs(v) for v in _system([])[0](low.x))
        assert _rel_error(high.x, exact) <= mpmath.mpf(10) ** -45, _rel_error(high.x, exact)
        # what the driver reads: the same agreement as with the exact root
        for i in range(2):
            assert (agreement_digits(low.x[i], high.x[i], 35)
                    == agreement_digits(low.x[i], exact[i], 35))


@pytest.mark.parametrize("factor", ["1.1", "0.8"])
def test_a_poorly_contracting_matrix_never_predicts(factor):
    """An iteration matrix 10-20 % off (its chord steps contract by ~0.1-0.2, or are refused
    for fresh matrices): the first solve takes no predicted stop -- it ends at the point of the
    solve with every stop evaluated -- and a re-solve that starts with that matrix does not
    trust its first chord step (~1e-35) to reach 1e-45: the iteration goes on, and where a
    later step is small enough for the contraction to predict the stop, the point is within
    the tolerance of the root."""
    exact = _exact()
    bad = mpmath.mpf(factor)
    with precision(35):
        calls = []
        low = newton_mp(*_system(calls, bad), _float64_start(exact), predict=True, maxiter=200)
        full = newton_mp(*_system([], bad), _float64_start(exact), maxiter=200)
        # (the same point and steps; its residual is left to the re-solve, None, where the
        # evaluated stop took a last step)
        assert (low.x, low.iterations) == (full.x, full.iterations)
        assert low.residual in (None, full.residual)
        assert low.rate is None or low.rate > mpmath.mpf("0.01"), low.rate
    with precision(52):
        calls = []
        kw = dict(residual=False, last_step=False, J0=low.chord, rate=low.rate, maxiter=200)
        high = newton_mp(*_system(calls, bad), low.x, predict=mpmath.mpf(10) ** -45, **kw)
        high_full = newton_mp(*_system([], bad), low.x, **kw)
        assert len(calls) >= 3, len(calls)
        assert high.x == high_full.x or _rel_error(high.x, exact) <= mpmath.mpf(10) ** -45


def test_a_step_that_is_exactly_zero_measures_no_contraction():
    """A linear system whose root is exact in binary: after the Newton step F rounds to 0, the
    chord step is exactly 0 -- the iteration ends where F was evaluated (its residual 0), and
    the zero ratio is not taken for the matrix's contraction (a re-solve would otherwise
    predict with any step)."""
    def F(y):
        return [2 * y[0] - 1, y[1] - y[0]]

    def J(y):
        return mpmath.matrix([[2, 0], [-1, 1]])

    with precision(35):
        start = [mpmath.mpf("0.50000000000000011"), mpmath.mpf("0.49999999999999989")]
        rep = newton_mp(F, J, start, predict=True)
    assert rep.x == [mpmath.mpf("0.5"), mpmath.mpf("0.5")] and rep.residual == 0
    assert rep.rate is None, rep.rate


@pytest.mark.slow
def test_logistic_point_with_predicted_stops(monkeypatch):
    """The 30-digit logistic point (issue 26; ~1.5 s): the solve ends on predicted stops (two
    Newton iterations at 35 digits, no evaluation of the equations after the second), every
    value is main's (ec089ea, evaluated stops) to its 30 guaranteed digits, and the residual
    reported is that of the reported solution evaluated at the re-solve's 52 digits."""
    from replica.numerics.machine import machine

    golden = {  # replica solve ... --dps 30 on main ec089ea (evaluated stops, 3 iterations)
        "m": "1.72031309259267628401133021186", "q": "4.14580362074794941373497917899",
        "V": "3.97654578910386148280472415737", "mhat": "0.432614933620658543741471626688",
        "Vhat": "0.151474534189974967239438443628", "qhat": "0.0750226241149865936063088052474",
        "train_loss": "0.182149644128710035993302096936",
        "train_error": "0.00647510735826959547626746976507",
        "free_energy": "-0.571589469294817542673353152822"}
    model = replica.load_model(LOGISTIC)
    res = replica.solve(model, alpha=2, lam="1/10", eta=1, dps=30)
    assert res.digits == 30 and res.status.value == "converged"
    assert res.iterations == 2, res.iterations
    for k, text in golden.items():  # to 30 digits: within one unit of the 30th printed one
        with mpmath.workdps(40):
            g = mpmath.mpf(text)
            unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(g))) - 29)
            assert abs(res.all_values[k] - g) <= unit, (k, res.all_values[k], text)
    params = model.schema.parse({"alpha": 2, "lam": "1/10", "eta": 1})
    m = machine(model, model.variant_of(params))
    x = [res.all_values[k] for k in m.outline.unknowns]
    with precision(52):
        # the solution as the first solve left it: its values at 35 digits are the reported
        # ones; the residual there, evaluated independently of the solve at 52 digits
        assert mpmath.mpf(res.residual) > 0
        r = m.residual(params, x)
    assert abs(r - res.residual) <= mpmath.mpf("1e-3") * r + mpmath.mpf(10) ** -40, (r, res)
    # where the re-solve did not start at the solution (its Newton failed there: a fallback),
    # the residual is evaluated at the solution at the working precision instead
    from replica.numerics.machine import Machine

    original = Machine.solve_mp_once

    def no_start_residual(self, *a, **k):
        out = original(self, *a, **k)
        if k.get("condition") is False:
            out[1].start_residual = None
        return out
    monkeypatch.setattr(Machine, "solve_mp_once", no_start_residual)
    again = replica.solve(model, alpha=2, lam="1/10", eta=1, dps=30)
    assert again.all_values == res.all_values
    assert again.residual is not None and 0 <= again.residual < mpmath.mpf(10) ** -33
