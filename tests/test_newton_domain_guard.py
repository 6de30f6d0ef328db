"""Newton's line search stays in a model's declared domain.

A trial point of :meth:`replica.numerics.machine.Machine.newton`'s line search where an
``admissible`` condition fails (or a declared-positive unknown is negative) is not evaluated:
the step is halved. (Evaluated there, logistic regression's integrands held the square root of a
negative margin and each trial point's quadrature ran 13-15 s.)

The model: ``log x = log a`` with ``x > 0`` declared. From ``x = 20`` at ``a = 1`` the full
Newton step ``-x log(x / a) = -59.9`` lands at ``x = -39.9``; the solution is ``x = a``.
(``--start x=20``: Newton's method in mpmath from there; without a start the float64 solve's
solution would be its start.)
"""

from __future__ import annotations

import mpmath

from replica.numerics.machine import Machine

LOG = """
import sympy
from replica.modeling import FixedPointModel, Parameter
a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", real=True)
MODEL = FixedPointModel("logroot", residuals=[sympy.log(x) - sympy.log(a)], unknowns=[x],
                        parameters=[Parameter("a", "a")], admissible=[(x, "x > 0")],
                        start={x: 20})
"""


def test_trial_points_outside_the_domain_are_not_evaluated(tmp_path, monkeypatch, capsys):
    from replica.cli import main

    path = tmp_path / "logroot.py"
    path.write_text(LOG)
    seen = []
    orig = Machine.evaluate

    def recording(self, group, kind, x, *args, **kw):
        if group == "equations":  # (mpf, or a ball in the ball-arithmetic iteration)
            seen.append(mpmath.mpf(x[0].mid().str(30, radius=False))
                        if hasattr(x[0], "mid") else mpmath.mpf(mpmath.re(x[0])))
        return orig(self, group, kind, x, *args, **kw)

    monkeypatch.setattr(Machine, "evaluate", recording)
    code = main(["solve", "--model", str(path), "--a", "1", "--start", "x=20", "--dps", "20",
                 "--json"])
    out, err = capsys.readouterr()
    assert code in (0, None), err
    assert '"status": "converged"' in out and '"x": "1.0' in out, out
    assert seen and min(seen) > 0, min(seen)  # the guard off: -39.9 and -9.98 are evaluated
