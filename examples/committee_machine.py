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

**The specialised branch** (:func:`specialised`, :func:`replica.glm.committee.specialised_branch`;
``python examples/committee_machine.py 2.2 3 4`` prints the table): for :math:`q_0 > 0` the
label probability is the bivariate normal orthant probability in closed form (Owen's :math:`T`),
the channel term a two-dimensional integral evaluated in float64 (about 15 digits), the two
stationarity conditions solved together. Above :math:`\alpha_{\rm spec}` a root with
:math:`q_0 > 0` exists and has the larger free entropy; below none does. **The transition is
continuous**: the free entropy's expansion :math:`\Phi_0 + a_2q_0^2 + a_3q_0^3` (with
:math:`q_0 \ge 0` the cubic term decides) has :math:`a_3 = -0.2246 < 0` at
:math:`\alpha_{\rm spec}`, :math:`q_0 \approx 0.4387(\alpha - \alpha_{\rm spec})`. Float64,
composite Gauss--Legendre (16 nodes a panel):

=====  ===============  ===============  ==================  =====================
alpha  q                q_0              Phi                 Gibbs error
=====  ===============  ===============  ==================  =====================
2.1    0.717464446793   0.021598548175   -1.810983071952     0.460445834
2.2    0.730540005930   0.070783654812   -1.883779054117     0.455590427
2.5    0.765717314438   0.235315286091   -2.096719270963     0.438218687
3      0.814377371850   0.491453909193   -2.429585763954     0.398836418
4      0.882070976710   0.766826620375   -2.997914606414     0.316113730
5      0.921135214975   0.870974801331   -3.453914874480     0.255811050
=====  ===============  ===============  ==================  =====================

(the non-specialised point at :math:`\alpha = 3`: :math:`q = 0.805951324496`,
:math:`\Phi = -2.442182244816`, Gibbs error :math:`0.428722257`). The errors, from the
posterior predictive label probabilities :math:`Z_y` (Nishimori: the teacher's label has the
same law): Gibbs :math:`1 - \mathbb E\sum_yZ_y^2` (equal to the model's formula at
:math:`q_0 = 0`; a Monte-Carlo check at :math:`q_0 > 0` in the tests), Bayes :math:`1 -
\mathbb E\max_yZ_y` (its kinks limit the rule to about :math:`5\cdot10^{-6}`) and the
paper's :math:`\tfrac12\mathbb E(\hat y - y)^2`. Each :func:`specialised` call takes about
3 s of CPU time.

**Published values**: the paper locates the specialisation of :math:`K = 2` (Gaussian weights)
in a figure whose digits could not be read for this work. The authors' own state evolution
(github.com/benjaminaubin/TheCommitteeMachine, commit 3a5967f, its stored fixed points
``Python/Data/BackupObj_SE_gaussian_K=2/*.pkl``, read as data with ``pickletools``) uses our
convention (:math:`Q_{11} = (q + q_0)/2`, :math:`Q_{12} = (q - q_0)/2`): at
:math:`\alpha = 2.5, 3, 4` their :math:`(q, q_0)` are :math:`(0.76571, 0.23507)`,
:math:`(0.81437, 0.49130)`, :math:`(0.88205, 0.76673)`, within :math:`1.6\cdot10^{-5}` in
:math:`q` and :math:`2.5\cdot10^{-4}` in :math:`q_0` of ours (their iteration's stopping
tolerance: below :math:`\alpha_{\rm spec}` their :math:`q_0` is a small unconverged
:math:`10^{-3}`, e.g. :math:`0.0057` at :math:`\alpha = 2.05`, :math:`0.023` at 2.1 where ours
is :math:`0.0216`); their non-specialised :math:`q = 0.47989779` at :math:`\alpha = 1` (ours
:math:`0.47989868`). Their generalisation error is :math:`\tfrac12\mathbb E(\hat y - y)^2`
with :math:`\hat y` the posterior-mean label (``errors["paper"]`` here), not the Gibbs error.
``alpha`` of the declared model stays in :math:`(0, \alpha_{\rm spec})` (exit 2 above): the
engine solves the non-specialised point only.

Reported: ``q``, ``qhat``, ``free_energy.free_entropy`` :math:`= \Phi` and ``errors.gibbs``,
the Gibbs generalisation error (a posterior sample's label disagrees with the teacher's):
:math:`1 - 2\mathbb E[a(z_+)a(z_+^*)] - \mathbb E[b(z_+)b(z_+^*)]` with
:math:`a = \theta(z)(1 - 2H(z))`, :math:`b = 2H(|z|)`, :math:`(z_+, z_+^*)` of correlation
:math:`q` (it is :math:`5/8` at :math:`q = 0`, independent labels, and :math:`1/3` at
:math:`q \to 1` with :math:`q_0 = 0`; the tests check both limits and a Monte-Carlo value).
:data:`MODEL_K1` is the same declaration with one hidden unit: the Bayes-optimal sign perceptron
(``examples/perceptron_teacher.py``, which the tests compare to 12+ digits).

Cost: the float64 path (:func:`overlap_float64`; status ``converged`` since the channel term
is a one-dimensional integral, ``not-verified`` with the nested rule before) equals the
hand-written state evolution's fixed point to :math:`4\cdot10^{-14}` at :math:`\alpha = 1`
and :math:`1.2\cdot10^{-15}` at :math:`1.8` (the nested rule's values to :math:`2\cdot
10^{-16}`). The mpmath path evaluates the channel term and
the Gibbs error as one-dimensional Gaussian integrals of Owen's :math:`T` and its complement
:math:`U` (the derived steps ``non_specialised_closed`` and ``gibbs_closed``: the orthant
probability at :math:`q_0 = 0`; :mod:`replica.symbolic.owen` evaluates :math:`T` and :math:`U`):
at :math:`\alpha = 1`, ``--dps 30`` takes about 9 s of CPU time with a warm code cache
(``converged``, certified by the re-solve at 52 digits; before those steps the nested
two-dimensional integrals took 274 s at 15 digits and did not finish at 30,
``benchmarks/README.md`` section ``committee30``): :math:`q =
0.479898681185120378554456223316`, :math:`\hat q = 0.922702296311483449517466183718`,
:math:`\Phi = -0.944012623090812606552692484251`, :math:`\varepsilon_{\rm Gibbs} =
0.528882716917230467062682995524` (the first 20 digits those of the nested quadrature)::

    replica solve --model examples/committee_machine.py --alpha 1 --dps 30 --json
    replica equations --model examples/committee_machine.py
"""

from __future__ import annotations

from fractions import Fraction

from replica.glm.committee import Committee, specialisation_threshold, specialised_branch
from replica.modeling import Domain, Parameter

ALPHA_SPEC = "2.052382429741"
"""alpha_spec as located by :func:`~replica.glm.committee.specialisation_threshold` (float64),
to the digits the tests check against the hand-written state evolution."""

ALPHA = Parameter("alpha", "samples per dimension",
                  domain=Domain(lower=Fraction(0), upper=Fraction(ALPHA_SPEC), upper_open=True,
                                describe=f"must lie in (0, {ALPHA_SPEC}): above the "
                                         "specialisation threshold alpha_spec the "
                                         "non-specialised fixed point is unstable and the "
                                         "specialised one is the equilibrium (solved by "
                                         "python examples/committee_machine.py ALPHA)"))

MODEL = Committee("committee_machine", K=2, parameters=[ALPHA])
"""The committee machine with two hidden units, at its non-specialised fixed point."""

MODEL_K1 = Committee("committee_machine_k1", K=1)
"""The same declaration with one hidden unit: the Bayes-optimal sign perceptron."""


def threshold():
    """``(alpha_spec, q_spec)`` by :func:`~replica.glm.committee.specialisation_threshold`."""
    return specialisation_threshold(MODEL)


def specialised(alpha, start=(0.8, 0.5)):
    """Both fixed points of the two-parameter state evolution at ``alpha`` (float64):
    ``{"non_specialised": {...}, "specialised": {...} | None}``, each with ``q``, ``q0``,
    ``free_entropy``, ``errors`` (``gibbs``, ``bayes``, ``paper``) and ``residual``
    (:func:`replica.glm.committee.specialised_branch`). The equilibrium is the one of larger
    free entropy: the specialised one above :data:`ALPHA_SPEC`, where it exists."""
    return specialised_branch(alpha, start=start)


def overlap_float64(alpha, model=MODEL):
    """``(q, status)`` at ``alpha`` by the engine's float64 solver."""
    import numpy as np

    from replica.numerics.driver import solve_float64

    r = solve_float64(model.problem, alpha=np.array([float(alpha)]))
    return float(r["q"][0]), str(r["status"][0])


def main(argv=None) -> int:
    """``python examples/committee_machine.py ALPHA ...``: the table of both fixed points
    (exit 2 on a bad alpha, 3 when the specialised root is not found above alpha_spec)."""
    import sys

    rows = []
    for text in (argv if argv is not None else sys.argv[1:]) or ["2.2", "2.5", "3", "4"]:
        try:
            alpha = float(text)
        except ValueError:
            alpha = float("nan")
        if not (0 < alpha < 50):
            print(f"alpha: must be a number in (0, 50), got {text!r}", file=sys.stderr)
            return 2
        rows.append((alpha, specialised(alpha)))
    print("alpha    branch            q              q0             Phi"
          "               gibbs        bayes        paper")
    code = 0
    for alpha, r in rows:
        for name in ("non_specialised", "specialised"):
            p = r[name]
            if p is None:
                if alpha > float(ALPHA_SPEC):
                    code = 3
                print(f"{alpha:<8g} {name:<17} (no root with q0 > 0)")
                continue
            e = p["errors"]
            print(f"{alpha:<8g} {name:<17} {p['q']:.12f} {p['q0']:.12f} "
                  f"{p['free_entropy']:.12f} {e['gibbs']:.9f} {e['bayes']:.6f} "
                  f"{e['paper']:.9f}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
