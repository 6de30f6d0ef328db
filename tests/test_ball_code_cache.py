"""The ball-arithmetic code of expressions with Gaussian integrals of a function defined by an
equation (the logistic proximal root) is kept in the code cache, so that ``--certify`` in a fresh
process loads it instead of deriving the growth envelopes and generating the ball code again
(issue 26: ~12 s of every logistic certificate's CLI call).

Checked here, each against the code built cold (no cache) in the same test:

* loaded, the code is what a cold build gives: the stored module text equals a second cold
  build's, the envelope's power and conditions are the same, and the enclosures of the values
  and of the envelope's constants are the same balls, bit for bit; the expressions are not
  built at all when the code is loaded;
* the cached code records the digest of the root's declaration and is bound to the function of
  this process with that digest: a different declaration of the same name is not given it;
* a damaged entry (a constant changed inside the stored module) is not run: the code is built
  again and gives the cold enclosures;
* a fresh process certifies a model file with such a root from the cache without deriving a
  growth envelope, with the same output as the process that built the cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import uuid

import pytest
import sympy

from replica.numerics.precision import ball_precision
from replica.symbolic import implicit
from replica.symbolic.codegen import CodeCache, Evaluator
from replica.symbolic.gaussian import gauss
from replica.symbolic.implicit import implicit_root

from conftest import REPO

z = sympy.Symbol("z", real=True)
p, w, v = sympy.symbols("p omega V", real=True)
q, V = sympy.symbols("q V_", positive=True)


def _prox(k):
    """The proximal root of the loss :math:`k \\log(1 + e^{-p})`: :math:`p - \\omega + V \\ell'(p)
    = 0` (one name for every ``k``)."""
    loss = k * sympy.log(1 + sympy.exp(-p))
    return implicit_root("prox_ball_cache_test", p - w + v * sympy.diff(loss, p), p, (w, v),
                         bracket=(w, w + k * v))


def _evaluator(R, cache, built):
    def build():
        built.append(R)
        r = R(sympy.sqrt(q) * z, V)
        return [gauss(r**2, z) + q, gauss(sympy.log(1 + sympy.exp(-r)), z)]

    return Evaluator(build=build, args=[q, V], cache=cache, name="t")


def _bits(b):
    """A ball's midpoint and radius, exactly (``==`` of balls is not equality of balls); an
    exact integer as itself."""
    if isinstance(b, int):
        return b
    return b.mid().man_exp(), b.rad().man_exp()


def _snapshot(ev):
    """The enclosures of the expressions and of every envelope constant at a box, the envelopes'
    powers and conditions."""
    import flint

    box = [flint.arb("1.5", "1e-20"), flint.arb("0.75", "1e-20")]
    with ball_precision(30):
        values = [_bits(b) for b in ev.arb(box)]
        gs = ev._gauss["arb"]
        args = list(box) + ev.gaussian_values("arb", box)
        envelopes = [[_bits(e) for e in g.envelope(*args[:len(box) + k])]
                     for k, g in enumerate(gs)]
    return values, envelopes, [(int(g.power.p), int(g.power.q), g.conditions) for g in gs]


def _renamed(source):
    """``source`` with SymPy's dummy symbols numbered in order of appearance (their numbers
    count the dummies made before in the process: the same code, other names)."""
    names: dict = {}
    return re.sub(r"_?Dummy_\d+", lambda m: names.setdefault(m.group(0), f"_D{len(names)}"),
                  source)


def _new_cache():
    cache = CodeCache(f"ball-cache-test-{uuid.uuid4().hex}")
    if cache.folder() is None:
        pytest.skip("the code cache is disabled")
    return cache


def test_loaded_ball_code_is_the_cold_code_bit_for_bit():
    R = _prox(1)
    cold = _snapshot(_evaluator(R, None, []))
    cache, built = _new_cache(), []
    first = _snapshot(_evaluator(R, cache, built))
    assert first == cold and built == [R]
    path = cache.path("t-arb")
    with open(path) as fh:
        stored = fh.read()
    assert repr({"prox_ball_cache_test": R.digest}) in stored
    loaded = _evaluator(R, cache, built)
    assert _snapshot(loaded) == cold
    assert built == [R]  # loaded: neither the expressions nor the envelopes built
    # the same code from a second cold build, stored under another key
    other = _new_cache()
    _snapshot(_evaluator(R, other, []))
    with open(other.path("t-arb")) as fh:
        again = fh.read()
    assert _renamed(again.split("\n", 1)[1]) == _renamed(stored.split("\n", 1)[1])


def test_cached_ball_code_is_not_given_to_another_declaration(monkeypatch):
    """The key is the caller's (a model file's contents: here one for both); the root's own
    contents are its digest, recorded in the code. With the first declaration gone, the code
    stored for it is not bound to a second one of the same name: built again, other values."""
    R1, R2 = _prox(1), _prox(2)
    cache, built = _new_cache(), []
    values1 = _snapshot(_evaluator(R1, cache, built))[0]
    monkeypatch.delitem(implicit.REGISTRY, R1.digest)
    got = _snapshot(_evaluator(R2, cache, built))
    assert built == [R1, R2]
    assert got == _snapshot(_evaluator(R2, None, []))
    assert got[0] != values1


def test_a_damaged_entry_is_built_again_not_run():
    R = _prox(1)
    cold = _snapshot(_evaluator(R, None, []))
    cache, built = _new_cache(), []
    _snapshot(_evaluator(R, cache, built))
    path = cache.path("t-arb")
    with open(path) as fh:
        text = fh.read()
    # the envelope's power of the first integral, (P, 1), made (P + 7, 1): valid Python whose
    # bound would be another (a rerun of a file with the seal unchecked gives other balls)
    head, body = text.split("\n", 1)

    found = re.search(r"gauss_P_0 = \((-?\d+), 1\)", body)
    assert found
    damaged = body.replace(found.group(0), f"gauss_P_0 = ({int(found.group(1)) + 7}, 1)")
    with open(path, "w") as fh:
        fh.write(head + "\n" + damaged)
    again = _evaluator(R, cache, built)
    assert _snapshot(again) == cold
    assert built == [R, R]  # rebuilt
    with open(path) as fh:  # and stored again, sealed
        assert _renamed(fh.read().split("\n", 1)[1]) == _renamed(body)


MODEL = textwrap.dedent('''
    import sympy

    from replica.modeling import FixedPointModel, Parameter, gauss, implicit_root

    a, t = sympy.symbols("a t", positive=True)
    z, p, w, v = sympy.symbols("z p omega V", real=True)
    R = implicit_root("prox_ball_cache_model", p - w + v * sympy.diff(sympy.log(1 + sympy.exp(-p)), p),
                      p, (w, v), bracket=(w, w + v))

    MODEL = FixedPointModel(
        "toy_ball_cache", title="E R(t z, 1)^2 = a for a proximal root R",
        residuals=[gauss(R(t * z, 1) ** 2, z) - a], unknowns=[t],
        parameters=[Parameter("a", "the target")],
        observables={"values": {"mean_root": gauss(R(t * z + 1, 1), z)}},
        start={t: 1}, positive_unknowns=True)
''')

NO_ENVELOPES = """
import sys
from replica.symbolic import codegen, gaussian
def refuse(*args, **kwargs):
    raise AssertionError("ball code built again")
gaussian.growth_envelope = refuse
codegen._arb_gaussians = refuse
from replica.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_fresh_process_certifies_from_the_cache(tmp_path):
    """Run 1 builds and stores the ball code; run 2, a fresh process in which deriving a growth
    envelope or building ball integrands raises, certifies from the cache: the same output."""
    path = tmp_path / "toy_ball_cache.py"
    path.write_text(MODEL)
    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE=str(tmp_path / "cache"), PYTHONPATH=REPO)
    argv = ["solve", "--model", str(path), "--a", "1/2", "--dps", "20", "--certify", "--json"]

    def run(script=None):
        cmd = [sys.executable] + (["-c", script] if script else ["-m", "replica"]) + argv
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    first = run()
    assert '"certified": true' in first
    assert run(NO_ENVELOPES) == first
