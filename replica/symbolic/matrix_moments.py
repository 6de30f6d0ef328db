r"""Gaussian moments of matrix expressions at a symbolic dimension.

The replica computations average bilinear forms of Gaussian vectors whose dimension :math:`D`
is a symbol: the query :math:`x\sim N(0, C)` of a prompt, the fluctuation :math:`\xi` of a
one-step estimate. Writing them with explicit components fixes :math:`D` (a check at
:math:`D = 2` is not a computation at general :math:`D`); here they stay SymPy matrix
expressions (``MatrixSymbol`` of shape :math:`D\times D` or :math:`D\times 1`) and the averages
are taken by the two rules of a centred Gaussian vector :math:`v` with covariance :math:`\Sigma`,
valid at every dimension:

.. math::  \mathbb E[\,\text{odd number of factors } v\,] = 0,\qquad
           \mathbb E[A\,v\,v^\top B] = A\,\Sigma\,B,\qquad
           \mathbb E[v^\top A\,v] = \operatorname{tr}(A\,\Sigma),

and, for degree 4, Isserlis' theorem (the sum over the three pairings of the four factors) in
the two shapes a replica computation meets (a second moment of :math:`v\,v^\top w` and a product
of two quadratic forms):

.. math::  \mathbb E[v\,v^\top A\,v\,v^\top] = \Sigma A\Sigma + \Sigma A^\top\Sigma
           + \operatorname{tr}(A\Sigma)\,\Sigma,\qquad
           \mathbb E[v^\top A\,v\;v^\top B\,v] = \operatorname{tr}(A\Sigma)\operatorname{tr}(B\Sigma)
           + \operatorname{tr}(A\Sigma B\Sigma) + \operatorname{tr}(A\Sigma B^\top\Sigma)

(:math:`\Sigma` symmetric).

:func:`gaussian_average` expands a matrix expression into products of factors
(:func:`terms`), applies the rules term by term (degree 0 to 4 in :math:`v`; a degree-2 or
degree-4 term of another shape, or a higher degree, is refused), and :func:`expand_traces`
makes traces linear and cyclic, so that
:math:`\operatorname{tr}(A\,w w^\top) = w^\top A w` becomes a bilinear form.
:func:`replace_forms` then names the scalar forms (a :math:`1\times 1` product equals its
transpose; both orientations are matched). :func:`rotate_traces` performs an orthogonal change
of variables inside traces (:math:`U^\top U = I` and cyclic invariance), e.g. into the eigenbasis
of a symmetric matrix.
"""

from __future__ import annotations

import sympy
from sympy import Identity, ZeroMatrix, MatAdd, MatMul, MatrixExpr, Trace, Transpose

__all__ = ["terms", "gaussian_average", "expand_traces", "replace_forms", "scalar",
           "rotate_traces", "canonical_traces", "MomentError"]


class MomentError(ValueError):
    """A term this module cannot average (a degree above 4 in the Gaussian vector, or a
    degree-2 or degree-4 term not of the shapes of the rules)."""


def terms(expr) -> list:
    """``[(coefficient, factors), ...]``: the expanded matrix expression as a sum of products
    (``factors`` a tuple of matrix factors; scalar expressions, traces included, sit in the
    coefficient)."""
    expr = sympy.expand(expr) if not isinstance(expr, MatrixExpr) else expr.expand()
    out = []
    for term in (expr.args if isinstance(expr, (MatAdd, sympy.Add)) else (expr,)):
        if isinstance(term, MatMul):
            coeff, mats = term.as_coeff_matrices()
            out.append((coeff, tuple(mats)))
        elif isinstance(term, MatrixExpr):
            out.append((sympy.Integer(1), (term,)))
        else:
            out.append((term, ()))
    return out


def _product(coeff, factors, shape):
    """coeff times the product of ``factors`` (the identity of ``shape`` when there are none,
    so that a term stays a matrix of the expression's shape)."""
    if not factors:
        return coeff * Identity(shape[0])
    return coeff * (MatMul(*factors).doit() if len(factors) > 1 else factors[0])


def _is(factor, v, transposed: bool) -> bool:
    return factor == (Transpose(v) if transposed else v) or (
        transposed and factor == v.T)


def scalar(expr):
    """A :math:`1\\times 1` matrix expression as a scalar (its only entry); scalars pass."""
    if isinstance(expr, MatrixExpr):
        if expr.shape != (1, 1):
            raise MomentError(f"not a scalar form: {expr} of shape {expr.shape}")
        return Trace(expr)
    return expr


def _inner(factors, lo, hi, shape_of):
    """The product of ``factors[lo:hi]`` (the identity of size ``shape_of`` when empty)."""
    inner = factors[lo:hi]
    if not inner:
        return Identity(shape_of)
    return MatMul(*inner).doit() if len(inner) > 1 else inner[0]


def _degree_four(factors, where, covariance):
    r"""The sum over Isserlis' three pairings of a degree-4 term, as a list of ``(scalar,
    factors)``, for the two shapes of the module docstring: ``... v v^T A v v^T ...`` and
    ``... v^T A v ... v^T B v ...``; ``None`` for another shape."""
    (i, ti), (j, tj), (k, tk), (m, tm) = where
    S = covariance
    n = S.shape[0]
    if (not ti and tj and j == i + 1 and not tk and tm and m == k + 1):  # v v^T A v v^T
        A = _inner(factors, j + 1, k, n)
        head, tail = factors[:i], factors[m + 1:]
        return [(1, head + (S, A, S) + tail), (1, head + (S, A.T, S) + tail),
                (Trace(MatMul(A, S).doit()), head + (S,) + tail)]
    if ti and not tj and tk and not tm:  # (v^T A v) ... (v^T B v)
        A, B = _inner(factors, i + 1, j, n), _inner(factors, k + 1, m, n)
        rest = factors[:i] + factors[j + 1:k] + factors[m + 1:]
        forms = (Trace(MatMul(A, S).doit()) * Trace(MatMul(B, S).doit())
                 + Trace(MatMul(A, S, B, S).doit()) + Trace(MatMul(A, S, B.T, S).doit()))
        return [(forms, rest)]
    return None


def _lift_forms(expr, v):
    r"""A :math:`1\times 1` expression with the scalar forms that contain ``v`` moved from the
    coefficients into the product (a product of :math:`1\times 1` matrices is their product as
    scalars): e.g. :math:`\varepsilon\operatorname{tr}(\Gamma^\top xx^\top\Gamma)`, left by
    an earlier average, becomes the factor :math:`x^\top\Gamma\Gamma^\top x`, which the rules
    can average over :math:`x`."""
    pieces = []
    for coeff, factors in terms(expr):
        factors = tuple(f for f in factors if not isinstance(f, Identity))
        if not coeff.has(v):
            pieces.append(_product(coeff, factors, (1, 1)))
            continue
        for mono in sympy.Add.make_args(expand_traces(coeff)):
            rest, forms = sympy.Integer(1), []
            for base, power in (m.as_base_exp() for m in sympy.Mul.make_args(mono)):
                if isinstance(base, Trace) and base.has(v) and base.arg.shape == (1, 1) \
                        and power.is_Integer and power > 0:
                    forms += [base.arg] * int(power)
                elif base.has(v):
                    raise MomentError(f"the Gaussian vector {v} inside a scalar coefficient: "
                                      f"{coeff}")
                else:
                    rest *= base**power
            fs = tuple(f for form in forms for f in
                       (form.args if isinstance(form, MatMul) else (form,))
                       if not isinstance(f, Identity) and not f.is_number) + factors
            scale = sympy.Mul(*[f for form in forms if isinstance(form, MatMul)
                                for f in form.args if f.is_number])
            pieces.append(_product(rest * scale, fs, (1, 1)))
    return MatAdd(*pieces).doit() if pieces else ZeroMatrix(1, 1)


def gaussian_average(expr, v, covariance):
    r""":math:`\mathbb E_v` of ``expr`` (polynomial of degree at most 4 in the column vector
    ``v``; a matrix expression, returned with its shape) for :math:`v\sim N(0,\Sigma)`,
    ``covariance`` :math:`=\Sigma` (any symmetric matrix expression, e.g. ``Identity(D)/D``).
    Degree 0 terms are kept, odd degrees vanish, a factor pair :math:`v v^\top` becomes
    :math:`\Sigma`, a scalar form :math:`v^\top A v` becomes :math:`\operatorname{tr}(A\Sigma)`
    (its neighbours kept), and the two degree-4 shapes of the module docstring become their sums
    over Isserlis' pairings."""
    shape = expr.shape
    if shape == (1, 1):
        expr = _lift_forms(expr, v)
    total = []
    for coeff, factors in terms(expr):
        factors = tuple(f for f in factors if not isinstance(f, Identity))
        where = [(i, False) for i, f in enumerate(factors) if _is(f, v, False)]
        where += [(i, True) for i, f in enumerate(factors) if _is(f, v, True)]
        if coeff.has(v):
            raise MomentError(f"the Gaussian vector {v} inside a scalar coefficient: {coeff}")
        where.sort()
        if not where:
            total.append(_product(coeff, factors, shape))
        elif len(where) % 2:
            continue
        elif len(where) == 2:
            (i, ti), (j, tj) = where
            if not ti and tj and j == i + 1:  # ... v v^T ...
                total.append(_product(coeff, factors[:i] + (covariance,) + factors[j + 1:], shape))
            elif ti and not tj:  # ... (v^T A v) ...
                inner = factors[i + 1:j]
                form = Trace(MatMul(*inner, covariance).doit() if inner else covariance)
                total.append(_product(coeff * form, factors[:i] + factors[j + 1:], shape))
            else:
                raise MomentError(f"a degree-2 term of another shape: {MatMul(*factors)}")
        elif len(where) == 4:
            pairings = _degree_four(factors, where, covariance)
            if pairings is None:
                raise MomentError(f"a degree-4 term of another shape: {MatMul(*factors)}")
            for c, fs in pairings:
                fs = tuple(f for f in fs if not isinstance(f, Identity))
                total.append(_product(coeff * c, fs, shape))
        else:
            raise MomentError(f"degree {len(where)} in {v}: only degrees <= 4 are averaged")
    return MatAdd(*total).doit() if total else ZeroMatrix(*shape)


def _trace_terms(arg):
    """tr(arg) expanded: linear over the terms of ``arg``, a column vector rotated to the end
    (cyclic invariance) so that tr(A w w^T) reads w^T A w."""
    out = []
    for coeff, factors in terms(arg):
        cols = [i for i, f in enumerate(factors) if f.shape[1] == 1 and f.shape[0] != 1]
        if cols:
            k = cols[0]
            rotated = factors[k + 1:] + factors[:k + 1]
            out.append(coeff * scalar(MatMul(*rotated).doit()))
        else:
            out.append(coeff * Trace(MatMul(*factors).doit() if len(factors) > 1
                                     else factors[0]))
    return sympy.Add(*out)


def _scaled_identity(m) -> bool:
    """``m`` is :math:`cI_k` (a scalar times an identity)."""
    return isinstance(m, Identity) or (isinstance(m, MatMul) and all(
        _scaled_identity(f) or not isinstance(f, MatrixExpr) for f in m.args))


def _identity_scale(m):
    """``c`` of a scaled identity ``m`` = :math:`cI_k` (nested products flattened)."""
    if isinstance(m, Identity):
        return sympy.Integer(1)
    return sympy.Mul(*[_identity_scale(f) if isinstance(f, MatrixExpr) else f for f in m.args])


def _identity_traces(expr):
    """tr(c I_k) = c k."""
    def value(e):
        return _identity_scale(e.arg) * e.arg.shape[0]
    return expr.replace(lambda e: isinstance(e, Trace) and _scaled_identity(e.arg), value)


def expand_traces(expr):
    """Every trace in the scalar ``expr`` made linear and cyclic (:func:`_trace_terms`), the
    result expanded."""
    expr = _identity_traces(sympy.expand(expr))
    expr = expr.replace(lambda e: isinstance(e, Trace) and
                        not (e.arg.shape == (1, 1) and isinstance(e.arg, MatMul)
                             and _no_sum(e.arg)),
                        lambda e: _trace_terms(e.arg))
    return sympy.expand(_identity_traces(expr))


def _no_sum(m) -> bool:
    return not any(isinstance(a, MatAdd) for a in sympy.preorder_traversal(m))


def replace_forms(expr, names: dict):
    """Replace the scalar forms of ``expr`` by the scalars of ``names`` (``{matrix form:
    scalar}``; a :math:`1\\times 1` form is matched in both orientations, a trace of a square
    product as written and transposed)."""
    table = {}
    for form, value in names.items():
        for f in (form, form.T.doit() if isinstance(form, MatrixExpr) else form):
            table[scalar(f) if isinstance(f, MatrixExpr) else f] = value
        if isinstance(form, Trace):
            table[Trace(form.arg.T.doit())] = value
    return sympy.expand(sympy.expand(expr).xreplace(table))


def _drop_orthogonal_pairs(factors: list, U) -> list:
    """Remove adjacent ``U^T U`` pairs (:math:`U^\\top U = I`) until none is left."""
    changed = True
    while changed:
        changed = False
        for i in range(len(factors) - 1):
            if factors[i] == U.T and factors[i + 1] == U:
                factors = factors[:i] + factors[i + 2:]
                changed = True
                break
    return factors


def rotate_traces(expr, substitutions: dict, U):
    r"""The scalar ``expr`` (traces of products) after the change of variables
    ``substitutions`` (e.g. :math:`\Gamma = U\tilde\Gamma U^\top`, :math:`S = U\Lambda U^\top`)
    with :math:`U` orthogonal: each trace expanded, the pairs :math:`U^\top U = I` removed and
    the trace rotated cyclically (:math:`\operatorname{tr}(UXU^\top) = \operatorname{tr}(X
    U^\top U)`) until no :math:`U` is left; a :math:`U` that cannot be removed is an error."""
    def rotated(trace):
        out = []
        for coeff, factors in terms(trace.arg.xreplace(substitutions).doit()):
            f = [x for x in factors if not isinstance(x, Identity)]
            f = _drop_orthogonal_pairs(f, U)
            while len(f) >= 2 and f[0] == U and f[-1] == U.T:
                f = _drop_orthogonal_pairs(f[1:-1], U)
            if any(x in (U, U.T) for x in f):
                raise MomentError(f"{U} is left in tr({MatMul(*f)})")
            out.append(coeff * Trace(MatMul(*f).doit() if len(f) > 1 else f[0]))
        return sympy.Add(*out)
    return sympy.expand(expr.replace(lambda e: isinstance(e, Trace), rotated))


def _transposed(f):
    """The transpose of one factor (``X^T`` of a symbol, ``X`` of a transposed symbol)."""
    return f.arg if isinstance(f, Transpose) else Transpose(f)


def canonical_traces(expr):
    r"""The scalar ``expr`` with every trace of a product written in one canonical form: among
    the cyclic rotations of its factors and of the factors of its transpose
    (:math:`\operatorname{tr}(ABC) = \operatorname{tr}(BCA) = \operatorname{tr}(C^\top B^\top
    A^\top)`), the first by printed form; traces expanded first (:func:`expand_traces`). Two
    sums of trace monomials are equal as polynomials in the matrix entries when their canonical
    forms are equal (the converse direction is not claimed)."""
    def canonical(trace):
        out = []
        for coeff, factors in terms(trace.arg):
            f = tuple(x for x in factors if not isinstance(x, Identity))
            if not f:
                out.append(coeff * Trace(trace.arg))
                continue
            back = tuple(_transposed(x) for x in reversed(f))
            forms = [seq[k:] + seq[:k] for seq in (f, back) for k in range(len(seq))]
            best = min(forms, key=lambda seq: str(seq))
            out.append(coeff * Trace(MatMul(*best) if len(best) > 1 else best[0]))
        return sympy.Add(*out)
    return sympy.expand(expand_traces(expr).replace(lambda e: isinstance(e, Trace), canonical))
