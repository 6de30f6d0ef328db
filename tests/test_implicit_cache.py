"""Generated code that evaluates a function defined by an equation (``implicit_root``) is cached
on disk like any other, keyed on contents: the function's identity is the digest of its
declaration, the cached code records the digest of each implicit function it names and is bound,
when loaded, to the function of this process with that digest -- never to another one of the same
name -- and a changed declaration in a model file gives new code and new values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic import implicit
from replica.symbolic.codegen import CodeCache, Evaluator
from replica.symbolic.gaussian import gauss
from replica.symbolic.implicit import implicit_root

from conftest import REPO

p, x, z = sympy.symbols("p x z", real=True)


def _declare(k):
    """``R_k(x)``: the root of :math:`p^3 + k p - x`, one name for every ``k``."""
    return implicit_root("r_cache_test", p**3 + k * p - x, p, (x,),
                         bracket=(-1 - abs(x), 1 + abs(x)))


def _evaluator(R, cache, built):
    def build():
        built.append(R)
        return [R(x) ** 2 + x, gauss(R(x + z) ** 2, z)]

    return Evaluator(build=build, args=[x], cache=cache, name="t")


def test_identity_is_the_declarations_contents():
    R1, R1_again, R2 = _declare(1), _declare(1), _declare(2)
    assert R1 is R1_again  # the same declaration: the same function (its roots remembered)
    assert R1 is not R2 and R1.digest != R2.digest and R1.__name__ == R2.__name__
    assert implicit.REGISTRY[R1.digest] is R1 and implicit.REGISTRY[R2.digest] is R2
    digest = implicit.content_digest("r_cache_test", p**3 + p - x, p, (x,),
                                     (-1 - abs(x), 1 + abs(x)))
    assert digest == R1.digest


def test_cached_code_is_loaded_and_bound_by_digest(monkeypatch):
    cache = CodeCache(f"implicit-test-{uuid.uuid4().hex}")
    if cache.folder() is None:
        pytest.skip("the code cache is disabled")
    R1, R2 = _declare(1), _declare(2)
    at = [mpmath.mpf("0.3")]
    with mpmath.workdps(30):
        built: list = []
        first = _evaluator(R1, cache, built)
        v1, f1 = first.mp(at), first.f64([0.3])
        assert built == [R1]
        with open(cache.path("t-mp")) as fh:
            assert repr({"r_cache_test": R1.digest}) in fh.read()
        # a second evaluator with the same key loads the code: nothing is built
        again = _evaluator(R1, cache, built)
        assert again.mp(at) == v1 and np.array_equal(again.f64([0.3]), f1)
        assert built == [R1]
        assert again._gauss["mp"][0].fast is not None  # the ball integrand, cached too
        # the same name, another declaration, the same key (what a name-keyed cache would
        # confuse): with R1 no longer declared, its cached code is not bound to R2
        monkeypatch.delitem(implicit.REGISTRY, R1.digest)
        other = _evaluator(R2, cache, built)
        v2 = other.mp(at)
        assert built == [R1, R2]
        assert v2[0] != v1[0] and v2[1] != v1[1]
        r2 = mpmath.findroot(lambda t: t**3 + 2 * t - at[0], 0.1)
        assert abs(v2[0] - (r2**2 + at[0])) < mpmath.mpf(10) ** -28


MODEL = textwrap.dedent('''
    import sympy

    from replica.modeling import FixedPointModel, Parameter, gauss, implicit_root

    a, t = sympy.symbols("a t", positive=True)
    z, p, x = sympy.symbols("z p x", real=True)
    R = implicit_root("cube_like", p**3 + K * p - x, p, (x,), bracket=(-1 - abs(x), 1 + abs(x)))

    MODEL = FixedPointModel(
        "toy_implicit", title="E R(t z)^2 = a for a root R",
        residuals=[gauss(R(t * z) ** 2, z) - a], unknowns=[t],
        parameters=[Parameter("a", "the target")],
        observables={"values": {"mean_root": gauss(R(t * z + 1), z)}},
        start={t: 1}, positive_unknowns=True)
''')

NO_CODEGEN = """
import sys, sympy
def refuse(*args, **kwargs):
    raise AssertionError("code generated")
sympy.lambdify = refuse
from replica.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_model_files_implicit_code_is_cached_across_processes_and_keyed_on_contents(tmp_path):
    """Run 1 generates and stores the code; run 2, a fresh process in which ``sympy.lambdify``
    refuses to run, loads all of it and gives the same output; a changed declaration (the root
    of p^3 + 2p - x, not p^3 + p - x) gives another result from the same cache folder."""
    path = tmp_path / "toy_implicit.py"
    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=str(tmp_path / "cache"), PYTHONPATH=REPO)
    argv = ["solve", "--model", str(path), "--a", "1/10", "--dps", "20", "--json"]

    def run(k, script=None):
        path.write_text(MODEL.replace("K * p", f"{k} * p"))
        cmd = [sys.executable] + (["-c", script] if script else ["-m", "replica"]) + argv
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    first = run(1)
    assert run(1, NO_CODEGEN) == first
    changed = run(2)
    assert json.loads(changed)["order_parameters"]["t"] != json.loads(first)["order_parameters"]["t"]
    with pytest.raises(AssertionError):  # (the check can fail: a new declaration needs new code)
        assert run(3, NO_CODEGEN)


def test_a_declarations_derivation_is_remembered_by_its_contents(tmp_path, monkeypatch):
    """A :class:`SaddlePointModel` declared again (the same contents) reads whether its map
    reduces from the record of the first derivation; a changed free energy is derived again,
    and a declaration whose condition cannot be solved is refused every time (no record)."""
    from replica.modeling import ModelError, Parameter, SaddlePointModel
    from replica.symbolic import codegen
    from replica.symbolic.saddle import SaddlePoint

    monkeypatch.setattr(codegen.CodeCache, "folder", staticmethod(lambda: str(tmp_path)))
    derived: list = []
    conjugate_map = SaddlePoint.conjugate_map

    def counted(self):
        derived.append(self.free_energy)
        return conjugate_map(self)

    monkeypatch.setattr(SaddlePoint, "conjugate_map", counted)
    a = sympy.Symbol("a", positive=True)
    m, mh = sympy.symbols("m mhat", real=True)

    def declare(F):
        return SaddlePointModel("toy_saddle", free_energy=F, pairs=[(m, mh)],
                                parameters=[Parameter("a", "a")])

    F1, F2 = -m * mh + mh**2 / 2 + a * m**2 / 2, -m * mh + mh**2 / 2 + a * m**2 / 3
    first = declare(F1)
    assert derived == [F1] and first.reduced
    again = declare(F1)
    assert derived == [F1] and again.reduced and again.unknowns == first.unknowns
    assert again.fixed_point_equations == first.fixed_point_equations  # (derived when asked)
    declare(F2)
    assert derived == [F1, F2]
    for _ in range(2):
        with pytest.raises(ModelError, match="not linear"):
            declare(-m * mh + m**3 * mh / 3 + a * m**2 / 2)
