r"""Deterministic equivalent of a sample-covariance resolvent, computed by the replica method.

The object: :math:`R = \frac1k\sum_{j=1}^k w_jw_j^\top` with :math:`w_j\sim N(0, C)` in
:math:`\mathbb R^d`, :math:`k = \kappa d`, and for :math:`z > 0` the normalised log-determinant
:math:`g(z) = \frac1d\mathbb E\log\det(R + zI)`, whose derivative in :math:`z` is the normalised
trace of the resolvent, :math:`M(z) = \frac1d\mathbb E\operatorname{tr}(R + zI)^{-1}`.

The computation (each stage is a function below, with the objects the derivation displays):

1. **Replicas.** :math:`\det(R + z)^{-n/2} = (2\pi)^{-nd/2}\int\prod_{a\le n}dx_a\,
   e^{-\frac12\sum_ax_a^\top(R + z)x_a}`. The :math:`w_j` enter through
   :math:`u_{ja} = w_j^\top x_a`, jointly Gaussian with covariance
   :math:`Q_{ab} = x_a^\top Cx_b = d\,\omega_{ab}`, so each of the :math:`k` task vectors gives
   :math:`\mathbb E\,e^{-\frac1{2k}\sum_au_{ja}^2} = \det(I_n + \omega/\kappa)^{-1/2}`.
2. **Overlaps.** :math:`\omega` is fixed by a :math:`\delta`-function with conjugate
   :math:`\hat\omega` (exponent :math:`\frac d2\operatorname{tr}\hat\omega\omega -
   \frac12\sum_{ab}\hat\omega_{ab}x_a^\top Cx_b`); in the eigenbasis of :math:`C` the integral over
   the :math:`x_a` factorises over coordinates :math:`i` into replicated Gaussian integrals with
   matrix :math:`zI_n + \lambda_i\hat\omega`. Per dimension, at the saddle point in
   :math:`d\to\infty`:

   .. math:: \frac1d\log\mathbb E\det(R+z)^{-n/2} = \operatorname{extr}\Big[
             \tfrac12\operatorname{tr}\hat\omega\omega - \tfrac\kappa2\log\det(I_n + \omega/\kappa)
             - \tfrac12\big\langle\log\det(zI_n + \lambda_i\hat\omega)\big\rangle\Big].

3. **Replica symmetry and n -> 0.** With RS matrices (diagonal :math:`\omega, \hat\omega`,
   off-diagonal :math:`\omega_0, \hat\omega_0`) every term is :math:`O(n)`;
   :math:`g = \lim_{n\to0} -\frac2n(\cdot)`. The off-diagonal overlaps are stationary at
   :math:`\omega_0 = \hat\omega_0 = 0` (replicas of a log-determinant do not couple), which leaves

   .. math:: g(z) = \operatorname{extr}_{\omega,\hat\omega}\Big[\langle\log(z + \hat\omega
             \lambda_i)\rangle + \kappa\log(1 + \omega/\kappa) - \omega\hat\omega\Big].

4. **Stationarity.** :math:`\hat\omega = 1/(1 + \omega/\kappa)` and
   :math:`\omega = \langle\lambda_i/(\hat\omega\lambda_i + z)\rangle`; by the envelope theorem
   :math:`M = \partial g/\partial z = \langle 1/(\hat\omega\lambda_i + z)\rangle`. Eliminating
   :math:`\omega` gives :math:`\kappa(\hat\omega - 1) + 1 - \langle z/(\hat\omega\lambda_i + z)
   \rangle = 0`, i.e. :math:`\hat\omega = 1 - 1/\kappa + zM/\kappa`: the coefficient called
   :math:`a` in the self-consistent equation :math:`M = \langle 1/(a\lambda_i + z)\rangle`.

Nothing here is tied to a paper: :math:`\kappa` is any ratio of samples to dimension (the same
result with :math:`\kappa = n_{\rm samples}/P` and :math:`z = \lambda` is the deterministic
equivalent of ridge regression). Spectral averages stay abstract
(:class:`~replica.symbolic.spectral.SpectralAverage`); :func:`on_eigenvalues` evaluates them on a
given list of eigenvalues.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy

from .replica_calculus import N_REPLICAS, RSBlock, coupling_term, replica_limit
from .spectral import LAMBDA_I, SpectralAverage, on_symbolic_spectrum

n = N_REPLICAS
z = sympy.Symbol("z", positive=True)
kappa = sympy.Symbol("kappa", positive=True)
omega, omega_hat = sympy.symbols("omega omegahat", positive=True)
omega0, omega_hat0 = sympy.symbols("omega_0 omegahat_0", real=True)
"""The RS order parameters: diagonal (``omega``, ``omegahat``) and off-diagonal (``_0``)."""


def replicated_action(ratio=kappa, at=z):
    r"""The RS exponent per dimension, ``(coupling, tasks, fields)``: the three terms of
    :math:`\frac12\operatorname{tr}\hat\omega\omega - \frac\kappa2\log\det(I_n + \omega/\kappa)
    - \frac12\log\det(zI_n + \lambda_i\hat\omega)`, the last per eigenvalue :math:`\lambda_i`
    (summand of the spectral average), all with symbolic ``n``."""
    W = RSBlock.from_entries(omega, omega0)
    W_hat = RSBlock.from_entries(omega_hat, omega_hat0)
    coupling = coupling_term(W, W_hat)
    tasks = -ratio / 2 * (RSBlock.scalar(1, 0) + W.scale(1 / ratio)).log_det()
    fields = -(RSBlock.scalar(at, 0) + W_hat.scale(LAMBDA_I)).log_det() / 2
    return coupling, tasks, fields


def replica_limit_of_log_det(ratio=kappa, at=z):
    r""":math:`g_{\rm RS}(\omega,\hat\omega,\omega_0,\hat\omega_0) = \lim_{n\to0}-\frac2n
    (\cdot)` of :func:`replicated_action`: the RS variational log-determinant before the
    off-diagonal overlaps are set (the field term's limit is taken per eigenvalue, then
    averaged)."""
    coupling, tasks, fields = replicated_action(ratio, at)
    return (-2 * replica_limit(coupling) - 2 * replica_limit(tasks)
            + SpectralAverage(sympy.simplify(-2 * replica_limit(fields))))


def off_diagonal_stationary(g_rs) -> bool:
    """Whether ``g_rs`` is stationary in the off-diagonal overlaps at ``omega_0 = omegahat_0 =
    0`` for every diagonal value (the derivatives vanish identically there)."""
    at0 = {omega0: 0, omega_hat0: 0}
    for v in (omega0, omega_hat0):
        der = sympy.diff(g_rs, v).subs(at0)
        if sympy.simplify(on_symbolic_spectrum(der)) != 0:
            return False
    return True


def variational_log_det(g_rs=None):
    r"""The variational :math:`g(\omega,\hat\omega)`: ``g_rs`` (default
    :func:`replica_limit_of_log_det`) at :math:`\omega_0 = \hat\omega_0 = 0`."""
    g_rs = replica_limit_of_log_det() if g_rs is None else g_rs
    g = sympy.simplify(g_rs.subs({omega0: 0, omega_hat0: 0}))
    return sympy.expand_log(g, force=True)


def stationarity(g):
    r"""``(omega_of_hat, condition)``: :math:`\partial g/\partial\omega = 0` solved for
    :math:`\omega` (one root) and :math:`\partial g/\partial\hat\omega` with it substituted (an
    expression in :math:`\hat\omega`, zero at the saddle point). ``ValueError`` unless the first
    condition has exactly one solution."""
    sols = sympy.solve(sympy.diff(g, omega), omega)
    if len(sols) != 1:
        raise ValueError(f"d g/d omega = 0 has {len(sols)} solutions for omega")
    w = sympy.simplify(sols[0])
    return w, sympy.diff(g, omega_hat).subs(omega, w)


def resolvent_trace(g):
    r""":math:`M = \partial g/\partial z` (envelope theorem: at the saddle point the order
    parameters' dependence on :math:`z` does not contribute)."""
    return sympy.diff(g, z)


def coefficient_equation(g, a=sympy.Symbol("a", positive=True)):
    r"""The saddle-point condition as an equation for :math:`a = \hat\omega`, normalised to
    :math:`\kappa(a - 1) + 1 - \langle z/(a\lambda_i + z)\rangle` (the condition times
    :math:`a`; each average is split into partial fractions in :math:`\lambda_i` and the factors
    free of :math:`\lambda_i` are taken out, by linearity)."""
    _, cond = stationarity(g)
    e = sympy.expand(a * cond.subs(omega_hat, a))

    def rewrite(avg_expr):
        out = sympy.Integer(0)
        for term in sympy.Add.make_args(sympy.apart(sympy.cancel(avg_expr.args[0]), LAMBDA_I)):
            const, dep = sympy.factor(term).as_independent(LAMBDA_I, as_Add=False)
            out += const * SpectralAverage(dep)
        return out

    return sympy.expand(e.replace(lambda x: isinstance(x, SpectralAverage), rewrite))


# ---------------------------------------------------------------------------------------------
# Numerical evaluation on an explicit spectrum
# ---------------------------------------------------------------------------------------------
_COMPILED_SYMBOLS = (z, kappa, omega, omega_hat)


@functools.lru_cache(maxsize=64)
def _evaluator(expr):
    """The code generator's evaluator of ``expr`` as a function of :data:`_COMPILED_SYMBOLS`."""
    from .codegen import Evaluator

    return Evaluator([expr], list(_COMPILED_SYMBOLS))


class _Pairs:
    """Eigenvalues with equal weights, in the form the evaluators take (``mu`` unused: 0)."""

    def __init__(self, eigenvalues):
        self.lam = list(eigenvalues)
        self.mu = [0 * x for x in self.lam]
        self.weight = [1 / mpmath.mpf(len(self.lam))] * len(self.lam)


def on_eigenvalues(expr, eigenvalues, values: dict):
    """``expr`` at ``values`` (numbers for ``z``, ``kappa``, ``omega``, ``omegahat``; missing
    ones are not used) with every spectral average replaced by the mean of its summand over
    ``eigenvalues``: a numpy array (float64, vectorised) or a list of mpmath numbers (the working
    precision)."""
    ev = _evaluator(sympy.sympify(expr))
    args = [values.get(s, 0) for s in _COMPILED_SYMBOLS]
    if isinstance(eigenvalues, np.ndarray):
        w = np.full(len(eigenvalues), 1.0 / len(eigenvalues))
        return float(ev.f64(args, (eigenvalues, np.zeros_like(eigenvalues), w))[0])
    return ev.mp([mpmath.mpf(v) for v in args], _Pairs(eigenvalues))[0]


def solve_saddle(g, eigenvalues, ratio, at):
    r"""The saddle point :math:`(\omega, \hat\omega)` of ``g`` on an explicit spectrum, at
    :math:`\kappa` = ``ratio`` and :math:`z` = ``at``: the root of the condition of
    :func:`stationarity` for :math:`\hat\omega` on :math:`(\max(0, 1 - 1/\kappa), 1]` by
    bisection to the working precision (float64 for a numpy spectrum); ``ValueError`` if the
    condition does not change sign there (it does for the true :math:`g`)."""
    w_of_hat, cond = _stationarity_cached(g)
    vals = {kappa: ratio, z: at}
    vectorised = isinstance(eigenvalues, np.ndarray)
    one = 1.0 if vectorised else mpmath.mpf(1)
    eps = 2.0 ** -52 if vectorised else mpmath.mpf(2) ** (-mpmath.mp.prec)

    def c(x):
        return on_eigenvalues(cond, eigenvalues, {**vals, omega_hat: x})

    lo = max(0 * one, one - one / ratio) + eps ** 0.5
    hi = one
    clo, chi = c(lo), c(hi)
    if clo * chi > 0:
        raise ValueError("the saddle-point condition does not change sign on the bracket")
    while hi - lo > 4 * eps * hi:
        mid = (lo + hi) / 2
        cm = c(mid)
        if cm * clo > 0:
            lo, clo = mid, cm
        else:
            hi = mid
    a = (lo + hi) / 2
    return on_eigenvalues(w_of_hat, eigenvalues, {**vals, omega_hat: a}), a


@functools.lru_cache(maxsize=16)
def _stationarity_cached(g):
    return stationarity(g)


def log_det_and_trace(g, eigenvalues, ratio, at):
    r"""``(g, M)`` at the saddle point on an explicit spectrum (the variational log-determinant
    and :math:`\partial g/\partial z` there)."""
    w, a = solve_saddle(g, eigenvalues, ratio, at)
    vals = {kappa: ratio, z: at, omega: w, omega_hat: a}
    return on_eigenvalues(g, eigenvalues, vals), on_eigenvalues(resolvent_trace(g), eigenvalues,
                                                                vals)


__all__ = ["z", "kappa", "omega", "omega_hat", "omega0", "omega_hat0", "replicated_action",
           "replica_limit_of_log_det", "off_diagonal_stationary", "variational_log_det",
           "stationarity", "resolvent_trace", "coefficient_equation", "on_eigenvalues",
           "solve_saddle", "log_det_and_trace"]
