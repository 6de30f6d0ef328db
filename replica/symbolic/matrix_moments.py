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
           \mathbb E[v^\top A\,v] = \operatorname{tr}(A\,\Sigma).

:func:`gaussian_average` expands a matrix expression into products of factors
(:func:`terms`), applies the rules term by term (degree 0, 1 and 2 in :math:`v`; a higher degree
is refused), and :func:`expand_traces` makes traces linear and cyclic, so that
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
           "rotate_traces", "MomentError"]


class MomentError(ValueError):
    """A term this module cannot average (a degree above 2 in the Gaussian vector, or a
    degree-2 term not of the two shapes of the rules)."""


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


def gaussian_average(expr, v, covariance):
    r""":math:`\mathbb E_v` of ``expr`` (polynomial of degree at most 2 in the column vector
    ``v``; a matrix expression, returned with its shape) for :math:`v\sim N(0,\Sigma)`,
    ``covariance`` :math:`=\Sigma` (any matrix expression, e.g. ``Identity(D)/D``). Degree 0 terms are kept, odd degrees vanish, a factor
    pair :math:`v v^\top` becomes :math:`\Sigma`, and a scalar form :math:`v^\top A v` becomes
    :math:`\operatorname{tr}(A\Sigma)` (its neighbours kept)."""
    shape = expr.shape
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
        else:
            raise MomentError(f"degree {len(where)} in {v}: only degrees <= 2 are averaged")
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


def _identity_traces(expr):
    """tr(I_k) = k."""
    return expr.replace(lambda e: isinstance(e, Trace) and isinstance(e.arg, Identity),
                        lambda e: e.arg.shape[0])


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
