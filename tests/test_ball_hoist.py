"""The ball integrands with their parts free of the variable hoisted (job certjac2, issue 29):
``codegen._arb_hoisted`` evaluates the sub-expressions of a Gaussian integrand that depend on
neither :math:`z` nor a switch once per integral, and the integrand takes their balls.

Checked against values computed here, independently of the engine:

* :math:`\\mathbb E_z[\\sqrt q\\,z\\,\\operatorname{erfc}(az)]`, :math:`a = m/\\sqrt{q - m^2}`,
  is :math:`-2a\\sqrt q/\\sqrt{\\pi(1 + 2a^2)}` (Stein's identity :math:`\\mathbb E[zg(z)] =
  \\mathbb E[g'(z)]` and :math:`\\mathbb E[e^{-a^2z^2}] = (1 + 2a^2)^{-1/2}`), evaluated by mpmath
  at 60 digits: the enclosure over exact arguments and over argument balls (the closed form at
  the box's corners) contains it, and its hoisted parts are used -- perturbed by a relative
  :math:`2^{-70}` (planted) the enclosure misses it;
* ``replica solve --certify`` of the perceptron capacity at kappa = 0 (40 digits) proves
  :math:`\\alpha_c = 2` exactly as the Gardner volume gives it, through hoisted integrands;
  with their hoisted balls perturbed (planted) it does not.
"""

from __future__ import annotations

import itertools
import os

import mpmath
import pytest
import sympy

flint = pytest.importorskip("flint")

from replica.numerics.precision import ball_precision  # noqa: E402
from replica.symbolic import codegen  # noqa: E402
from replica.symbolic.codegen import Evaluator  # noqa: E402
from replica.symbolic.gaussian import gauss  # noqa: E402

from conftest import REPO  # noqa: E402

z = sympy.Symbol("z", real=True)
q, m = sympy.symbols("q m", positive=True)


def _closed_form(qv, mv):
    """:math:`-2a\\sqrt q/\\sqrt{\\pi(1 + 2a^2)}`, :math:`a = m/\\sqrt{q - m^2}` (mpmath)."""
    a = mv / mpmath.sqrt(qv - mv**2)
    return -2 * a * mpmath.sqrt(qv) / mpmath.sqrt(mpmath.pi * (1 + 2 * a**2))


def _evaluator():
    expr = gauss(sympy.sqrt(q) * z * sympy.erfc(m * z / sympy.sqrt(q - m**2)), z)
    return Evaluator(build=lambda: [expr], args=[q, m], cache=None, name="hoist_test")


def _perturbed(pre):
    """A planted error: every hoisted ball times ``1 + 2**-70``."""
    def wrong(*args):
        return [v * (1 + flint.arb(2) ** -70) for v in pre(*args)]

    return wrong


def _contains(ball, value) -> bool:
    return ball.contains(flint.arb(mpmath.nstr(value, 55)))


def test_hoisted_integral_contains_closed_form_and_a_perturbed_part_misses():
    ev = _evaluator()
    with mpmath.workdps(60):
        truth = _closed_form(mpmath.mpf(3) / 2, mpmath.mpf(7) / 10)
        eps = mpmath.mpf("1e-25")
        corners = [_closed_form(mpmath.mpf("1.5") + sq * eps, mpmath.mpf("0.7") + sm * eps)
                   for sq, sm in itertools.product((-1, 1), (-1, 1))]
    with ball_precision(30):  # (the balls made at this precision: 7/10 is not a binary)
        qs = (flint.arb(3) / 2, flint.arb(7) / 10)
        ms = (flint.arb("1.5", "1e-25"), flint.arb("0.7", "1e-25"))
        exact = ev.arb(list(qs))[0]
        g = ev._gauss["arb"][0]
        assert g.pre is not None  # (the integrand's z-free parts are hoisted)
        assert _contains(exact, truth)
        assert exact.rad() < flint.arb("1e-27")  # (not vacuous)
        box = ev.arb(list(ms))[0]
        assert all(_contains(box, v) for v in corners)
        honest = g.pre
        g.pre = _perturbed(honest)
        try:
            planted = ev.arb(list(qs))[0]
        finally:
            g.pre = honest
        assert not _contains(planted, truth)


@pytest.mark.slow
def test_capacity_certificate_proves_two_and_not_with_perturbed_hoisted_parts(
        monkeypatch, tmp_path):
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    from replica.modeling import load_model_file
    from replica.numerics.driver import solve_params

    problem = load_model_file(os.path.join(REPO, "examples", "perceptron_capacity.py"))
    params = problem.schema.parse({"kappa": "0"})
    hoisted = []
    honest_gauss_arb = codegen._gauss_arb

    def counting(g, values, plan=None):
        hoisted.append(g.pre is not None)
        return honest_gauss_arb(g, values, plan)

    def proves_two() -> bool:
        out = solve_params(problem, params, dps=40, certify=True)
        cert = out.certificate
        if cert is None or not cert.certified:
            return False
        two = flint.arb(2)
        return all(cert.enclosures[k].contains(two) for k in ("alpha", "alpha_c"))

    monkeypatch.setattr(codegen, "_gauss_arb", counting)
    assert proves_two()
    assert hoisted and all(hoisted)

    def planted(g, values, plan=None):
        if g.pre is None:
            return honest_gauss_arb(g, values, plan)
        honest, g.pre = g.pre, _perturbed(g.pre)
        try:
            return honest_gauss_arb(g, values, plan)
        finally:
            g.pre = honest

    monkeypatch.setattr(codegen, "_gauss_arb", planted)
    assert not proves_two()
