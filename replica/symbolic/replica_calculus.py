r"""A Gaussian replica calculus: replica-symmetric matrices with a symbolic number of replicas,
Gaussian integrals over replicated fields, the replica limit and the zero-temperature limit.

Everything here is general (no model) and every operation has a check that can fail
(:func:`check_against_explicit`, :func:`check_gaussian_integral`).

Replica-symmetric block matrices
--------------------------------
With :math:`n` replicas and :math:`k` components per replica (e.g. student and teacher), a
replica-symmetric matrix is

.. math:: M = A\otimes I_n + B\otimes J_n,\qquad J_n = \mathbf 1\mathbf 1^\top,

:math:`A, B` symmetric :math:`k\times k` (for :math:`k = 1`: :math:`M = aI + bJ`, diagonal entries
:math:`a + b`, off-diagonal :math:`b`). Since :math:`J^2 = nJ`, and :math:`J` has eigenvalue
:math:`n` on :math:`\mathbf 1` and 0 on its complement, these matrices form an algebra with

.. math::
    (A_1\otimes I + B_1\otimes J)(A_2\otimes I + B_2\otimes J)
        = A_1A_2\otimes I + (A_1B_2 + B_1A_2 + nB_1B_2)\otimes J,

.. math::
    M^{-1} = A^{-1}\otimes I - (A + nB)^{-1}BA^{-1}\otimes J,\qquad
    \det M = \det(A)^{n-1}\det(A + nB),

.. math::
    \operatorname{tr}M = n\operatorname{tr}(A + B),\qquad
    (h\otimes\mathbf 1)^\top M (h\otimes\mathbf 1) = n\,h^\top(A + nB)h,

all closed forms in the symbol :math:`n` (:class:`RSBlock`).

Gaussian integrals over replicated fields
-----------------------------------------
For :math:`x\in\mathbb R^{kn}` and an RS field :math:`h\otimes\mathbf 1`,

.. math::
    \int dx\, e^{-\frac12 x^\top Mx + (h\otimes\mathbf 1)^\top x}
      = (2\pi)^{kn/2}\det(M)^{-1/2}\exp\big(\tfrac n2 h^\top(A + nB)^{-1}h\big),

and a Gaussian random field common to all replicas, :math:`\xi\sim N(0, \Sigma)` entering as
:math:`(\xi\otimes\mathbf 1)^\top x`, averages to :math:`\exp(\frac12 x^\top(\Sigma\otimes J)x)`:
it shifts :math:`B \to B - \Sigma` (:func:`average_common_field`).

Order parameters and their conjugates
-------------------------------------
An RS overlap matrix :math:`Q = (Q_d - q)I + qJ` is introduced through
:math:`1 = \int dQ\,\delta(nQ - X^\top X)` with the Fourier representation
:math:`\delta(u) = \int\frac{d\hat Q}{2\pi i} e^{-\hat Q u}` over an RS conjugate
:math:`\hat Q = (\hat Q_d - \hat q)I + \hat qJ` (for a real saddle point the contour is rotated,
:math:`\hat Q` real); the coupling term is :math:`\frac12\operatorname{tr}(\hat QQ)`
(:func:`coupling_term`), whose :math:`1/n` part at :math:`n\to 0` is
:math:`\frac12(\hat Q_dQ_d - \hat qq)`.

The replica limit and zero temperature
--------------------------------------
:func:`replica_limit` returns :math:`\lim_{n\to0}\frac1n\,\phi(n)` for a :math:`\phi` with
:math:`\phi(0) = 0` (the free energy density from :math:`\mathbb E Z^n`), by a series in
:math:`n`; :func:`zero_temperature` substitutes the standard scalings (e.g.
:math:`Q_d = q + \chi/\beta`, :math:`\hat Q_d - \hat q = \beta\hat V`, :math:`\hat q =
\beta^2\hat\chi`) and keeps the leading power of :math:`\beta`, leaving the extremum over the
order parameters.

The replica-symmetric measure
-----------------------------
:func:`rs_gaussian_moments` reads the mean, the covariance shared by the replicas and the thermal
variance of a replicated Gaussian off :meth:`RSBlock.inverse`, in closed form in :math:`n`; at
:math:`n\to0` they describe one variable as a mean plus a field common to the replicas plus
independent noise. :func:`gaussian_expectation` gives the moments of polynomials in independent
centred Gaussians (Isserlis), for averages over inputs, label noise and contexts.

Spectral averages :math:`\frac1d\sum_i\phi(\lambda_i)` stay abstract
(:class:`~replica.symbolic.spectral.SpectralAverage`); :func:`log_det_average` writes
:math:`\frac1d\log\det(aI + bC)` as :math:`\log a + \langle\log(1 + b\lambda_i/a)\rangle` and
its derivatives in :math:`b` as averages of resolvent entries; :func:`stieltjes_form` turns
averages of rational functions of the eigenvalue with poles at :math:`z` into the Stieltjes
transform :math:`g(z) = \langle(\lambda_i - z)^{-1}\rangle` and its derivatives (and a weighted
transform :math:`\langle\mu_i(\lambda_i - z)^{-1}\rangle`) by partial fractions.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import mpmath
import sympy

from .spectral import LAMBDA_I, SpectralAverage

N_REPLICAS = sympy.Symbol("n", positive=True)
"""The number of replicas (symbolic)."""

BETA = sympy.Symbol("beta", positive=True)
"""The inverse temperature."""


def _matrix(m) -> sympy.Matrix:
    if isinstance(m, sympy.MatrixBase):
        return sympy.Matrix(m)
    if isinstance(m, (list, tuple)):
        return sympy.Matrix(m)
    return sympy.Matrix([[sympy.sympify(m)]])


@dataclasses.dataclass(frozen=True)
class RSBlock:
    r""":math:`M = A\otimes I_n + B\otimes J_n` with :math:`k\times k` blocks ``A``, ``B`` and
    ``n`` replicas (a SymPy symbol or an integer). ``RSBlock.scalar(a, b)`` is :math:`aI + bJ`;
    :meth:`from_entries` builds one from its diagonal and off-diagonal (replica) blocks."""

    A: sympy.Matrix
    B: sympy.Matrix
    n: object = N_REPLICAS

    def __post_init__(self):
        object.__setattr__(self, "A", _matrix(self.A))
        object.__setattr__(self, "B", _matrix(self.B))
        if self.A.shape != self.B.shape or self.A.shape[0] != self.A.shape[1]:
            raise ValueError("A and B must be square blocks of the same size")

    @classmethod
    def scalar(cls, a, b, n=N_REPLICAS) -> "RSBlock":
        return cls(_matrix(a), _matrix(b), n)

    @classmethod
    def from_entries(cls, same_replica, other_replica, n=N_REPLICAS) -> "RSBlock":
        """The RS matrix whose block between replicas ``a = b`` is ``same_replica`` and between
        ``a != b`` is ``other_replica``: ``A = same - other``, ``B = other``."""
        same, other = _matrix(same_replica), _matrix(other_replica)
        return cls(same - other, other, n)

    @property
    def k(self) -> int:
        return self.A.shape[0]

    # -- algebra --------------------------------------------------------------------------------
    def __add__(self, other: "RSBlock") -> "RSBlock":
        return RSBlock(self.A + other.A, self.B + other.B, self.n)

    def __sub__(self, other: "RSBlock") -> "RSBlock":
        return RSBlock(self.A - other.A, self.B - other.B, self.n)

    def scale(self, c) -> "RSBlock":
        return RSBlock(c * self.A, c * self.B, self.n)

    def __matmul__(self, other: "RSBlock") -> "RSBlock":
        """Product: :math:`A_1A_2\\otimes I + (A_1B_2 + B_1A_2 + nB_1B_2)\\otimes J`."""
        n = self.n
        return RSBlock(self.A * other.A,
                       self.A * other.B + self.B * other.A + n * self.B * other.B, n)

    def inverse(self) -> "RSBlock":
        """:math:`A^{-1}\\otimes I - (A + nB)^{-1}BA^{-1}\\otimes J`."""
        Ainv = self.A.inv()
        C = -(self.A + self.n * self.B).inv() * self.B * Ainv
        return RSBlock(Ainv.applyfunc(sympy.cancel), C.applyfunc(sympy.cancel), self.n)

    def det(self):
        """:math:`\\det(A)^{n-1}\\det(A + nB)`."""
        return self.A.det() ** (self.n - 1) * (self.A + self.n * self.B).det()

    def log_det(self):
        """:math:`(n-1)\\log\\det A + \\log\\det(A + nB)`."""
        return (self.n - 1) * sympy.log(self.A.det()) + sympy.log((self.A + self.n * self.B).det())

    def trace(self):
        """:math:`n\\operatorname{tr}(A + B)`."""
        return self.n * (self.A + self.B).trace()

    def constant_form(self, h):
        """:math:`(h\\otimes\\mathbf 1)^\\top M(h\\otimes\\mathbf 1) = n\\,h^\\top(A + nB)h`."""
        h = _matrix(h) if not isinstance(h, sympy.MatrixBase) else h
        h = h.reshape(self.k, 1)
        return self.n * (h.T * (self.A + self.n * self.B) * h)[0, 0]

    # -- explicit form --------------------------------------------------------------------------
    def explicit(self, n: int, subs: dict | None = None) -> sympy.Matrix:
        """The :math:`kn\\times kn` matrix at an integer ``n`` (replica-major: index
        ``(a, i) -> a k + i``)."""
        A, B = self.A, self.B
        if subs:
            A, B = A.subs(subs), B.subs(subs)
        k = self.k
        M = sympy.zeros(k * n, k * n)
        for a, b in itertools.product(range(n), repeat=2):
            block = B + (A if a == b else sympy.zeros(k, k))
            M[a * k:(a + 1) * k, b * k:(b + 1) * k] = block
        return M

    def at(self, n) -> "RSBlock":
        return RSBlock(self.A.subs(self.n, n), self.B.subs(self.n, n), n)


def check_against_explicit(symbolic, explicit_of, ns=range(1, 7), subs=None,
                           n_symbol=N_REPLICAS) -> bool:
    """``symbolic`` (an expression in ``n``, or an :class:`RSBlock`) equals ``explicit_of(n)``
    (computed from explicit matrices) for every integer ``n`` in ``ns``, after ``subs`` (numbers
    for the other symbols). Returns ``False`` at the first mismatch."""
    subs = dict(subs or {})
    for nv in ns:
        ref = explicit_of(nv)
        if isinstance(symbolic, RSBlock):
            got = symbolic.at(nv).explicit(nv, subs)
            if sympy.simplify(got - ref.subs(subs)) != sympy.zeros(*got.shape):
                return False
        else:
            got = sympy.sympify(symbolic).subs(n_symbol, nv).subs(subs)
            if sympy.simplify(got - sympy.sympify(ref).subs(subs)) != 0:
                return False
    return True


# ---------------------------------------------------------------------------------------------
# Gaussian integrals over replicated fields
# ---------------------------------------------------------------------------------------------
def gaussian_integral_log(M: RSBlock, h=None):
    r""":math:`\log\int_{\mathbb R^{kn}}dx\,e^{-\frac12x^\top Mx + (h\otimes\mathbf 1)^\top x}
    = \frac{kn}{2}\log 2\pi - \frac12\log\det M + \frac n2h^\top(A + nB)^{-1}h`."""
    out = M.k * M.n / 2 * sympy.log(2 * sympy.pi) - M.log_det() / 2
    if h is not None:
        h = _matrix(h).reshape(M.k, 1)
        out += M.n / 2 * (h.T * (M.A + M.n * M.B).inv() * h)[0, 0]
    return out


def average_common_field(M: RSBlock, covariance) -> RSBlock:
    r"""A Gaussian field :math:`\xi\sim N(0,\Sigma)` common to all replicas, entering the exponent
    as :math:`(\xi\otimes\mathbf 1)^\top x`, averages to
    :math:`e^{\frac12x^\top(\Sigma\otimes J)x}`:
    the quadratic form :math:`\frac12x^\top Mx` becomes that of :math:`M - \Sigma\otimes J`."""
    return RSBlock(M.A, M.B - _matrix(covariance), M.n)


@functools.lru_cache(maxsize=64)
def _quadrature(matrix: tuple, field: tuple, dps: int):
    """The explicit Gaussian integral over R^dim by mpmath quadrature (memoised: the checks of a
    correct and a wrong formula share it)."""
    dim = len(field)
    with mpmath.workdps(dps):
        Mn = [[mpmath.mpf(v) for v in row] for row in matrix]
        h = [mpmath.mpf(v) for v in field]

        def integrand(*x):
            quad = mpmath.fsum(x[i] * Mn[i][j] * x[j] for i in range(dim) for j in range(dim))
            return mpmath.exp(-quad / 2 + mpmath.fsum(h[i] * x[i] for i in range(dim)))

        lim = [-mpmath.inf, mpmath.inf]
        return mpmath.quad(integrand, *([lim] * dim))


def check_gaussian_integral(M: RSBlock, h, values: dict, n: int, dps: int = 20,
                            log_value=None) -> bool:
    """:func:`gaussian_integral_log` (or the given ``log_value``, an expression in ``n`` and the
    symbols of ``values``) at integer ``n`` against numerical quadrature of the explicit integral
    (``k n <= 3``; relative agreement to ``dps - 5`` digits)."""
    dim = M.k * n
    if dim > 3:
        raise ValueError("quadrature check is for k n <= 3")
    Mx = M.at(n).explicit(n, values)
    hv = _matrix(h).reshape(M.k, 1).subs(values) if h is not None else sympy.zeros(M.k, 1)
    matrix = tuple(tuple(str(sympy.N(v, dps + 5)) for v in Mx.row(i)) for i in range(Mx.rows))
    field = tuple(str(sympy.N(hv[i % M.k], dps + 5)) for i in range(dim))
    value = _quadrature(matrix, field, dps)
    with mpmath.workdps(dps):
        sym = (gaussian_integral_log(M.at(n), h) if log_value is None
               else sympy.sympify(log_value).subs(M.n, n))
        predicted = mpmath.exp(mpmath.mpf(str(sympy.N(sym.subs(values), dps + 5))))
        return abs(value - predicted) <= mpmath.mpf(10) ** (5 - dps) * abs(predicted)


# ---------------------------------------------------------------------------------------------
# Order parameters, the replica limit, zero temperature
# ---------------------------------------------------------------------------------------------
def coupling_term(Q: RSBlock, Qhat: RSBlock):
    r""":math:`\frac12\operatorname{tr}(\hat QQ)` for RS ``Q`` and its conjugate ``Qhat`` (the
    exponent left by the Fourier representation of :math:`\delta(nQ - X^\top X)`, per replica
    after :func:`replica_limit`)."""
    return (Qhat @ Q).trace() / 2


def replica_limit(phi, n=N_REPLICAS, order: int = 1, simplify: bool = True):
    r""":math:`\lim_{n\to0}\phi(n)/n` from the series of :math:`\phi` in :math:`n` (``phi(0)``
    must vanish, as for :math:`\log\mathbb EZ^n`; otherwise ``ValueError``). With
    ``simplify=False`` the coefficient of :math:`n` is taken as the derivative
    :math:`\phi'(0)` (the same first Taylor coefficient, without the series expansion and the
    final simplification: much faster on large expressions)."""
    if not simplify:
        if sympy.simplify(sympy.sympify(phi).subs(n, 0)) != 0:
            raise ValueError("phi(0) != 0: the replica limit phi/n diverges")
        return sympy.diff(phi, n).subs(n, 0)
    s = sympy.series(phi, n, 0, order + 1).removeO()
    if sympy.simplify(s.subs(n, 0)) != 0:
        raise ValueError("phi(0) != 0: the replica limit phi/n diverges")
    return sympy.simplify(sympy.expand(s).coeff(n, 1))


def zero_temperature(expr, scalings: dict, beta=BETA, max_power: int = 8):
    r"""``(power, coefficient)``: ``expr`` with the ``scalings`` substituted (e.g.
    ``{Qd: q + chi/beta, Qhat_d: beta*Vhat + beta**2*chihat}``) behaves as
    :math:`\text{coefficient}\cdot\beta^{\text{power}}` as :math:`\beta\to\infty`: the
    largest ``power`` (from ``max_power`` down) for which :math:`\lim\beta^{-p}\,\text{expr}`
    is finite and non-zero."""
    e = sympy.sympify(expr).xreplace(scalings) if scalings else sympy.sympify(expr)
    if sympy.simplify(e) == 0:
        return 0, sympy.Integer(0)
    for p in range(max_power, -max_power - 1, -1):
        lim = sympy.limit(e / beta**p, beta, sympy.oo)
        if lim.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
            raise ValueError(f"expr grows faster than beta^{max_power}")
        if lim != 0:
            return p, sympy.simplify(lim)
    raise ValueError(f"expr decays faster than beta^-{max_power}")


def log_det_average(a, b):
    r""":math:`\frac1d\log\det(aI + bC) = \log a + \langle\log(1 + b\lambda_i/a)\rangle` over
    the eigenvalues :math:`\lambda_i` of :math:`C` (kept abstract)."""
    return sympy.log(a) + SpectralAverage(sympy.log(1 + b * LAMBDA_I / a))


# ---------------------------------------------------------------------------------------------
# The RS Gaussian measure, Gaussian moments, spectral averages as Stieltjes transforms
# ---------------------------------------------------------------------------------------------
def rs_gaussian_moments(M: RSBlock, h=None) -> dict:
    r"""The moments of the replicated Gaussian :math:`\propto e^{-\frac12x^\top Mx + (h\otimes
    \mathbf 1)^\top x}` (scalar blocks, :math:`k = 1`), in closed form in :math:`n`:
    ``mean`` :math:`= h/(A + nB)` (the same in every replica), ``thermal`` :math:`=
    \operatorname{Var}x^a - \operatorname{Cov}(x^a, x^b) = 1/A` and ``common`` :math:`=
    \operatorname{Cov}(x^a, x^b) = -B/(A(A + nB))` (:math:`a \ne b`), read off
    :meth:`RSBlock.inverse`. At :math:`n \to 0` the measure is that of
    :math:`x^a = \text{mean} + \sqrt{\text{common}}\,\xi + \sqrt{\text{thermal}}\,\eta^a`:
    a field :math:`\xi` shared by the replicas (the quenched part) plus independent replica
    noise (the thermal part)."""
    if M.k != 1:
        raise ValueError("rs_gaussian_moments is for scalar blocks (k = 1)")
    inv = M.inverse()
    hv = sympy.Integer(0) if h is None else sympy.sympify(h)
    mean = sympy.cancel(hv * (inv.A[0, 0] + M.n * inv.B[0, 0]))
    return {"mean": mean, "thermal": inv.A[0, 0], "common": inv.B[0, 0]}


def gaussian_expectation(poly, variables, variance):
    r""":math:`\mathbb E\,p(x)` for a polynomial :math:`p` in independent centred Gaussians
    :math:`x_i` of common ``variance`` :math:`v`: each monomial :math:`\prod_ix_i^{k_i}` has
    expectation :math:`\prod_i (k_i - 1)!!\,v^{k_i/2}` for even :math:`k_i`, 0 otherwise
    (Isserlis)."""
    variables = tuple(variables)
    p = sympy.Poly(sympy.expand(poly), *variables)
    total = sympy.Integer(0)
    for powers, coeff in p.terms():
        if any(k % 2 for k in powers):
            continue
        term = coeff
        for k in powers:
            term *= sympy.factorial2(k - 1) * variance ** (k // 2)
        total += term
    return total


def stieltjes_form(expr, z, transform, moments: dict, weighted_transform=None,
                   s=LAMBDA_I, weight=None):
    r"""Every spectral average :math:`\langle\phi\rangle` in ``expr`` whose argument is
    rational in the eigenvalue :math:`s` with poles only at :math:`s = z`, rewritten through the
    Stieltjes transform and its derivatives: by partial fractions in :math:`s`,
    :math:`\phi = \sum_j c_js^j + \sum_{k\ge1} d_k(s - z)^{-k}`, and

    .. math:: \langle s^j\rangle = \text{moments}[j],\qquad
        \langle(s - z)^{-k}\rangle = \frac{g^{(k-1)}(z)}{(k-1)!},

    ``transform(k)`` returning :math:`g^{(k)}(z)`. An argument linear in a ``weight`` symbol
    :math:`\mu_i` (a diagonal entry of a second matrix in the eigenbasis) has its weighted part
    mapped with ``moments[("w", j)]`` :math:`= \langle\mu s^j\rangle` and
    ``weighted_transform(k)`` :math:`= \frac{d^k}{dz^k}\langle\mu/(s - z)\rangle`. A pole
    elsewhere, or a moment not given, raises ``ValueError``."""

    def fractions(arg, key):
        out = sympy.Integer(0)
        arg = sympy.cancel(sympy.together(arg))
        num, den = sympy.fraction(arg)
        den_p = sympy.Poly(den, s)
        # the denominator must be c (s - z)^K
        K = den_p.degree()
        if K and sympy.cancel(den_p.as_expr() / (den_p.LC() * (s - z) ** K)) != 1:
            raise ValueError(f"spectral average with a pole away from s = z: {den}")
        for term in sympy.Add.make_args(sympy.apart(arg, s, full=False)):
            t = sympy.factor(term)
            n_, d_ = sympy.fraction(t)
            dpow = sympy.Poly(d_, s).degree()
            if dpow == 0:
                for (j,), c in sympy.Poly(sympy.expand(t), s).terms():
                    mk = j if key is None else (key, j)
                    if mk not in moments:
                        raise ValueError(f"moment <{'mu ' if key else ''}s^{j}> not given")
                    out += c * moments[mk]
            else:
                c = sympy.cancel(t * (s - z) ** dpow)
                if c.has(s):
                    raise ValueError(f"term {term} is not c/(s - z)^k")
                f = transform if key is None else weighted_transform
                if f is None:
                    raise ValueError("weighted average without weighted_transform")
                out += c * f(dpow - 1) / sympy.factorial(dpow - 1)
        return out

    def rewrite(avg_expr):
        arg = sympy.expand(avg_expr.args[0]) if weight is None else avg_expr.args[0]
        if weight is not None and arg.has(weight):
            a_w = sympy.diff(arg, weight)
            if a_w.has(weight):
                raise ValueError("the average must be linear in the weight")
            rest = sympy.cancel(arg - weight * a_w)
            return fractions(a_w, "w") + (fractions(rest, None) if rest != 0 else 0)
        return fractions(arg, None)

    return sympy.sympify(expr).replace(lambda e: isinstance(e, SpectralAverage), rewrite)


__all__ = ["N_REPLICAS", "BETA", "RSBlock", "check_against_explicit", "gaussian_integral_log",
           "average_common_field", "check_gaussian_integral", "coupling_term", "replica_limit",
           "zero_temperature", "log_det_average", "rs_gaussian_moments",
           "gaussian_expectation", "stieltjes_form"]
