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


def test_expand_with_a_free_leading_order_says_so(capsys):
    """``expand`` at a point where the leading-order equations leave an unknown free (logistic
    regression at alpha = 0: sympy's solution has no value for q) exits 3 with that reason;
    before the fix it was an internal error (``KeyError: q``, exit 1)."""
    code, out, err = run(capsys, "expand", "--model", example("logistic_regression"),
                         "--parameter", "alpha", "--at", "0", "--quantity", "generalisation",
                         "--order", "1", "--lam", "1/10", "--eta", "1", "--quiet")
    assert code == 3, err
    assert "do not determine q" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["perceptron_capacity", "hinge_svm"])
def test_phase_diagram_of_a_one_parameter_model_says_so(name, tmp_path, capsys):
    """A model with one continuous parameter has no plane: one line naming it, exit 2 (before:
    ``--y: must differ from --x``, which did not say why no other --y exists)."""
    x, quantity = {"perceptron_capacity": ("kappa:0:1:3", "alpha_c"),
                   "hinge_svm": ("alpha:1:2:3", "kappa_max")}[name]
    code, out, err = run(capsys, "phase-diagram", "--model", example(name), "--x", x,
                         "--y", x, "--quantity", quantity, "-o", str(tmp_path / "pd"), "--quiet")
    assert code == 2
    assert "only one continuous parameter" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "pd").exists() or not any((tmp_path / "pd").iterdir())


@pytest.mark.parametrize("name", ["perceptron_capacity", "logistic_regression", "lasso",
                                  "hinge_svm"])
def test_transition_name_on_a_model_without_transitions_says_so(name, capsys):
    """``transition --name`` on a model file that declares no TRANSITIONS: one line saying so,
    exit 2 (before: argparse's 'the following arguments are required: --vary, --between')."""
    code, out, err = run(capsys, "transition", "--model", example(name), "--name", "x",
                         "--quiet")
    assert code == 2
    assert "declares no transitions" in err and len(err.strip().splitlines()) == 1
