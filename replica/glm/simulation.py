r"""The finite-size simulation of a model declared by :func:`~replica.glm.ERM`, generated from
the same parts as its free energy: ``SIMULATION = simulation_of(MODEL)`` in the model file gives
``replica simulate``, ``check`` and ``sweep`` a :class:`~replica.capabilities.Simulation`.

**Sample** (seed's generator ``rng``, dimension :math:`d`, in this order, the convention of
``examples/ridge_regression.py``): :math:`n = \mathrm{round}(\alpha d)` (at least 1) rows
:math:`x_\mu \sim N(0, I_d)`; the teacher :math:`w^*` with i.i.d. entries from the prior (a
single standard Gaussian: ``rng.standard_normal(d)``; a mixture: the component of each entry
drawn with the mixture's weights, then its point mass or Gaussian); the labels
:math:`y_\mu` from the channel's label expression (:meth:`~replica.glm.parts.Channel.label`) at
the teacher field :math:`u_\mu = x_\mu\cdot w^*/\sqrt d` and standard Gaussian noise
:math:`\varepsilon_\mu` (a sign of zero counts as :math:`+1`).

**Train**: the minimiser of :math:`\sum_\mu\ell(t_\mu) + \sum_ir(w_i)`, :math:`t_\mu` the
residual :math:`y_\mu - a_\mu\cdot w` or the margin :math:`y_\mu a_\mu\cdot w`,
:math:`a_\mu = x_\mu/\sqrt d` -- the square loss with a quadratic penalty
:math:`r = \lambda w^2/2` in closed form, :math:`w = (A^\top A + \lambda I)^{-1}A^\top y`; a
continuously differentiable loss with a quadratic penalty by L-BFGS (SciPy, exact gradient);
with a penalty with a kink (:math:`\ell_1`, elastic net) by FISTA (Beck and Teboulle, with
gradient restarts), step :math:`1/L`, :math:`L = \sup\ell''\,\|A\|_2^2`, the penalty's proximal
map :math:`\operatorname{prox}_{sr}(v)` being the maximiser :math:`f_w(b)` of the free energy's
penalty channel (:math:`\hat V = 1/s`, :math:`b = v/s`); a convex loss with two linear pieces
(hinge, absolute) with a quadratic penalty by its dual, a box-constrained concave quadratic
programme solved by L-BFGS-B: :math:`\ell(t) = \max_{\theta\in[0,1]}[(1-\theta)\ell_1(t) +
\theta\ell_2(t)]`, :math:`w(\theta) = -\lambda^{-1}\sum_\mu s_\mu(\theta_\mu)\,\partial_wt_\mu`.
The loss, its derivatives, the penalty's proximal map and the label are NumPy functions
generated from the parts' SymPy expressions by :class:`replica.symbolic.codegen.Evaluator`.

**Measure** (the names the theory reports): :math:`m = w\cdot w^*/d`, :math:`q = |w|^2/d`; with a
quadratic penalty and a twice-differentiable loss :math:`V = \operatorname{tr}H^{-1}/d`,
:math:`H = \lambda I + A^\top\operatorname{diag}\ell''(t)A`; ``errors.train_loss``
:math:`= \frac1n\sum_\mu\ell(t_\mu)`; regression: ``errors.risk`` :math:`= |w - w^*|^2/d` and
``errors.test`` :math:`= \mathbb E(y - x\cdot w/\sqrt d)^2` exactly for the instance
(:math:`\mathbb Ey^2 - 2(m/\hat\rho)\mathbb Eyu + q` with the channel's moments at
:math:`\hat\rho = |w^*|^2/d`); classification: ``errors.generalisation``
:math:`= \arccos(am/\sqrt{(a^2\hat\rho + b^2)q})/\pi` (the probability that
:math:`\operatorname{sign}(x\cdot w)` differs from a fresh label) and ``errors.teacher``
:math:`= \arccos(m/\sqrt{\hat\rho q})/\pi`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy

from ..capabilities import Simulation
from ..modeling import ModelError
from ..symbolic.codegen import Evaluator
from . import calculus
from .parts import T

__all__ = ["simulation_of", "NumericParts", "fista"]

_U, _EPS = sympy.symbols("glm_sim_u glm_sim_eps", real=True)
_B, _VH = sympy.symbols("glm_sim_b glm_sim_Vhat", real=True)


def _pieces_expr(pieces):
    return sympy.Piecewise(*[(p.expr, T <= p.hi) for p in pieces[:-1]]
                           + [(pieces[-1].expr, True)])


class NumericParts:
    """NumPy functions of one model's parts, generated from their SymPy expressions: ``loss(t,
    values)`` with its first and second derivatives, ``penalty(w, values)``, ``prox(v, s,
    values)`` (the penalty's proximal map), ``label(u, eps, values)``, and the parameter values of
    a point (``values(params)``: the parts' parameter symbols in a fixed order)."""

    def __init__(self, parts):
        self.parts = parts
        loss, penalty, channel, prior = parts.loss, parts.penalty, parts.channel, parts.prior
        ell = loss.expression()
        r = _pieces_expr(penalty.pieces)
        mini = calculus.minimise(_VH * T**2 / 2 - _B * T, penalty.pieces, T, _B,
                                 name=f"prox_{penalty.name}")
        label = channel.label(_U, _EPS)
        free = set()
        for e in (ell, r, mini.argmin, label):
            free |= e.free_symbols
        for c in (*prior.points, *prior.gaussians):
            free |= sympy.sympify(c[0]).free_symbols | sympy.sympify(c[1]).free_symbols
        self.symbols = sorted(free - {T, _U, _EPS, _B, _VH}, key=str)
        S = self.symbols
        self._loss = Evaluator([ell, sympy.diff(ell, T), sympy.diff(ell, T, 2)], [T, *S])
        self._penalty = Evaluator([r], [T, *S])
        self._prox = Evaluator([mini.argmin], [_B, _VH, *S])
        self._label = Evaluator([label], [_U, _EPS, *S])
        self.quadratic = _quadratic(penalty)
        self._lam = sympy.diff(penalty.pieces[0].expr, T, 2) if self.quadratic else None
        self.smooth_loss = loss.smooth is not None or _continuously_differentiable(loss)
        self.twice = loss.smooth is not None or all(
            sympy.Poly(p.expr, T).degree() >= 2 or p.expr.is_constant() for p in loss.pieces) \
            and len(loss.pieces) == 1

    def values(self, params) -> list:
        """The parts' parameters at a point, as floats (in the order of ``symbols``)."""
        return [float(getattr(params, str(s))) for s in self.symbols]

    def number(self, expr, values) -> float:
        """A parameter expression of the parts (a weight, a slope, ...) at ``values``."""
        return float(sympy.sympify(expr).xreplace(dict(zip(self.symbols, values))))

    def loss(self, t, values):
        return self._loss.f64([np.asarray(t, float), *values])

    def penalty(self, w, values):
        return self._penalty.f64([np.asarray(w, float), *values])[0]

    def prox(self, v, s, values):
        r""":math:`\operatorname{prox}_{sr}(v) = \arg\min_w[(w - v)^2/(2s) + r(w)]`, the
        penalty channel's maximiser at :math:`\hat V = 1/s`, :math:`b = v/s`."""
        v = np.asarray(v, float)
        return self._prox.f64([v / s, np.full_like(v, 1 / s), *values])[0]

    def label(self, u, eps, values):
        return self._label.f64([np.asarray(u, float), np.asarray(eps, float), *values])[0]

    def lam(self, values) -> float:
        """:math:`\\lambda = r''` of a quadratic penalty."""
        return self.number(self._lam, values)


def _quadratic(penalty) -> bool:
    r"""Whether the penalty is :math:`\lambda w^2/2` (one piece, even, of degree two)."""
    if len(penalty.pieces) != 1:
        return False
    poly = sympy.Poly(penalty.pieces[0].expr, T)
    return poly.degree() == 2 and poly.coeff_monomial(T) == 0


def _continuously_differentiable(loss) -> bool:
    """Whether a piecewise loss has no kink (the one-sided slopes agree at every joint)."""
    for a, b in zip(loss.pieces, loss.pieces[1:]):
        c = a.hi
        if sympy.simplify(sympy.diff(a.expr, T).subs(T, c) - sympy.diff(b.expr, T).subs(T, c)):
            return False
    return True


def fista(grad, prox, L, w0, tol=1e-10, max_iter=100000):
    r"""The minimiser of :math:`f(w) + g(w)` by FISTA (Beck and Teboulle 2009) with gradient
    restarts (O'Donoghue and Candes): ``grad`` :math:`\nabla f` (Lipschitz constant ``L``),
    ``prox(v, s)`` :math:`\operatorname{prox}_{sg}(v)`; stopped when a step moves :math:`w` by
    less than ``tol`` times :math:`\max(1, |w|)`."""
    w = np.array(w0, float)
    v, t = w.copy(), 1.0
    for _ in range(max_iter):
        w_new = prox(v - grad(v) / L, 1 / L)
        step = w_new - w
        t_new = (1 + math.sqrt(1 + 4 * t * t)) / 2
        if np.dot(v - w_new, step) > 0:
            t_new, v = 1.0, w_new.copy()
        else:
            v = w_new + (t - 1) / t_new * step
        w, t = w_new, t_new
        if np.linalg.norm(step) <= tol * max(1.0, np.linalg.norm(w)):
            break
    return w


def _coordinate_powers(covariates, params, d: int):
    """``(c, t)``: the diagonal of the input covariance and the teacher power per coordinate at
    dimension ``d`` (ones without :class:`~replica.glm.Covariates`); a covariance that is not
    diagonal, or a SPEC of another dimension, is a :class:`ModelError`."""
    if covariates is None:
        return np.ones(d), np.ones(d)
    out = []
    for name in (covariates.covariance, covariates.teacher):
        if name is None:
            out.append(np.ones(d))
            continue
        cov = getattr(params, name)
        if not cov.is_diagonal:
            raise ModelError(f"simulation_of: --{name} must be diagonal (the coordinates the "
                             "penalty acts on are its eigenvectors)")
        diag = np.asarray(cov.diag_f64(), float)
        if diag.shape != (d,):
            raise ModelError(f"simulation_of: --{name} has dimension {diag.shape[0]}, the "
                             f"simulation {d} (give --d {d})")
        out.append(diag)
    return tuple(out)


def _samples(params, alpha: str, d: int) -> int:
    return max(1, int(round(float(getattr(params, alpha)) * d)))


def _check_instance_size(n: int, d: int) -> None:
    """Refuse (exit 2, naming ``--d``) an instance whose arrays do not fit in this machine's
    memory, unless ``--force-large``: the ``n x d`` data matrix and its scaled copy and a
    ``d x d`` Gram matrix, 8 bytes an entry (``--d 1e9`` was an internal error, NumPy's
    'array is too big')."""
    from ..estimates import Estimate, check
    from ..params import compact_str

    need = 8.0 * (2.0 * n * d + float(d) * d)
    check(Estimate(f"a simulated instance with n = {compact_str(n)} samples in "
                   f"d = {compact_str(d)} dimensions", "--d",
                   0.0, need))


def simulation_of(model) -> Simulation:
    """The :class:`~replica.capabilities.Simulation` of a model returned by
    :func:`~replica.glm.ERM` (module docstring); a :class:`ModelError` for any other model."""
    parts = getattr(model, "glm_parts", None)
    if parts is None:
        raise ModelError(f"simulation_of: model {getattr(model, 'name', model)!r} was not "
                         "declared by replica.glm.ERM (it carries no parts to simulate)")
    loss, channel, prior = parts.loss, parts.channel, parts.prior
    kink = loss.smooth is None and not _continuously_differentiable(loss)
    if kink and not _quadratic(parts.penalty):
        raise ModelError(f"simulation_of: the {loss.name} loss with the {parts.penalty.name} "
                         "penalty has no solver here (a kink in both; a ridge penalty works)")
    if kink and len(loss.pieces) != 2:
        raise ModelError(f"simulation_of: the {loss.name} loss has a kink and more than two "
                         "pieces; no solver for it")

    @functools.lru_cache(maxsize=None)
    def numeric():
        return NumericParts(parts)

    def sample(rng, d, params):
        """``(X, y, w_star)``: rows N(0, I_d), labels from the channel, teacher from the prior."""
        N = numeric()
        vals = N.values(params)
        n = _samples(params, parts.alpha, d)
        _check_instance_size(n, d)
        X = rng.standard_normal((n, d))
        c_diag, t_diag = _coordinate_powers(parts.covariates, params, d)
        X = X * np.sqrt(c_diag)
        comps = [("point", N.number(w, vals), N.number(a, vals)) for w, a in prior.points] + \
                [("gauss", N.number(w, vals), N.number(s2, vals)) for w, s2 in prior.gaussians]
        if len(comps) == 1 and comps[0][0] == "gauss":
            w_star = math.sqrt(comps[0][2]) * rng.standard_normal(d)
        else:
            k = rng.choice(len(comps), size=d, p=np.array([c[1] for c in comps]) /
                           sum(c[1] for c in comps))
            g = rng.standard_normal(d)
            w_star = np.empty(d)
            for j, (kind, _, x) in enumerate(comps):
                w_star[k == j] = x if kind == "point" else math.sqrt(x) * g[k == j]
        w_star = np.sqrt(t_diag) * w_star
        u = X @ w_star / math.sqrt(d)
        y = N.label(u, rng.standard_normal(n), vals)
        if channel.kind == "classification":
            y = np.where(y == 0, 1.0, y)
        return X, np.asarray(y, float), w_star

    def _margins(instance, w):
        X, y, _ = instance
        Aw = X @ w / math.sqrt(X.shape[1])
        return y * Aw if loss.kind == "margin" else y - Aw

    def train(instance, params):
        """The minimiser of the training objective (module docstring)."""
        from scipy.optimize import minimize

        N = numeric()
        vals = N.values(params)
        X, y, _ = instance
        n, d = X.shape
        A = X / math.sqrt(d)
        sgn = y if loss.kind == "margin" else -np.ones(n)  # dt/d(Aw)
        off = np.zeros(n) if loss.kind == "margin" else y

        def grad_f(w):
            return A.T @ (sgn * N.loss(off + sgn * (A @ w), vals)[1])

        if N.quadratic:
            la = N.lam(vals)
            if loss.name == "square":
                return np.linalg.solve(A.T @ A + la * np.eye(d), A.T @ y)
            if N.smooth_loss:
                def objective(w):
                    ell, d1, _ = N.loss(off + sgn * (A @ w), vals)
                    return (float(np.sum(ell)) + la * float(w @ w) / 2,
                            A.T @ (sgn * d1) + la * w)

                res = minimize(objective, np.zeros(d), jac=True, method="L-BFGS-B",
                               options={"maxiter": 20000, "gtol": 1e-10, "ftol": 1e-15})
                return res.x
            return _dual_two_pieces(N, vals, A, sgn, off, la)
        tt = np.linspace(-50, 50, 20001)
        curv = float(np.max(np.abs(N.loss(tt, vals)[2])))
        L = max(curv, 1e-12) * np.linalg.norm(A, 2) ** 2
        return fista(grad_f, lambda v, s: N.prox(v, s, vals), L, np.zeros(d))

    def measure(instance, w, params):
        """m, q (V where defined) and the errors the theory reports."""
        N = numeric()
        vals = N.values(params)
        X, y, w_star = instance
        n, d = X.shape
        c_diag, _ = _coordinate_powers(parts.covariates, params, d)
        Cw, Cws = c_diag * w, c_diag * w_star  # the overlaps in the covariance's metric
        mm, qq, rho = float(w @ Cws) / d, float(w @ Cw) / d, float(w_star @ Cws) / d
        t = _margins(instance, w)
        ell, _, d2 = N.loss(t, vals)
        out = {"m": mm, "q": qq}
        if N.quadratic and N.twice:
            A = X / math.sqrt(d)
            H = N.lam(vals) * np.eye(d) + (A.T * d2) @ A
            out["V"] = float(np.sum(c_diag * np.diag(np.linalg.inv(H)))) / d
        out["errors.train_loss"] = float(np.mean(ell))
        if channel.kind == "regression":
            yu, y2 = (N.number(e.xreplace({sympy.Symbol("rho"): rho}), vals)
                      for e in channel.moments(sympy.Symbol("rho")))
            out["errors.test"] = y2 - 2 * mm * yu / rho + qq
            out["errors.risk"] = float((w - w_star) @ (c_diag * (w - w_star))) / d
        else:
            a, b = (N.number(c, vals) for c in channel.latent)
            c1 = a * mm / math.sqrt((a * a * rho + b * b) * qq)
            c2 = mm / math.sqrt(rho * qq)
            out["errors.generalisation"] = math.acos(max(-1.0, min(1.0, c1))) / math.pi
            out["errors.teacher"] = math.acos(max(-1.0, min(1.0, c2))) / math.pi
        return out

    return Simulation(sample, train, measure,
                      description=f"{model.name}: {loss.description} + {parts.penalty.description}"
                                  f" on {channel.description}, generated from its parts "
                                  "(replica.glm.simulation)",
                      sizes=lambda d, p: {"n": _samples(p, parts.alpha, d)})


def _dual_two_pieces(N, vals, A, sgn, off, la):
    r"""Ridge-penalised ERM with a convex loss of two linear pieces
    :math:`\ell = \max(\ell_1, \ell_2)`, :math:`\ell_k(t) = c_kt + e_k`, by its dual: with
    :math:`s_\mu = c_1 + \theta_\mu(c_2 - c_1)`, :math:`t_\mu = o_\mu + \sigma_\mu a_\mu\cdot w`,
    the primal minimiser is :math:`w(\theta) = -\lambda^{-1}A^\top(\sigma s)` and the concave dual
    :math:`D(\theta) = \sum_\mu[s_\mu o_\mu + e_\mu] - |A^\top(\sigma s)|^2/(2\lambda)` is maximised
    over the box :math:`[0, 1]^n` (L-BFGS-B)."""
    from scipy.optimize import minimize

    pieces = N.parts.loss.pieces
    c = [float(sympy.diff(p.expr, T).xreplace(dict(zip(N.symbols, vals)))) for p in pieces]
    e = [float(p.expr.subs(T, 0).xreplace(dict(zip(N.symbols, vals)))) for p in pieces]
    n = A.shape[0]

    def negdual(th):
        s = c[0] + th * (c[1] - c[0])
        g = A.T @ (sgn * s)
        val = float(s @ off) + float(np.sum(e[0] + th * (e[1] - e[0]))) - float(g @ g) / (2 * la)
        dg = (c[1] - c[0]) * (off - sgn * (A @ g) / la) + (e[1] - e[0])
        return -val, -dg

    res = minimize(negdual, np.full(n, 0.5), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * n,
                   options={"maxiter": 50000, "gtol": 1e-12, "ftol": 1e-16})
    s = c[0] + res.x * (c[1] - c[0])
    return -A.T @ (sgn * s) / la
