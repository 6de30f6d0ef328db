r"""Ridge regression with Gaussian covariates: the replica free energy computed from the model with
the Gaussian replica calculus (:mod:`replica.symbolic.replica_calculus`).

The model: :math:`x\sim N(0, C)` in :math:`\mathbb R^d`, teacher :math:`w\sim N(0, I_d)`,
labels :math:`y = \langle w, x\rangle/\sqrt d + \sigma\varepsilon`, :math:`n_s = \alpha d`
samples, and the Gibbs measure :math:`e^{-\beta L(\hat w)}` of
:math:`L = \frac12\sum_\mu(y_\mu - \langle\hat w, x_\mu\rangle/\sqrt d)^2 + \frac\lambda2\|\hat w\|^2`
(whose :math:`\beta\to\infty` limit is the ridge estimator). With :math:`n` replicas
:math:`\hat w^a`:

1. **Energetic part.** For one sample, the residuals :math:`u^a = y - \langle\hat w^a,
   x\rangle/\sqrt d` are jointly Gaussian given the overlaps :math:`m_a = \hat w^{a\top}Cw/d`,
   :math:`Q_{ab} = \hat w^{a\top}C\hat w^b/d`, :math:`\rho = w^\top Cw/d = \langle c\rangle`:
   :math:`\mathbb Eu^au^b = \rho + \sigma^2 - m_a - m_b + Q_{ab}` (RS: an RS matrix :math:`K`).
   :math:`\mathbb E\prod_ae^{-\beta(u^a)^2/2} = \det(I + \beta K)^{-1/2}`, raised to the power
   :math:`\alpha d`.
2. **Entropic part.** The overlaps are fixed by :math:`\delta`-functions with RS conjugates
   :math:`\hat Q` (diagonal :math:`\hat Q_d`, off-diagonal :math:`-\hat q`) and :math:`\hat m`;
   in the eigenbasis of :math:`C` the integral over :math:`\hat w` factorises over coordinates
   :math:`i`: a replicated Gaussian integral with matrix :math:`\beta\lambda I + c_i\hat Q` and
   field :math:`c_i\hat m w_i\mathbf 1`, then averaged over :math:`w_i\sim N(0, 1)`.
3. **Coupling.** :math:`\frac12\operatorname{tr}(\hat QQ) - n\hat mm` per coordinate.
4. **Replica limit** :math:`n\to0` of :math:`\frac1{nd}\log\mathbb EZ^n`, then **zero
   temperature** with :math:`Q_d = q + V/\beta`, :math:`\hat Q_d = \beta\hat V - \beta^2\hat q`,
   :math:`\hat q\to\beta^2\hat q`, :math:`\hat m\to\beta\hat m`: the leading term is
   :math:`\beta\Phi`, and :math:`\Phi` is the free energy the model file
   ``examples/ridge_regression.py`` declares (a test checks the identity; terms that do not
   depend on the order parameters, such as :math:`\frac12\log 2\pi`, are dropped, which leaves
   the extremum unchanged).

Each step is a :class:`~replica.symbolic.Step` with its check.
"""

from __future__ import annotations

import functools

import sympy

from ..symbolic import Step
from ..symbolic.replica_calculus import (BETA, N_REPLICAS, RSBlock, check_against_explicit,
                                         coupling_term, replica_limit, zero_temperature)
from ..symbolic.spectral import LAMBDA_I, SpectralAverage

n, beta = N_REPLICAS, BETA
alpha, lam = sympy.symbols("alpha lam", positive=True)
sigma = sympy.Symbol("sigma", nonnegative=True)
m, q, V = sympy.symbols("m q V", real=True)
mhat, qhat, Vhat = sympy.symbols("mhat qhat Vhat", real=True)
Qd, Qhd = sympy.symbols("Q_d Qhat_d", real=True)
c = LAMBDA_I
rho_c = SpectralAverage(c)
"""The teacher power :math:`\\rho = w^\\top Cw/d \\to \\langle c\\rangle`."""
w_i = sympy.Symbol("w_i", real=True)


def residual_covariance() -> RSBlock:
    r"""The RS covariance of the replicated residuals: same replica
    :math:`\rho + \sigma^2 - 2m + Q_d`, different replicas :math:`\rho + \sigma^2 - 2m + q`."""
    return RSBlock.from_entries(rho_c + sigma**2 - 2 * m + Qd, rho_c + sigma**2 - 2 * m + q)


def energetic_log(K: RSBlock):
    r""":math:`\alpha\log\mathbb E\prod_ae^{-\beta(u^a)^2/2} = -\frac\alpha2\log\det(I + \beta K)`
    (per dimension :math:`d`; the :math:`\alpha d` samples are independent)."""
    I_plus = RSBlock.scalar(1, 0) + K.scale(beta)
    return -alpha * I_plus.log_det() / 2


def entropic_log():
    r"""Per coordinate with eigenvalue :math:`c`: :math:`\log\mathbb E_{w_i}\int d\hat w_i\,
    e^{-\frac12\hat w_i^\top(\beta\lambda I + c\hat Q)\hat w_i + c\hat mw_i\mathbf 1^\top\hat w_i}`
    = :math:`\frac n2\log2\pi - \frac12\log\det M - \frac12\log(1 - nc^2\hat m^2/(A + nB))`
    with :math:`M = \beta\lambda I + c\hat Q` (the Gaussian integral gives
    :math:`e^{\frac n2 h^2/(A + nB)}` for :math:`h = c\hat mw_i`, and
    :math:`\mathbb E_we^{sw^2/2} = (1 - s)^{-1/2}`)."""
    Qhat = RSBlock.from_entries(Qhd, -qhat)
    M = RSBlock.scalar(beta * lam, 0) + Qhat.scale(c)
    A, B = M.A[0, 0], M.B[0, 0]
    s = n * c**2 * mhat**2 / (A + n * B)
    return (n / 2 * sympy.log(2 * sympy.pi) - M.log_det() / 2 - sympy.log(1 - s) / 2), M


def _check_energetic():
    """The RS log-determinant equals that of the explicit matrices I + beta K for n = 1..4."""
    K = residual_covariance()
    I_plus = RSBlock.scalar(1, 0) + K.scale(beta)
    vals = {beta: 3, Qd: sympy.Rational(7, 5), q: sympy.Rational(1, 2), m: sympy.Rational(1, 3),
            sigma: sympy.Rational(1, 2)}
    expr = sympy.exp(I_plus.log_det()).subs(rho_c, 1)
    return check_against_explicit(expr, lambda k: I_plus.at(k).explicit(k).det().subs(rho_c, 1),
                                  ns=range(1, 5), subs=vals)


def _check_entropic():
    """At n = 1, 2 the entropic log equals the explicit Gaussian integral over the estimator
    followed by the Gaussian average over w_i, evaluated by SymPy in closed form (numeric
    parameters)."""
    log_int, M = entropic_log()
    vals = {beta: 2, lam: sympy.Rational(1, 3), c: sympy.Rational(3, 2), Qhd: 1,
            qhat: sympy.Rational(1, 5), mhat: sympy.Rational(1, 4)}
    for k in (1, 2):
        Mx = M.at(k).explicit(k).subs(vals)
        h = sympy.Matrix([vals[c] * vals[mhat] * w_i] * k)
        # Gaussian integral over w-hat in closed form, then the average over w_i
        inner = (2 * sympy.pi) ** sympy.Rational(k, 2) / sympy.sqrt(Mx.det()) * sympy.exp(
            (h.T * Mx.inv() * h)[0, 0] / 2)
        outer = sympy.integrate(inner * sympy.exp(-w_i**2 / 2) / sympy.sqrt(2 * sympy.pi),
                                (w_i, -sympy.oo, sympy.oo))
        got = log_int.subs(n, k).subs(vals)
        if abs(sympy.N(sympy.log(outer) - got, 30)) > 1e-25:
            return False
    return True


@functools.lru_cache(maxsize=None)
def steps() -> tuple:
    """The derivation as steps; the last one holds the zero-temperature free energy ``Phi``."""
    K = residual_covariance()
    energetic = energetic_log(K)
    ent, M = entropic_log()
    Q = RSBlock.from_entries(Qd, q)
    Qhat = RSBlock.from_entries(Qhd, -qhat)
    coupling = coupling_term(Q, Qhat) - n * mhat * m
    # the replica limit of each part (per n, n -> 0)
    e0 = replica_limit(energetic)
    s0 = replica_limit(ent)
    c0 = replica_limit(coupling)
    # one simultaneous substitution (the scaled qhat on the right is the new variable)
    scalings = {Qd: q + V / beta, Qhd: beta * Vhat - beta**2 * qhat, qhat: beta**2 * qhat,
                mhat: beta * mhat}

    def zt(expr):
        return zero_temperature(expr, scalings)

    pe, fe = zt(e0)
    # the entropic part is averaged over the eigenvalues of C: the per-coordinate term first
    ps, fs = zt(s0)
    pc, fc = zt(c0)
    phi = fe + SpectralAverage(sympy.cancel(fs)) + fc
    out = (
        Step("residual_covariance", {"K": sympy.Eq(sympy.Symbol("K_ab"), K.B[0, 0]
                                                   + sympy.Symbol("delta_ab") * K.A[0, 0])},
             "Given the overlaps, the replicated residuals are jointly Gaussian with an RS "
             "covariance.", None),
        Step("energetic", {"log": sympy.Eq(sympy.Symbol("G_E"), energetic)},
             "The Gaussian average of the replicated Boltzmann factors is a determinant of the "
             "RS matrix I + beta K.", _check_energetic),
        Step("entropic", {"log": sympy.Eq(sympy.Symbol("G_S"), ent)},
             "The integral over the replicated estimator factorises over the eigenbasis of C; "
             "each factor is a replicated Gaussian integral, averaged over the teacher.",
             _check_entropic),
        Step("replica_limit", {"energetic": sympy.Eq(sympy.Symbol("g_E"), e0),
                               "entropic": sympy.Eq(sympy.Symbol("g_S"), s0),
                               "coupling": sympy.Eq(sympy.Symbol("g_C"), c0)},
             "Each part is O(n); its coefficient is the replica limit.", None),
        Step("zero_temperature", {"free_energy": sympy.Eq(sympy.Symbol("Phi"), phi)},
             "With the zero-temperature scalings every part grows like beta (the beta^2 terms "
             "cancel), and the coefficient of beta is the free energy.",
             functools.partial(_check_leading_power, (pe, ps, pc))),
    )
    return out


def _check_leading_power(powers) -> bool:
    """With the zero-temperature scalings the energetic, entropic and coupling parts each grow
    like the first power of beta (their beta^2 terms cancel exactly, SymPy)."""
    return tuple(powers) == (1, 1, 1)


def free_energy():
    """:math:`\\Phi`, the zero-temperature replica free energy derived from the model."""
    return steps()[-1].objects["free_energy"].rhs
