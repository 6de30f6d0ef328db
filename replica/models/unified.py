r"""The one free energy of the ICL model for any training task covariance, as a SymPy object: the
source of the saddle-point equations of all three built-in models.

The model (both papers' model, in one parameterisation; its replica computation is
:mod:`replica.derivations.unified`, which derives this object and checks that it is
:data:`FREE_ENERGY`): :math:`n = \tau D^2` prompts with tasks drawn from :math:`\kappa D` fixed
training tasks, a context of :math:`\alpha D` pairs, label noise of standard deviation
:math:`\sigma`, linear attention trained by ridge :math:`\frac{\lambda\kappa D}2\|\Gamma\|_F^2`.
The empirical task covariance :math:`S` enters through its Stieltjes transform
:math:`g(z) = \langle 1/(s - z)\rangle` (kept abstract) and its power :math:`c = \langle s\rangle
= \operatorname{tr}S/D`:

.. math::
    f = \operatorname*{extr}\Big\{\frac{\tau}{2\kappa}\frac{c+\sigma^2-2m+q+\varepsilon\bar q}
        {1+\chi+\varepsilon\bar\chi} - \frac{\hat qq}2 - \frac{\hat{\bar q}\bar q}2 + \hat mm
        + \frac{\hat\chi\chi}2 + \frac{\hat{\bar\chi}\bar\chi}2
        - \frac1{2\hat q}\Big[\hat m^2(c+z+z^2g) + \frac{\hat\chi}\kappa(1+zg)
        + \frac{\hat{\bar\chi}}\kappa g\Big]\Big\},

:math:`\varepsilon = (c+\sigma^2)/\alpha`, :math:`z = -(\lambda+\hat{\bar q})/\hat q` (an alias).

**Instances** (each solver's equations are computed from :data:`FREE_ENERGY`):

* :mod:`replica.models.lowrank`: (R1) is :data:`FREE_ENERGY` at :math:`c = 1`;
* :mod:`replica.models.alignment` (paper A): :math:`g` the deterministic equivalent of the
  empirical covariance of the training tasks, :math:`z = -\sigma_A`; its ridge equation,
  :math:`q`, :math:`e_{\rm scalar}`, :math:`K` and :math:`E_{\rm ICL}` are computed from
  :data:`SADDLE` and :func:`test_overlaps` there;
* :mod:`replica.models.isotropic` (paper B): paper A's instance at :math:`C = I`.

**Test overlaps** (:func:`direction_moments`, :func:`test_overlaps`). The derived equations for
:math:`m = w^\top\Gamma w/D` and :math:`q = w^\top\Gamma^\top\Gamma w/D` are spectral averages
weighted by the task power :math:`s` of each eigen-direction of :math:`S`, and the one for
:math:`\bar q = \operatorname{tr}\Gamma^\top\Gamma/D` the same second moment with weight 1:
:math:`m = \langle s\,\bar m(s)\rangle`, :math:`q = \langle s\,Y(s)\rangle`, :math:`\bar q =
\langle Y(s)\rangle` (the last is checked, not assumed). A test task :math:`w\sim N(0, C)`
weighs the direction by :math:`\gamma`, the diagonal entry of :math:`C` in the eigenbasis of
:math:`S`: :math:`m_C = \langle\gamma\bar m(s)\rangle`, :math:`q_C = \langle\gamma Y(s)\rangle`,
written with :math:`g_C(z) = \langle\gamma/(s-z)\rangle` and :math:`c_C = \langle\gamma\rangle`;
the error of a prompt of length :math:`\tilde\alpha D` with noise :math:`\tilde\sigma` is
:math:`\tilde\sigma^2 + c_C - 2m_C + q_C + \frac{c_C+\tilde\sigma^2}{\tilde\alpha}\bar q`
(:func:`test_error`). The replica derivation computes the same overlaps from the
replica-symmetric measure of the weights and checks that they equal these.
"""

from __future__ import annotations

import functools

import sympy

from ..symbolic.replica_calculus import stieltjes_form
from ..symbolic.saddle import Alias, SaddlePoint, spectral_family
from ..symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage

# ---------------------------------------------------------------------------------------------
# Symbols
# ---------------------------------------------------------------------------------------------
alpha, tau, kappa, alpha_test = sympy.symbols("alpha tau kappa alpha_test", positive=True)
lam, sigma, sigma_test = sympy.symbols("lambda sigma sigma_test", nonnegative=True)
c_train = sympy.Symbol("c", positive=True)
r"""The task power :math:`c = \langle s\rangle = \operatorname{tr}S/D` (1 in the low-rank paper)."""
c_C = sympy.Symbol("c_C", positive=True)
r"""The test power :math:`\langle\gamma\rangle = \operatorname{tr}C/D`."""

q, m, chi, qbar, chibar = sympy.symbols("q m chi qbar chibar", real=True)
qhat, mhat, chihat, qbarhat, chibarhat = sympy.symbols("qhat mhat chihat qbarhat chibarhat",
                                                       real=True)
z = sympy.Symbol("z", real=True)

ORDER_PARAMETERS = (q, m, chi, qbar, chibar)
"""The unknowns of the closed fixed-point map, in this order."""
CONJUGATES = (qhat, mhat, chihat, qbarhat, chibarhat)
PAIRS = ((q, qhat), (m, mhat), (qbar, qbarhat), (chi, chihat), (chibar, chibarhat))
"""Each order parameter with its conjugate."""

G = spectral_family("g")
"""g, g', g'', ...: the Stieltjes transform of the empirical task covariance S (abstract)."""
GC = spectral_family("g_C", "g_{C}")
r""":math:`g_C(z) = \langle\gamma/(s-z)\rangle` and its derivatives (abstract)."""

s = LAMBDA_I
"""An eigenvalue of S (the summation variable of the spectral averages)."""
gamma = MU_I
"""The diagonal entry of a test task covariance in the eigenbasis of S."""

# ---------------------------------------------------------------------------------------------
# The free energy
# ---------------------------------------------------------------------------------------------
EPS = (c_train + sigma**2) / alpha
"""epsilon = (c + sigma^2)/alpha: the context fluctuation per direction (the implicit ridge of a
finite context)."""
E_TR = c_train + sigma**2 - 2 * m + q + EPS * qbar
"""E_tr = c + sigma^2 - 2m + q + epsilon qbar (the error on a pretraining prompt)."""
V = chi + EPS * chibar
DELTA = 1 + V
Z_DEFINITION = -(lam + qbarhat) / qhat
"""z = -(lambda + qbarhat)/qhat (an alias in the free energy)."""

FREE_ENERGY = (tau / (2 * kappa) * E_TR / DELTA - qhat * q / 2 - qbarhat * qbar / 2 + mhat * m
               + chihat * chi / 2 + chibarhat * chibar / 2
               - 1 / (2 * qhat) * (mhat**2 * (c_train + z + z**2 * G[0](z))
                                   + chihat / kappa * (1 + z * G[0](z))
                                   + chibarhat / kappa * G[0](z)))
"""The unified replica-symmetric free energy (task power c, transform g abstract): the one typed
copy; :mod:`replica.derivations.unified` derives it from the replica calculus and checks equality
with this object."""

SADDLE = SaddlePoint(FREE_ENERGY, PAIRS, [Alias(z, Z_DEFINITION, lam)], name="f")
"""Stationarity and fixed-point form of :data:`FREE_ENERGY` (:mod:`replica.symbolic.saddle`)."""


@functools.lru_cache(maxsize=None)
def fixed_point_equations() -> dict:
    """``{variable: rhs}``: the ten saddle-point equations derived from :data:`FREE_ENERGY`."""
    return dict(SADDLE.fixed_point)


# ---------------------------------------------------------------------------------------------
# Per-direction moments and the test overlaps
# ---------------------------------------------------------------------------------------------
def as_average(expr) -> sympy.Expr:
    r"""``expr``, affine in :math:`c` and the transforms :math:`g^{(k)}(z)` with coefficients free
    of :math:`s`, as one spectral average: :math:`c = \langle s\rangle`, :math:`g^{(k)}(z) =
    \langle k!/(s-z)^{k+1}\rangle` and :math:`a = \langle a\rangle`, by linearity.
    ``ValueError`` if ``expr`` is not affine in them."""
    expr = sympy.sympify(expr)
    gens = [c_train] + sorted({f for f in expr.atoms(sympy.Function)
                               if isinstance(f, tuple(G[k] for k in range(4)))}, key=str)
    dummies = sympy.symbols(f"u0:{len(gens)}")
    lin = sympy.expand(sympy.together(expr).xreplace(dict(zip(gens, dummies))))
    num, den = sympy.fraction(sympy.together(lin))
    if any(den.has(d) for d in dummies) or sympy.Poly(num, *dummies).total_degree() > 1:
        raise ValueError(f"not affine in the spectral moments: {expr}")
    rep = {c_train: s}
    for k in range(4):
        rep[G[k](z)] = sympy.factorial(k) / (s - z) ** (k + 1)
    return SpectralAverage(sympy.cancel(expr.xreplace(rep)))


@functools.lru_cache(maxsize=None)
def direction_moments() -> dict:
    r"""``{"mean": mbar(s), "second": Y(s)}``: the mean and the second moment of the weights along
    an eigen-direction of :math:`S` with eigenvalue :math:`s`, computed from the derived
    equations: the summands of :math:`m` and :math:`q` (:func:`as_average`) divided by their
    weight :math:`s`. ``ValueError`` unless the summand of :math:`\bar q` (weight 1) is the same
    second moment."""
    fp = fixed_point_equations()
    mean = sympy.cancel(as_average(fp[m]).args[0] / s)
    second = sympy.cancel(as_average(fp[q]).args[0] / s)
    if sympy.cancel(as_average(fp[qbar]).args[0] - second) != 0:
        raise ValueError("the qbar equation is not the weight-1 average of q's second moment")
    return {"mean": mean, "second": second}


@functools.lru_cache(maxsize=None)
def test_overlaps() -> dict:
    r"""``{"m_C", "q_C"}``: :math:`\langle\gamma\bar m(s)\rangle` and :math:`\langle\gamma
    Y(s)\rangle` (:func:`direction_moments`) in the Stieltjes form, through :math:`g_C` and
    :math:`c_C` (in the conjugates, ``z`` and the parameters)."""
    mom = {0: sympy.Integer(1), 1: c_train, ("w", 0): c_C}
    out = {}
    for key, e in (("m_C", direction_moments()["mean"]), ("q_C", direction_moments()["second"])):
        out[key] = stieltjes_form(SpectralAverage(gamma * e), z, lambda k: G[k](z), mom,
                                  lambda k: GC[k](z), weight=gamma)
    return out


ETEST = (c_C + sigma_test**2) / alpha_test
"""The test prompt's context fluctuation (c_C + sigma_test^2)/alpha_test."""


def test_error() -> sympy.Expr:
    r"""The error on a test prompt with task law :math:`N(0, C)`: :math:`\tilde\sigma^2 + c_C -
    2m_C + q_C + \frac{c_C + \tilde\sigma^2}{\tilde\alpha}\bar q` (:func:`test_overlaps`;
    :math:`\bar q` the order parameter)."""
    ov = test_overlaps()
    return sigma_test**2 + c_C - 2 * ov["m_C"] + ov["q_C"] + ETEST * qbar


def tm_error() -> sympy.Expr:
    r"""Task memorisation (a test prompt whose task is a training task, :math:`C = S`):
    :math:`\tilde\sigma^2 + c - 2m + q + \frac{c + \tilde\sigma^2}{\tilde\alpha}\bar q`."""
    return sigma_test**2 + c_train - 2 * m + q + ETEST.xreplace({c_C: c_train}) * qbar
