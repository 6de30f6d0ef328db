r"""The Bayes-optimal committee machine (issue 26): a two-layer network with :math:`K` hidden
units whose first-layer weights are learned, its order parameter a :math:`K\times K` matrix.

Setting: a teacher :math:`W^* \in \mathbb R^{K\times d}` with i.i.d. :math:`N(0, 1)` entries
(Gaussian prior: the columns :math:`w_i \in \mathbb R^K` are :math:`N(0, I_K)`),
:math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)`, the pre-activations
:math:`z_\mu = W^*x_\mu/\sqrt d \in \mathbb R^K` and labels :math:`y_\mu = f(z_\mu)` with the
committee :math:`f(z) = \operatorname{sign}\sum_k\operatorname{sign}z_k` (:math:`\operatorname{sign}
0 = 0`; for :math:`K = 2`: :math:`y = +1` when both hidden units are positive, :math:`-1` when
both are negative, :math:`0` when they disagree -- the convention of Aubin et al.). The student is
the Bayes posterior. :math:`Q = \mathbb E\,\hat W W^{*\top}/d` is the overlap of the posterior
mean with the teacher (Nishimori: also its self-overlap), :math:`0 \preceq Q \preceq I_K`.

**Stated** (Aubin, Maillard, Barbier, Krzakala, Macris and Zdeborova, NeurIPS 2018; the
replica-symmetric formula, proved there by adaptive interpolation):

.. math::
    \Phi = \operatorname{extr}_{Q, \hat Q}\Big[-\tfrac12\operatorname{tr}(Q\hat Q)
        + \psi_P(\hat Q) + \alpha\Psi_{\rm out}(Q)\Big],

    \psi_P(\hat Q) = \mathbb E_{\xi, w_0}\log\int dP(w)\,e^{b^\top w - w^\top\hat Qw/2},
        \quad b = \hat Q^{1/2}\xi + \hat Qw_0,\qquad
    \Psi_{\rm out}(Q) = \mathbb E_\xi\sum_y Z_{\rm out}(y; Q^{1/2}\xi, I - Q)
        \log Z_{\rm out}(y; Q^{1/2}\xi, I - Q),

:math:`Z_{\rm out}(y; \omega, V) = P(f(\omega + V^{1/2}z) = y)`, :math:`z \sim N(0, I_K)`,
:math:`\xi, w_0 \sim N(0, I_K)`.

**Derived** (:func:`Committee`, each step recorded with its check, ``replica equations``):

* *the prior term with matrices*: the :math:`K`-dimensional Gaussian integral by completing the
  square one coordinate after the other (the rule of
  :func:`~replica.glm.calculus.gaussian_exp_integral`, on a symmetric matrix of symbols),
  checked to be
  :math:`\det(I + \hat Q)^{-1/2}e^{b^\top(I + \hat Q)^{-1}b/2}`; its logarithm averaged with
  :math:`\mathbb Ebb^\top = \hat Q + \hat Q^2`:
  :math:`\psi_P = \tfrac12[\operatorname{tr}\hat Q - \log\det(I + \hat Q)]`, whose stationarity
  :math:`Q = 2\partial\psi_P/\partial\hat Q` is :math:`Q = \hat Q(I + \hat Q)^{-1}` (checked
  entry by entry);
* *the committee-symmetric ansatz*: with :math:`P_1 = \mathbf 1\mathbf 1^\top/K`,
  :math:`Q = q P_1 + q_0(I - P_1)` and :math:`\hat Q = \hat q P_1 + \hat q_0(I - P_1)` (the
  paper's :math:`Q = q_dI + q_a\mathbf 1\mathbf 1^\top/K` with :math:`q_d = q_0`,
  :math:`q_a = q - q_0`): SymPy computes :math:`\operatorname{tr}(Q\hat Q) = q\hat q + (K - 1)
  q_0\hat q_0` and :math:`\psi_P = \tfrac12[\hat q - \log(1 + \hat q)] + \tfrac{K-1}2[\hat q_0 -
  \log(1 + \hat q_0)]`. The ansatz is invariant under the permutations of the hidden units, which
  leave :math:`\Phi` invariant, so a stationary point of the restricted potential is one of the
  full one (symmetric criticality);
* *the channel for* :math:`K = 2` *by rotation*: :math:`R = (\mathbf 1, (1, -1))/\sqrt2`
  diagonalises :math:`Q^{1/2}` and :math:`V = I - Q` (SymPy), so :math:`u = \omega + V^{1/2}z` has
  independent rotated components :math:`u_+ = \sqrt q\,\xi_+ + \sqrt{1 - q}\,z_+` and
  :math:`u_- = \sqrt{q_0}\,\xi_- + \sqrt{1 - q_0}\,z_-`; :math:`u_1, u_2 > 0` iff
  :math:`u_+ > |u_-|` (:math:`\min(u_1, u_2) = (u_+ - |u_-|)/\sqrt2`, checked), so
  :math:`Z_{\rm out}(\pm1) = \mathbb E_{z_-}H((|u_-| \mp \omega_+)/\sqrt{1 - q})` and
  :math:`Z_{\rm out}(0) = 1 - Z_{\rm out}(1) - Z_{\rm out}(-1)` -- exact, a bivariate orthant
  probability written with one one-dimensional integral (it has no elementary form: Owen's
  :math:`T` function);
* *the non-specialised fixed point* :math:`q_0 = \hat q_0 = 0` (:math:`Q = qP_1`: every hidden
  unit has the same overlap :math:`q/K` with every teacher unit). It is a fixed point for every
  :math:`\alpha`: :math:`\Psi_{\rm out}` is even in :math:`\omega_-` (the label is blind to the
  sign of :math:`u_-`, the exchange of the two units), so its expansion in :math:`q_0` has no
  linear term (below). There :math:`u_- = z_-`, the integrand is even in :math:`z_-` (twice the
  half line), and

  .. math::
      \Psi_{\rm out}(q) = \mathbb E_\xi\big[2Z_+\log Z_+ + Z_0\log Z_0\big],\quad
      Z_+ = \mathbb E_z\theta(z)\operatorname{erfc}\frac{z - \sqrt q\,\xi}{\sqrt{2(1 - q)}},

  the label :math:`-1` equal to :math:`+1` under :math:`\xi \to -\xi`: a two-dimensional Gaussian
  integral (nested; the engine's deepest). For :math:`K = 1` the channel is the sign perceptron,
  :math:`\Psi_{\rm out} = 2\mathbb E_\xi H(c\xi)\log H(c\xi)`, :math:`c = \sqrt{q/(1 - q)}`;
* *the specialisation threshold* (:math:`K = 2`): with :math:`g_y(u_-)` the label's probability
  given :math:`u_-`, :math:`Z_y = \mathbb E_zg_y(\sqrt{q_0}\xi_- + \sqrt{1 - q_0}z)`, whose
  :math:`\xi_-`-average is :math:`\mathbb Eg_y` for every :math:`q_0` (the argument is
  :math:`N(0, 1)`); Taylor and Stein's lemma give :math:`Z_y = Z_y^{(0)} + \tfrac{q_0}2(\xi_-^2
  - 1)A_y + O(q_0^{3/2})`, :math:`A_y = \mathbb E[(z^2 - 1)g_y(z)]`, so the first-order term of
  :math:`\sum_yZ_y\log Z_y` averages to zero and

  .. math::
      \Psi_{\rm out}(q, q_0) = \Psi_{\rm out}(q) + c_2(q)\,q_0^2 + O(q_0^3),\qquad
      c_2 = \tfrac14\mathbb E_{\xi_+}\sum_y\frac{A_y^2}{Z_y},\quad A_0 = -A_+ - A_-.

  The stationarity conditions :math:`\hat q_0 = 2\alpha\partial_{q_0}\Psi_{\rm out} =
  4\alpha c_2q_0` and :math:`q_0 = \hat q_0/(1 + \hat q_0)` linearise to
  :math:`q_0 \to 4\alpha c_2(q)q_0`: the non-specialised fixed point is stable while
  :math:`4\alpha c_2(q^*(\alpha)) < 1` and loses stability at :math:`\alpha_{\rm spec}`, where,
  with :math:`\alpha = q/(2(1 - q)\Psi_{\rm out}'(q))` along the branch,
  :math:`2c_2(q)q = (1 - q)\Psi_{\rm out}'(q)` (:func:`specialisation_threshold`).

* *the specialised branch* :math:`q_0 > 0` (:func:`specialised_branch`): the label
  probability is the bivariate normal orthant probability :math:`Z_{\rm out}(1) = P(u_1 > 0,
  u_2 > 0) = \Phi_2(h, k; \rho)`, :math:`h, k = (\omega_+ \pm \omega_-)/(\sqrt2 s)`,
  :math:`s^2 = (2 - q - q_0)/2`, :math:`\rho = (q_0 - q)/(2 - q - q_0)` (the covariance of
  :math:`u_{1,2} = (u_+ \pm u_-)/\sqrt2`, SymPy), in closed form through Owen's :math:`T`
  function, with its gradient :math:`\partial_h\Phi_2 = \varphi(h)\Phi((k - \rho h)/\sqrt{1 -
  \rho^2})` (both checked against mpmath quadrature of the definition). So
  :math:`\Psi_{\rm out}(q, q_0)` is a two-dimensional Gaussian integral over
  :math:`(\xi_+, \xi_-)` of elementary functions and :math:`T` -- evaluated in float64 by
  the engine's generated code of the derived expressions (:math:`T` is the code generator's
  ``owens_t``: SciPy's in float64 code) on a composite Gauss--Legendre grid
  (:class:`SpecialisedChannel`; the two-dimensional average outside the engine's solver). With the conjugates
  eliminated (:math:`\hat q = q/(1 - q)`),
  :math:`\Phi(q, q_0) = \tfrac12(q + \log(1 - q)) + \tfrac12(q_0 + \log(1 - q_0)) +
  \alpha\Psi_{\rm out}(q, q_0)`, and its stationarity is :math:`q/(1 - q) = 2\alpha
  \partial_q\Psi_{\rm out}`, :math:`q_0/(1 - q_0) = 2\alpha\partial_{q_0}\Psi_{\rm out}`, the
  gradient in its Nishimori form :math:`\partial_{q}\Psi_{\rm out} = \tfrac12\mathbb E\sum_y
  (\partial_{\omega_+}Z_y)^2/Z_y` (Gaussian integration by parts and the heat equation
  :math:`\partial_VZ = \tfrac12\partial_\omega^2Z`, checked), the same in
  :math:`(q_0, \omega_-)`;
* *the order of the transition*: Mehler's rule writes :math:`Z_y = Z_y^{(0)} + q_0\,
  \mathrm{He}_2(\xi_-)A_y/2 + q_0^2\,\mathrm{He}_4(\xi_-)B_y + O(q_0^3)`, and the Gaussian
  moments :math:`\mathbb E\,\mathrm{He}_2\mathrm{He}_4 = 0`, :math:`\mathbb E\,\mathrm{He}_2^3 =
  8` give :math:`\Psi_{\rm out} = \Psi_{\rm out}(q) + c_2q_0^2 + c_3q_0^3 + O(q_0^4)` with
  :math:`c_3 = -\tfrac16\mathbb E_{\xi_+}\sum_yA_y^3/Z_y^2`. With the prior's
  :math:`-q_0^2/4 - q_0^3/6`: :math:`\Phi = \Phi_0 + a_2q_0^2 + a_3q_0^3 + O(q_0^4)`,
  :math:`a_2 = \alpha c_2 - \tfrac14`, :math:`a_3 = \alpha c_3 - \tfrac16` (the relaxation of
  :math:`q`, :math:`\delta q = O(q_0^2)`, enters at :math:`q_0^4`). Since :math:`q_0 \ge 0`
  (an eigenvalue of :math:`Q \succeq 0`) and there is no :math:`q_0 \to -q_0` symmetry, the
  *cubic* coefficient decides (not the quartic, as for an order parameter with a sign
  symmetry): the non-trivial stationary point is :math:`q_0 = -2a_2/(3a_3)`; with
  :math:`a_3 < 0` it is positive exactly when :math:`a_2 > 0`, i.e. above
  :math:`\alpha_{\rm spec}` -- a continuous transition, :math:`q_0` linear in
  :math:`\alpha - \alpha_{\rm spec}` and the free-entropy gain :math:`4a_2^3/(27a_3^2)`;
  with :math:`a_3 > 0` it would exist below :math:`\alpha_{\rm spec}` (a spinodal and a first
  order transition). Found (:func:`transition_order`): :math:`a_3 = -0.2246246429` at
  :math:`\alpha_{\rm spec}`, so **the transition is continuous**, :math:`dq_0/d\alpha =
  0.43868` there; the state evolution agrees (no root with :math:`q_0 > 0` below
  :math:`\alpha_{\rm spec}`, the slope and the cubic gain above -- the tests).

Not derived here (a :class:`~replica.modeling.ModelError` says so): :math:`K \ge 3` (the
channel's orthant probability in :math:`K` dimensions) and priors other than the Gaussian. The
specialised branch is outside the engine's solver (its channel term's :math:`T` function has no
engine code): :func:`specialised_branch` solves it in float64 (about 15 digits, the rule's
convergence measured by doubling; no higher precision), and the :class:`SaddlePointModel`
remains the non-specialised point.
"""

from __future__ import annotations

from typing import Sequence

import sympy

from ..modeling import ModelError, Parameter, SaddlePointModel, Stability, gauss
from ..symbolic.gaussian import owens_t
from . import calculus
from .builders import GLMDerivation

__all__ = ["Committee", "CommitteeDerivation", "REFERENCE", "SpecialisedChannel", "channel_term",
           "gauss_rule", "specialisation_coefficient", "specialisation_cubic_coefficient",
           "specialisation_threshold", "specialised_branch", "transition_order"]

REFERENCE = ("Aubin, Maillard, Barbier, Krzakala, Macris and Zdeborova, NeurIPS 2018 "
             "(arXiv:1806.05451)")

def _eq(lhs, rhs):
    """A step's displayed equation ``lhs = rhs``, not evaluated: SymPy's ``Eq`` would try to
    decide the equality (assumption queries on the derived expressions: about a third of the
    model's construction), and no displayed equation here is decidable -- it is a definition or
    a result, each checked by its step's own check."""
    return sympy.Eq(lhs, rhs, evaluate=False)


q, qhat = sympy.symbols("q qhat", positive=True)
q0, qhat0 = sympy.symbols("q_0 qhat_0", nonnegative=True)
xi, z = sympy.symbols("xi z", real=True)


class CommitteeDerivation(GLMDerivation):
    """The record of the committee machine's derivation (the steps of :func:`Committee`)."""

    TITLES = {
        "general_free_entropy": "The free entropy with matrix order parameters",
        "prior_partition": "The prior's K-dimensional partition function",
        "prior_average": "The prior term with matrices",
        "prior_stationarity": "The prior's stationarity condition",
        "ansatz": "The committee-symmetric ansatz",
        "channel_partition": "The channel's partition function",
        "non_specialised": "The non-specialised fixed point",
        "channel_average": "The channel term",
        "free_entropy": "The free entropy assembled",
        "specialisation": "The expansion in the specialised overlap",
    }


def _sym_matrix(name, K):
    """A symmetric K x K matrix of real symbols ``name_kl`` (k <= l)."""
    entries = {}
    for k in range(K):
        for l in range(k, K):
            entries[k, l] = entries[l, k] = sympy.Symbol(f"{name}_{k}{l}", real=True)
    return sympy.Matrix(K, K, lambda i, j: entries[i, j]), entries


def _prior_steps(K: int, D: CommitteeDerivation):
    r"""The Gaussian prior's term, derived with a symmetric :math:`K\times K` matrix of symbols;
    returns :math:`\psi_P` restricted to the ansatz, in :math:`(\hat q, \hat q_0)`."""
    Qh, _ = _sym_matrix("Qhat", K)
    b = sympy.Matrix(sympy.symbols(f"b0:{K}", real=True))
    w = sympy.symbols(f"w0:{K}", real=True)
    W = sympy.Matrix(w)
    I = sympy.eye(K)
    # the prior's density N(0, I) times exp(b.w - w.Qh.w/2), integrated coordinate by coordinate
    exponent = sympy.expand((b.T * W)[0, 0] - (W.T * (I + Qh) * W)[0, 0] / 2)
    # integrate w_1, ..., w_K in turn: int dw e^{-a w^2/2 + beta w + c} = sqrt(2 pi/a)
    # e^{beta^2/(2a) + c} (completing the square), each against the N(0, 1) normalisation
    curvatures = []
    for wk in w:
        curvatures.append(-2 * sympy.Poly(exponent, wk).coeff_monomial(wk**2))
        exponent = _exponent_after(exponent, wk)
    M = I + Qh

    def check_partition():
        """SymPy, for a generic symmetric Qhat: the product of the curvatures met while
        completing the squares is det(I + Qhat), and the exponent left is b.(I + Qhat)^(-1) b/2
        (rational identities); so the iterated integral is the closed form."""
        if sympy.cancel(sympy.Mul(*curvatures) - M.det()) != 0:
            return False
        return sympy.cancel(exponent - (b.T * M.inv() * b)[0, 0] / 2) == 0

    QhS = sympy.MatrixSymbol("Qhat", K, K)
    IS = sympy.Identity(K)
    D.add("prior_partition",
          {"Z0": _eq(sympy.Function("Z_P")(sympy.Symbol("b")),
                          sympy.Determinant(IS + QhS) ** sympy.Rational(-1, 2)
                          * sympy.exp(sympy.Symbol("b^T (I + Qhat)^{-1} b") / 2))},
          f"The Gaussian prior's K-dimensional integral (K = {K}) of exp(b.w - w.Qhat.w/2) "
          "against N(0, I_K), by completing the square in one coordinate after the other "
          "(a symmetric matrix of symbols): det(I + Qhat)^(-1/2) exp(b.(I + Qhat)^(-1) b/2), "
          "checked against the iterated integral.", check_partition)
    # E log Z0 with b = Qhat^{1/2} xi + Qhat w0: E b b^T = Qhat + Qhat^2
    Ebb = Qh + Qh * Qh
    psi_general = -sympy.log(M.det()) / 2 + (M.inv() * Ebb).trace() / 2
    psi_closed = (Qh.trace() - sympy.log(M.det())) / 2

    def check_average():
        """tr((I + Qhat)^(-1)(Qhat + Qhat^2)) = tr Qhat (SymPy), so the average is the closed
        form."""
        return sympy.simplify(psi_general - psi_closed) == 0

    D.add("prior_average",
          {"psi": _eq(sympy.Function("psi_P")(QhS),
                           (sympy.Trace(QhS) - sympy.log(sympy.Determinant(IS + QhS))) / 2)},
          "Its logarithm averaged over b = Qhat^(1/2) xi + Qhat w_0 (xi, w_0 ~ N(0, I_K)), "
          "whose second moment is E b b^T = Qhat + Qhat^2: psi_P = -log det(I + Qhat)/2 + "
          "tr((I + Qhat)^(-1)(Qhat + Qhat^2))/2 = (tr Qhat - log det(I + Qhat))/2.",
          check_average)
    Q, Qent = _sym_matrix("Q", K)

    def check_stationarity():
        """Each entry's derivative of -tr(Q Qhat)/2 + psi_P vanishes at Q = Qhat (I +
        Qhat)^(-1) (SymPy; the symmetric entries counted once on both sides)."""
        Qstar = Qh * M.inv()
        pot = -(Q * Qh).trace() / 2 + psi_closed
        for (i, j), s in _entries(Qh, K):
            d = sympy.diff(pot, s).xreplace({Q[k, l]: Qstar[k, l]
                                             for k in range(K) for l in range(K)})
            if sympy.simplify(d) != 0:
                return False
        return True

    QS = sympy.MatrixSymbol("Q", K, K)
    D.add("prior_stationarity",
          {"Q": _eq(QS, QhS * (IS + QhS).inverse())},
          "Stationarity in Qhat: Q = 2 d psi_P/d Qhat = I - (I + Qhat)^(-1) = Qhat (I + "
          "Qhat)^(-1), checked entry by entry.", check_stationarity)
    # the committee-symmetric ansatz
    P1 = sympy.ones(K, K) / K
    Qa = q * P1 + q0 * (I - P1)
    Qha = qhat * P1 + qhat0 * (I - P1)
    trace = sympy.expand((Qa * Qha).trace())
    psi_reduced = (qhat - sympy.log(1 + qhat)) / 2 + (K - 1) * (qhat0 - sympy.log(1 + qhat0)) / 2
    trace_reduced = q * qhat + (K - 1) * q0 * qhat0

    def check_ansatz():
        """SymPy: tr(Q Qhat) on the ansatz is q qhat + (K - 1) q_0 qhat_0, and the prior term's
        trace and determinant are qhat + (K - 1) qhat_0 and (1 + qhat)(1 + qhat_0)^(K - 1)
        (the eigenvalues on 1 and on its complement), which give the reduced psi_P."""
        if sympy.expand(trace - trace_reduced) != 0:
            return False
        if sympy.expand(Qha.trace() - qhat - (K - 1) * qhat0) != 0:
            return False
        det = (I + Qha).det()
        if sympy.cancel(det - (1 + qhat) * (1 + qhat0) ** (K - 1)) != 0:
            return False
        rebuilt = (qhat + (K - 1) * qhat0 - sympy.log(1 + qhat)
                   - (K - 1) * sympy.log(1 + qhat0)) / 2
        return sympy.expand(rebuilt - psi_reduced) == 0

    D.add("ansatz",
          {"Q": _eq(QS, q * sympy.Symbol("P_1") + q0 * (1 - sympy.Symbol("P_1"))),
           "trace": _eq(sympy.Trace(QS * QhS), trace_reduced),
           "psi": _eq(sympy.Function("psi_P")(qhat, qhat0), psi_reduced)},
          "The committee-symmetric ansatz Q = q P_1 + q_0 (I - P_1), Qhat = qhat P_1 + "
          "qhat_0 (I - P_1), P_1 = 1 1^T/K (the paper's q_d I + q_a 1 1^T/K with q_d = q_0, "
          "q_a = q - q_0), substituted by SymPy into the trace and the prior term; the "
          "ansatz is invariant under the permutations of the hidden units, so the restricted "
          "potential's stationary points are stationary points of the full one.", check_ansatz)
    return psi_reduced, trace_reduced


def _entries(M, K):
    return [((i, j), M[i, j]) for i in range(K) for j in range(i, K)]


def _exponent_after(exponent, wk):
    r"""The exponent left after integrating :math:`e^{-aw^2/2 + bw + c}` over :math:`w`:
    :math:`b^2/(2a) + c` (:func:`~replica.glm.calculus.gaussian_exp_integral`'s form)."""
    poly = sympy.Poly(exponent, wk)
    a = -2 * poly.coeff_monomial(wk**2)
    bb = poly.coeff_monomial(wk)
    c = poly.coeff_monomial(1)
    return sympy.expand(sympy.cancel(bb**2 / (2 * a)) + c)


def H(x):
    r"""The Gaussian tail :math:`H(x) = P(Z > x) = \tfrac12\operatorname{erfc}(x/\sqrt2)`."""
    return sympy.erfc(x / sympy.sqrt(2)) / 2


def _channel_k1(D: CommitteeDerivation):
    r""":math:`\Psi_{\rm out}(q)` of one hidden unit: the sign perceptron."""
    c = sympy.sqrt(q / (1 - q))
    Z1 = H(-c * xi)  # P(sqrt(q) xi + sqrt(1 - q) z > 0)

    def check():
        """SymPy: Z_out(-1 | xi) = 1 - Z_out(1 | xi) = Z_out(1 | -xi)."""
        return sympy.simplify(Z1.xreplace({xi: -xi}) - (1 - Z1)) == 0

    D.add("channel_partition", {"Z1": _eq(sympy.Symbol("Z_out_1"), Z1)},
          "One hidden unit (K = 1): Z_out(1; omega, V) = P(omega + sqrt(V) z > 0) = H(-omega/"
          "sqrt(V)) with omega = sqrt(q) xi, V = 1 - q; the label -1 is the label 1 at -xi "
          "(checked by SymPy).", check)
    out = 2 * gauss(H(c * xi) * sympy.log(H(c * xi)), xi)
    D.add("channel_average", {"Psi_out": _eq(sympy.Symbol("Psi_out"), out)},
          "The channel term: both labels alike, written at -xi (a Gaussian tail, full "
          "precision).")
    return out


def _channel_k2(D: CommitteeDerivation):
    r""":math:`\Psi_{\rm out}(q)` of two hidden units at the non-specialised point, and the
    general :math:`Z_{\rm out}(1)` (module docstring)."""
    I = sympy.eye(2)
    P1 = sympy.ones(2, 2) / 2
    R = sympy.Matrix([[1, 1], [1, -1]]) / sympy.sqrt(2)
    Qa = q * P1 + q0 * (I - P1)
    root = sympy.sqrt(q) * P1 + sympy.sqrt(q0) * (I - P1)
    up, um = sympy.symbols("u_+ u_-", real=True)

    def check_rotation():
        """SymPy: R is orthogonal, R Q R^T = diag(q, q_0), R Q^(1/2) R^T = diag(sqrt q,
        sqrt q_0) with (Q^(1/2))^2 = Q, R (I - Q) R^T = diag(1 - q, 1 - q_0); and on a grid of
        (u_+, u_-) the committee's label (sign(sign u_1 + sign u_2), u = R^T (u_+, u_-)) is +1
        iff u_+ > |u_-|, -1 iff u_+ < -|u_-|, with min(u_1, u_2) = (u_+ - |u_-|)/sqrt(2)."""
        if sympy.simplify(R * R.T - I) != sympy.zeros(2, 2):
            return False
        for A, diag in ((Qa, (q, q0)), (root, (sympy.sqrt(q), sympy.sqrt(q0))),
                        (I - Qa, (1 - q, 1 - q0))):
            if sympy.simplify(R * A * R.T - sympy.diag(*diag)) != sympy.zeros(2, 2):
                return False
        if sympy.simplify(root * root - Qa) != sympy.zeros(2, 2):
            return False
        # (no grid point on u_1 = 0 or u_2 = 0, |a| = |b|: a = k/3, b = (2j + 1)/10)
        for a in [sympy.Rational(k, 3) for k in range(-5, 6)]:
            for b in [sympy.Rational(2 * j + 1, 10) for j in range(-6, 6)]:
                u1, u2 = (a + b) / sympy.sqrt(2), (a - b) / sympy.sqrt(2)
                label = sympy.sign(sympy.sign(u1) + sympy.sign(u2))
                if (label == 1) != bool(a > abs(b)) or (label == -1) != bool(a < -abs(b)):
                    return False
                if sympy.simplify(sympy.Min(u1, u2) - (a - abs(b)) / sympy.sqrt(2)) != 0:
                    return False
        return True

    s1 = sympy.sqrt(1 - q)
    om_p, om_m = sympy.sqrt(q) * xi, sympy.sqrt(q0) * sympy.Symbol("xi_-", real=True)
    g_general = H((sympy.Abs(om_m + sympy.sqrt(1 - q0) * z) - om_p) / s1)
    general = gauss(g_general, z)
    D.add("channel_partition",
          {"u_plus": _eq(up, (sympy.Symbol("u_1") + sympy.Symbol("u_2")) / sympy.sqrt(2)),
           "u_minus": _eq(um, (sympy.Symbol("u_1") - sympy.Symbol("u_2")) / sympy.sqrt(2)),
           "g1": _eq(sympy.Function("g_1")(um), g_general.xreplace(
               {om_m + sympy.sqrt(1 - q0) * z: um})),
           "Z1": _eq(sympy.Symbol("Z_out_1"), general)},
          "Two hidden units, the committee y = sign(sign u_1 + sign u_2) in {-1, 0, 1}: the "
          "rotation R to (u_+, u_-) = ((u_1 + u_2), (u_1 - u_2))/sqrt(2) diagonalises Q^(1/2) "
          "and V = I - Q on the ansatz, so u_+ = sqrt(q) xi_+ + sqrt(1 - q) z_+ and u_- = "
          "sqrt(q_0) xi_- + sqrt(1 - q_0) z_- are independent; y = 1 iff u_+ > |u_-| and y = "
          "-1 iff u_+ < -|u_-| (checked), so Z_out(1) is the Gaussian tail of u_+ averaged "
          "over u_- (one integral: the bivariate orthant probability, exact), Z_out(-1) the "
          "same at -omega_+, Z_out(0) = 1 - Z_out(1) - Z_out(-1).", check_rotation)
    r2 = sympy.sqrt(2)
    g_plus = sympy.Heaviside(z) * sympy.erfc((z - om_p) / (s1 * r2))
    g_zero = sympy.Heaviside(z) * (sympy.erfc((om_p - z) / (s1 * r2))
                                   - sympy.erfc((z + om_p) / (s1 * r2)))
    Zp, Z0 = gauss(g_plus, z), gauss(g_zero, z)

    def check_half_line():
        """SymPy: at q_0 = 0 the integrand of Z_out(1) is even in z, and on z > 0 twice it is
        the half-line integrand; Z_out(0)'s integrand on z > 0 is twice 1 - H((z - omega)/
        sqrt(1 - q)) - H((z + omega)/sqrt(1 - q)) (erfc(-x) = 2 - erfc(x))."""
        f = g_general.xreplace({q0: 0})
        if not calculus.is_even(f, z):
            return False
        zp = sympy.Symbol("zp", positive=True)  # (Heaviside(zp) = 1)
        if sympy.simplify((2 * f - g_plus).xreplace({z: zp})) != 0:
            return False
        zero = 2 * (1 - H((zp - om_p) / s1) - H((zp + om_p) / s1))
        return sympy.simplify(sympy.expand(zero - g_zero.xreplace({z: zp}))) == 0

    D.add("non_specialised",
          {"Z1": _eq(sympy.Symbol("Z_+"), Zp), "Z0": _eq(sympy.Symbol("Z_0"), Z0)},
          "The non-specialised point q_0 = qhat_0 = 0 (Q = q P_1): u_- = z_- is independent of "
          "the field and the integrands are even in it, so each is twice its half line: "
          "Z_+ = Z_out(1), Z_out(-1) = Z_+ at -xi, Z_0 = Z_out(0). It is a fixed point for "
          "every alpha: Psi_out is even in omega_- (the exchange of the units), its expansion "
          "in q_0 has no linear term (the specialisation step).", check_half_line)
    Zc, Uc, Z0c, hc, ac = _closed_non_specialised(D, Zp, Z0)
    even = {xi: sympy.Abs(xi)}
    out = gauss((Zc * sympy.log(Zc) + Uc * sympy.log(Uc) + Z0c * sympy.log(Z0c)).xreplace(even),
                xi)
    # the expansion in q_0: Z_y = Z_y^(0) + q_0 (xi_-^2 - 1) A_y/2 + O(q_0^(3/2))
    xm = sympy.Symbol("xi_-", real=True)
    Ap = gauss((z**2 - 1) * sympy.Heaviside(z) * sympy.erfc((z - om_p) / (s1 * r2)), z)
    Am = Ap.xreplace({xi: -xi})
    A0 = -Ap - Am
    Zm = Zp.xreplace({xi: -xi})
    first = calculus.expect((xm**2 - 1) / 2, xm)  # the xi_- average of the linear term
    second = calculus.expect(((xm**2 - 1) / 2) ** 2, xm) / 2  # of delta^2/(2 Z) per A^2/Z
    c2 = second * gauss(Ap**2 / Zp + Am**2 / Zm + A0**2 / Z0, xi)

    def check_expansion():
        """SymPy: the xi_- average of the linear term vanishes, the quadratic coefficient is
        E((xi^2 - 1)/2)^2/2 = 1/4, and sum_y A_y = E[(z^2 - 1) sum_y g_y] = E[z^2 - 1] = 0
        (which gives A_0 = -A_+ - A_-); the argument sqrt(q_0) xi + sqrt(1 - q_0) z of g_y has
        variance 1 for every q_0."""
        if first != 0 or second != sympy.Rational(1, 4):
            return False
        if calculus.expect(z**2 - 1, z) != 0:
            return False
        return sympy.expand((sympy.sqrt(q0))**2 + (sympy.sqrt(1 - q0))**2) == 1

    D.add("specialisation",
          {"A": _eq(sympy.Symbol("A_+"), Ap),
           "c2": _eq(sympy.Symbol("c_2"), c2)},
          "The expansion in the specialised overlap q_0: the label's probability given u_- is "
          "g_y(u_-), Z_y = E_z g_y(sqrt(q_0) xi_- + sqrt(1 - q_0) z), whose xi_- average is "
          "E g_y for every q_0; Taylor's formula and Stein's lemma give Z_y = Z_y(0) + q_0 "
          "(xi_-^2 - 1) A_y/2 + O(q_0^(3/2)) with A_y = E[(z^2 - 1) g_y(z)], so the linear "
          "term of sum_y Z_y log Z_y averages to zero and Psi_out(q, q_0) = Psi_out(q) + c_2 "
          "q_0^2 + O(q_0^3), c_2 = E_xi sum_y A_y^2/(4 Z_y). The non-specialised point loses "
          "stability where 4 alpha c_2 = 1.", check_expansion)
    D.specialisation_coefficient = c2
    D._pieces = (Ap, Zp, Z0)
    D.add("channel_average", {"Psi_out": _eq(sympy.Symbol("Psi_out"), out)},
          "The channel term at the non-specialised point: the label -1 equals the label 1 "
          "under xi -> -xi, so Psi_out = E_xi[2 Z_+ log Z_+ + Z_0 log Z_0]; its integrand's "
          "even part is Z_+ log Z_+ + Z_- log Z_- + Z_0 log Z_0 (Z_-(xi) = Z_+(-xi), Z_0 "
          "even), so Psi_out = E_xi[Z_+ log Z_+ + Z_- log Z_- + Z_0 log Z_0] with the closed "
          "forms of the step before at |xi|: a one-dimensional Gaussian integral of elementary "
          "functions and Owen's T and U (no difference cancels at xi > 0).")
    return out, Zp, Z0


def _closed_non_specialised(D: CommitteeDerivation, Zp, Z0):
    r"""The step ``non_specialised_closed``: the label probabilities at the non-specialised
    point from the bivariate orthant probability of :func:`_bivariate_orthant` (Owen's formula)
    at :math:`q_0 = 0`, :math:`\omega_- = 0`, :math:`\omega_+ = \sqrt q\,\xi`. Returns
    ``(Z_+, Z_-, Z_0, h, a)`` for :math:`\xi > 0`: :math:`Z_+ = \Phi(h) - 2T(h, a)`,
    :math:`Z_- = 2U(h, a)`, :math:`Z_0 = 4T(h, a)`, :math:`h = \sqrt{q/(2 - q)}\,\xi`,
    :math:`a = 1/\sqrt{1 - q}`."""
    import mpmath

    from ..symbolic.gaussian import owens_u

    Zg, _, _, _, _ = _bivariate_orthant()
    at = {q0: 0, wm: 0, wp: sympy.sqrt(q) * xi}
    Zgen = Zg.xreplace(at)
    pw = list(Zgen.atoms(sympy.Piecewise))
    Zgen0 = Zgen.xreplace({p: 0 for p in pw})  # beta = 0 (checked below)
    ts = sorted(Zgen0.atoms(owens_t), key=sympy.default_sort_key)
    hh = sympy.sqrt(q) * xi / sympy.sqrt(2 - q)
    aa = 1 / sympy.sqrt(1 - q)
    Zc = _Phi(hh) - 2 * owens_t(hh, aa)
    Uc = 2 * owens_u(hh, aa)
    Z0c = 4 * owens_t(hh, aa)

    def check_closed():
        """SymPy: at omega_- = 0 the orthant's h and k coincide (h k = h^2 >= 0, and h + k =
        2h = 0 where h k = 0), so Owen's beta is 0; both T terms have the arguments (h, a)
        with h = sqrt(q/(2 - q)) xi and a = 1/sqrt(1 - q) (the difference simplified to 0, or
        zero at 40 digits at q = 1/10, 1/2, 9/10); 2 U = Phi(-h) - 2 T (U's definition) and
        Phi(h) + Phi(-h) = 1 (so Z_0 = 1 - Z_+(xi) - Z_+(-xi) = 4 T, T being even in h). mpmath
        at 40 digits: the closed forms equal the step before's integrals Z_+ = E_z theta(z)
        erfc((z - omega)/sqrt(2(1 - q))) at xi and -xi and Z_0 = its integral at four points
        (q, xi), to 1e-36."""
        if len(pw) != 1 or len(ts) != 1:
            return False
        hval = ts[0].args[0]
        cond = pw[0].args[0].cond  # (beta = 0 where it holds: h k > 0 or h k = 0 <= h + k)
        if pw[0].args[0].expr != 0:
            return False
        for xv in (0, sympy.Rational(7, 3), -sympy.Rational(7, 3)):  # h = k: xi = 0 or not
            if cond.xreplace({q: sympy.Rational(1, 2), xi: xv}) is not sympy.true:
                return False
        if sympy.simplify(Zgen0 - (_Phi(hval) - 2 * ts[0])) != 0:
            return False
        for arg, want in zip(ts[0].args, (hh, aa)):
            if sympy.simplify(arg - want) == 0:
                continue
            for qv in (sympy.Rational(1, 10), sympy.Rational(1, 2), sympy.Rational(9, 10)):
                d = (arg - want).xreplace({q: qv, xi: sympy.Rational(7, 3)})
                if abs(sympy.N(d, 40)) > sympy.Float("1e-38"):
                    return False
        hs = sympy.Symbol("h_s", real=True)
        Udef = sympy.erfc(hs / sympy.sqrt(2)) / 4 - owens_t(hs, aa)
        if sympy.simplify(2 * Udef - (_Phi(-hs) - 2 * owens_t(hs, aa))) != 0:
            return False
        if sympy.simplify(_Phi(hs) + _Phi(-hs) - 1) != 0:
            return False
        with mpmath.workdps(40):
            for qv, xv in (("0.3", "1.7"), ("0.48", "0.25"), ("0.7", "3.5"), ("0.9", "0.6")):
                Q, X = mpmath.mpf(qv), mpmath.mpf(xv)
                s = mpmath.sqrt(1 - Q)

                def zplus(om):
                    return 2 * mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.ncdf((om - t) / s),
                                           [0, max(om, 0), mpmath.inf])
                om = mpmath.sqrt(Q) * X
                zero = 2 * mpmath.quad(lambda t: mpmath.npdf(t) * (
                    mpmath.ncdf((t - om) / s) - mpmath.ncdf((-t - om) / s)), [0, om, mpmath.inf])
                sub = {q: sympy.Float(qv, 45), xi: sympy.Float(xv, 45)}
                for closed, ref in ((Zc, zplus(om)), (Uc, zplus(-om)), (Z0c, zero)):
                    got = mpmath.mpf(str(sympy.N(closed.xreplace(sub), 45)))
                    if abs(got - ref) > mpmath.mpf(10) ** -36 * abs(ref):
                        return False
        return True

    D.add("non_specialised_closed",
          {"Z1": _eq(sympy.Symbol("Z_+"), Zc), "Zm": _eq(sympy.Symbol("Z_-"), Uc),
           "Z0": _eq(sympy.Symbol("Z_0"), Z0c)},
          "The label probabilities at the non-specialised point in closed form, for xi > 0: "
          "the bivariate orthant probability of the specialised branch (Owen's formula) at q_0 "
          "= 0, omega_- = 0, omega_+ = sqrt(q) xi (substituted by SymPy; there h = k, so "
          "Owen's beta is 0) is Z_+ = Phi(h) - 2 T(h, a), h = sqrt(q/(2 - q)) xi, a = 1/sqrt(1 "
          "- q); Z_-(xi) = Z_+(-xi) = Phi(-h) - 2 T(h, a) = 2 U(h, a) (U = erfc(h/sqrt 2)/4 - "
          "T, evaluated without the difference, which cancels for large h) and Z_0 = 1 - Z_+ - "
          "Z_- = 4 T(h, a). Checked: the arguments by SymPy, the values against the step "
          "before's integrals at 40 digits.", check_closed)
    return Zc, Uc, Z0c, hh, aa


def _gibbs_k2(D: CommitteeDerivation | None = None):
    r"""The Gibbs error of two hidden units at the non-specialised point: a posterior sample
    :math:`W` has :math:`\operatorname{Cov}(Wx, W^*x)/d = Q`, so the rotated pairs
    :math:`(z_+, z_+^*)` have correlation :math:`q` and :math:`(z_-, z_-^*)` are independent
    (:math:`q_0 = 0`); the labels agree with probability :math:`2P(y = y^* = 1) + P(y = y^* =
    0)` with :math:`P(y = 1\,|\,z_+) = \theta(z_+)(1 - 2H(z_+))` (:math:`|z_-| < z_+`) and
    :math:`P(y = 0\,|\,z_+) = 2H(|z_+|)`: :math:`\varepsilon = 1 - 2\mathbb E[a(z_+)a(z_+^*)]
    - \mathbb E[b(z_+)b(z_+^*)]`, with :math:`z_+^* = qz_+ + \sqrt{1 - q^2}\,t`; the second
    average, even in :math:`z_+`, is twice its half line. The inner averages over :math:`t` are
    the label probabilities at :math:`\omega = qz_+`, :math:`V = 1 - q^2` in closed form (the
    step ``gibbs_closed``, recorded in ``D``): one-dimensional integrals."""
    t = sympy.Symbol("t", real=True)
    zs = q * xi + sympy.sqrt(1 - q**2) * t
    a_star = sympy.Heaviside(zs) * (1 - 2 * H(zs))
    b_star = 2 * sympy.Heaviside(zs) * H(zs) + 2 * sympy.Heaviside(-zs) * (1 - H(zs))
    # the inner averages in closed form (D: the step gibbs_closed): E_t a(z*) = P(z* > |X|)
    # and E_t b(z*) = P(|X| > |z*|), X ~ N(0, 1), z* ~ N(q xi, 1 - q^2): the label
    # probabilities Z_+ and Z_0 at omega = q xi, V = 1 - q^2
    h2 = q * xi / sympy.sqrt(2 - q**2)
    a2 = 1 / sympy.sqrt(1 - q**2)
    Ea = _Phi(h2) - 2 * owens_t(h2, a2)
    Eb = 4 * owens_t(h2, a2)
    if D is not None:
        import mpmath

        from ..symbolic.codegen import lambdify_canonical  # (the package's one lambdify)

        def check_gibbs():
            """mpmath at 40 digits: the closed forms equal the inner averages E_t a(z*), E_t
            b(z*) (quadrature of their integrands, split at z* = 0) at four points (q, xi)."""
            with mpmath.workdps(40):
                for qv, xv in (("0.3", "1.7"), ("0.48", "0.25"), ("0.7", "3.5"),
                               ("0.9", "0.6")):
                    sub = {q: sympy.Float(qv, 45), xi: sympy.Float(xv, 45)}
                    fa = lambdify_canonical([t], a_star.xreplace(sub).rewrite(
                        sympy.Piecewise), modules="mpmath")
                    fb = lambdify_canonical([t], b_star.xreplace(sub).rewrite(
                        sympy.Piecewise), modules="mpmath")
                    Q, X = mpmath.mpf(qv), mpmath.mpf(xv)
                    cut = -Q * X / mpmath.sqrt(1 - Q * Q)  # z* = 0
                    for closed, f in ((Ea, fa), (Eb, fb)):
                        ref = mpmath.quad(lambda u: mpmath.npdf(u) * f(u),
                                          [mpmath.ninf, cut, mpmath.inf])
                        got = mpmath.mpf(str(sympy.N(closed.xreplace(sub), 45)))
                        if abs(got - ref) > mpmath.mpf(10) ** -36 * abs(ref):
                            return False
            return True

        D.add("gibbs_closed",
              {"Ea": _eq(sympy.Symbol("E_t a(z*)"), Ea),
               "Eb": _eq(sympy.Symbol("E_t b(z*)"), Eb)},
              "The Gibbs error's inner averages: a(z) = theta(z)(1 - 2 H(z)) = P(|X| < z) and "
              "b(z) = 2 H(|z|) = P(|X| > |z|) (X ~ N(0, 1)), so with z* ~ N(q xi, 1 - q^2) "
              "E_t a(z*) and E_t b(z*) are the label probabilities Z_+ and Z_0 of the step "
              "non_specialised_closed at omega = q xi, V = 1 - q^2: Phi(h) - 2 T(h, a) and 4 "
              "T(h, a) with h = q xi/sqrt(2 - q^2), a = 1/sqrt(1 - q^2). Checked against the "
              "quadrature of the inner integrals at 40 digits.", check_gibbs)
    both_one = gauss(sympy.Heaviside(xi) * (1 - 2 * H(xi)) * Ea, xi)
    both_zero = 2 * gauss(sympy.Heaviside(xi) * 2 * H(xi) * Eb, xi)
    return 1 - 2 * both_one - both_zero


def Committee(name: str, *, K: int = 2, prior: str = "gaussian", activation: str = "sign",
              parameters: Sequence = (), title: str = "", **kw) -> SaddlePointModel:
    r"""The Bayes-optimal committee machine with ``K`` hidden units (1 or 2), Gaussian prior,
    sign activations and the sign of their sum as the output, as a
    :class:`~replica.modeling.SaddlePointModel` in :math:`(q, \hat q)` -- the committee-symmetric
    ansatz at its non-specialised point :math:`q_0 = 0` for ``K = 2`` (module docstring); the
    free entropy is derived, the steps recorded (``model.derivation``). ``parameters``: a
    :class:`~replica.modeling.Parameter` record named ``alpha`` replacing the default (e.g. with
    an upper bound)."""
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ModelError(f"model {name!r}: K is the number of hidden units, a positive "
                         f"integer; got {K!r}")
    if K > 2:
        raise ModelError(f"model {name!r}: K = {K} is not derived (the committee's label "
                         "probability is an orthant probability in K dimensions; for K = 2 "
                         "it is one integral, nested in the two-dimensional channel term, and "
                         "the engine evaluates at most two nested integrals): K = 1 or 2")
    if prior != "gaussian":
        raise ModelError(f"model {name!r}: prior {prior!r} is not derived for the committee "
                         "machine (the Gaussian prior is)")
    if activation != "sign":
        raise ModelError(f"model {name!r}: activation {activation!r} is not derived (the "
                         "sign committee is)")
    alpha = sympy.Symbol("alpha", positive=True)
    records = {"alpha": Parameter("alpha", "samples per dimension n/d")}
    for p in parameters:
        if not isinstance(p, Parameter) or p.name != "alpha":
            raise ModelError(f"model {name!r}: parameters= takes a Parameter named 'alpha', "
                             f"got {p!r}")
        records["alpha"] = p
    D = CommitteeDerivation()
    QS, QhS = sympy.MatrixSymbol("Q", K, K), sympy.MatrixSymbol("Qhat", K, K)
    D.add("general_free_entropy",
          {"Phi": _eq(sympy.Symbol("Phi"), -sympy.Trace(QS * QhS) / 2
                           + sympy.Function("psi_P")(QhS)
                           + alpha * sympy.Function("Psi_out")(QS))},
          f"The replica-symmetric free entropy of the Bayes-optimal committee machine with "
          f"K = {K} hidden units: matrix order parameters Q, Qhat (K x K).",
          stated=f"proved by {REFERENCE}")
    psi, trace = _prior_steps(K, D)
    at_zero = {q0: 0, qhat0: 0}
    if K == 1:
        out = _channel_k1(D)
        obs = {"errors": {"gibbs": sympy.acos(q) / sympy.pi,
                          "bayes": sympy.acos(sympy.sqrt(q)) / sympy.pi}}
    else:
        out, _, _ = _channel_k2(D)
        obs = {"errors": {"gibbs": _gibbs_k2(D)}}
        _specialised_steps(D)
        D.specialisation_cubic_coefficient = _cubic_step(D, *D._pieces)
    phi = -trace.xreplace(at_zero) / 2 + psi.xreplace(at_zero) + alpha * out
    D._free_energy = phi
    D.add("free_entropy", {"Phi": _eq(sympy.Symbol("Phi"), phi)},
          "The free entropy assembled" + (" at the non-specialised point q_0 = qhat_0 = 0"
                                          if K > 1 else "") + ": the model's free energy.")
    rules = list(kw.pop("rules", []))
    return SaddlePointModel(
        name, title=title or f"Bayes-optimal committee machine, K = {K} sign hidden units, "
        "Gaussian prior" + (" (non-specialised fixed point)" if K > 1 else ""),
        free_energy=phi, pairs=[(q, qhat)], parameters=[records["alpha"]], rules=rules,
        observables=obs, start={q: sympy.Rational(1, 2)}, positive_unknowns=True,
        admissible=[(1 - q, "q < 1")], derivation=D, free_energy_name="free_entropy",
        extremum="max", symbol_names={alpha: r"\alpha", qhat: r"\hat q"},
        stability=Stability(exact="Bayes-optimal inference: the Nishimori identities hold and "
                            "the replica-symmetric formula is exact (" + REFERENCE + ")"),
        **kw)


def channel_term(model):
    r""":math:`\Psi_{\rm out}(q) = \partial\Phi/\partial\alpha`, from the model's free entropy."""
    alpha = sympy.Symbol("alpha", positive=True)
    return sympy.diff(model.free_energy, alpha)


def specialisation_coefficient(model):
    r""":math:`c_2(q)` of a ``K = 2`` model: :math:`\Psi_{\rm out}(q, q_0) = \Psi_{\rm out}(q) +
    c_2q_0^2 + O(q_0^3)` (module docstring), a two-dimensional Gaussian integral in :math:`q`."""
    c2 = getattr(model.derivation, "specialisation_coefficient", None)
    if c2 is None:
        raise ModelError(f"model {model.name!r}: the specialisation coefficient is derived for "
                         "K = 2 hidden units")
    return c2


def specialisation_threshold(model, lo=0.5, hi=0.8, tol=1e-14):
    r"""``(alpha_spec, q_spec)``: where the non-specialised fixed point of a ``K = 2`` model
    loses stability, :math:`4\alpha c_2(q^*) = 1`. Along the branch
    :math:`\alpha = q/(2(1 - q)\Psi_{\rm out}'(q))`, so :math:`q_{\rm spec}` is the root of
    :math:`F(q) = 2c_2(q)q - (1 - q)\Psi_{\rm out}'(q)` on ``[lo, hi]``, located by bisection
    on the engine's float64 code (:class:`~replica.symbolic.codegen.Evaluator`) of the derived
    expressions (float64: about 13 digits at best)."""
    from ..symbolic.codegen import Evaluator

    c2 = specialisation_coefficient(model)
    dpsi = sympy.diff(channel_term(model), q)
    F = 2 * c2 * q - (1 - q) * dpsi
    a = q / (2 * (1 - q) * dpsi)
    ev = Evaluator([F, a], [q])

    def at(x):
        return [float(v) for v in ev.f64([float(x)])]

    if not (at(lo)[0] < 0 < at(hi)[0]):
        raise ModelError(f"F(q) does not change sign on [{lo}, {hi}]")
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if at(mid)[0] < 0:
            lo = mid
        else:
            hi = mid
    qs = (lo + hi) / 2
    return at(qs)[1], qs


# -- the specialised branch q_0 > 0 (K = 2) ------------------------------------------------------
OwensT = owens_t
"""Owen's :math:`T(h, a)`: the code generator's ``replica.symbolic.gaussian.owens_t``
(float64 code: SciPy's ``owens_t``; mpmath code: Gauss--Legendre rules of its definition;
real-ball code: :func:`replica.symbolic.owen.owens_t_ball`, with rigorous truncation bounds)."""


wp, wm = sympy.symbols("omega_+ omega_-", real=True)


def _Phi(x):
    return sympy.erfc(-x / sympy.sqrt(2)) / 2


def _phi(x):
    return sympy.exp(-x**2 / 2) / sympy.sqrt(2 * sympy.pi)


def _bivariate_orthant():
    r"""``(Z_+, dZ_+/domega_+, dZ_+/domega_-, s, rho)`` at :math:`(\omega_+, \omega_-)`:
    :math:`Z_+ = P(u_1 > 0, u_2 > 0) = \Phi_2(h, k; \rho)`, by Owen's formula
    :math:`\Phi_2 = \tfrac12[\Phi(h) + \Phi(k)] - T(h, \tfrac{k - \rho h}{h\sqrt{1 - \rho^2}})
    - T(k, \tfrac{h - \rho k}{k\sqrt{1 - \rho^2}}) - \beta`, :math:`\beta = 0` if :math:`hk > 0`
    or :math:`hk = 0 \le h + k`, else :math:`\tfrac12`; its gradient from
    :math:`\partial_h\Phi_2 = \varphi(h)\Phi((k - \rho h)/\sqrt{1 - \rho^2})`."""
    s = sympy.sqrt((2 - q - q0) / 2)
    rho = (q0 - q) / (2 - q - q0)
    r = sympy.sqrt(1 - rho**2)
    h = (wp + wm) / (sympy.sqrt(2) * s)
    k = (wp - wm) / (sympy.sqrt(2) * s)
    beta = sympy.Piecewise((0, sympy.Or(h * k > 0, sympy.And(sympy.Eq(h * k, 0), h + k >= 0))),
                           (sympy.Rational(1, 2), True))
    Z = ((_Phi(h) + _Phi(k)) / 2 - OwensT(h, (k - rho * h) / (h * r))
         - OwensT(k, (h - rho * k) / (k * r)) - beta)
    a_h = _phi(h) * _Phi((k - rho * h) / r)
    a_k = _phi(k) * _Phi((h - rho * k) / r)
    dp = (a_h + a_k) / (sympy.sqrt(2) * s)
    dm = (a_h - a_k) / (sympy.sqrt(2) * s)
    return Z, dp, dm, s, rho


def _specialised_steps(D: CommitteeDerivation):
    r"""The channel term for general :math:`q_0` (its label probabilities in closed form
    through Owen's :math:`T`), the reduced free entropy, the Nishimori form of its gradient and
    the expansion to third order in :math:`q_0` (module docstring of the specialised branch)."""
    import mpmath

    Z, dp, dm, s, rho = _bivariate_orthant()
    up, um = sympy.symbols("u_+ u_-", real=True)

    def check_orthant():
        """SymPy: u_1 = (u_+ + u_-)/sqrt 2, u_2 = (u_+ - u_-)/sqrt 2 with Var u_+ = 1 - q,
        Var u_- = 1 - q_0 have variance s^2 and correlation rho. mpmath at two points
        (q, q_0, omega_+, omega_-): the closed form Z_+ equals the definition's quadrature
        E_z H((|omega_- + sqrt(1 - q_0) z| - omega_+)/sqrt(1 - q)) to 1e-20, and (at the
        first) its two derivatives the numerical derivatives of that quadrature to 1e-10."""
        vp, vm = 1 - q, 1 - q0
        var1 = (vp + vm) / 2
        cov = (vp - vm) / 2
        if sympy.simplify(var1 - s**2) != 0 or sympy.simplify(cov / var1 - rho) != 0:
            return False
        with mpmath.workdps(24):
            for point in (("0.7", "0.3", "0.4", "-0.9"), ("0.5", "0.8", "-1.1", "0.2")):
                qv, q0v, a, b = (mpmath.mpf(v) for v in point)

                def definition(x, y):
                    sq, sm = mpmath.sqrt(1 - qv), mpmath.sqrt(1 - q0v)
                    f = lambda t: mpmath.npdf(t) * mpmath.erfc(  # noqa: E731
                        (abs(y + sm * t) - x) / (sq * mpmath.sqrt(2))) / 2
                    return mpmath.quad(f, [-mpmath.inf, -y / sm, mpmath.inf])

                at = dict(zip((q, q0, wp, wm), (sympy.Float(v, 30) for v in point)))
                if abs(sympy.N(Z.subs(at), 25) - definition(a, b)) > 1e-20:
                    return False
                if point[0] != "0.7":
                    continue  # (the derivatives at the first point: mpmath.diff is slow)
                ddp = mpmath.diff(lambda x: definition(x, b), a)
                ddm = mpmath.diff(lambda y: definition(a, y), b)
                if abs(sympy.N(dp.subs(at), 25) - ddp) > 1e-10:
                    return False
                if abs(sympy.N(dm.subs(at), 25) - ddm) > 1e-10:
                    return False
        return True

    Phi2 = sympy.Function("Phi_2")
    D.add("specialised_partition",
          {"Z1": _eq(sympy.Symbol("Z_out_1"), Z),
           "dZ1_plus": _eq(sympy.Symbol("dZ_out_1/domega_+"), dp),
           "dZ1_minus": _eq(sympy.Symbol("dZ_out_1/domega_-"), dm),
           "orthant": _eq(sympy.Symbol("Z_out_1"),
                               Phi2(sympy.Symbol("h"), sympy.Symbol("k"), sympy.Symbol("rho")))},
          "The label probabilities for general q_0 in closed form: Z_out(1) = P(u_1 > 0, u_2 > 0) "
          "with (u_1, u_2) = ((u_+ + u_-), (u_+ - u_-))/sqrt(2) bivariate normal, means "
          "(omega_+ +- omega_-)/sqrt(2), variances s^2 = (2 - q - q_0)/2 and correlation rho = "
          "(q_0 - q)/(2 - q - q_0): Phi_2(h, k; rho) with h, k = (omega_+ +- omega_-)/(sqrt(2) "
          "s), written by Owen's T function; its gradient from d Phi_2/dh = phi(h) Phi((k - rho "
          "h)/sqrt(1 - rho^2)). Z_out(-1) is Z_out(1) at -omega_+ (u -> -u), Z_out(0) = 1 - "
          "Z_out(1) - Z_out(-1). Checked against the quadrature of the definition.",
          check_orthant)
    # the free entropy with the conjugates eliminated
    alpha = sympy.Symbol("alpha", positive=True)
    x = sympy.Symbol("x", positive=True)
    prior_of = -x * (x / (1 - x)) / 2 + (x / (1 - x) - sympy.log(1 + x / (1 - x))) / 2
    reduced = (q + sympy.log(1 - q)) / 2 + (q0 + sympy.log(1 - q0)) / 2 \
        + alpha * sympy.Function("Psi_out")(q, q0)

    def check_reduced():
        """SymPy: -x xhat/2 + (xhat - log(1 + xhat))/2 at xhat = x/(1 - x) (the prior's
        stationarity) is (x + log(1 - x))/2, and its series in x starts -x^2/4 - x^3/6."""
        # 1 + xhat = 1/(1 - x), so log(1 + xhat) = -log(1 - x) on 0 < x < 1
        if sympy.cancel(1 + x / (1 - x) - 1 / (1 - x)) != 0:
            return False
        rest = prior_of.subs(sympy.log(1 + x / (1 - x)), -sympy.log(1 - x))
        if sympy.simplify(rest - (x + sympy.log(1 - x)) / 2) != 0:
            return False
        ser = sympy.series((x + sympy.log(1 - x)) / 2, x, 0, 4).removeO()
        return sympy.expand(ser + x**2 / 4 + x**3 / 6) == 0

    D.add("specialised_free_entropy", {"Phi": _eq(sympy.Symbol("Phi"), reduced)},
          "The free entropy with qhat = q/(1 - q), qhat_0 = q_0/(1 - q_0) eliminated (the "
          "prior's stationarity): Phi(q, q_0) = (q + log(1 - q))/2 + (q_0 + log(1 - q_0))/2 + "
          "alpha Psi_out(q, q_0); the prior part of q_0 is -q_0^2/4 - q_0^3/6 + O(q_0^4).",
          check_reduced)
    # the Nishimori (integration by parts) form of the gradient
    V, xx = sympy.symbols("V x", positive=True)
    tail = H((xx - wp) / sympy.sqrt(V))

    def check_heat():
        """SymPy: the Gaussian smoothing H((x - omega)/sqrt(V)) solves the heat equation
        d_V = (1/2) d_omega^2, so each label probability, an average of such terms, does."""
        return sympy.simplify(sympy.diff(tail, V) - sympy.diff(tail, wp, 2) / 2) == 0

    D.add("specialised_gradient",
          {"dq": _eq(sympy.Symbol("dPsi_out/dq"),
                          sympy.Symbol("E_xi sum_y (dZ_y/domega_+)^2/(2 Z_y)")),
           "dq0": _eq(sympy.Symbol("dPsi_out/dq_0"),
                           sympy.Symbol("E_xi sum_y (dZ_y/domega_-)^2/(2 Z_y)"))},
          "The gradient of Psi_out(q, q_0) = E_xi sum_y Z_y log Z_y, Z_y at omega_+ = sqrt(q) "
          "xi_+, omega_- = sqrt(q_0) xi_- and V_+ = 1 - q, V_- = 1 - q_0: d/dq acts through "
          "omega_+ (xi_+/(2 sqrt q) d_omega, integrated by parts in xi_+) and through V_+ (the "
          "heat equation d_V Z = d_omega^2 Z/2, checked), which leave (1/2) E sum_y (d_omega_+ "
          "Z_y)^2/Z_y (sum_y d Z_y = 0); the same in (q_0, omega_-). The stationarity "
          "conditions are q/(1 - q) = 2 alpha dPsi_out/dq and q_0/(1 - q_0) = 2 alpha "
          "dPsi_out/dq_0.", check_heat)
    return Z, dp, dm


def _cubic_step(D: CommitteeDerivation, Ap, Zp, Z0):
    r"""The third-order coefficient :math:`c_3 = -\tfrac16\mathbb E_{\xi}\sum_yA_y^3/Z_y^2` of
    :math:`\Psi_{\rm out}(q, q_0)` (module docstring of the specialised branch)."""
    xm, t = sympy.Symbol("xi_-", real=True), sympy.Symbol("t", real=True)
    He2, He4 = xm**2 - 1, xm**4 - 6 * xm**2 + 3
    Am = Ap.xreplace({xi: -xi})
    Zm = Zp.xreplace({xi: -xi})
    A0 = -Ap - Am
    c3 = -sympy.Rational(1, 6) * gauss(Ap**3 / Zp**2 + Am**3 / Zm**2 + A0**3 / Z0**2, xi)

    def check_cubic():
        """SymPy (Gaussian moments): Mehler's rule E_t He_n(sqrt(q_0) xi + sqrt(1 - q_0) t) =
        q_0^(n/2) He_n(xi) for n = 2, 4 (so Z_y = Z_y(0) + q_0 He_2(xi_-) A_y/2 + q_0^2 He_4
        B_y + O(q_0^3), even g_y having no odd Hermite components); E He_2 = E He_4 = 0,
        E He_2 He_4 = 0 and E He_2^3 = 8, so the q_0^3 term of sum_y Z_y log Z_y averages to
        -sum_y (A_y/2)^3 E He_2^3/(6 Z_y^2) = -sum_y A_y^3/(6 Z_y^2)."""
        arg = sympy.sqrt(q0) * xm + sympy.sqrt(1 - q0) * t
        for n, He in ((2, He2), (4, He4)):
            heat = calculus.expect(sympy.expand(He.xreplace({xm: arg})), t)
            if sympy.expand(heat - q0 ** sympy.Rational(n, 2) * He) != 0:
                return False
        E = lambda f: calculus.expect(sympy.expand(f), xm)  # noqa: E731
        if E(He2) != 0 or E(He4) != 0 or E(He2 * He4) != 0 or E(He2**3) != 8:
            return False
        return sympy.Rational(8, 6) * sympy.Rational(1, 8) == sympy.Rational(1, 6)

    D.add("specialisation_cubic", {"c3": _eq(sympy.Symbol("c_3"), c3)},
          "The third order in q_0: Z_y(xi_+, xi_-) = Z_y(0) + q_0 He_2(xi_-) A_y/2 + q_0^2 "
          "He_4(xi_-) B_y + O(q_0^3) (Mehler's rule for the Hermite components of the even g_y), "
          "and with f(Z) = Z log Z, f'' = 1/Z, f''' = -1/Z^2, the xi_- averages E He_2 He_4 = 0, "
          "E He_2^3 = 8 leave Psi_out = Psi_out(q) + c_2 q_0^2 + c_3 q_0^3 + O(q_0^4), c_3 = "
          "-E_xi sum_y A_y^3/(6 Z_y^2).", check_cubic)
    return c3


_NUMERIC = {}


def _orthant_numeric():
    """The float64 code of ``(Z_+, dZ_+/domega_+, dZ_+/domega_-)`` in ``(omega_+, omega_-, q,
    q_0)`` (arrays), generated from the derived expressions by the engine's
    :class:`~replica.symbolic.codegen.Evaluator` (Owen's T: SciPy's ``owens_t`` in the
    generator's float64 namespace)."""
    if "orthant" not in _NUMERIC:
        from ..symbolic.codegen import Evaluator

        Z, dp, dm, _, _ = _bivariate_orthant()
        ev = Evaluator([Z, dp, dm], [wp, wm, q, q0])
        _NUMERIC["orthant"] = lambda a, b, c, d: ev.f64([a, b, c, d])
    return _NUMERIC["orthant"]


PANELS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.5, 8.0, 10.0, 12.5)
"""The panel edges (on the half line; mirrored) of :func:`gauss_rule`."""


def gauss_rule(n: int, half: bool = False):
    r"""``(x, w)``: a rule for :math:`\mathbb E_{\xi\sim N(0,1)}f(\xi)`, ``n``-point
    Gauss--Legendre on each panel of ``PANELS`` (mirrored onto the negative half line unless
    ``half``, where the weights are doubled: for even ``f``), times the Gaussian density. The
    Gaussian weight beyond :math:`12.5` is below :math:`10^{-35}`. Composite panels resolve the
    label probabilities' steep fronts at :math:`q \to 1` (width :math:`\sqrt{(1 - q)/q}` in
    :math:`\xi`), which a global Gauss--Hermite rule does not."""
    import numpy as np

    x, w = np.polynomial.legendre.leggauss(n)
    nodes, weights = [], []
    for a, b in zip(PANELS, PANELS[1:]):
        nodes.append((b - a) / 2 * x + (a + b) / 2)
        weights.append((b - a) / 2 * w)
    x, w = np.concatenate(nodes), np.concatenate(weights)
    w = w * np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)
    if half:
        return x, 2 * w
    return np.concatenate([-x[::-1], x]), np.concatenate([w[::-1], w])


class SpecialisedChannel:
    r"""The ``K = 2`` channel term :math:`\Psi_{\rm out}(q, q_0)` and its gradient in float64:
    :math:`\mathbb E_{\xi_+, \xi_-}` by the tensor product of :func:`gauss_rule` (``n`` nodes a
    panel; :math:`\xi_-` on its half line, the integrand being even in :math:`\omega_-`) of
    the label probabilities in closed form (the step ``specialised_partition``), the gradient in its
    Nishimori form (``specialised_gradient``). Terms whose :math:`Z_y < 10^{-13}` are left out
    of the gradient's sums (Owen's formula cancels there; such a term is below
    :math:`10^{-13}` times the largest squared score, weighted by a Gaussian tail)."""

    CUT = 1e-13

    def __init__(self, n: int = 16):
        import numpy as np

        xp, wpl = gauss_rule(n)
        xm, wmi = gauss_rule(n, half=True)
        self.XP, self.XM = np.meshgrid(xp, xm, indexing="ij")
        self.W = np.outer(wpl, wmi)
        self.orthant = _orthant_numeric()

    def labels(self, qv, q0v):
        r"""``[(Z_y, dZ_y/domega_+, dZ_y/domega_-)]`` for :math:`y = 1, -1, 0` on the grid."""
        import numpy as np

        op, om = np.sqrt(qv) * self.XP, np.sqrt(q0v) * self.XM
        with np.errstate(all="ignore"):
            Zp, dpp, dpm = (np.broadcast_to(a, op.shape) for a in self.orthant(op, om, qv, q0v))
            Zm, dmp, dmm = (np.broadcast_to(a, op.shape) for a in self.orthant(-op, om, qv, q0v))
        dmp = -dmp
        return [(Zp, dpp, dpm), (Zm, dmp, dmm), (1 - Zp - Zm, -dpp - dmp, -dpm - dmm)]

    def psi(self, qv, q0v):
        r""":math:`\Psi_{\rm out}(q, q_0) = \mathbb E\sum_yZ_y\log Z_y`."""
        import numpy as np

        total = 0.0
        for Z, _, _ in self.labels(qv, q0v):
            Zc = np.clip(Z, 1e-300, None)
            total += float(np.sum(self.W * np.where(Z > 0, Zc * np.log(Zc), 0.0)))
        return total

    def gradient(self, qv, q0v):
        r"""``(dPsi/dq, dPsi/dq_0)`` :math:`= \tfrac12\mathbb E\sum_y(\partial_{\omega_\pm}
        Z_y)^2/Z_y`."""
        import numpy as np

        gp = gm = 0.0
        for Z, dP, dM in self.labels(qv, q0v):
            keep = Z > self.CUT
            Zs = np.where(keep, Z, 1.0)
            gp += float(np.sum(self.W * np.where(keep, dP**2 / Zs, 0.0)))
            gm += float(np.sum(self.W * np.where(keep, dM**2 / Zs, 0.0)))
        return gp / 2, gm / 2

    def errors(self, qv, q0v):
        r"""``{"gibbs", "bayes", "paper"}``: with :math:`Z_y` the posterior predictive label
        probabilities (the teacher's label has the same law given the field: Nishimori),
        :math:`\varepsilon_{\rm Gibbs} = 1 - \mathbb E\sum_yZ_y^2` (a posterior sample's label
        and the teacher's, independent given the field), :math:`\varepsilon_{\rm Bayes} = 1 -
        \mathbb E\max_yZ_y` (the most probable label) and the paper's
        :math:`\tfrac12\mathbb E(\hat y - y)^2` with :math:`\hat y = Z_+ - Z_-` the posterior
        mean label: :math:`\tfrac12\mathbb E[Z_+ + Z_- - (Z_+ - Z_-)^2]`. (The maximum has kinks:
        the Bayes error's rule error is about :math:`10^{-5}` at ``n = 120``.)"""
        import numpy as np

        (Zp, _, _), (Zm, _, _), (Z0, _, _) = self.labels(qv, q0v)
        E = lambda f: float(np.sum(self.W * f))  # noqa: E731
        return {"gibbs": 1 - E(Zp**2 + Zm**2 + Z0**2),
                "bayes": 1 - E(np.maximum(np.maximum(Zp, Zm), Z0)),
                "paper": E(Zp + Zm - (Zp - Zm)**2) / 2}

    def free_entropy(self, alpha, qv, q0v):
        r""":math:`\Phi(q, q_0) = \tfrac12(q + \log(1 - q)) + \tfrac12(q_0 + \log(1 - q_0)) +
        \alpha\Psi_{\rm out}(q, q_0)` (the step ``specialised_free_entropy``)."""
        import math

        return ((qv + math.log1p(-qv)) / 2 + (q0v + math.log1p(-q0v)) / 2
                + alpha * self.psi(qv, q0v))


def specialised_branch(alpha, start=(0.8, 0.5), n: int = 16, tol: float = 1e-12,
                       channel: SpecialisedChannel | None = None):
    r"""The fixed points of the ``K = 2`` state evolution at ``alpha``: the specialised one
    (:math:`q_0 > 0`) and the non-specialised one (:math:`q_0 = 0`), with their free entropies
    and generalisation errors (:class:`SpecialisedChannel`, float64).

    Equations: :math:`q/(1 - q) = 2\alpha\partial_q\Psi_{\rm out}` and, divided by
    :math:`q_0 > 0` (which removes the non-specialised root),
    :math:`1/(1 - q_0) = 2\alpha\,\partial_{q_0}\Psi_{\rm out}/q_0`; solved by SciPy's
    ``root`` (hybrid Powell) from ``start``. The specialised solution is accepted
    (``status`` ``converged``) when :math:`q_0 > 10^{-8}` and both undivided residuals are below
    ``100 tol``; otherwise ``specialised`` is ``None`` (below :math:`\alpha_{\rm spec}` there is
    no root with :math:`q_0 > 0`: the transition is continuous, see the module docstring).
    Returns ``{"non_specialised": {...}, "specialised": {...} | None}``, each with ``q``,
    ``q0``, ``free_entropy``, ``errors``, ``residual``."""
    import numpy as np
    from scipy.optimize import brentq, root

    ch = channel or SpecialisedChannel(n)
    a = float(alpha)

    def point(qv, q0v):
        gq, g0 = ch.gradient(qv, q0v)
        res = max(abs(qv - 2 * a * gq * (1 - qv)), abs(q0v - 2 * a * g0 * (1 - q0v)))
        return {"q": qv, "q0": q0v, "qhat": qv / (1 - qv), "qhat0": q0v / (1 - q0v),
                "free_entropy": ch.free_entropy(a, qv, q0v), "errors": ch.errors(qv, q0v),
                "residual": res}

    q_ns = brentq(lambda x: x - 2 * a * ch.gradient(x, 0.0)[0] * (1 - x), 1e-9, 1 - 1e-9,
                  xtol=tol, rtol=4 * np.finfo(float).eps)
    out = {"non_specialised": point(q_ns, 0.0), "specialised": None}

    def F(v):
        qv, q0v = v
        if not (0 < qv < 1 and 0 < q0v < 1):
            return [1e3, 1e3]
        gq, g0 = ch.gradient(qv, q0v)
        return [qv - 2 * a * gq * (1 - qv), 1 - 2 * a * g0 * (1 - q0v) / q0v]

    sol = root(F, list(start), method="hybr", tol=tol)
    qv, q0v = (float(v) for v in sol.x)
    if 0 < qv < 1 and 1e-8 < q0v < 1:
        p = point(qv, q0v)
        if p["residual"] < 100 * tol:
            p["status"] = "converged"
            out["specialised"] = p
    return out


def specialisation_cubic_coefficient(model):
    r""":math:`c_3(q)` of a ``K = 2`` model: :math:`\Psi_{\rm out}(q, q_0) = \Psi_{\rm out}(q) +
    c_2q_0^2 + c_3q_0^3 + O(q_0^4)`, :math:`c_3 = -\tfrac16\mathbb E_\xi\sum_yA_y^3/Z_y^2` (a
    two-dimensional Gaussian integral in :math:`q`, like :math:`c_2`)."""
    c3 = getattr(model.derivation, "specialisation_cubic_coefficient", None)
    if c3 is None:
        raise ModelError(f"model {model.name!r}: the specialisation coefficients are derived "
                         "for K = 2 hidden units")
    return c3


def transition_order(model, threshold=None):
    r"""``{"alpha_spec", "q_spec", "a2_slope", "a3", "order", "q0_slope"}``: the Landau
    expansion of the free entropy at the specialisation threshold (module docstring):
    :math:`\Phi = \Phi_0 + a_2q_0^2 + a_3q_0^3 + O(q_0^4)` with :math:`a_2 = \alpha c_2(q^*) -
    \tfrac14` (zero at :math:`\alpha_{\rm spec}`, ``a2_slope`` its derivative in
    :math:`\alpha` there, by a centred difference of step :math:`10^{-4}` along the
    non-specialised branch) and :math:`a_3 = \alpha c_3(q^*) - \tfrac16`; with
    :math:`q_0 \ge 0`, ``a3 < 0`` makes the transition continuous (``order`` 2, the branch
    :math:`q_0 \approx -2a_2/(3a_3)`, slope ``q0_slope`` :math:`= -2a_2'/(3a_3)`), ``a3 > 0``
    first order (the branch :math:`q_0 = -2a_2/(3a_3) > 0` exists below
    :math:`\alpha_{\rm spec}` as a free-entropy minimum along :math:`q_0`: a spinodal)."""
    from scipy.optimize import brentq

    from ..symbolic.codegen import Evaluator

    a_s, q_s = threshold or specialisation_threshold(model)
    c2 = specialisation_coefficient(model)
    c3 = specialisation_cubic_coefficient(model)
    dpsi = sympy.diff(channel_term(model), q)
    ev = Evaluator([c2, c3, 2 * dpsi], [q])

    def at(x):
        return [float(v) for v in ev.f64([float(x)])]

    def q_star(alpha):
        return brentq(lambda x: x - alpha * at(x)[2] * (1 - x), 0.5, 0.78, xtol=1e-15)

    step = 1e-4
    a2 = [al * at(q_star(al))[0] - 0.25 for al in (a_s - step, a_s + step)]
    slope = (a2[1] - a2[0]) / (2 * step)
    a3 = a_s * at(q_s)[1] - 1 / 6
    return {"alpha_spec": a_s, "q_spec": q_s, "a2_slope": slope, "a3": a3,
            "order": 2 if a3 < 0 else 1, "q0_slope": -2 * slope / (3 * a3)}
