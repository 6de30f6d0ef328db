r"""The extended-precision check of a float64 point, compiled into the variant's fused kernel
(:mod:`replica.numerics.kernels`): :meth:`~replica.numerics.machine.Machine.assess` at each
point, in double-double (about 106 significant bits, :mod:`replica.symbolic.ddcode`) instead of
NumPy ``longdouble`` (64 bits), inside the same compiled loop that solved the point.

**What it computes** (per point, the quantities of
:meth:`~replica.numerics.machine.Machine.assess`, with the same tests and the same thresholds):

1. the residual :math:`R(\hat x)` (:math:`\hat x - \Phi(\hat x)` for a fixed-point system,
   :math:`F(\hat x)` for a root system) in double-double at the float64 solution
   :math:`\hat x` (read exactly);
2. the Jacobian :math:`J(\hat x)` in float64 (the kernel's generated float64 code), the scaled,
   row-equilibrated matrix :math:`A_{ij} = J_{ij} s_j / \max_k |J_{ik} s_k|`
   (:math:`s_j = \max(|\hat x_j|, 10^{-300})`) and its 2-norm condition
   :math:`\kappa = \sigma_{\max}(A)/\sigma_{\min}(A)` (the singular values by one-sided
   Jacobi rotations, as accurate as ``numpy.linalg.cond``'s and several times cheaper for
   these small matrices);
   no estimate (``error = inf``) where ``A`` or ``R`` is not finite or
   :math:`\kappa \ge 1/\varepsilon_{53}`;
3. the Newton correction :math:`\delta = J^{-1} R` (float64, Gaussian elimination with partial
   pivoting), its relative size :math:`\max_j |\delta_j|/s_j` (no estimate above
   :data:`~replica.numerics.float64_checks.STEP_MAX`), and the corrected point
   :math:`x' = \hat x - \delta`, exact in double-double (a ``TwoSum``);
4. every reported value :math:`v'_k` at :math:`x'` in double-double, and the estimate
   :math:`\max_k |\hat v_k - v'_k| / |v'_k|` (0 where the two are equal, ``inf`` where it is
   not a number).

For a machine without spectral averages (the low-rank model) the points are checked
:data:`BLOCK` at a time (the points to check gathered in order): the residuals of the block
(step 1, :func:`block_evaluator` of the ``equations`` group), their float64 Jacobians and
equilibrated matrices (step 2, :func:`matrix_block_source`), the conditions of those matrices
(:func:`cond_block_source`: the same Jacobi rotations for each matrix, a matrix whose rotations
end early left unchanged by the block's later sweeps) and the reported values at the corrected
points that reach step 4 (:func:`block_evaluator` of the ``report`` group) are evaluated
together, and so are their Newton corrections (step 3, :func:`correct_block_source`: Gaussian
elimination with partial pivoting, the row exchanges as selections); each value's comparison is
made point by point. The same operations
on the same operands as at one point, so each point's residual, condition, values, estimate and
status are those of the point checked alone (``check_point``), bit for bit
(``tests/test_block_check.py``), the several points evaluated by the processor's vector
instructions -- its widest ones: the eight-point loops ask LLVM for 512-bit vectors
(``_wide_vectors``; without it LLVM stops at 256 bits on a processor with AVX-512), eight
double lanes in one register, each lane doing the scalar code's IEEE operations.

The spectral averages are summed in double-double over the float64 pairs (read exactly), as the
``longdouble`` check sums them over the same pairs, each as a balanced tree of sums
(``tree_sum``); an average whose term is a function of the pair alone (paper A: the mean
eigenvalue of each covariance) is the same at every point, and is summed once per call of the
check (``check_constants``), by the same operations. The generated double-double functions come
from the same SymPy expressions as every other evaluator of the machine (its ``aliases``,
``inputs``, ``equations`` and ``report`` groups, staged as
``Machine.evaluate`` stages them; :func:`dd_groups`), and are
kept in the code cache under the machine's content key. They are printed short
(:mod:`replica.symbolic.ddcode`: every operation once, sums as balanced trees, the operations on
a float64 operand -- the parameters, the spectral pairs, and the unknowns where the residual is
evaluated, at the float64 solution -- in the forms they reduce to), which for the low-rank
model's 36 reported values is a fifth less time than the straight transcription.

**Why this is at least as strong as the** ``longdouble`` **check.** Each double-double operation
has a relative error of a small multiple of :math:`2^{-106}` where ``longdouble``'s is
:math:`2^{-64}`, so the residual, the corrected point and the reference values are more accurate,
and the estimate :math:`|\hat v - v'|/|v'|` is nearer the true error of the float64 value. The
statuses use the same thresholds (:data:`~replica.numerics.float64_checks.CLAIM_RTOL`,
:data:`~replica.numerics.float64_checks.CONDITION_MAX`, which is derived from ``longdouble``'s
unit roundoff and so is stricter than double-double needs). ``benchmarks/check_agreement.py``
compares the two checks point by point.

A variant whose expressions hold an operation without double-double code (``log``, ``exp``,
special functions, Gaussian integrals, an infinite constant) has no compiled check
(:func:`dd_groups` raises :class:`~replica.symbolic.ddcode.NotDoubleDouble`): its kernel solves
the points and :meth:`~replica.numerics.machine.Machine.assess` checks them in ``longdouble``
afterwards, as without Numba.
"""

from __future__ import annotations

import re

from ..symbolic import ddcode
from .float64_checks import STEP_MAX

BLOCK = 8
"""The points whose residuals, conditions and reported values the compiled check evaluates
together (:func:`block_evaluator`, :func:`cond_block_source`): a multiple of the processor's
vector width in doubles (4 or 8; 16 was not faster, ``benchmarks/README.md``)."""

CACHE_NAME = "ddcheck-groups"
"""The code cache's entry holding the generated double-double functions of a machine."""

PRELUDE = '''
INL = njit(cache=CACHE, error_model="numpy", nogil=True, inline="always")

from numba.extending import intrinsic as _intrinsic
from numba.core import types as _types
from llvmlite import ir as _ir


@_intrinsic
def _fma(typingctx, a, b, c):
    # a * b + c rounded once (LLVM's fma: the processor's instruction, or an exact emulation)
    sig = _types.float64(_types.float64, _types.float64, _types.float64)

    def codegen(context, builder, signature, args):
        d = _ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], _ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)
    return sig, codegen


@_intrinsic
def _wide_vectors(typingctx):
    # marks the function that calls it for the processor's widest vectors: LLVM's
    # "prefer-vector-width"="512" (on a processor with 512-bit vectors LLVM otherwise stops at
    # 256 bits; elsewhere the attribute changes nothing). Each vector lane does the same IEEE
    # operations as the scalar code, so only the speed changes
    sig = _types.none()

    def codegen(context, builder, signature, args):
        try:  # llvmlite's attribute set checks names against its own list, which lacks this
            set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        except TypeError:  # a later llvmlite that stores attributes otherwise: only speed lost
            pass           # (test_the_blocked_loops_ask_for_the_widest_vectors then says so)
        return context.get_dummy_value()
    return sig, codegen


@_intrinsic
def _pick(typingctx, c, a, b):
    # a if c else b, as one selection (no branch): the value of the expression, computing both
    sig = _types.float64(_types.boolean, _types.float64, _types.float64)

    def codegen(context, builder, signature, args):
        return builder.select(*args)
    return sig, codegen


@_intrinsic
def _sqrt_ieee(typingctx, a):
    # the correctly rounded square root (LLVM's sqrt: the processor's instruction, as the C
    # library's sqrt, but an instruction the compiler may apply to several points at once)
    sig = _types.float64(_types.float64)

    def codegen(context, builder, signature, args):
        d = _ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.sqrt", [d], _ir.FunctionType(d, [d]))
        return builder.call(fn, args)
    return sig, codegen
'''

PRIMITIVES = '''
@JIT
def _sel(c, a, b):
    return a if c else b


@JIT
def _sqrt(a):
    return _sqrt_ieee(a)


@JIT
def _two_sum(a, b):
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@JIT
def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@JIT
def _two_prod(a, b):
    p = a * b
    return p, _fma(a, b, -p)


@JIT
def dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


@JIT
def dd_add_f(ah, al, b):
    # dd_add(ah, al, b, 0.0) less the operations on the zero
    s, e = _two_sum(ah, b)
    return _fast_two_sum(s, e + al)


@JIT
def dd_mul_f(ah, al, b):
    # dd_mul(ah, al, b, 0.0) (and dd_mul(b, 0.0, ah, al)) less the operations on the zero
    ch = ah * b
    return _fast_two_sum(ch, _fma(ah, b, -ch) + al * b)


@JIT
def dd_sub(ah, al, bh, bl):
    return dd_add(ah, al, -bh, -bl)


@JIT
def dd_mul(ah, al, bh, bl):
    ch = ah * bh
    c1 = _fma(ah, bh, -ch)
    c2 = _fma(al, bh, _fma(ah, bl, al * bl))
    return _fast_two_sum(ch, c1 + c2)


@JIT
def dd_div(ah, al, bh, bl):
    inv = 1.0 / bh
    th = ah * inv
    rh = bh * th
    rl = _fma(bl, th, _fma(bh, th, -rh))
    rh, rl = _fast_two_sum(rh, rl)
    d = (ah - rh) + (al - rl)
    return _fast_two_sum(th, d * inv)


@JIT
def dd_mul_d(ah, al, b):
    ch = ah * b
    return _fast_two_sum(ch, _fma(al, b, _fma(ah, b, -ch)))


@JIT
def dd_sqrt(ah, al):
    s = _sqrt(ah)
    p, e = _two_prod(s, s)
    c = (((ah - p) - e) + al) / (s + s)
    h, l = _fast_two_sum(s, c)
    z = ah == 0.0
    return _sel(z, ah, h), _sel(z, ah, l)


@JIT
def dd_abs(ah, al):
    n = ah < 0.0
    return _sel(n, -ah, ah), _sel(n, -al, al)
'''
r"""The double-double operations of the compiled check: the sum of two double-doubles with both
halves added by ``TwoSum`` (Joldes, Muller & Popescu 2017, *AccurateDWPlusDW*, relative error at
most :math:`3u^2`), the exact product ``TwoProd`` by one fused multiply-add, the product of two
double-doubles (their *DWTimesDW3*, at most :math:`4u^2`), a double-double times a float64
(*DWTimesFP3*, at most :math:`2u^2`) and the quotient (their *DWDivDW2* with the high quotient
taken as :math:`a_h \cdot (1/b_h)` and the correction multiplied by the same reciprocal: one
division; its error is not the published bound but is measured), and the sum and the product
of a double-double and a float64 (``dd_add_f``, ``dd_mul_f``: ``dd_add`` and ``dd_mul`` less
their operations on the zero low half, the same values), with :math:`u = 2^{-53}`:
``tests/test_fused_check.py`` measures every operation against exact rational arithmetic on
random operands over 40 binades and checks :data:`~replica.symbolic.ddcode.OP_ERROR`
(:math:`16u^2`, about :math:`2^{-102}`) for each."""

_TRACED = """
import types as _pytypes


class _Traced:
    # a float64 (or a comparison's result) inside an intrinsic's code: each Python operator
    # emits the instruction Numba emits for that operator on float64 operands
    __slots__ = ("b", "v")

    def __init__(self, b, v):
        self.b, self.v = b, v

    def _of(self, o):
        return o.v if isinstance(o, _Traced) else _ir.Constant(_ir.DoubleType(), float(o))

    def __add__(self, o):
        return _Traced(self.b, self.b.fadd(self.v, self._of(o)))

    def __radd__(self, o):
        return _Traced(self.b, self.b.fadd(self._of(o), self.v))

    def __sub__(self, o):
        return _Traced(self.b, self.b.fsub(self.v, self._of(o)))

    def __rsub__(self, o):
        return _Traced(self.b, self.b.fsub(self._of(o), self.v))

    def __mul__(self, o):
        return _Traced(self.b, self.b.fmul(self.v, self._of(o)))

    def __rmul__(self, o):
        return _Traced(self.b, self.b.fmul(self._of(o), self.v))

    def __truediv__(self, o):
        return _Traced(self.b, self.b.fdiv(self.v, self._of(o)))

    def __rtruediv__(self, o):
        return _Traced(self.b, self.b.fdiv(self._of(o), self.v))

    def __neg__(self):  # as Numba negates a float: -0.0 - a
        return _Traced(self.b, self.b.fsub(_ir.Constant(_ir.DoubleType(), -0.0), self.v))

    def __lt__(self, o):
        return _Traced(self.b, self.b.fcmp_ordered("<", self.v, self._of(o)))

    def __eq__(self, o):
        return _Traced(self.b, self.b.fcmp_ordered("==", self.v, self._of(o)))

    __hash__ = None

    def __bool__(self):
        raise TypeError("a traced value has no truth value (a branch): use _sel")


def _traced_intrinsic(b, name, *a):
    d = _ir.DoubleType()
    fn = b.module.declare_intrinsic(name, [d], _ir.FunctionType(d, [d] * len(a)))
    return _Traced(b, b.call(fn, [x.v for x in a]))


def _primitive_functions(leaves):
    # the primitives' Python functions, calling one another and the given leaves
    env = {"__builtins__": __builtins__}
    for nm in _TRACED_NAMES:
        env[nm] = _pytypes.FunctionType(globals()[nm].py_func.__code__, env, nm)
    env.update(leaves)
    return env


_TRACE_LEAVES = {
    "_fma": lambda a, b, c: _traced_intrinsic(a.b, "llvm.fma", a, b, c),
    "_sqrt_ieee": lambda a: _traced_intrinsic(a.b, "llvm.sqrt", a),
    "_sel": lambda c, a, b: _Traced(c.b, c.b.select(c.v, a.v, b.v)),
}
_COUNT_LEAVES = {"_fma": lambda a, b, c: a * b + c, "_sqrt_ieee": lambda a: a,
                 "_sel": lambda c, a, b: a}


def _as_intrinsic(name):
    # the primitive `name` as an intrinsic of float64 arguments: its Python function, run on
    # traced values, writes its operations into the caller's code (no call, so no status
    # test and no branch out of the caller's loop)
    n = globals()[name].py_func.__code__.co_argcount
    got = _primitive_functions(_COUNT_LEAVES)[name](*([1.0] * n))
    ret = _types.UniTuple(_types.float64, len(got)) if isinstance(got, tuple) else _types.float64

    def typer(typingctx, *args):
        def codegen(context, builder, signature, llargs):
            r = _primitive_functions(_TRACE_LEAVES)[name](*[_Traced(builder, v) for v in llargs])
            if isinstance(r, tuple):
                return context.make_tuple(builder, ret, [x.v for x in r])
            return r.v
        return ret(*([_types.float64] * n)), codegen
    params = ", ".join(f"a{i}" for i in range(n))
    ns = {"typer": typer}
    exec(f"def {name}_x(typingctx, {params}):\\n    return typer(typingctx, {params})\\n", ns)
    return _intrinsic(ns[name + "_x"])


_TRACED_NAMES = ("_two_sum", "_fast_two_sum", "_two_prod", "dd_add_f", "dd_add", "dd_sub",
                 "dd_mul_d", "dd_mul_f", "dd_mul", "dd_div", "dd_sqrt", "dd_abs", "_sel", "_sqrt")
""" + "".join(f'{n}_x = _as_intrinsic("{n}")\n'
              for n in ("_two_sum", "_fast_two_sum", "_two_prod", "dd_add_f", "dd_add", "dd_sub",
                        "dd_mul_d", "dd_mul_f", "dd_mul", "dd_div", "dd_sqrt", "dd_abs"))
r"""The double-double primitives again, as intrinsics ``name_x`` (``_two_sum_x``,
``dd_mul_x``, ...) that the blocked check's loops call (:func:`block_evaluator`,
:func:`correct_block_source`): each primitive's own Python function (:data:`PRIMITIVES`) run
once at compile time on traced values, whose operators emit the instructions Numba emits for
them on float64 (``fadd``, ``fsub``, ``fmul``, ``fdiv``, negation as :math:`-0.0 - a`, ordered
comparisons, LLVM's ``fma`` and ``sqrt``, ``_sel`` as a ``select``): the same operations on the
same operands as the compiled primitive inlined by LLVM, so the same values bit for bit. What
changes is the compiler's work: a call of a compiled function is followed by a test of its
status and a branch out of the loop (an exception's exit), and with ~1600 of them in one
eight-lane loop LLVM's per-function passes (LCSSA, MemCpyOpt), run before the calls are
inlined, took about half of the low-rank report's LLVM time; an intrinsic leaves one basic block (Numba's own
``inline='always'``, the ``name_v`` versions, was slower still: its inlining pass alone took
longer than the whole compile). ``benchmarks/README.md``, section ``lrcomp``."""


_COND2 = '''
@JIT
def cond2(A, W):
    # the 2-norm condition sigma_max / sigma_min of the square A by one-sided Jacobi (Hestenes):
    # plane rotations of the columns of W = A until every pair is orthogonal to 1e-15 of their
    # norms; the singular values are then the columns' norms
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            W[i, j] = A[i, j]
    for sweep in range(60):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                a = 0.0
                b = 0.0
                g = 0.0
                for k in range(n):
                    a += W[k, p] * W[k, p]
                    b += W[k, q] * W[k, q]
                    g += W[k, p] * W[k, q]
                if not abs(g) > 1e-15 * _np.sqrt(a * b):
                    continue
                rotated = True
                z = (b - a) / (2.0 * g)
                t = 1.0 / (abs(z) + _np.sqrt(1.0 + z * z))
                if z < 0.0:
                    t = -t
                c = 1.0 / _np.sqrt(1.0 + t * t)
                s = c * t
                for k in range(n):
                    wp = W[k, p]
                    wq = W[k, q]
                    W[k, p] = c * wp - s * wq
                    W[k, q] = s * wp + c * wq
        if not rotated:
            break
    big = 0.0
    small = _np.inf
    for j in range(n):
        r = 0.0
        for k in range(n):
            r += W[k, j] * W[k, j]
        r = _np.sqrt(r)
        if r > big:
            big = r
        if r < small:
            small = r
    if not (small > 0.0):
        return _np.inf
    return big / small
'''

_TREE_SUM = '''
@JIT
def _tree_level(AH, AL, BH, BL, h):
    # one level of the pairwise sum: B[k] = A[2k] + A[2k+1] (A and B distinct arrays)
    for k in range(h):
        BH[k], BL[k] = dd_add_v(AH[2 * k], AL[2 * k], AH[2 * k + 1], AL[2 * k + 1])


@JIT
def tree_sum(TH, TL, m, UH, UL):
    # pairwise, level by level T[k] = T[2k] + T[2k+1], an odd last term carried up; the levels
    # alternate between T and the scratch U (of at least m // 2 + 1 values)
    if m == 0:
        return 0.0, 0.0
    in_t = True
    while m > 1:
        h = m // 2
        if in_t:
            _tree_level(TH, TL, UH, UL, h)
            if m % 2:
                UH[h], UL[h] = TH[m - 1], TL[m - 1]
        else:
            _tree_level(UH, UL, TH, TL, h)
            if m % 2:
                TH[h], TL[h] = UH[m - 1], UL[m - 1]
        in_t = not in_t
        m = h + m % 2
    if in_t:
        return TH[0], TL[0]
    return UH[0], UL[0]
'''
"""The double-double sum of ``m`` terms as a balanced binary tree: the sums of the pairs
``(0, 1), (2, 3), ...``, then of the pairs of those sums, an odd last term carried to the next
level unchanged. Each level writes into the other of two arrays (the terms' own and a scratch
one) rather than in place, so that its independent sums are one loop over distinct arrays,
which the compiler evaluates several at a time (SIMD): the same operations on the same operands
in the same order as the in-place tree, so the same sum, bit for bit."""


_PRIMITIVE_NAMES = ("_two_sum", "_fast_two_sum", "_two_prod", "dd_add_f", "dd_add", "dd_sub",
                    "dd_mul_d", "dd_mul_f", "dd_mul", "dd_div", "dd_sqrt", "dd_abs", "_sel",
                    "_sqrt")
_CALL = re.compile(r"\b(" + "|".join(_PRIMITIVE_NAMES) + r")\(")
_X_NAMES = tuple(n for n in _PRIMITIVE_NAMES if n not in ("_sel", "_sqrt"))
_XCALL = re.compile(r"\b(" + "|".join(_X_NAMES) + r")\(")


def _group_names(m) -> list:
    """The machine's groups the check evaluates, in staging order."""
    out = []
    if m.outline.aliases:
        out.append("aliases")
    if m.outline.inputs:
        out.append("inputs")
    if m.n:
        out.append("equations")
    if m.report_names:
        out.append("report")
    return out


def group_source(name: str, exprs, args, exact=()) -> tuple:
    r"""``(source, levels)``: double-double functions of ``exprs`` (SymPy) in the symbols
    ``args``, their spectral averages evaluated **together**: ``{name}_outer(args...,
    averages...)`` and, per level ``L`` of the averages (an average is on the level after
    those it contains; :func:`~replica.symbolic.codegen.split_averages`), ``{name}_L{L}_pre``
    (the operations that do not depend on the pair, once per point) and ``{name}_L{L}`` (every
    term of that level at one pair :math:`(\lambda_j, \mu_j)`, common subexpressions shared
    between the terms). ``levels``: the indices of the averages on each level. ``exact``:
    the arguments that are float64 numbers read exactly (their low halves zero; the spectral
    pair is one too), whose operations are specialised
    (:func:`~replica.symbolic.ddcode.function_source`). Raises
    :class:`~replica.symbolic.ddcode.NotDoubleDouble` for an operation without double-double
    code."""
    import sympy

    from ..symbolic.codegen import split_averages
    from ..symbolic.gaussian import GaussianIntegral
    from ..symbolic.spectral import LAMBDA_I, MU_I

    exprs = [sympy.sympify(e) for e in exprs]
    if any(e.atoms(GaussianIntegral) for e in exprs):
        raise ddcode.NotDoubleDouble("a Gaussian integral has no double-double code")
    current, dummies, inner = split_averages(exprs)
    level: list = []
    for e, before in inner:
        deps = [level[dummies.index(d)] for d in before if d in e.free_symbols]
        level.append(1 + max(deps) if deps else 0)
    levels = [[k for k in range(len(inner)) if level[k] == L] for L in range(max(level) + 1)] \
        if inner else []
    exact = set(exact)
    parts = [ddcode.function_source(f"{name}_outer", list(args) + dummies, current,
                                    exact=exact)]
    for L, ks in enumerate(levels):
        known = [d for d, lv in zip(dummies, level) if lv < L]
        parts.append(ddcode.function_source(f"{name}_L{L}", [LAMBDA_I, MU_I] + list(args) + known,
                                            [inner[k][0] for k in ks], varying=2,
                                            exact=exact | {LAMBDA_I, MU_I}))
    return "\n\n".join(parts), levels


def dd_groups(m) -> tuple:
    """``(source, {group: levels})``: the double-double functions (:func:`group_source`) of
    the machine ``m``'s groups that the check evaluates, from the code cache where they are
    there (generating them builds the SymPy system); raises
    :class:`~replica.symbolic.ddcode.NotDoubleDouble` (remembered in the cache) for a variant
    with an operation that has no double-double code."""
    import json

    cache = m.cache
    path = cache.path(CACHE_NAME) if cache is not None else None
    if path is not None:
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError:
            text = None
        if text is not None:
            head = text.split("\n", 1)[0]
            if head.startswith("# NOT_DD "):
                raise ddcode.NotDoubleDouble(head[len("# NOT_DD "):])
            if head.startswith("# LEVELS "):
                return text, json.loads(head[len("# LEVELS "):])
    levels, parts = {}, []
    try:
        for g in _group_names(m):
            ev = m.ev[g]
            # the parameters are float64 numbers, and so are the unknowns where the residual
            # is evaluated (at the float64 solution: check_point)
            exact = set(m.p) | (set(m.x) if g == "equations" else set())
            src, levels[g] = group_source(f"dd_{g}", ev.exprs, ev.args, exact)
            parts.append(src)
    except ddcode.NotDoubleDouble as exc:
        if cache is not None:
            cache.store(CACHE_NAME, f"# NOT_DD {str(exc).splitlines()[0]}\n")
        raise
    text = "# LEVELS " + json.dumps(levels) + "\n" + "\n\n".join(parts)
    if cache is not None:
        cache.store(CACHE_NAME, text)
    return text, levels


def _inlined(source: str) -> str:
    """The primitives again, as ``name_v``, inlined by Numba into their callers (the terms of
    the spectral averages): the loop over the pairs then holds no calls (the same operations,
    so the same values)."""
    source = source.replace("@JIT\n", "@INL\n")
    source = re.sub(r"def (" + "|".join(_PRIMITIVE_NAMES) + r")\(", r"def \1_v(", source)
    return _CALL.sub(r"\1_v(", source)


def _pair_only_levels(source: str) -> set:
    """The ``(group, level)`` of the averages in ``source`` (:func:`dd_groups`' text) whose term
    function ``dd_<group>_L<level>`` reads nothing but the pair (it unpacks no hoisted values):
    averages of functions of the spectrum alone, the same at every point."""
    out = set()
    for b in re.split(r"(?=@JIT\ndef )", source):
        got = re.match(r"@JIT\ndef dd_(\w+)_L(\d+)\(", b)
        if got and "= pre" not in b:
            out.add((got.group(1), int(got.group(2))))
    return out


def _inline_terms(source: str) -> str:
    """``source`` with every average's term function (``*_inner_k``, not ``_pre``) inlined
    into its caller, calling the inlined primitives."""
    out = []
    for b in re.split(r"(?=@JIT\ndef )", source):
        if re.match(r"@JIT\ndef dd_\w+_L\d+\(", b):
            b = _CALL.sub(r"\1_v(", b.replace("@JIT\n", "@INL\n", 1))
        out.append(b)
    return "".join(out)


def check_source(m, fixed_point: bool, counts: dict) -> str:
    """The compiled check's source for the machine ``m`` (to be appended to its kernel's source,
    which defines ``stage``, ``ev_jacobian``, ``gesv``, ``_finite`` and ``JIT``):
    ``check_point(x, p, rep, lam, mu, w, t, st, v, S) -> (condition, error)`` at one point and
    ``check_points(P, lam, mu, w, X, REP, DO, COND, ERR)`` over the points marked ``DO``.
    ``counts``: the number of values of each group. Raises
    :class:`~replica.symbolic.ddcode.NotDoubleDouble` (see :func:`dd_groups`)."""
    text, levels = dd_groups(m)
    n, n_p = m.n, len(m.outline.parameters)
    lines = [PRELUDE, PRIMITIVES, _TRACED, _inlined(PRIMITIVES), _TREE_SUM, _COND2,
             _inline_terms(text)]
    x = [f"xh[{j}], xl[{j}]" for j in range(n)]
    p = [f"p[{j}], 0.0" for j in range(n_p)]
    most = max([len(ks) for lv in levels.values() for ks in lv] + [1])
    # the averages whose terms depend on the pair alone (the same at every point): summed once
    # per call of the check (check_constants), into the slots KH[i], KL[i]
    fixed = _pair_only_levels(text)
    slots = {(g, k): i for i, (g, k) in enumerate(
        (g, k) for g, lv in levels.items() for L, ks in enumerate(lv) if (g, L) in fixed
        for k in ks)}

    def sums(f, ks, pre):
        out = ["    for j in range(lam.shape[0]):",
               f"        r = {f}(lam[j], 0.0, mu[j], 0.0, {pre})"]
        out += [f"        TH[{q}, j], TL[{q}, j] = dd_mul_d_v(r[{2 * q}], r[{2 * q + 1}],"
                " w[j])" for q in range(len(ks))]
        return out

    def call(g, args, res):
        out, avgs = [], {}
        for L, ks in enumerate(levels[g]):
            f = f"dd_{g}_L{L}"
            if (g, L) in fixed:
                for k in ks:
                    s = f"{g}_s{k}"
                    out.append(f"    {s}h, {s}l = KH[{slots[g, k]}], KL[{slots[g, k]}]")
                    avgs[k] = (f"{s}h", f"{s}l")
                continue
            known = "".join(f", {avgs[k][0]}, {avgs[k][1]}" for k in sorted(avgs))
            out += [f"    pre = {f}_pre({', '.join(args)}{known})"] + sums(f, ks, "pre")
            for q, k in enumerate(ks):
                s = f"{g}_s{k}"
                out.append(f"    {s}h, {s}l = tree_sum(TH[{q}], TL[{q}], lam.shape[0], UH, UL)")
                avgs[k] = (f"{s}h", f"{s}l")
        allargs = ", ".join(list(args) + [f"{avgs[k][0]}, {avgs[k][1]}" for k in sorted(avgs)])
        out.append(f"    {res} = dd_{g}_outer({allargs})")
        return out

    def evaluator(group):
        body = [f"@JIT\ndef dd_eval_{group}(xh, xl, p, lam, mu, w, TH, TL, UH, UL, KH, KL, OH,"
                " OL):"]
        al, inp = [], []
        if "aliases" in levels:
            body += call("aliases", x + p, "ra")
            al = [f"ra[{2 * j}], ra[{2 * j + 1}]" for j in range(counts["aliases"])]
        if "inputs" in levels:
            body += call("inputs", al + p, "ri")
            inp = [f"ri[{2 * j}], ri[{2 * j + 1}]" for j in range(counts["inputs"])]
        body += call(group, x + p + al + inp, "r")
        for j in range(counts[group]):
            body += [f"    OH[{j}] = r[{2 * j}]", f"    OL[{j}] = r[{2 * j + 1}]"]
        body.append("    return")
        return "\n".join(body) + "\n"

    for g in ("equations", "report"):
        if g in levels:
            lines.append(evaluator(g))
    const = ["@JIT", "def check_constants(lam, mu, w, S):",
             "    # the averages whose terms depend on the pair alone, once per call",
             "    TH, TL, UH, UL, KH, KL = S[0], S[1], S[12], S[13], S[14], S[15]"]
    for g, lv in levels.items():
        for L, ks in enumerate(lv):
            if (g, L) in fixed:
                const += sums(f"dd_{g}_L{L}", ks, "()")
                const += [f"    KH[{slots[g, k]}], KL[{slots[g, k]}] = tree_sum(TH[{q}], TL[{q}],"
                          " lam.shape[0], UH, UL)" for q, k in enumerate(ks)]
    const.append("    return")
    lines.append("\n".join(const) + "\n")
    ns = counts.get("aliases", 0) + counts.get("inputs", 0)
    k = counts.get("report", 0)
    c = ["@JIT", "def check_point(x, p, rep, lam, mu, w, t, st, v, S):",
         "    # S: scratch (TH, TL, RH, RL, OH, OL, A, J, b, xh, xl, W, UH, UL) of this call and"
         " the averages KH, KL of check_constants",
         "    TH, TL, RH, RL, OH, OL, A, J, b, xh, xl, W, UH, UL, KH, KL = S",
         f"    for j in range({n}):", "        xh[j] = x[j]", "        xl[j] = 0.0",
         "    cond = 1.0"]
    if n:
        c += ["    dd_eval_equations(xh, xl, p, lam, mu, w, TH, TL, UH, UL, KH, KL, RH, RL)"]
        if fixed_point:
            c += [f"    for j in range({n}):",
                  "        RH[j], RL[j] = dd_sub(x[j], 0.0, RH[j], RL[j])"]
        i_matrix = len(c)  # (the pieces of check_point that the blocked check reuses)
        c += ["    stage(x, p, lam, mu, w, t, st)"]
        c += [f"    v[{j}] = x[{j}]" for j in range(n)]
        c += [f"    v[{n + j}] = p[{j}]" for j in range(n_p)]
        c += [f"    for j in range({ns}):", f"        v[{n + n_p} + j] = st[j]",
              "    jx = ev_jacobian(v, lam, mu, w, t)"]
        for i in range(n):
            for j in range(n):
                if fixed_point:
                    c.append(f"    J[{i}, {j}] = {'1.0 - ' if i == j else '-'}jx[{n * i + j}]")
                else:
                    c.append(f"    J[{i}, {j}] = jx[{n * i + j}] + 0.0")
        c += ["    ok = True",
              f"    for i in range({n}):",
              "        big = 0.0",
              f"        for j in range({n}):",
              "            s = abs(x[j])",
              "            if not s > 1e-300:",
              "                s = 1e-300",
              "            A[i, j] = J[i, j] * s",
              "            a = abs(A[i, j])",
              "            if a > big or a != a:",
              "                big = a",
              f"        for j in range({n}):",
              "            A[i, j] = A[i, j] / big",
              "            ok = ok and _finite(A[i, j])",
              "        ok = ok and _finite(RH[i]) and _finite(RL[i])",
              "    if not ok:",
              "        return _np.inf, _np.inf"]
        i_cond = len(c)
        c += ["    cond = cond2(A, W)" if n > 1 else
              "    cond = 1.0  # one unknown: the equilibrated 1 x 1 matrix is +-1",
              "    if not cond < 1.0 / 2.220446049250313e-16:",
              "        return cond, _np.inf"]
        i_solve = len(c)
        c += [f"    for i in range({n}):",
              "        b[i] = RH[i] + RL[i]",
              f"        for j in range({n}):",
              "            A[i, j] = J[i, j]",
              "    if not gesv(A, b):",
              "        return cond, _np.inf",
              "    step = 0.0",
              f"    for j in range({n}):",
              "        s = abs(x[j])",
              "        if not s > 1e-300:",
              "            s = 1e-300",
              "        q = abs(b[j]) / s",
              "        if q > step or q != q:",
              "            step = q",
              f"    if not step <= {STEP_MAX!r}:",
              "        return cond, _np.inf",
              f"    for j in range({n}):",
              "        xh[j], xl[j] = _two_sum(x[j], -b[j])"]
        i_end = len(c)
    # a machine without spectral averages checks its points BLOCK at a time: the residuals
    # (block_evaluator), the Jacobians and equilibrated matrices (check_matrix_block), the
    # conditions (cond2_block), the Newton corrections (check_correct_block) and the reported
    # values (block_evaluator) of BLOCK points together (check_matrix and check_correct, the
    # one-point matrix and correction steps -- check_correct the piece of check_point after the
    # condition -- are the tests' references)
    blocked = bool(n and k and not any(ks for lv in levels.values() for ks in lv))
    prepare = []
    if blocked:
        prepare = ["@JIT", "def check_matrix(x, p, lam, mu, w, t, st, v, RH, RL, J, A):",
                   "    # check_point's Jacobian J and equilibrated matrix A at x (the residual"
                   " RH, RL given): whether both are finite (one point; the blocked check"
                   " uses check_matrix_block, which tests/test_block_check.py compares with it)"]
        prepare += [ln.replace("return _np.inf, _np.inf", "return False")
                    for ln in c[i_matrix:i_cond]]
        prepare += ["    return True", "", "", "@JIT",
                    "def check_correct(x, cond, RH, RL, J, A, b, xh, xl):",
                    "    # check_point after its condition cond: the Newton correction and the"
                    " corrected point (in xh, xl); (error, whether the reported values are to be"
                    " compared there)",
                    "    if not cond < 1.0 / 2.220446049250313e-16:",
                    "        return _np.inf, False"]
        prepare += [ln.replace("return cond, _np.inf", "return _np.inf, False")
                    for ln in c[i_solve:i_end]]
        prepare += ["    return 0.0, True"]
    c += ["    err = 0.0"]
    if k:
        c += ["    dd_eval_report(xh, xl, p, lam, mu, w, TH, TL, UH, UL, KH, KL, OH, OL)",
              f"    for j in range({k}):",
              "        vj = rep[j]",
              "        if vj == OH[j] and OL[j] == 0.0:",
              "            continue",
              "        dh, dl = dd_sub(vj, 0.0, OH[j], OL[j])",
              "        e = abs(dh) / abs(OH[j])",
              "        if e != e:",
              "            e = _np.inf",
              "        if e > err:",
              "            err = e"]
    c += ["    return cond, err", "", "",
          "@JIT",
          "def check_scratch(m):",
          "    m = m if m > 1 else 1",
          f"    return (_np.empty(({most}, m)), _np.empty(({most}, m)),",
          f"            _np.empty({max(n, 1)}), _np.empty({max(n, 1)}),",
          f"            _np.empty({max(k, 1)}), _np.empty({max(k, 1)}),",
          f"            _np.empty(({max(n, 1)}, {max(n, 1)})),"
          f" _np.empty(({max(n, 1)}, {max(n, 1)})),",
          f"            _np.empty({max(n, 1)}), _np.empty({max(n, 1)}),"
          f" _np.empty({max(n, 1)}), _np.empty(({max(n, 1)}, {max(n, 1)})),",
          "            _np.empty(m // 2 + 1), _np.empty(m // 2 + 1),",
          f"            _np.empty({max(len(slots), 1)}), _np.empty({max(len(slots), 1)}))", "", "",
          "@JIT",
          "def check_points(P, lam, mu, w, X, REP, DO, COND, ERR):",
          "    for i in range(P.shape[1]):",
          "        if not DO[i]:",
          "            COND[i] = _np.nan",
          "            ERR[i] = _np.nan",
          # (int64 zeros, not the constant 0: the compiler would compile a second version of
          # the callee for the constant's own type while it types the caller)
          "    check_range(P, lam, mu, w, X, REP, DO, COND, ERR, _np.int64(0), P.shape[1])",
          "", "",
          "@JIT",
          "def check_range(P, lam, mu, w, X, REP, DO, COND, ERR, lo, hi):",
          "    # the check of the points lo <= i < hi marked DO: COND[i], ERR[i]",
          "    t = _np.empty(lam.shape[0])",
          f"    st = _np.empty({max(ns, 1)})",
          f"    v = _np.empty({n + n_p + ns})",
          "    S = check_scratch(lam.shape[0])",
          "    check_constants(lam, mu, w, S)"]
    if not blocked:
        c += ["    for i in range(lo, hi):",
              "        if DO[i]:",
              "            COND[i], ERR[i] = check_point(X[:, i], P[:, i], REP[:, i], lam, mu, w,"
              " t, st, v, S)"]
        lines.append("\n".join(c) + "\n")
        return "\n\n".join(lines)
    # the points to check are gathered BLOCK at a time into the columns of IE (rows: x, its
    # zero low halves, p, then the residual's high and low halves), whose residuals
    # dd_block_equations evaluates, and whose conditions cond2_block computes; those whose
    # reported values are compared are gathered BLOCK at a time into the columns of IO (rows:
    # xh, xl, p, then the values' high and low halves, then two rows for compare_block: the
    # float64 values of one REP row and the estimates), evaluated by one call of
    # dd_block_report and compared as check_point compares them, the lanes together
    # (compare_block: check_point's branches as selections -- an equal pair's 0 leaves the
    # maximum as check_point's skip leaves it -- so the same estimate bit for bit)
    out0 = 2 * n + n_p
    eq0 = 2 * n + n_p
    c += ["    xh, xl, A, b = S[9], S[10], S[6], S[8]",
          f"    IO = _np.zeros({out0 + 2 * k + 2} * BLOCK)",
          "    lane = _np.empty(BLOCK, _np.int64)",
          f"    IE = _np.zeros({eq0 + 2 * n} * BLOCK)",
          "    lane_e = _np.empty(BLOCK, _np.int64)",
          f"    CW = _np.zeros({n * n + 1} * BLOCK)",
          f"    JW = _np.zeros({n * n} * BLOCK)",
          "    CB = _np.empty(BLOCK)",
          "    OKB = _np.zeros(BLOCK, _np.bool_)",
          f"    RW = _np.zeros({2 * n} * BLOCK)",
          f"    XW = _np.zeros({2 * n} * BLOCK)",
          "    ERRB = _np.empty(BLOCK)",
          "    GO = _np.zeros(BLOCK, _np.bool_)",
          "    m = _np.int64(0)",
          "    me = _np.int64(0)",
          "    for i in range(lo, hi):",
          "        if not DO[i]:",
          "            continue",
          f"        for j in range({n}):",
          "            IE[j * BLOCK + me] = X[j, i]",
          f"        for j in range({n_p}):",
          f"            IE[({2 * n} + j) * BLOCK + me] = P[j, i]",
          "        lane_e[me] = i",
          "        me += 1",
          "        if me == BLOCK:",
          "            m = check_block(X, REP, COND, ERR, IE, lane_e, me, CW, CB, OKB, RW, JW, ERRB,"
          " GO, XW, IO, lane, m)",
          "            me = _np.int64(0)",
          "    if me:",
          "        m = check_block(X, REP, COND, ERR, IE, lane_e, me, CW, CB, OKB, RW, JW, ERRB, GO,"
          " XW, IO, lane, m)",
          "    if m:",
          "        block_errors(IO, lane, m, REP, ERR)", "", "",
          "@JIT",
          "def check_block(X, REP, COND, ERR, IE, lane_e, me, CW, CB, OKB, RW, JW, ERRB, GO, XW,"
          " IO, lane, m):",
          "    # the me points of IE (their indices lane_e): residuals, conditions and Newton"
          " corrections together; the corrected points join IO's m (returned: how many IO"
          " holds now)",
          "    dd_block_equations(IE)",
          "    check_matrix_block(IE, JW, CW, OKB)",
          "    for q in range(BLOCK):",
          "        ok = False",
          "        if q < me:",
          "            i = lane_e[q]",
          "            ok = OKB[q]",
          f"            for j in range({n}):",
          f"                rh = IE[({eq0} + j) * BLOCK + q]",
          f"                rl = IE[({eq0 + n} + j) * BLOCK + q]",
          ("                rh, rl = dd_sub(X[j, i], 0.0, rh, rl)" if fixed_point else ""),
          f"                RW[j * BLOCK + q], RW[({n} + j) * BLOCK + q] = rh, rl",
          "                ok = ok and _finite(rh) and _finite(rl)",
          "            if not ok:",
          "                COND[i] = _np.inf",
          "                ERR[i] = _np.inf",
          "        OKB[q] = ok",
          "        if not ok:",
          f"            for r in range({n}):",
          f"                for j in range({n}):",
          f"                    CW[(r * {n} + j) * BLOCK + q] = 1.0 if r == j else 0.0",
          "    cond2_block(CW, CB)",
          "    check_correct_block(IE, JW, RW, CB, ERRB, GO, XW)",
          "    for q in range(me):",
          "        if not OKB[q]:",
          "            continue",
          "        i = lane_e[q]",
          "        COND[i] = CB[q]",
          "        ERR[i] = ERRB[q]",
          "        if not GO[q]:",
          "            continue",
          f"        for j in range({n}):",
          "            IO[j * BLOCK + m] = XW[j * BLOCK + q]",
          f"            IO[({n} + j) * BLOCK + m] = XW[({n} + j) * BLOCK + q]",
          f"        for j in range({n_p}):",
          f"            IO[({2 * n} + j) * BLOCK + m] = IE[({2 * n} + j) * BLOCK + q]",
          "        lane[m] = i",
          "        m += 1",
          "        if m == BLOCK:",
          "            block_errors(IO, lane, m, REP, ERR)",
          "            m = 0",
          "    return m", "", "",
          "@JIT",
          "def block_errors(IO, lane, m, REP, ERR):",
          "    # the reported values at the m corrected points of IO, and each point's estimate",
          "    dd_block_report(IO)",
          "    compare_block(IO, lane, m, REP)",
          "    for q in range(m):",
          f"        ERR[lane[q]] = IO[{out0 + 2 * k + 1} * BLOCK + q]", "", "",
          "@JIT",
          "def compare_block(IO, lane, m, REP):",
          "    # each lane's estimate max_j |REP[j] - O[j]| / |O[j]| (0 where the two are equal,"
          " inf where it is not a number; check_point's comparison, as selections) into the"
          f" row {out0 + 2 * k + 1} of IO, the values of each REP row gathered into the row"
          f" {out0 + 2 * k} (the lanes from m on: stale numbers, not read)",
          "    _wide_vectors()",
          "    for q in range(BLOCK):",
          f"        IO[{out0 + 2 * k + 1} * BLOCK + q] = 0.0",
          f"    for j in range({k}):",
          "        for q in range(m):",
          f"            IO[{out0 + 2 * k} * BLOCK + q] = REP[j, lane[q]]",
          "        for q in range(BLOCK):",
          f"            vj = IO[{out0 + 2 * k} * BLOCK + q]",
          f"            oh = IO[({out0} + j) * BLOCK + q]",
          f"            ol = IO[({out0 + k} + j) * BLOCK + q]",
          "            dh, dl = dd_sub_v(vj, 0.0, oh, ol)",
          "            e = abs(dh) / abs(oh)",
          "            e = _np.inf if e != e else e",
          "            e = 0.0 if (vj == oh) & (ol == 0.0) else e",
          f"            err = IO[{out0 + 2 * k + 1} * BLOCK + q]",
          f"            IO[{out0 + 2 * k + 1} * BLOCK + q] = e if e > err else err"]
    lines.append("\n".join(prepare) + "\n")
    lines.append(f"BLOCK = {BLOCK}\n")
    lines.append(block_evaluator(text, "equations", counts, n, n_p))
    lines.append(block_evaluator(text, "report", counts, n, n_p))
    lines.append(cond_block_source(n))
    lines.append(correct_block_source(n, n_p))
    lines.append(matrix_block_source(n, n_p, counts.get("aliases", 0), counts.get("inputs", 0),
                                     fixed_point))
    lines.append("\n".join(c) + "\n")
    return "\n\n".join(lines)



def compiled_primitives() -> dict:
    """A namespace holding :data:`PRIMITIVES` (and their inlined ``_v`` copies and their
    intrinsics ``_x``, ``_TRACED``), the
    condition number ``cond2`` and the pairwise sum ``tree_sum`` compiled by Numba (not
    cached; for measuring them against exact arithmetic and LAPACK,
    ``tests/test_fused_check.py``)."""
    import numpy as np
    from numba import njit

    ns = {"njit": njit, "_np": np}
    src = ('JIT = njit(cache=False, error_model="numpy")\n'
           + PRELUDE.replace("cache=CACHE", "cache=False") + PRIMITIVES + _TRACED
           + _inlined(PRIMITIVES).replace("cache=CACHE", "cache=False") + _COND2 + _TREE_SUM)
    exec(compile(src, "<fused_check primitives>", "exec"), ns)  # noqa: S102 - our own source
    return ns


def compiled_cond_block(n: int):
    """``cond2_block`` (:func:`cond_block_source`) for matrices of order ``n``, compiled by
    Numba beside ``cond2`` (not cached; ``tests/test_block_check.py`` compares the two)."""
    import numpy as np
    from numba import njit

    ns = {"njit": njit, "_np": np, "BLOCK": BLOCK}
    src = ('JIT = njit(cache=False, error_model="numpy")\n'
           + PRELUDE.replace("cache=CACHE", "cache=False") + cond_block_source(n))
    exec(compile(src, "<fused_check cond2_block>", "exec"), ns)  # noqa: S102 - our own source
    return ns["cond2_block"]


_DD_NAME = re.compile(r"\b[at]\d+[hl]\b")


def _outer_functions(text: str) -> dict:
    """``{name: (arguments, body lines, returned values)}`` of the ``dd_<group>_outer``
    functions in ``text`` (:func:`dd_groups`' source): straight-line code, one operation a line,
    ending in ``return (...)``."""
    out = {}
    for b in re.split(r"(?=@JIT\ndef )", text):
        got = re.match(r"@JIT\ndef (dd_\w+_outer)\(([^)]*)\):\n", b)
        if not got:
            continue
        lines = [ln for ln in b[got.end():].rstrip().split("\n") if ln.strip()]
        ret = lines[-1].strip()
        if not (ret.startswith("return (") and ret.endswith(")")):
            raise ValueError(f"{got.group(1)}: no final return of a tuple")
        out[got.group(1)] = ([a.strip() for a in got.group(2).split(",") if a.strip()],
                             lines[:-1],
                             [v.strip() for v in ret[len("return ("):-1].split(",") if v.strip()])
    return out


def block_evaluator(text: str, group: str, counts: dict, n: int, n_p: int) -> str:
    r"""``dd_block_<group>(IO)``: the double-double values of ``group`` (with the aliases and
    spectral inputs they read) at ``BLOCK`` points at once. ``IO`` holds one column of ``BLOCK``
    entries per row, ``IO[r * BLOCK + b]``: the rows ``0 .. n-1`` the unknowns' high halves,
    ``n .. 2n-1`` their low halves, ``2n .. 2n+n_p-1`` the parameters (float64), then the
    values' high halves and their low halves (``counts[group]`` rows each), written here. The
    same operations on the same operands as :func:`check_source`'s ``dd_eval_<group>`` at one
    point -- the bodies of the ``dd_<g>_outer`` functions of ``text`` written into one loop over
    the ``BLOCK`` columns (their names prefixed by the group) -- so the same values bit for bit;
    but one loop without calls or branches over a constant number of columns of one array, in
    which every read and write of a column is ``BLOCK`` entries from those of the next: the
    compiler evaluates the columns several at a time (SIMD, 3.4-3.6x faster for the low-rank
    model's 36 values, ``benchmarks/README.md``). Only for a machine without spectral averages
    (their pairwise sums are loops of their own). The operations are the primitives'
    intrinsics (``dd_mul_x``, ...: no calls in the loop, so no branches out of it; a third of
    the compile, section ``lrcomp``)."""
    fns = _outer_functions(text)
    body = [f"@JIT\ndef dd_block_{group}(IO):", "    _wide_vectors()", "    for b in range(BLOCK):"]
    x = [v for j in range(n) for v in (f"IO[{j} * BLOCK + b]", f"IO[{n + j} * BLOCK + b]")]
    p = [v for j in range(n_p) for v in (f"IO[{2 * n + j} * BLOCK + b]", "0.0")]

    def emit(g, args):
        params, lines, vals = fns[f"dd_{g}_outer"]
        if len(params) != len(args):
            raise ValueError(f"dd_{g}_outer: {len(params)} arguments, {len(args)} given")
        body.extend(f"        {g}_{a} = {v}" for a, v in zip(params, args))
        for ln in lines:  # (the primitives as intrinsics: no calls in the loop)
            body.append("    " + _XCALL.sub(r"\1_x(", _DD_NAME.sub(lambda mt: f"{g}_{mt.group(0)}",
                                                                    ln)))
        return [_DD_NAME.sub(lambda mt: f"{g}_{mt.group(0)}", v) for v in vals]

    al = emit("aliases", x + p) if "dd_aliases_outer" in fns else []
    inp = emit("inputs", al + p) if "dd_inputs_outer" in fns else []
    r = emit(group, x + p + al + inp)
    out0, k = 2 * n + n_p, counts[group]
    for j in range(k):
        body += [f"        IO[{out0 + j} * BLOCK + b] = {r[2 * j]}",
                 f"        IO[{out0 + k + j} * BLOCK + b] = {r[2 * j + 1]}"]
    body.append("    return")
    return "\n".join(body) + "\n"


def cond_block_source(n: int) -> str:
    r"""``cond2_block(CW, C)``: ``cond2`` of ``BLOCK`` square matrices of order ``n`` at once,
    ``C[b]`` the condition :math:`\sigma_{\max}/\sigma_{\min}` of the matrix in column ``b``
    of ``CW`` (its entry :math:`(r, j)` at ``CW[(r * n + j) * BLOCK + b]``; overwritten; ``CW``
    holds :math:`n^2 + 1` rows of ``BLOCK`` entries, the last one scratch).

    The same one-sided Jacobi rotations as ``cond2``, column by column of each matrix: for every
    pair of columns :math:`(p, q)` in the same order, the sums
    :math:`a = \sum_k w_{kp}^2`, :math:`b = \sum_k w_{kq}^2`, :math:`g = \sum_k w_{kp} w_{kq}`
    accumulated in the same order from ``0.0``, the rotation applied where
    :math:`|g| > 10^{-15}\sqrt{ab}` (per matrix: elsewhere its columns are kept, a selection
    instead of ``cond2``'s ``continue``), and the sweeps repeated until no matrix of the block
    was rotated in a sweep (at most 60). A matrix that ends its rotations before the others is
    not changed by the later sweeps -- a sweep without a rotation leaves the columns, so the
    next makes the same decisions -- so each matrix undergoes exactly ``cond2``'s rotations, and
    its condition is ``cond2``'s bit for bit (square roots by ``_sqrt_ieee``, correctly rounded
    as NumPy's). Straight-line code for the fixed ``n`` inside loops over the ``BLOCK``
    matrices, which the compiler evaluates several at a time (SIMD). Each pair takes two such
    loops: the sums and each lane's decision, then (the sums again and) the rotations -- the
    second left out where no lane of the block rotates the pair, as in the sweep that ends the
    rotations (it would only write each column back unchanged): the same numbers, and for the
    low-rank model's 5 x 5 matrices two fifths less time on a grid whose lanes end their
    rotations early, a few per cent on the others (``benchmarks/README.md``, section
    ``grid_s47``). Each loop's body assigns every name once and writes its choices as
    selections (``_pick``, LLVM's ``select``, the value ``a if c else b`` has): one basic block
    that Numba's SSA pass need not repair, about half the compile of the same code with
    branches and reassigned names (section ``lrcomp``)."""
    out = ["@JIT", "def cond2_block(CW, C):"]
    if n == 1:
        out += ["    for b in range(BLOCK):", "        C[b] = 1.0", "    return"]
        return "\n".join(out) + "\n"

    def at(r, j):
        return f"CW[{r * n + j} * BLOCK + b]"

    # each pair of columns in two loops over the lanes: first the sums and each lane's decision
    # (1.0 where it rotates, in the scratch row n*n of CW), then -- only where some lane of the
    # block rotates the pair -- the sums again (the same operations, so the same numbers) and
    # the rotations; a second loop in which no lane rotates would write every column back
    # unchanged (its selections keep wp, wq), so leaving it out changes no bit
    flag = f"CW[{n * n} * BLOCK + b]"
    out += ["    _wide_vectors()", "    for sweep in range(60):", "        rot = 0"]
    # (every name in a loop's body assigned once, and the choices as selections (_pick): each
    # body one basic block whose names need no repair by Numba's SSA pass -- the same
    # operations, its compile a fraction of the branches' and reassignments')
    for p in range(n - 1):
        for q in range(p + 1, n):
            def sums(t):
                out = [f"wp{r}{t} = {at(r, p)}" for r in range(n)]
                out += [f"wq{r}{t} = {at(r, q)}" for r in range(n)]
                for r in range(n):
                    a0, b0, g0 = ((f"a{r - 1}{t}", f"bb{r - 1}{t}", f"g{r - 1}{t}") if r
                                  else ("0.0", "0.0", "0.0"))
                    out += [f"a{r}{t} = {a0} + wp{r}{t} * wp{r}{t}",
                            f"bb{r}{t} = {b0} + wq{r}{t} * wq{r}{t}",
                            f"g{r}{t} = {g0} + wp{r}{t} * wq{r}{t}"]
                return out
            t, u = f"_{p}_{q}", f"_{p}_{q}r"
            a, bb, g = f"a{n - 1}{u}", f"bb{n - 1}{u}", f"g{n - 1}{u}"
            out.append("        for b in range(BLOCK):")
            out += ["            " + ln for ln in sums(t) + [
                f"{flag} = _pick(abs(g{n - 1}{t}) > 1e-15 * _sqrt_ieee(a{n - 1}{t} * "
                f"bb{n - 1}{t}), 1.0, 0.0)"]]
            out += ["        turns = 0", "        for b in range(BLOCK):",
                    f"            turns += 1 if {flag} != 0.0 else 0",
                    "        rot += turns", "        if turns:",
                    "            for b in range(BLOCK):"]
            body = sums(u) + [f"d{u} = {flag} != 0.0",
                              f"z{u} = ({bb} - {a}) / (2.0 * {g})",
                              f"t0{u} = 1.0 / (abs(z{u}) + _sqrt_ieee(1.0 + z{u} * z{u}))",
                              f"t1{u} = _pick(z{u} < 0.0, -t0{u}, t0{u})",
                              f"c{u} = 1.0 / _sqrt_ieee(1.0 + t1{u} * t1{u})",
                              f"s{u} = c{u} * t1{u}"]
            for r in range(n):
                body += [f"{at(r, p)} = _pick(d{u}, c{u} * wp{r}{u} - s{u} * wq{r}{u}, "
                         f"wp{r}{u})",
                         f"{at(r, q)} = _pick(d{u}, s{u} * wp{r}{u} + c{u} * wq{r}{u}, "
                         f"wq{r}{u})"]
            out += ["                " + ln for ln in body]
    out += ["        if rot == 0:", "            break",
            "    for b in range(BLOCK):", "        big0 = 0.0", "        small0 = _np.inf"]
    for j in range(n):
        out += [f"        r{j}_0 = 0.0 + {at(0, j)} * {at(0, j)}"]
        out += [f"        r{j}_{r} = r{j}_{r - 1} + {at(r, j)} * {at(r, j)}" for r in range(1, n)]
        out += [f"        q{j} = _sqrt_ieee(r{j}_{n - 1})",
                f"        big{j + 1} = _pick(q{j} > big{j}, q{j}, big{j})",
                f"        small{j + 1} = _pick(q{j} < small{j}, q{j}, small{j})"]
    out += [f"        C[b] = _pick(small{n} > 0.0, big{n} / small{n}, _np.inf)", "    return"]
    return "\n".join(out) + "\n"


def matrix_block_source(n: int, n_p: int, n_al: int, n_in: int, fixed_point: bool) -> str:
    r"""``check_matrix_block(IE, JW, CW, OK)``: ``check_matrix`` at the ``BLOCK`` points of
    ``IE`` (:func:`check_source`'s layout: the unknowns :math:`\hat x` in the rows ``0 .. n-1``,
    the parameters in the rows ``2n .. 2n+n_p-1``) at once: the float64 Jacobian
    :math:`J(\hat x)` (:math:`I - \Phi'` for a fixed-point system) into ``JW`` and the
    row-equilibrated matrix :math:`A_{ij} = J_{ij} s_j / \max_k |J_{ik} s_k|`
    (:math:`s_j = \max(|\hat x_j|, 10^{-300})`) into ``CW`` (entry :math:`(r, j)` of lane ``b``
    at ``[(r n + j) \cdot BLOCK + b]``), and ``OK[b]``: whether every entry of ``A`` is finite
    (the residual's finiteness is the caller's). The kernel's generated float64 functions
    (``aliases_outer``, ``inputs_outer``, ``jacobian_outer``, as ``stage`` and ``ev_jacobian``
    call them) and the same operations in the same order as ``check_matrix``, its branches
    written as selections: the same values bit for bit, one loop over the lanes without
    branches that the compiler may evaluate several lanes at a time."""
    xs = [f"x{j}" for j in range(n)]
    ps = [f"p{j}" for j in range(n_p)]
    al = [f"a{j}" for j in range(n_al)]
    inp = [f"s{j}" for j in range(n_in)]
    L = ["@JIT", "def check_matrix_block(IE, JW, CW, OK):", "    _wide_vectors()",
         "    for b in range(BLOCK):"]
    L += [f"        x{j} = IE[{j} * BLOCK + b]" for j in range(n)]
    L += [f"        p{j} = IE[{2 * n + j} * BLOCK + b]" for j in range(n_p)]
    if n_al:
        L.append(f"        ra = aliases_outer({', '.join(xs + ps)})")
        L += [f"        a{j} = ra[{j}]" for j in range(n_al)]
    if n_in:
        L.append(f"        ri = inputs_outer({', '.join(al + ps)})")
        L += [f"        s{j} = ri[{j}]" for j in range(n_in)]
    L.append(f"        jx = jacobian_outer({', '.join(xs + ps + al + inp)})")
    for j in range(n):
        L += [f"        c{j} = abs(x{j})", f"        c{j} = c{j} if c{j} > 1e-300 else 1e-300"]
    L.append("        ok = True")
    for i in range(n):
        for j in range(n):
            k = n * i + j
            if fixed_point:
                L.append(f"        j{j} = {'1.0 - ' if i == j else '-'}jx[{k}]")
            else:
                L.append(f"        j{j} = jx[{k}] + 0.0")
            L.append(f"        JW[{k} * BLOCK + b] = j{j}")
        L.append("        big = 0.0")
        for j in range(n):
            L += [f"        e{j} = j{j} * c{j}", f"        g = abs(e{j})",
                  "        big = g if (g > big) | (g != g) else big"]
        for j in range(n):
            L += [f"        e{j} = e{j} / big", f"        ok = ok & (e{j} - e{j} == 0.0)",
                  f"        CW[{n * i + j} * BLOCK + b] = e{j}"]
    L += ["        OK[b] = ok", "    return"]
    return "\n".join(L) + "\n"


def gesv_selections(n: int, picks: bool = False) -> list:
    r"""The statements of ``gesv`` (the kernel's Gaussian elimination with partial pivoting) on
    the ``n x n`` matrix held in the names ``a{i}_{j}`` and the right-hand side ``b{i}``, for one
    lane of a loop over points: the same operations on the same operands in the same order --
    the pivot of column :math:`k` the first row of largest :math:`|a_{ik}|`, :math:`i \ge k`;
    the multipliers :math:`f = a_{ik}/a_{kk}`, the updates :math:`a_{ij} - f a_{kj}` and
    :math:`b_i - f b_k`, then back substitution :math:`b_k = (b_k - \sum_{j>k} a_{kj}
    b_j)/a_{kk}`, the sum from :math:`j = k+1` up -- with the row exchanges as selections (one
    row at most is exchanged with row :math:`k` at step :math:`k`; the columns left of
    :math:`k`, which ``gesv`` exchanges too, and the entries below the pivot, which it updates,
    are never read again, so they are left out). The name ``go`` (set before) is and-ed with
    ``gesv``'s tests (every pivot nonzero and finite, the solution finite): where it ends
    false, ``gesv`` would have returned ``False`` and the names hold values nobody reads. The
    solution ends in ``b{i}``; ``pi``, ``pv``, ``pa``, ``c``, ``s``, ``t``, ``f``, ``acc``:
    scratch names. With ``picks``: every name assigned once (a new version ``<name>v<k>`` at each
    assignment, the matrix and the pivot's row as floats) and each selection a ``_pick`` (LLVM's
    ``select``, the value the ``a if c else b`` above has): the same numbers, one basic block
    whose names Numba's SSA pass need not repair -- a fraction of the compile (as
    ``cond2_block``'s, section ``lrcomp``); the solution is then assigned to ``b{i}`` again at
    the end."""
    if picks:
        return _gesv_picks(n)
    body = []
    for k in range(n):
        body += [f"pi = {k}", f"pv = abs(a{k}_{k})", f"pa = a{k}_{k}"]
        for i in range(k + 1, n):
            body += [f"c = abs(a{i}_{k}) > pv", f"pi = {i} if c else pi",
                     f"pv = abs(a{i}_{k}) if c else pv", f"pa = a{i}_{k} if c else pa"]
        body.append("go = go & (pa != 0.0) & (pa - pa == 0.0)")
        for i in range(k + 1, n):
            body.append(f"s = pi == {i}")
            for j in range(k, n):
                body += [f"t = a{k}_{j}", f"a{k}_{j} = a{i}_{j} if s else t",
                         f"a{i}_{j} = t if s else a{i}_{j}"]
            body += [f"t = b{k}", f"b{k} = b{i} if s else t", f"b{i} = t if s else b{i}"]
        for i in range(k + 1, n):
            body.append(f"f = a{i}_{k} / a{k}_{k}")
            body += [f"a{i}_{j} = a{i}_{j} - f * a{k}_{j}" for j in range(k + 1, n)]
            body.append(f"b{i} = b{i} - f * b{k}")
    for k in range(n - 1, -1, -1):
        body.append(f"acc = b{k}")
        body += [f"acc = acc - a{k}_{j} * b{j}" for j in range(k + 1, n)]
        body.append(f"b{k} = acc / a{k}_{k}")
    body += [f"go = go & (b{k} - b{k} == 0.0)" for k in range(n)]
    return body


def _gesv_picks(n: int) -> list:
    """:func:`gesv_selections` with ``picks``."""
    ver: dict = {}
    body = []

    def cur(nm):
        return f"{nm}v{ver[nm]}" if nm in ver else nm

    def put(nm, value):
        ver[nm] = ver.get(nm, 0) + 1
        body.append(f"{nm}v{ver[nm]} = {value}")

    for k in range(n):
        put("pi", f"{k}.0")
        put("pv", f"abs({cur(f'a{k}_{k}')})")
        put("pa", cur(f"a{k}_{k}"))
        for i in range(k + 1, n):
            put("c", f"abs({cur(f'a{i}_{k}')}) > {cur('pv')}")
            c = cur("c")
            put("pi", f"_pick({c}, {i}.0, {cur('pi')})")
            put("pv", f"_pick({c}, abs({cur(f'a{i}_{k}')}), {cur('pv')})")
            put("pa", f"_pick({c}, {cur(f'a{i}_{k}')}, {cur('pa')})")
        put("go", f"{cur('go')} & ({cur('pa')} != 0.0) & ({cur('pa')} - {cur('pa')} == 0.0)")
        for i in range(k + 1, n):
            put("s", f"{cur('pi')} == {i}.0")
            sv = cur("s")
            for nk, ni in [(f"a{k}_{j}", f"a{i}_{j}") for j in range(k, n)] + [(f"b{k}", f"b{i}")]:
                t, u = cur(nk), cur(ni)
                put(nk, f"_pick({sv}, {u}, {t})")
                put(ni, f"_pick({sv}, {t}, {u})")
        for i in range(k + 1, n):
            put("f", f"{cur(f'a{i}_{k}')} / {cur(f'a{k}_{k}')}")
            fv = cur("f")
            for j in range(k + 1, n):
                put(f"a{i}_{j}", f"{cur(f'a{i}_{j}')} - {fv} * {cur(f'a{k}_{j}')}")
            put(f"b{i}", f"{cur(f'b{i}')} - {fv} * {cur(f'b{k}')}")
    for k in range(n - 1, -1, -1):
        put("acc", cur(f"b{k}"))
        for j in range(k + 1, n):
            put("acc", f"{cur('acc')} - {cur(f'a{k}_{j}')} * {cur(f'b{j}')}")
        put(f"b{k}", f"{cur('acc')} / {cur(f'a{k}_{k}')}")
    for k in range(n):
        put("go", f"{cur('go')} & ({cur(f'b{k}')} - {cur(f'b{k}')} == 0.0)")
    body += [f"b{i} = {cur(f'b{i}')}" for i in range(n)]
    body.append(f"go = {cur('go')}")
    return body


def correct_block_source(n: int, n_p: int) -> str:
    r"""``check_correct_block(IE, JW, RW, CB, ERRB, GO, XW)``: ``check_correct`` (the Newton
    correction of the check, after the condition) at the ``BLOCK`` points of ``IE`` at once.
    Lane ``b``: the float64 solution :math:`\hat x` in the rows ``0 .. n-1`` of ``IE``
    (:func:`check_source`'s layout), the Jacobian :math:`J` in ``JW`` (entry :math:`(r, j)` at
    ``[(r n + j) \cdot BLOCK + b]``, :func:`matrix_block_source`), the residual's high and low
    halves :math:`R_h, R_l` in ``RW`` (rows ``0 .. n-1`` and ``n .. 2n-1``), the condition in
    ``CB[b]``. It solves :math:`J \delta = R_h + R_l` by Gaussian elimination with partial
    pivoting (``gesv``: the pivot of column :math:`k` the first row of largest
    :math:`|a_{ik}|`, :math:`i \ge k`; the multipliers :math:`f = a_{ik}/a_{kk}`, the updates
    :math:`a_{ij} - f a_{kj}` and :math:`b_i - f b_k`, then back substitution
    :math:`\delta_k = (b_k - \sum_{j>k} a_{kj}\delta_j)/a_{kk}`, the sum from :math:`j = k+1`
    up), and writes ``GO[b]`` -- the condition below :math:`1/\varepsilon_{53}`, every pivot
    nonzero and finite, :math:`\delta` finite, :math:`\max_j |\delta_j|/s_j \le`
    :data:`~replica.numerics.float64_checks.STEP_MAX` (:math:`s_j = \max(|\hat x_j|,
    10^{-300})`) -- ``ERRB[b]`` (0 where ``GO``, inf elsewhere, ``check_correct``'s error) and
    the corrected point :math:`x' = \hat x - \delta` exact in double-double (``TwoSum``) in
    ``XW`` (high halves in the rows ``0 .. n-1``, low halves in ``n .. 2n-1``).

    Every lane does ``check_correct``'s operations on the same operands in the same order, so
    its values are that point's bit for bit (``tests/test_block_check.py``): the row exchanges
    are selections (one row at most is exchanged with row :math:`k` at step :math:`k`, and the
    columns left of :math:`k`, which ``gesv`` exchanges too, are never read again), the
    updates of the entries below the pivot, never read again, are left out, and a lane whose
    test fails goes on computing values nobody reads instead of returning. Straight-line code
    for the fixed ``n`` inside one loop over the lanes, without calls or branches, which the
    compiler evaluates several lanes at a time (SIMD)."""
    L = ["@JIT", "def check_correct_block(IE, JW, RW, CB, ERRB, GO, XW):", "    _wide_vectors()",
         "    for q in range(BLOCK):"]
    body = [f"x{j} = IE[{j} * BLOCK + q]" for j in range(n)]
    body.append("go = CB[q] < 1.0 / 2.220446049250313e-16")
    body += [f"b{i} = RW[{i} * BLOCK + q] + RW[{n + i} * BLOCK + q]" for i in range(n)]
    body += [f"a{i}_{j} = JW[{i * n + j} * BLOCK + q]" for i in range(n) for j in range(n)]
    body += gesv_selections(n)
    body.append("step = 0.0")
    for j in range(n):
        body += [f"s = abs(x{j})", "s = s if s > 1e-300 else 1e-300", f"r = abs(b{j}) / s",
                 "step = r if (r > step) | (r != r) else step"]
    body.append(f"go = go & (step <= {STEP_MAX!r})")
    for j in range(n):
        body.append(f"XW[{j} * BLOCK + q], XW[{n + j} * BLOCK + q] = _two_sum_x(x{j}, -b{j})")
    body += ["GO[q] = go", "ERRB[q] = 0.0 if go else _np.inf"]
    L += ["        " + ln for ln in body]
    L.append("    return")
    return "\n".join(L) + "\n"
