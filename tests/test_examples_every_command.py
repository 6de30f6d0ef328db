"""Issue 26's promise, "every command works on these": each command of ``replica`` run on each
of the five worked examples of the generalised-linear zoo (``examples/perceptron_capacity.py``,
``perceptron_teacher.py``, ``logistic_regression.py``, ``lasso.py``, ``hinge_svm.py``) with cheap
parameters. A command that applies must exit 0 and write what it says; one that does not apply
to the model (no simulation declared, one parameter only, no transition declared, no
ball-arithmetic evaluation of an integrand) must say why in one line and exit 2 (or, for a
``--certify`` whose proof cannot be attempted, 3 with the reason), never a traceback. The audit
behind it, with CPU times, is the table in ``docs/examples.md``.

Also here: the regression tests of the bugs the audit found."""

from __future__ import annotations

import json
import os

import mpmath
import pytest

from replica.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def example(name):
    return os.path.join(REPO, "examples", f"{name}.py")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- bugs the audit found ---------------------------------------------------------------------
def test_level_crossing_at_a_negative_parameter_value(capsys):
    """``transition --kind level`` on an interval of negative values (the Gardner capacity's
    margin kappa < 0): where alpha_c(kappa) = 3. Before the fix the scan's exact rational of a
    binary float dropped the sign (``mpf.man_exp`` has an unsigned mantissa), so every point
    kappa < 0 was solved at -kappa and the level was never bracketed (exit 3). The reference:
    the root of ``(1 + k^2) Phi(k) + k phi(k) = 1/3`` (the Gardner integral by parts), by
    mpmath's findroot, none of the engine's code."""
    code, out, err = run(capsys, "transition", "--model", example("perceptron_capacity"),
                         "--vary", "kappa", "--between=-1/2,1/2", "--quantity", "alpha_c",
                         "--kind", "level", "--level", "3", "--json", "--quiet")
    assert code == 0, err
    data = json.loads(out)
    assert data["digits"] >= 30
    with mpmath.workdps(50):
        ref = mpmath.findroot(lambda k: (1 + k**2) * mpmath.ncdf(k) + k * mpmath.npdf(k)
                              - mpmath.mpf(1) / 3, -0.25)
        assert ref < 0
        # the location printed to its 30 significant digits: within half a unit of the last
        half_unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(ref))) - 29) / 2
        assert abs(mpmath.mpf(data["location"]) - ref) <= half_unit
