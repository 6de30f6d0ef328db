"""A warm code cache changes only the time of a 30-digit point, never its printed output (issue
26: a 30-digit point of a quadrature model in about a second is reached on a warm cache).

On the warm path a process loads the generated code, the derivation record of a declaration
(:class:`replica.modeling._DerivationRecord`) and the quadrature levels accepted by earlier
processes (:class:`replica.symbolic.codegen._RememberedLevels`) instead of deriving and
generating them. Those are starting points only -- every evaluation passes the same error
control -- so the printed result (every value to its printed digits, the residual, the
condition, the iteration count, the digits guaranteed and how) must be the same bytes as in a
cold process: the first test runs each of the four quadrature examples in a fresh cache folder
and then twice more in that folder. The second test changes one byte of a model file between two
processes that share a cache folder: every cache on the solve path is keyed on the file's
contents, so the second process solves the new model (checked against its closed form), not
the old one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import mpmath
import pytest

from conftest import REPO

POINTS = [
    "examples/logistic_regression.py --alpha 2 --lam 1/10 --eta 1",
    "examples/hinge_svm.py --alpha 2",
    "examples/perceptron_teacher.py --alpha 1 --prior rademacher",
    "examples/lasso.py --alpha 1/2 --eps 1/10 --lam 1/2 --sigma 1/10",
]
"""The 30-digit points of the four quadrature examples (the commands of their docstrings)."""


def _solve(args, cache, cwd=REPO, extra_path=None):
    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=str(cache))
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "replica.cli", "solve", "--model", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS, ids=lambda p: os.path.basename(p.split()[0])[:-3])
def test_warm_cache_prints_the_bytes_of_a_cold_process(tmp_path, point):
    cache = tmp_path / "cache"
    args = point.split() + ["--dps", "30"]
    cold = _solve(args, cache)
    assert cold.returncode == 0, cold.stderr
    assert "status converged" in cold.stdout and "digits guaranteed: 30" in cold.stdout
    # the cold process left the generated code and the accepted quadrature levels behind
    names = os.listdir(cache)
    assert any(n.endswith("-levels-decay.json") for n in names), names
    for _ in range(2):  # (the second warm process reads the levels the first one stored)
        warm = _solve(args, cache)
        assert warm.returncode == 0, warm.stderr
        assert warm.stdout == cold.stdout


MODEL = '''
import sympy
from replica.modeling import Parameter, SaddlePointModel, gauss

m, mhat = sympy.symbols("m mhat", positive=True)
xi = sympy.Symbol("xi", real=True)
a = sympy.Symbol("a", positive=True)
G = gauss(CF * xi**2 * sympy.Heaviside(xi), xi)
MODEL = SaddlePointModel("one_byte", free_energy=-m * mhat + a * mhat**2 * G / 2
                         + sympy.log(1 + m), pairs=[(m, mhat)],
                         parameters=[Parameter("a", "a")], start={m: 1},
                         observables={"errors": {
                             "h": m * gauss(CO * xi**4 * sympy.Heaviside(xi), xi)}})
'''
r"""A saddle point with Gaussian integrals (a kink at 0): :math:`\partial_{\hat m}\Phi = 0`
gives :math:`m = a\hat m G`, :math:`\partial_m\Phi = 0` gives :math:`\hat m = 1/(1 + m)`, so
:math:`m(1 + m) = aG`, :math:`G = c_F\,\mathbb E[\xi^2\theta(\xi)] = c_F/2`; the observable
:math:`h = m\,c_O\,\mathbb E[\xi^4\theta(\xi)] = 3c_Om/2`. (A byte of the free energy also
changes the derivation record's key, whose file the declaration reads while it runs; a byte of
an observable changes nothing but the file.)"""


def _m_closed(cf):
    return (mpmath.sqrt(1 + 2 * cf) - 1) / 2  # m^2 + m - cf/2 = 0


@pytest.mark.slow
@pytest.mark.parametrize("where", ["CF", "CO"], ids=["free_energy", "observable"])
def test_one_changed_byte_of_a_model_file_is_a_new_model_on_a_warm_cache(tmp_path, where):
    cache = tmp_path / "cache"
    path = tmp_path / "model.py"

    def solve(cf: int, co: int):
        path.write_text(textwrap.dedent(MODEL).replace("CF", str(cf)).replace("CO", str(co)))
        out = _solve([str(path), "--a", "1", "--dps", "30", "--json"], cache, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        m = mpmath.mpf(data["order_parameters"]["m"])
        h = mpmath.mpf(data["errors"]["h"])
        assert abs(m - _m_closed(cf)) < mpmath.mpf(10) ** -28
        assert abs(h - 3 * co * _m_closed(cf) / 2) < mpmath.mpf(10) ** -27

    with mpmath.workdps(40):
        solve(4, 4)
        first = set(os.listdir(cache))
        # one byte of the file: 4 -> 6
        solve(6, 4) if where == "CF" else solve(4, 6)
        assert set(os.listdir(cache)) - first  # (new entries, under the new contents' keys)
        solve(4, 4)  # and back: the first entries again
