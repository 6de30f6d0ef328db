r"""Bayes-optimal real phase retrieval: the noiseless absolute-value channel :math:`y = |u|` with a
Gaussian teacher, declared from its parts with :func:`replica.glm.BayesOptimal`
(``AbsoluteValue(0)``), and its three thresholds.

Setting: a teacher :math:`w^*` with i.i.d. :math:`N(0, 1)` entries (:math:`\rho = 1`),
:math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)` and labels
:math:`y_\mu = |x_\mu\cdot w^*/\sqrt d|`; the student is the Bayes posterior. The free entropy
:math:`\Phi = \operatorname{extr}_{m, \hat m}[-\tfrac12m\hat m + \psi_{P_0}(\hat m)
+ \alpha\Psi_{\rm out}(m)]` (stated: Barbier, Krzakala, Macris, Miolane and Zdeborova, PNAS
2019) is derived from the parts (``replica equations --model examples/phase_retrieval.py``):
:math:`\psi_{P_0} = \tfrac12(\hat m - \log(1 + \hat m))`, and with :math:`V = 1 - m`,
:math:`Z_{\rm out}(y) = N(y; \omega, V) + N(-y; \omega, V)` on :math:`y > 0`, folded to
:math:`e^{-(y^2 + \omega^2)/(2V)}\,2\cosh(y\omega/V)/\sqrt{2\pi V}`, so that

.. math::
    \Psi_{\rm out}(m) = -\tfrac12\log(2\pi V) - \frac{1 + m}{2V}
        + \mathbb E_{\xi, w}\log 2\cosh\frac{u\omega}V,\qquad
    \omega = \sqrt m\,\xi,\ u = \omega + \sqrt Vw,

a two-dimensional Gaussian integral, which the derivation reduces to one dimension (the
engine evaluates that form; the steps are ``glm_channel_quadratic_form``, ``glm_channel_radial``,
``glm_channel_average``): :math:`X = u\omega/V` is a quadratic form of :math:`(\xi, w)` with
eigenvalues :math:`(m \pm \sqrt m)/(2V)`, so in polar coordinates :math:`X = 2s\,c(\varphi)`,
:math:`c(\varphi) = (m + \sqrt m\cos\varphi)/(2V)`, :math:`s \sim {\rm Exp}(1)`,
:math:`\varphi` uniform on :math:`[0, \pi]`; the average over :math:`s` is the digamma
expression :math:`G(a) = 2a + \log 2 - \tfrac12[\psi(1 + \tfrac1{8a}) - \psi(\tfrac12 +
\tfrac1{8a})]` at :math:`a = |c|`, and the angle, split at the zero of :math:`c` (where
:math:`G(|c|)` is smooth but not analytic), is mapped side by side to a Gaussian variable, one
one-dimensional Gaussian integral with a smooth integrand (``_psi_out_abs`` in
``replica/glm/builders.py``). The two forms agree to :math:`10^{-25}` at :math:`m = 0.85` (the engine's
30-digit value against nested ``mpmath.quad`` of :math:`\int dy\,Z_{\rm out}\log Z_{\rm
out}`, a slow test). The stationarity conditions are :math:`m = \hat m/(1
+ \hat m)` and :math:`\hat m = 2\alpha\Psi_{\rm out}'(m)`; along the branch of fixed points,
parametrised by :math:`m`, :math:`\hat m = m/(1 - m)` and

.. math::  \alpha(m) = \frac{m}{(1 - m)\,h(m)},\qquad h(m) = 2\Psi_{\rm out}'(m).

**The weak-recovery threshold** :math:`\alpha_{\rm WR} = 1/2`. :math:`m = 0` is a fixed point
for every :math:`\alpha` (:math:`\Psi_{\rm out}'(0) = 0`: the channel is blind to the sign of
:math:`w^*`); it is stable while :math:`\alpha\,h'(0)\,\partial_{\hat m}m(0) < 1`.
:func:`weak_recovery_threshold` derives this from the model's free entropy by SymPy: the
integrand's Heaviside functions (of :math:`|X|`, :math:`X = u\omega/V`) are replaced by signs
:math:`\sigma`, the integrand expanded in :math:`s = \sqrt m` to order :math:`s^4` with
:math:`\sigma^2 = 1` (the expansion must come out free of :math:`\sigma`: it is that of the
smooth :math:`\log 2\cosh X`, so the Heaviside functions' own dependence on :math:`m` adds
nothing), averaged by the Gaussian moments; the result is
:math:`\Psi_{\rm out} = \Psi_{\rm out}(0) + \tfrac12 m^2 + O(m^3)` and
:math:`\alpha_{\rm WR} = 1/2` exactly, the published value (Barbier et al. 2019; Mondelli and
Montanari 2018: :math:`\alpha_{\rm WR}^{-1} = \mathbb E(y^2 - 1)^2 = 2`).

**The information-theoretic threshold** :math:`\alpha_{\rm IT} = 1` (stated, Barbier et al.
2019; derived here to leading order): near perfect recovery, :math:`V \to 0`, the prior's part
of the potential is :math:`-\tfrac12m\hat m + \psi_{P_0} = \tfrac m2 + \tfrac12\log V` at
:math:`\hat m = m/V`, and :math:`\Psi_{\rm out} = -\tfrac12\log V + O(1)` (the terms of order
:math:`1/V` cancel: :math:`\mathbb E|u\omega| = m + O(V)`, :math:`(1 + m)/2 - m = V/2`), so the
potential is :math:`\tfrac12(1 - \alpha)\log V + O(1)`: for :math:`\alpha > 1` it diverges to
:math:`+\infty` at :math:`m \to 1` and the posterior concentrates on the teacher (MMSE 0); for
:math:`\alpha < 1` it goes to :math:`-\infty` and the equilibrium is the branch :math:`m < 1`.
``tests/test_phase_retrieval.py`` checks the slope :math:`\tfrac12(1 - \alpha)` against the
engine's channel term at small :math:`V`. The perfect-recovery point :math:`m = 1` itself
(:math:`V = 0`) is singular (the free entropy is infinite): it is not a saddle point the engine
solves, and ``alpha`` is declared in :math:`(1/2, 1)`, where the equilibrium is the branch
:math:`0 < m < 1` (exit 2 outside: at :math:`\alpha \le 1/2` the overlap is :math:`m = 0`, MMSE
1, a boundary point the positive unknowns exclude; at :math:`\alpha \ge 1` the MMSE is 0).

**The algorithmic threshold** :math:`\alpha_{\rm alg} = 1.128471406672172261283062`
(25 digits; published 1.13, Barbier et al. 2019): approximate message passing from an
uninformative start follows the branch :math:`m < 1` (metastable for :math:`1 < \alpha`),
which ends at a fold, the maximum of :math:`\alpha(m)`, at :math:`m = 0.846646\ldots`; above
it the state evolution runs to :math:`m = 1`. It is the declared transition ``alpha-alg``
(a spinodal of the branch :math:`m < 1`):

    replica transition --model examples/phase_retrieval.py --name alpha-alg --dps 25

Newton's method on the fold's augmented system (the saddle-point equations and the determinant
of their Jacobian, exact third derivatives of the one-dimensional form) at 35 and 52 digits,
which agree to 25 digits (:data:`ALPHA_ALG`); 3.6 minutes of CPU time, code generation
included, on a loaded 2-core machine. ``tests/test_phase_retrieval.py`` checks it against the
fold located from an mpmath evaluation of the polar form written in the test (its angle by
tanh-sinh quadrature, its derivatives by numerical differentiation, the secant method on
:math:`m(1 - m)\Psi_{\rm out}'' = \Psi_{\rm out}'`) to :math:`10^{-22}`, and
:func:`algorithmic_threshold` (float64 bisection on :math:`\alpha'(m) = 0`, 1.1284714066721666)
to :math:`10^{-13}`; the golden-section maximum of the Nishimori state evolution written by
hand in two dimensions agrees to :math:`10^{-7}` (its 12-digit search) and the published 1.13.
So that the fold can be located, ``alpha`` is declared in :math:`(1/2, 6/5)`: for
:math:`\alpha \ge 1` the saddle point solved is the metastable branch :math:`m < 1` (the
equilibrium there, perfect recovery, has no saddle point to solve), and it exists only up to
:math:`\alpha_{\rm alg}`.

Solving: :func:`overlap_float64` is the float64 solution by the engine's float64 solver
(status ``converged``: with a one-dimensional channel term the float64 point gets the engine's
extended-precision error estimate; it was ``not-verified`` while two-dimensional); it equals the hand-written state evolution's fixed point to
:math:`10^{-12}` at :math:`\alpha = 0.8, 0.95`. The float64 *value* of the channel term, which
the former two-dimensional tensor-product rule had only to :math:`6\cdot 10^{-9}` at
:math:`m = 0.85`, now agrees with the 30-digit mpmath value to :math:`2\cdot 10^{-16}` at
:math:`m = 0.2, 0.6, 0.85` (the float64 free entropy is no longer limited to 8 digits).
A command-line solve of the mpmath path (``replica solve --model examples/phase_retrieval.py
--alpha 4/5 --dps 20``) had still not finished after 6.5 minutes of CPU time although one
evaluation of the map costs 0.04 s at 15 digits: not investigated (left open).
The derived equations are shown by

    replica equations --model examples/phase_retrieval.py
"""

from __future__ import annotations

from fractions import Fraction

import sympy

from replica.capabilities import Branch, Transition
from replica.glm import AbsoluteValue, BayesOptimal, Gaussian
from replica.modeling import Domain, ModelError, Parameter

ALPHA = Parameter("alpha", "samples per dimension",
                  domain=Domain(lower=Fraction(1, 2), upper=Fraction(6, 5), upper_open=True,
                                describe="must lie in (1/2, 6/5): at alpha <= 1/2 the overlap of "
                                         "noiseless phase retrieval is m = 0 (no weak "
                                         "recovery, MMSE 1); the saddle point solved is the "
                                         "branch m < 1, the equilibrium for alpha < 1 and "
                                         "metastable above 1 (the equilibrium there is perfect "
                                         "recovery, m = 1, V = 0, no saddle point to solve), "
                                         "which ends at alpha_alg = 1.1284714..."))

MODEL = BayesOptimal("phase_retrieval", prior=Gaussian(), channel=AbsoluteValue(0),
                     parameters=[ALPHA],
                     title="Bayes-optimal real phase retrieval (noiseless absolute-value "
                           "channel y = |u|), Gaussian teacher prior")
"""Bayes-optimal real phase retrieval, y = |u|, Gaussian prior."""

# Perfect recovery m = 1 (V = 0) for alpha >= 1: its free entropy is +oo (a continuous prior
# concentrated on the teacher), so `replica solve` reports the m < 1 solution there as metastable.
BRANCHES = [Branch("m = 1", free_energy="oo", when=("alpha >= 1",))]

# --- transitions --- (replica transition --model examples/phase_retrieval.py --name NAME)
TRANSITIONS = [
    Transition(
        "alpha-alg", quantity="m", vary="alpha", kind="spinodal", guess="1.12",
        between=("1.05", "1.19"), branches=(Branch("m < 1", start={"m": "0.8"}),),
        definition="algorithmic threshold alpha_alg: the fold (spinodal) where the branch "
                   "m < 1 of the state evolution ends, the maximum of alpha(m) = "
                   "m/((1 - m) h(m))"),
]

ALPHA_WR_PUBLISHED = Fraction(1, 2)
ALPHA_IT_PUBLISHED = Fraction(1)
ALPHA_ALG_PUBLISHED = "1.13"
"""The published thresholds (Barbier, Krzakala, Macris, Miolane and Zdeborova, PNAS 2019)."""

ALPHA_ALG = "1.128471406672172261283062"
"""alpha_alg as located by ``replica transition --name alpha-alg --dps 25`` (25 digits: the fold
located at 35 and at 52 digits agrees to them), checked against the hand-written fold of the
polar form to 1e-22 (tests/test_phase_retrieval.py)."""


def _symbols():
    byname = {s.name: s for s in MODEL.free_energy.free_symbols}
    return byname["alpha"], byname["m"], byname["mhat"]


def channel_term():
    r""":math:`\Psi_{\rm out}(m) = \partial\Phi/\partial\alpha`, from the model's free entropy."""
    alpha, _, _ = _symbols()
    return sympy.diff(MODEL.free_energy, alpha)


def channel_term_two_dimensional():
    r""":math:`\Psi_{\rm out}(m)` in its two-dimensional form, :math:`\mathbb E_{\xi, w}` of
    :math:`\log Z_{\rm out}(u)` (the derivation's step ``glm_channel_two_dimensional``, before
    the polar reduction to the one-dimensional form the engine evaluates): a polynomial in the
    integration variables and :math:`|X|`, which :func:`weak_recovery_threshold` expands at
    :math:`m = 0`."""
    step = next(s for s in MODEL.derivation.steps() if s.name == "glm_channel_two_dimensional")
    return step.objects["Psi_out_2d"].rhs


def prior_overlap():
    r""":math:`m(\hat m) = 2\partial_{\hat m}(\Phi + m\hat m/2)`, the prior's stationarity
    condition solved for :math:`m`, from the model's free entropy."""
    alpha, m, mhat = _symbols()
    return sympy.simplify(2 * sympy.diff(MODEL.free_energy + m * mhat / 2, mhat))


def _series_in_m(expr, m, order=2):
    r"""The expansion of ``expr`` (closed terms and nested Gaussian integrals) in :math:`m` at 0
    to ``order``: each integrand with its Heaviside functions replaced by
    :math:`(1 + \sigma)/2`, expanded in :math:`s = \sqrt m`, :math:`\sigma^2 = 1`; the result must
    be free of the signs (else a :class:`ModelError`) and polynomial in the integration
    variables, averaged by the Gaussian moments."""
    from replica.glm import calculus
    from replica.symbolic.gaussian import GaussianIntegral

    s = sympy.Symbol("s", positive=True)

    def integrand_series(f, variables):
        heavisides = sorted(f.atoms(sympy.Heaviside), key=sympy.default_sort_key)
        sig = sympy.symbols(f"sigma0:{len(heavisides)}", real=True)
        f = f.xreplace({h: (1 + g) / 2 for h, g in zip(heavisides, sig)})
        ser = sympy.series(f.xreplace({m: s**2}), s, 0, 2 * order + 1).removeO()
        ser = sympy.expand(ser)
        for g in sig:  # sigma^2 = 1
            ser = sympy.expand(ser.replace(lambda e: e.is_Pow and e.base == g,
                                           lambda e: g ** (int(e.exp) % 2)))
        if any(ser.has(g) for g in sig):
            raise ModelError("the expansion at m = 0 depends on the sides of a kink")
        for v in variables:
            ser = calculus.expect(ser, v)
        return ser

    def walk(e):
        if isinstance(e, GaussianIntegral):
            inner, variables = e, []
            while isinstance(inner, GaussianIntegral):
                variables.append(inner.variable)
                inner = inner.integrand
            return integrand_series(inner, variables)
        if e.args and e.has(GaussianIntegral):
            return e.func(*[walk(a) for a in e.args])
        return e.xreplace({m: s**2})

    total = sympy.series(sympy.expand(walk(sympy.expand(expr))).xreplace({m: s**2}), s, 0,
                         2 * order + 1).removeO()
    return sympy.expand(total.xreplace({s: sympy.sqrt(m)}))


def weak_recovery_threshold():
    r""":math:`\alpha_{\rm WR}`, derived from the expansion at :math:`m = 0` of the channel
    term's two-dimensional form (:func:`channel_term_two_dimensional`; module docstring):
    :math:`\Psi_{\rm out} = c_0 + c_1m + c_2m^2 + O(m^3)` with :math:`c_1 = 0` (checked),
    :math:`\hat m = 2\alpha\Psi_{\rm out}' = 4\alpha c_2m + O(m^2)`, and the prior's
    :math:`m(\hat m) = m'(0)\hat m + O(\hat m^2)`: the linearised map :math:`m \to 4\alpha c_2
    m'(0)m` loses stability at :math:`\alpha_{\rm WR} = 1/(4c_2m'(0))`. Returns
    ``(alpha_WR, c_2)`` as SymPy numbers."""
    _, m, mhat = _symbols()
    psi = _series_in_m(channel_term_two_dimensional(), m, order=2)
    c1, c2 = psi.coeff(m, 1), psi.coeff(m, 2)
    if sympy.simplify(c1) != 0:
        raise ModelError(f"Psi_out'(0) = {c1}: m = 0 is not a fixed point")
    slope = sympy.limit(sympy.diff(prior_overlap(), mhat), mhat, 0)
    return sympy.nsimplify(sympy.simplify(1 / (4 * c2 * slope))), sympy.simplify(c2)


def branch_alpha():
    r"""``(alpha(m), alpha'(m))`` along the branch of fixed points (module docstring) as SymPy
    expressions in :math:`m`: :math:`\hat m(m)` solved from the prior's condition, then
    :math:`\alpha = \hat m/(2\Psi_{\rm out}'(m))`."""
    _, m, mhat = _symbols()
    sols = sympy.solve(sympy.Eq(prior_overlap(), m), mhat)
    if len(sols) != 1:
        raise ModelError(f"the prior's condition has {len(sols)} solutions for mhat")
    a = sols[0] / (2 * sympy.diff(channel_term(), m))
    return a, sympy.diff(a, m)


def algorithmic_threshold(lo=0.75, hi=0.95, tol=1e-13):
    r"""``(alpha_alg, m_alg)``: the fold of the branch :math:`m < 1`, the maximum of
    :math:`\alpha(m)` on ``[lo, hi]``, by bisection on the sign of :math:`\alpha'(m)`, both
    evaluated by the engine's float64 code (:class:`~replica.symbolic.codegen.Evaluator`) of the
    derived expressions; float64, so about 13 digits at best (module docstring)."""
    from replica.symbolic.codegen import Evaluator

    _, m, _ = _symbols()
    a, da = branch_alpha()
    ev = Evaluator([a, da], [m])

    def at(x):
        return [float(v) for v in ev.f64([float(x)])]

    if not (at(lo)[1] > 0 > at(hi)[1]):
        raise ModelError(f"alpha'(m) does not change sign on [{lo}, {hi}]")
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if at(mid)[1] > 0:
            lo = mid
        else:
            hi = mid
    mstar = (lo + hi) / 2
    return at(mstar)[0], mstar


def overlap_float64(alpha):
    """The overlap m at ``alpha`` by the engine's float64 solver, and its status."""
    import numpy as np

    from replica.numerics.driver import solve_float64

    r = solve_float64(MODEL.problem, alpha=np.array([float(alpha)]))
    return float(r["m"][0]), str(r["status"][0])
