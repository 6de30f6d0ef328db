r"""The Bayes-optimal committee machine with two hidden units: matrix order parameters, the
non-specialised fixed point and the specialisation threshold, declared with
:func:`replica.glm.committee.Committee`.

Setting: a teacher :math:`W^* \in \mathbb R^{2\times d}` with i.i.d. :math:`N(0, 1)` entries,
:math:`n = \alpha d` samples :math:`x_\mu \sim N(0, I_d)` and labels
:math:`y_\mu = \operatorname{sign}(\operatorname{sign}z_1 + \operatorname{sign}z_2) \in \{-1, 0,
1\}`, :math:`z = W^*x_\mu/\sqrt d` (0 when the two hidden units disagree: the convention of Aubin
et al. for :math:`K = 2`); the student is the Bayes posterior. The order parameter is the
:math:`2\times 2` overlap :math:`Q` of the posterior mean with the teacher.

**Stated** (Aubin, Maillard, Barbier, Krzakala, Macris and Zdeborova, NeurIPS 2018, proved
there): :math:`\Phi = \operatorname{extr}_{Q, \hat Q}[-\tfrac12\operatorname{tr}(Q\hat Q) +
\psi_P(\hat Q) + \alpha\Psi_{\rm out}(Q)]`, with the prior term and the channel term
:math:`\Psi_{\rm out}(Q) = \mathbb E_\xi\sum_yZ_{\rm out}\log Z_{\rm out}(y; Q^{1/2}\xi, I - Q)`.

**Derived** (``replica equations --model examples/committee_machine.py``; the steps and their
checks are those of :mod:`replica.glm.committee`): :math:`\psi_P = \tfrac12[\operatorname{tr}\hat
Q - \log\det(I + \hat Q)]` with matrices, its stationarity :math:`Q = \hat Q(I + \hat Q)^{-1}`; the
committee-symmetric ansatz :math:`Q = qP_1 + q_0(I - P_1)`, :math:`P_1 = \mathbf 1\mathbf
1^\top/2` (the paper's :math:`q_dI + q_a\mathbf 1\mathbf 1^\top/2`, :math:`q_d = q_0`,
:math:`q_a = q - q_0`); the rotation to :math:`u_\pm = (u_1 \pm u_2)/\sqrt2`, which makes the
label probability :math:`Z_{\rm out}(1) = P(u_+ > |u_-|)` one integral (a bivariate orthant
probability, exact); the non-specialised point :math:`q_0 = 0` (both hidden units equally
correlated with both teacher units), a fixed point for every :math:`\alpha`, where

.. math::
    \Phi = -\tfrac12q\hat q + \tfrac12(\hat q - \log(1 + \hat q))
        + \alpha\,\mathbb E_\xi\big[2Z_+\log Z_+ + Z_0\log Z_0\big],\quad
    Z_+ = \mathbb E_z\theta(z)\operatorname{erfc}\frac{z - \sqrt q\xi}{\sqrt{2(1 - q)}},

(:math:`Z_0 = 1 - Z_+(\xi) - Z_+(-\xi)` written as one integral), solved in :math:`(q, \hat q)`
by the engine; and the expansion :math:`\Psi_{\rm out}(q, q_0) = \Psi_{\rm out}(q) +
c_2(q)q_0^2 + O(q_0^3)`, :math:`c_2 = \tfrac14\mathbb E_\xi\sum_yA_y^2/Z_y`,
:math:`A_y = \mathbb E[(z^2 - 1)g_y(z)]` (Taylor and Stein), whose linearised state evolution
:math:`q_0 \to 4\alpha c_2q_0` gives the **specialisation threshold**
:math:`\alpha_{\rm spec}`: :math:`4\alpha c_2(q^*(\alpha)) = 1`. Found here (float64 bisection
on the derived expressions, :func:`replica.glm.committee.specialisation_threshold`):
:math:`\alpha_{\rm spec} = 2.052382429741` at :math:`q = 0.71094792701\ldots`
(:data:`ALPHA_SPEC`; ``tests/test_committee.py`` checks it against the state evolution written
out by hand, in its Nishimori form with :math:`Z_+` by Owen's :math:`T` function and its
derivatives in closed form: :math:`5\cdot10^{-15}` apart; and in mpmath at 20 digits, slow tier).

**Published values**: Aubin et al. 2018 locate the specialisation of :math:`K = 2` (Gaussian
weights) in a figure; its printed digits could not be read for this work (the paper's text was
not reachable from the machine this was written on), so :data:`ALPHA_SPEC` is compared with no
published digits here -- only with the independent computations of the tests. Not checked here
either: that the transition is continuous -- the specialised branch :math:`q_0 > 0` is three
nested Gaussian integrals, which the engine does not evaluate. Below :math:`\alpha_{\rm spec}`
the non-specialised point is the stable fixed point of the state evolution, and ``alpha`` is
declared in :math:`(0, \alpha_{\rm spec})` (exit 2 above, where the equilibrium is the
specialised branch).

Reported: ``q``, ``qhat``, ``free_energy.free_entropy`` :math:`= \Phi` and ``errors.gibbs``,
the Gibbs generalisation error (a posterior sample's label disagrees with the teacher's):
:math:`1 - 2\mathbb E[a(z_+)a(z_+^*)] - \mathbb E[b(z_+)b(z_+^*)]` with
:math:`a = \theta(z)(1 - 2H(z))`, :math:`b = 2H(|z|)`, :math:`(z_+, z_+^*)` of correlation
:math:`q` (it is :math:`5/8` at :math:`q = 0`, independent labels, and :math:`1/3` at
:math:`q \to 1` with :math:`q_0 = 0`; the tests check both limits and a Monte-Carlo value).
:data:`MODEL_K1` is the same declaration with one hidden unit: the Bayes-optimal sign perceptron
(``examples/perceptron_teacher.py``, which the tests compare to 12+ digits).

Cost: the float64 path (:func:`overlap_float64`, status ``not-verified``: a two-dimensional
rule carries no error estimate) takes about half a second and equals the hand-written state
evolution's fixed point to :math:`2\cdot10^{-15}` at :math:`\alpha = 1, 1.8`. The mpmath path
evaluates a two-dimensional Gaussian integral at every call (at 20 digits, 10 s of CPU time
for the channel term, 30 s with its derivative): at :math:`\alpha = 1`, ``replica solve
--dps 15`` took 274 s of CPU time and ``--dps 20`` 377 s (each ``converged``, its digits
certified by the re-solve at 30 and 37 digits; the default 30 digits was not run),
:math:`q = 0.47989868118512037855`, :math:`\hat q = 0.92270229631148344952`,
:math:`\Phi = -0.94401262309081260655`, :math:`\varepsilon_{\rm Gibbs} =
0.52888271691723046706`::

    replica solve --model examples/committee_machine.py --alpha 1 --dps 15 --json
    replica equations --model examples/committee_machine.py
"""

from __future__ import annotations

from fractions import Fraction

from replica.glm.committee import Committee, specialisation_threshold
from replica.modeling import Domain, Parameter

ALPHA_SPEC = "2.052382429741"
"""alpha_spec as located by :func:`~replica.glm.committee.specialisation_threshold` (float64),
to the digits the tests check against the hand-written state evolution."""

ALPHA = Parameter("alpha", "samples per dimension",
                  domain=Domain(lower=Fraction(0), upper=Fraction(ALPHA_SPEC), upper_open=True,
                                describe=f"must lie in (0, {ALPHA_SPEC}): above the "
                                         "specialisation threshold alpha_spec the "
                                         "non-specialised fixed point is unstable and the "
                                         "specialised one (not derived) is the equilibrium"))

MODEL = Committee("committee_machine", K=2, parameters=[ALPHA])
"""The committee machine with two hidden units, at its non-specialised fixed point."""

MODEL_K1 = Committee("committee_machine_k1", K=1)
"""The same declaration with one hidden unit: the Bayes-optimal sign perceptron."""


def threshold():
    """``(alpha_spec, q_spec)`` by :func:`~replica.glm.committee.specialisation_threshold`."""
    return specialisation_threshold(MODEL)


def overlap_float64(alpha, model=MODEL):
    """``(q, status)`` at ``alpha`` by the engine's float64 solver."""
    import numpy as np

    from replica.numerics.driver import solve_float64

    r = solve_float64(model.problem, alpha=np.array([float(alpha)]))
    return float(r["q"][0]), str(r["status"][0])
