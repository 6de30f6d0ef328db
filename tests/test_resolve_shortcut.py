"""The verifying re-solve without Newton's last step (``newton_mp(..., last_step=False)``,
``solve_mp_once(..., last_step=False)``): the solution it reports is the iterate where the
equations were evaluated last, and the reported values evaluated there share that evaluation's
quadrature nodes and implicit roots. Checked against the same solves with the step taken and
against an independent root of a hand-written system (mpmath's ``findroot``)."""

import os

import mpmath
import pytest

import replica
from replica.numerics import machine as machine_module
from replica.numerics.newton import newton_mp
from replica.symbolic import implicit

HERE = os.path.dirname(os.path.abspath(__file__))
LOGISTIC = os.path.join(HERE, "..", "examples", "logistic_regression.py")


def _system(calls):
    """A hand-written system F(y) = 0 (two unknowns; the solution near (1.2, 0.9)) whose
    evaluations are recorded in ``calls``, and its Jacobian."""
    def F(y):
        calls.append(list(y))
        a, b = y
        return [a * a + mpmath.sin(b) - 2, mpmath.exp(a - 1) - b * b - mpmath.mpf(1) / 3]

    def J(y):
        a, b = y
        return mpmath.matrix([[2 * a, mpmath.cos(b)], [mpmath.exp(a - 1), -2 * b]])
    return F, J


@pytest.mark.parametrize("dps", [35, 52])
def test_without_the_last_step_the_solution_is_where_F_was_evaluated_last(dps):
    with mpmath.workdps(2 * dps):
        exact = mpmath.findroot(lambda a, b: _system([])[0]([a, b]), (mpmath.mpf("1.2"),
                                                                      mpmath.mpf("0.9")))
    with mpmath.workdps(dps):
        start = [mpmath.mpf("1.2"), mpmath.mpf("0.9")]
        calls = []
        F, J = _system(calls)
        short = newton_mp(F, J, start, condition=False, residual=False, last_step=False)
        last = calls[-1]
        full_calls = []
        F2, J2 = _system(full_calls)
        full = newton_mp(F2, J2, start, condition=False, residual=False)
        eps = mpmath.eps
        # the reported solution is the point of the last evaluation, exactly, and its residual
        # that evaluation's
        assert short.x == last
        assert short.residual == max(abs(v) for v in F(last))
        # the same evaluations as with the step taken (neither evaluates F after it)
        assert len(calls) - 1 == len(full_calls)
        # within the stopping step (1000 eps relative) of the solution with the step taken,
        # and of the independent root
        for i in range(2):
            assert abs(short.x[i] - full.x[i]) <= 1000 * eps * abs(full.x[i])
            assert abs(short.x[i] - exact[i]) <= 1000 * eps * abs(exact[i])
            assert abs(full.x[i] - exact[i]) <= 4 * eps * abs(exact[i])


def _solve_runs(model, monkeypatch, dps, **params):
    """The verified solve of ``model`` as ``replica.solve`` runs it where no stop is predicted
    (its re-solve without the last step), with the last step forced, and (the control of the count) as it runs but with
    the roots' memo emptied once the re-solve's Newton iteration returned: per run the result, the re-solve's reported
    values and the implicit roots polished in the re-solve: in all (``seen["polished"]``) and
    after its Newton iteration returned (``seen["after"]``: for the reported values). (A solve
    before them, not counted, leaves both runs the same remembered quadrature levels: a first
    solve refines more.)
    ``seen["stepped"]``: whether the re-solve's Newton iteration reported a point other than
    the one where it evaluated ``F`` last -- it took a final step, which Newton's other exit
    (a step driven by the rounding noise of ``F``, :func:`newton_mp`) never takes."""
    original = machine_module.Machine.solve_mp_once
    original_newton = machine_module.newton_mp
    replica.solve(model, dps=dps, **params)  # (the quadrature's levels remembered for both)
    runs = []
    for force, afresh in ((False, False), (True, False), (False, True)):
        seen = {"ref": None, "polished": 0, "after": 0, "resolving": False, "stepped": None,
                "returned": False}

        def newton(F, *a, seen=seen, afresh=afresh, **k):
            last = []

            def F_seen(y):
                last[:] = [list(y)]
                return F(y)
            seen["returned"] = False
            rep = original_newton(F_seen, *a, **k)
            seen["returned"] = True
            if afresh and seen["resolving"]:
                for num in implicit.REGISTRY.values():
                    num._imp_._mid_memo.clear()
            if seen["resolving"]:
                seen["stepped"] = list(rep.x) != last[0]
            return rep

        def solve_mp_once(self, *a, seen=seen, force=force, **k):
            # the evaluated stops (no predicted stop, newton_mp's ``predict``, which ends the
            # re-solve on a chord step whose end is not evaluated): the path where a
            # prediction is not possible, which this test is about
            k["predict"] = False
            if force:
                k["last_step"] = True
            resolve = k.get("condition") is False
            seen["resolving"] = resolve
            try:
                out = original(self, *a, **k)
            finally:
                seen["resolving"] = False
            if resolve:
                seen["ref"] = out[0]
            return out
        polish = implicit._Numeric._ball_polish

        def counted(self, args, polish=polish, seen=seen):
            seen["polished"] += seen["resolving"]
            seen["after"] += seen["resolving"] and seen["returned"]
            return polish(self, args)
        monkeypatch.setattr(machine_module.Machine, "solve_mp_once", solve_mp_once)
        monkeypatch.setattr(machine_module, "newton_mp", newton)
        monkeypatch.setattr(implicit._Numeric, "_ball_polish", counted)
        for num in implicit.REGISTRY.values():
            num._imp_._mid_memo.clear()
        result = replica.solve(model, dps=dps, **params)
        monkeypatch.undo()
        runs.append((result, seen))
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("dps, params", [
    (30, {"alpha": 2, "lam": "1/10", "eta": 1}),
    (20, {"alpha": 1, "lam": "1/2", "eta": "4/5"}),
])
def test_logistic_resolve_without_the_last_step(monkeypatch, dps, params):
    model = replica.load_model(LOGISTIC)
    (short, s_seen), (full, f_seen), (control, c_seen) = _solve_runs(model, monkeypatch, dps,
                                                                     **params)
    # every reported value, the digits and how they were obtained, the status, the residual
    # and the iterations: the same with and without the re-solve's last step
    assert short.all_values == full.all_values == control.all_values
    assert (short.digits, short.digits_how, short.status, short.residual, short.iterations) == \
        (full.digits, full.digits_how, full.status, full.residual, full.iterations)
    assert short.digits == dps
    # the re-solve's values (at dps + 5 + max(10, (dps + 5) // 2) digits) agree with those
    # after the last step to far more digits than the agreement check reads (dps + 5)
    hi = dps + 5 + max(10, (dps + 5) // 2)
    for k, v in f_seen["ref"].items():
        w = s_seen["ref"][k]
        assert abs(w - v) <= mpmath.mpf(10) ** -(hi - 6) * abs(v), (k, v, w)
    # and the reported values of the re-solve were evaluated on the nodes of its last
    # evaluation of the equations: after its Newton iteration returned, no root was polished,
    # where the same run with the roots' memo emptied at that moment polishes them afresh
    # (the control: the count sees polishing there). The forced run polishes there where its
    # Newton iteration took the final step, unless that step (of the size of the rounding) leaves
    # every node's arguments as they were -- it ends instead without one where a step is driven
    # by rounding noise, which depends on the quadrature levels earlier solves in the process
    # left remembered. (Totals of the runs are not compared: a stop-46 run met equal totals with
    # the step taken.)
    assert s_seen["stepped"] is False and c_seen["stepped"] is False
    assert s_seen["polished"] > 0 and s_seen["after"] == 0
    assert c_seen["after"] > 0
    if not f_seen["stepped"]:
        assert f_seen["after"] == 0
