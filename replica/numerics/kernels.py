r"""Fused float64 kernels: the whole float64 point of a model variant in one compiled call.

The float64 path of :meth:`~replica.numerics.machine.Machine.grid` evaluates a point through
dozens of calls of generated NumPy code (the start's bracket and ``(h, h')`` of every scalar root
at every Newton step, the unknowns' start values, the aliases and spectral inputs, the residual,
the reported values, the admissibility conditions), each with its spectral averages as separate
array operations, and a driver around them. For a variant whose declared start is exact
(``Outline.exact_start``: the start solves the system, no iteration follows), :func:`kernel`
emits **one** function that does all of it for every point of a batch -- the nested monotone roots
by safeguarded Newton (the iterates of
:func:`~replica.numerics.roots.bracketed_newton_vec` at one point), the unknowns, the residual and
its relative size, the reported values and the admissibility conditions -- and compiles it with
Numba (``njit``, NumPy's error model: a division by zero gives ``inf``/``nan`` as in NumPy).

**Iterated fixed-point systems** (e.g. the low-rank model, whose start is followed by an
iteration) get the same kernel plus the Newton sweeps of
:func:`~replica.numerics.newton.iterate_grid` on :math:`x = \Phi(x)` at each point (the
Jacobian :math:`\Phi'` is the generated code of the symbolic derivative, as on the NumPy path):
the step :math:`(I-\Phi')^{-1}(\Phi - x)`, halved until the relative change drops, until that
change is below ``rtol`` (:meth:`Kernel._newton`). A point where ``iterate_grid`` would take a
damped step instead (Newton rejected above the rounding floor, a singular Jacobian, a non-finite
map) is *left*: :meth:`~replica.numerics.machine.Machine.grid` solves the points left by the
NumPy path, so they end exactly as they do without the kernel. In a kernel with the compiled
check, the first sweep of :data:`NEWTON_BLOCK` points is taken together, once their starts are
known (:meth:`Kernel._newton_block_source`: the same operations on the same operands as
``newton_point``'s first sweep, in one loop over the points that the compiler evaluates with
vector instructions -- the low-rank grids' points, which all converge in that sweep, 0.06-0.08
instead of about 0.5 us each, ``benchmarks/README.md``, section ``lrgrid``); a point that does
not converge in it is solved by ``newton_point`` from its start, so every point's values are
``newton_point``'s bit for bit. A point (of any kernel) where a scalar root of the start is
not found in :data:`ROOT_MAXITER` safeguarded Newton steps is left to the NumPy path too: its
start fails there as well and names the point's status (``max-iterations``, or
``non-finite`` where the root's function was not finite at its last step), the other points
solved as before.

**A batch is one compiled loop over its points, with continuation**: the outer root of each
point starts from the previous point's root where that lies inside the point's bracket (the root
in the bracket is unique, so only the path to it changes; along paper A's 30-point kappa curves
this saves 15-22 % of the safeguarded Newton steps), the first point from its declared start.
Every point keeps its own status (below). The loop allocates nothing per point: the local
arrays of the point's functions are rows of one workspace allocated per call
(:meth:`Kernel._row`), and the generated functions are called with their arguments one by one
(:meth:`_Group.call`), not gathered into arrays, and ``Piecewise`` without lists
(:func:`unroll_select`) -- the allocations and the arrays' reference counting were more than
half of a low-rank point's solve (``benchmarks/README.md``).

**No formula is written here.** The kernel's source is assembled from the source of the same
generated functions the NumPy path calls (the ``outer`` and ``inner_k`` functions of each
:class:`~replica.symbolic.codegen.Evaluator`, themselves ``lambdify`` output of the SymPy
declaration); this module adds only the loops: each spectral average
:math:`\sum_j w_j\,\phi(\lambda_j, \mu_j)` as a loop over the pairs (the terms summed
pairwise, in blocks of 128 with eight partial sums, the grouping of NumPy's ``np.add.reduce``
of a contiguous row, which the NumPy path's averages are: bit for bit the same sums,
``tests/test_kernel_sums.py``), and the control flow of the
start and the exact-start check.

**Values.** The kernel evaluates the same expressions as the NumPy path, but not bit for bit:
NumPy's vectorised ``power`` with a float exponent (``x**(-2.0)``, SIMD) and the C library's
``pow`` (Numba) round differently in the last place, and NumPy's reductions group their partial
sums differently from one array shape to another (a point and a batch already differ in the last
bits today). Measured on paper A's variants (``tests/test_float64_kernels.py``): every reported
value within a relative 4e-15 of the NumPy path at well-conditioned points, 3e-13 over a wide
random range -- far inside :data:`~replica.numerics.float64_checks.CLAIM_RTOL` (1e-8), the
accuracy a ``converged`` point claims. The safeguarded Newton iterations of the start take
different numbers of steps in the two paths, and may end a few units in the last place apart
(both within a few units of the root solved at 30 digits): the kernel starts each scalar root
from the previous points' roots (continuation, with a first-order predictor) where the NumPy
path starts every point from its bracket, and where the root's function is at its rounding
floor the kernel stops at a Newton step below the tolerance that the bracket's end rounds off,
where the NumPy path bisects (:meth:`Kernel._root_solver`).
**The honest status of every point** comes from the same compiled loop: where the variant's
expressions have double-double code, the kernel source also holds the extended-precision check
of :mod:`replica.numerics.fused_check` (the quantities of
:meth:`~replica.numerics.machine.Machine.assess` -- residual, Newton correction, every reported
value at the corrected point, condition -- in double-double instead of NumPy ``longdouble``,
with the same thresholds), run on each point once the batch is solved, and the point's status
code (:func:`~replica.numerics.float64_checks.status_of_codes`); Python only names the codes and
masks the values. The checks of a batch run after its loop (each point's check depends on
that point alone) on the calling thread; from :data:`~replica.numerics.kernels.PARALLEL_MIN`
points on, with Numba's thread count (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``) above
one, the batch is cut into chunks of consecutive points (:func:`chunk_points`: large first,
small last) that the threads take in turn from a shared counter, each chunk solved and checked
by one call (:meth:`Kernel._solve_parts_on_threads`, the compiled code releasing the GIL; no
more compiled code -- a ``prange`` loop cost 12 s more of compilation on first use). Each
chunk's continuation starts afresh at its first point, so the values there (and at the few
points its root is carried to) may differ from one thread's in their last bits, within the
error estimates the two report; with one thread, the single loop. Where the start has one
scalar root, a call of at least :data:`PAIR_MIN` points solves its roots first, as two
continuation chains (its first half and the rest) in lock step (:meth:`Kernel._root_pair`:
each chain's roots bit for bit those of the single root solver along it), so the second
chain's first point is a restart too.
Elsewhere (an operation without
double-double code, e.g. an infinite constant) the kernel solves and
:meth:`~replica.numerics.machine.Machine.assess` checks in ``longdouble`` afterwards, as
without the kernel. The kernel's source -- solve and check --
is one generated file, named by its hash, so Numba's cache of it can never be stale.

**When.** Only with Numba installed (the ``fast`` extra) and ``REPLICA_NUMBA`` not ``0``;
otherwise, and for a variant whose generated code Numba does not compile, :func:`kernel` returns
``None`` and the NumPy path runs. The kernel's source is written to the code cache
(:class:`~replica.symbolic.codegen.CodeCache`, same key as the generated code) and compiled with
Numba's own cache beside it, so a later process loads the compiled kernel instead of compiling
it (seconds).
"""

from __future__ import annotations

import builtins
import functools
import importlib.util
import inspect
import math
import os
import re
import sys

import numpy as np

from ..errors import ConvergenceError
from ..symbolic.ddcode import NotDoubleDouble
from .result import Status

ROOT_RTOL = 4e-16
"""Relative step at which a scalar root of the start stops (as in the NumPy path)."""
ROOT_MAXITER = 200
"""Safeguarded Newton steps a scalar root may take (as in the NumPy path)."""
PAIR_MIN = 32
"""The smallest batch (``solve_points`` call) whose scalar roots a kernel with one scalar root
solves as two continuation chains in lock step (:meth:`Kernel._root_pair`); a smaller one is
one chain."""
NEWTON_SWEEPS = 100
"""Newton sweeps an iterated point may take in the kernel before it is left to the NumPy path."""
PARALLEL_MIN = 512
"""The smallest checked batch solved and checked in parts on several threads
(``numba.get_num_threads()`` of them, i.e. ``NUMBA_NUM_THREADS``;
:meth:`Kernel._solve_parts_on_threads`); a smaller one is one loop on the calling thread
(starting threads costs more than a few points)."""


CHUNK_MIN = 64
"""The smallest chunk of :func:`chunk_points` (the last chunks of a batch solved on threads)."""


def chunk_points(N: int, threads: int, smallest: int = CHUNK_MIN) -> list:
    """The bounds ``b`` of the chunks of consecutive points (chunk ``k``: ``b[k] <= i <
    b[k + 1]``) in which ``threads`` threads take a batch of ``N`` points
    (:meth:`Kernel._solve_parts_on_threads`): each chunk ``ceil(r / (2 threads))`` of the
    ``r`` points not yet in a chunk, but at least ``smallest`` (and at most ``r``) -- large
    chunks first (few restarts of the continuation), small ones last, so that the threads
    finish within about one small chunk of each other whatever each thread's speed. The bounds
    depend on ``N`` and ``threads`` only, never on which thread takes which chunk."""
    step = 2 * max(1, int(threads))
    smallest = max(1, int(smallest))
    b = [0]
    while b[-1] < N:
        r = N - b[-1]
        b.append(b[-1] + min(r, max(smallest, -(-r // step))))
    return b


_NONE = np.zeros(0)
"""The spectral arrays of a kernel call without a spectrum (empty; never written)."""

_KERNELS: dict = {}
_FAILED: set = set()
FALLBACK_REASONS: dict = {}
"""Why a kernel was not compiled, per ``(problem, variant, checked)``: the exception's text (the
fallback to the NumPy path gives the same values, so it is silent; tests read this to say why
no kernel ran)."""


def enabled() -> bool:
    """Whether fused kernels may be used: Numba importable and ``REPLICA_NUMBA`` not off."""
    if os.environ.get("REPLICA_NUMBA", "").strip().lower() in ("0", "off", "no", "false"):
        return False
    return _numba_installed()


@functools.lru_cache(maxsize=None)
def _numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def _threads() -> int:
    """The threads a batch's checks may use: Numba's (``NUMBA_NUM_THREADS``, or what
    ``numba.set_num_threads`` set on this thread)."""
    import numba

    return max(1, int(numba.get_num_threads()))


def kernel(m):
    """The fused kernel of the machine ``m`` (a :class:`~replica.numerics.machine.Machine`), or
    ``None``: Numba unavailable or disabled, a variant whose start is not exact (it iterates),
    no code cache (``REPLICA_LAMBDIFY_CACHE=0``, or a problem that names no source files: the
    kernel would be compiled again in every process), or generated code that Numba does not
    compile (remembered for the process)."""
    if not enabled() or m.cache is None:
        return None
    key = (id(m), m.problem.name, m.variant)
    hit = _KERNELS.get(key)
    if hit is not None and hit.machine is m:
        return hit  # (built in this process: the code cache's folder was checked then)
    if m.cache.folder() is None:
        return None  # (without a code cache the kernel would be compiled in every process)
    if not (m.outline.exact_start or (m.outline.fixed_point and m.n)):
        return None  # an iterated root system: the NumPy path
    if key in _FAILED:
        return None
    k = None
    for checked in (True, False):
        try:
            k = Kernel(m, checked=checked)
            k.compile_now()
            break
        except Exception as exc:  # noqa: BLE001 - generated code Numba cannot type
            k = None  # without the compiled check (the longdouble one runs), then NumPy
            FALLBACK_REASONS[(m.problem.name, m.variant, checked)] = repr(exc)[:500]
    if k is None:
        _FAILED.add(key)
        return None
    _KERNELS[key] = k
    return k


# ---------------------------------------------------------------------------------------------
# Source assembly
# ---------------------------------------------------------------------------------------------
_PRELUDE = '''# generated by replica.numerics.kernels from the generated NumPy code of one model variant
from numba import njit
import numpy as _np

JIT = njit(cache=CACHE, error_model="numpy", nogil=True)
CONTINUATION = True
PREDICT = True


@JIT
def maximum(a, b):
    if a != a:
        return a + 0.0
    if b != b:
        return b + 0.0
    return a if a >= b else b + 0.0 * a


@JIT
def minimum(a, b):
    if a != a:
        return a + 0.0
    if b != b:
        return b + 0.0
    return a if a <= b else b + 0.0 * a


def reduce(f, seq):
    raise NotImplementedError("reduce is unrolled into maximum/minimum calls")


@JIT
def select(conds, values, default):
    # numpy.select at one point (how the NumPy printer writes Piecewise): the first true
    # condition's value
    for k in range(len(conds)):
        if conds[k]:
            return values[k] + 0.0
    return default + 0.0


@JIT
def _block(a, lo, n):
    # pairwise summation of a[lo:lo+n] for n <= 128 (eight partial sums)
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0 = a[lo]
    r1 = a[lo + 1]
    r2 = a[lo + 2]
    r3 = a[lo + 3]
    r4 = a[lo + 4]
    r5 = a[lo + 5]
    r6 = a[lo + 6]
    r7 = a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@JIT
def _half(n):
    # the first half's length at a split of the pairwise summation (a multiple of 8)
    h = n // 2
    return h - h % 8


@JIT
def _node(lo, n, path, depth):
    # (start, length) of the node reached from (lo, n) by `depth` halvings, bit k of `path`
    # saying which half (1: the second) at the k-th
    for k in range(depth):
        h = _half(n)
        if (path >> k) & 1:
            lo += h
            n -= h
        else:
            n = h
    return lo, n


@JIT
def _pairwise(a, lo0, n0):
    # NumPy's pairwise summation of a[lo0:lo0+n0]: blocks of at most 128 terms (_block), a
    # longer range the sum of its halves (_half), the same additions in the same order as the
    # recursion; without recursion (Numba's cache) and without a stack: the tree walked depth
    # first, the path kept as bits, a finished first half's sum kept in its first entry
    # (a[lo0:lo0+n0] is scratch, overwritten), a node's bounds recomputed from the root
    lo = lo0
    n = n0
    depth = 0
    path = 0
    while True:
        while n > 128:  # down to the first block of (lo, n)
            n = _half(n)
            depth += 1
        s = _block(a, lo, n)
        while True:
            if depth == 0:
                return s
            bit = 1 << (depth - 1)
            if path & bit:  # a second half: its parent's sum is the first half's plus s
                depth -= 1
                path -= bit
                lo, n = _node(lo0, n0, path, depth)
                s = a[lo] + s
            else:  # a first half: keep its sum, go on with the second half
                a[lo] = s
                path += bit
                lo, n = _node(lo0, n0, path, depth)
                break


@JIT
def _row_sum(t):
    # a row's sum as NumPy's np.add.reduce sums a contiguous row (NumPy 1.26 and 2.x: the
    # pairwise sum of the whole row, which the NumPy path's spectral averages are); t is
    # scratch: a longer row's entries are overwritten. A row of at most 128 terms is one block
    # (_pairwise's first step), called directly: 40 ns at 119 terms, 65 ns through _pairwise
    n = t.shape[0]
    if n <= 128:
        return _block(t, 0, n)
    return _pairwise(t, _np.int64(0), n)


@JIT
def _finite(v):
    return v - v == 0.0
'''


def _numpy_namespace() -> dict:
    """The names generated NumPy code may use (as :mod:`replica.symbolic.codegen` gives them)."""
    ns = {"numpy": np, "builtins": builtins, "range": range}
    ns.update((n, np.__dict__[n]) for n in np.__all__ if n in np.__dict__)
    ns.update((n, getattr(np.linalg, n)) for n in np.linalg.__all__)
    ns["I"] = 1j
    ns["Heaviside"] = ns["heaviside"]
    ns.setdefault("Abs", abs)
    return ns


def _renamed(f, name: str) -> str:
    """The source of the generated function ``f`` as a jitted function ``name`` returning a
    tuple (the generated functions return lists of values of mixed numeric types)."""
    src = inspect.getsource(f)
    src = re.sub(r"^def \w+\(", f"def {name}(", src, count=1)
    src = unroll_select(unroll_reduce(src))
    lines = src.rstrip().split("\n")
    last = lines[-1]
    m = re.match(r"^(\s*)return \[(.*)\]$", last)
    if m:
        items = m.group(2).strip()
        lines[-1] = f"{m.group(1)}return ({items},)" if items else f"{m.group(1)}return ()"
    return "@JIT\n" + "\n".join(lines) + "\n"


NEWTON_BLOCK = 8
"""The points whose first Newton sweep an iterated checked kernel takes together
(:meth:`Kernel._newton_block_source`): the processor's vector width in doubles."""

REPORT_BLOCK = 8
"""The points whose float64 reported values the checked kernel's solve evaluates together
(:func:`report_block_source`): the processor's vector width in doubles."""


def report_block_source(outer: str, n_out: int):
    r"""``report_block(RB)``: the float64 values of a generated group function ``outer`` (the
    source :func:`_renamed` gives: straight-line assignments, then one ``return (...)``) at
    :data:`REPORT_BLOCK` points at once. ``RB[r * REPORT_BLOCK + b]``: the rows ``0 .. a-1``
    the function's ``a`` arguments at the point in lane ``b``, then its ``n_out`` values,
    written here. The function's body written into one loop over the lanes, so each lane does
    the same IEEE operations on the same operands as a call of the function at that point --
    the same values bit for bit (``tests/test_float64_kernels.py``) -- and the compiler
    evaluates the lanes several at a time (vector instructions: one loop without calls or
    branches, every read and write of a row ``REPORT_BLOCK`` entries from those of the next).
    ``None`` where ``outer`` is not such straight-line code."""
    lines = outer.rstrip().split("\n")
    head = re.match(r"^def \w+\(([^)]*)\):$", lines[1]) if len(lines) > 2 else None
    if lines[0] != "@JIT" or head is None:
        return None
    args = [a.strip() for a in head.group(1).split(",") if a.strip()]
    body, ret = lines[2:-1], lines[-1]
    plain = re.compile(r"^    \w+ = [^\n]*$")
    if not ret.startswith("    return (") or not all(plain.match(ln) for ln in body):
        return None
    names = set(args) | {ln.split("=")[0].strip() for ln in body}
    if names & {"RB", "_rb_lane", "_rb_values", "REPORT_BLOCK"}:
        return None
    out = ["@JIT", "def report_block(RB):", "    _wide_vectors()",
           "    for _rb_lane in range(REPORT_BLOCK):"]
    out += [f"        {a} = RB[{r} * REPORT_BLOCK + _rb_lane]" for r, a in enumerate(args)]
    out += ["    " + ln for ln in body]
    out.append("        _rb_values = " + ret.strip()[len("return "):])
    out += [f"        RB[{len(args) + j} * REPORT_BLOCK + _rb_lane] = _rb_values[{j}]"
            for j in range(n_out)]
    out.append("    return")
    return "\n".join(out) + "\n"


def inline_call(source: str, args: list, suffix: str):
    """``(lines, values)``: the body of the generated group function ``source`` (the text
    :func:`_renamed` gives: straight-line assignments, then ``return (...)``) as statements
    at the arguments ``args`` (source texts), every name of the function (its arguments and
    locals) renamed with ``suffix``, and the source texts of its returned values -- the same
    operations on the same operands as a call, without the call (which the compiler does not
    inline for the large groups, and which keeps a loop over points from its vector
    instructions). ``None`` where ``source`` is not such straight-line code."""
    lines = source.rstrip().split("\n")
    head = re.match(r"^def \w+\(([^)]*)\):$", lines[1]) if len(lines) > 2 else None
    if lines[0] != "@JIT" or head is None:
        return None
    params = [a.strip() for a in head.group(1).split(",") if a.strip()]
    body, ret = lines[2:-1], lines[-1]
    plain = re.compile(r"^    (\w+) = [^\n]*$")
    if (len(params) != len(args) or not ret.startswith("    return (")
            or not all(plain.match(ln) for ln in body)):
        return None
    names = set(params) | {plain.match(ln).group(1) for ln in body}
    word = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, names), key=len,
                                                         reverse=True)) + r")(?!\w)")

    def ren(text):
        return word.sub(lambda mt: mt.group(1) + suffix, text)

    out = [f"{a}{suffix} = {v}" for a, v in zip(params, args)]
    out += [ren(ln.strip()) for ln in body]
    inner = ret.strip()[len("return ("):]
    if not inner.endswith(")"):
        return None
    return out, [ren(v) for v in _split_top(inner[:-1])]


def _split_top(text: str) -> list:
    """``text`` split at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def unroll_reduce(src: str) -> str:
    """``reduce(maximum, [a, b, c])`` (how the NumPy printer writes ``Max``) as
    ``maximum(maximum(a, b), c)``: the same pairwise folds, which Numba compiles."""
    for fn in ("maximum", "minimum"):
        head = f"reduce({fn}, ["
        while head in src:
            i = src.index(head)
            j, depth = i + len(head), 1
            while depth:
                depth += {"[": 1, "]": -1}.get(src[j], 0)
                j += 1
            items = _split_top(src[i + len(head):j - 1])
            if src[j] != ")":
                raise ValueError("unexpected reduce() form")
            acc = items[0]
            for item in items[1:]:
                acc = f"{fn}({acc}, {item})"
            src = src[:i] + acc + src[j + 1:]
    return src


def unroll_select(src: str) -> str:
    """``select([c1, c2], [v1, v2], default=d)`` (how the NumPy printer writes ``Piecewise``)
    as ``(v1) + 0.0 if (c1) else ((v2) + 0.0 if (c2) else (d) + 0.0)``: the value of the first
    true condition, as :func:`numpy.select` at one point (and the prelude's ``select``), without
    the two lists, which Numba would allocate at every call."""
    head = "select(["
    while head in src:
        i = src.rindex(head)  # (the last call has no other call in its arguments)
        j, depth = i + len("select("), 1
        while depth:
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(src[j], 0)
            j += 1
        args = _split_top(src[i + len("select("):j - 1])
        if len(args) != 3 or not (args[0].startswith("[") and args[0].endswith("]")
                                  and args[1].startswith("[") and args[1].endswith("]")):
            raise ValueError("unexpected select() form")
        conds, values = _split_top(args[0][1:-1]), _split_top(args[1][1:-1])
        default = args[2].split("=", 1)[1] if args[2].startswith("default=") else args[2]
        if len(conds) != len(values):
            raise ValueError("unexpected select() form")
        acc = f"({default}) + 0.0"
        for c, v in zip(reversed(conds), reversed(values)):
            acc = f"(({v}) + 0.0 if ({c}) else {acc})"
        src = src[:i] + acc + src[j:]
    return src


class _Group:
    """One evaluator's functions in the kernel: ``name`` and the counts of its arguments,
    averages and outputs."""

    def __init__(self, name, ev, n_out, n_args=None):
        outer, inners = ev.functions("np")
        self.name = name
        self.n_inner = len(inners)
        self.n_args = outer.__code__.co_argcount - self.n_inner
        if n_args is not None and self.n_args != n_args:
            # more arguments than the machine passes: the values of Gaussian integrals, which
            # the kernel does not compute (the NumPy path does)
            raise ValueError(f"{name}: {self.n_args} arguments, not {n_args}")
        self.n_out = n_out
        self.source = [_renamed(outer, f"{name}_outer")]
        self.source += [_renamed(f, f"{name}_inner_{k}") for k, f in enumerate(inners)]
        self.source.append(self._evaluator())
        if self.n_inner:
            self.source.append(self._evaluator(scalar=True))

    def call(self, args: list) -> str:
        """The source of the group's values at the arguments ``args`` (source texts of numbers,
        as many as the outer function's arguments before the averages): the outer function
        itself where there is no spectral average, else ``at_<name>``. The kernel's solve
        calls the groups so, with numbers: an array of the arguments (``ev_<name>``) costs
        the array's reference counting at every call, which was most of a root step's time."""
        if len(args) != self.n_args:
            raise ValueError(f"{self.name}: {len(args)} arguments, not {self.n_args}")
        if not self.n_inner:
            return f"{self.name}_outer({', '.join(args)})"
        return f"at_{self.name}(lam, mu, w, t, {', '.join(args)})"

    def _evaluator(self, scalar: bool = False) -> str:
        """``ev_<name>(v, lam, mu, w, t)``: the outer function at the arguments ``v`` and the
        averages of the inner functions (``t`` a scratch row of the pairs' length); with
        ``scalar``, ``at_<name>(lam, mu, w, t, arg0, arg1, ...)``: the same at the arguments
        given one by one."""
        if scalar:
            args = [f"arg{i}" for i in range(self.n_args)]
            out = [f"@JIT\ndef at_{self.name}(lam, mu, w, t, {', '.join(args)}):"]
        else:
            args = [f"v[{i}]" for i in range(self.n_args)]
            out = [f"@JIT\ndef ev_{self.name}(v, lam, mu, w, t):"]
        for k in range(self.n_inner):
            prev = ", ".join(args + [f"a{j}" for j in range(k)])
            out += ["    for j in range(lam.shape[0]):",
                    f"        t[j] = w[j] * {self.name}_inner_{k}(lam[j], mu[j], {prev})",
                    f"    a{k} = _row_sum(t)"]
        allargs = ", ".join(args + [f"a{j}" for j in range(self.n_inner)])
        out.append(f"    return {self.name}_outer({allargs})")
        return "\n".join(out) + "\n"


class Kernel:
    """The fused float64 kernel of one machine (see the module docstring); call it with the
    parameters (arrays of one shape), the float64 spectral pairs and that shape."""

    def __init__(self, m, checked: bool = True):
        self.machine = m
        start = m.start_machine
        o = m.outline
        self.n, self.n_p = m.n, len(o.parameters)
        self.n_roots, self.n_al, self.n_in = start.n_roots, o.aliases, o.inputs
        self.warm_size = 3 * max(self.n_roots, 1)  # (the continuation's state: _root_solver)
        self.n_report, self.n_adm = len(m.report_names), len(o.admissible)
        self.fixed_point = bool(o.fixed_point)
        groups = []
        n_p, nr, ns = self.n_p, self.n_roots, self.n_al + self.n_in
        before = 0
        for k, chain in enumerate(start.roots):
            for depth in range(len(chain)):
                groups.append(_Group(f"s{k}_{depth}_bracket", start.ev[(k, depth, "bracket")], 6,
                                     n_p + before + depth))
                groups.append(_Group(f"s{k}_{depth}_fdf", start.ev[(k, depth, "fdf")], 2,
                                     n_p + before + len(chain) + ns))
            before += len(chain)
        groups.append(_Group("s_values", start.ev["values"], self.n, n_p + nr + ns))
        if not start.no_aliases:
            groups.append(_Group("s_aliases", start.alias_evaluator(), self.n_al, n_p + nr))
        if o.aliases:
            groups.append(_Group("aliases", m.ev["aliases"], self.n_al, self.n + n_p))
        if o.inputs:
            groups.append(_Group("inputs", m.ev["inputs"], self.n_in, self.n_al + n_p))
        groups.append(_Group("equations", m.ev["equations"], self.n, self.n + n_p + ns))
        self.iterated = not o.exact_start
        if self.iterated and not self.fixed_point:
            raise ValueError("only a fixed-point system is iterated in a kernel")
        # the compiled extended-precision check (fused_check), where the variant's expressions
        # have double-double code: it needs the float64 Jacobian, as the iteration does
        self.check_source = None
        if checked:
            from .fused_check import check_source

            try:
                self.check_source = check_source(m, self.fixed_point, {
                    "aliases": self.n_al, "inputs": self.n_in, "equations": self.n,
                    "report": self.n_report})
            except NotDoubleDouble:
                self.check_source = None
        self.checked = self.check_source is not None
        if (self.iterated or self.checked) and self.n:
            groups.append(_Group("jacobian", m.ev["jacobian"], self.n * self.n,
                                 self.n + n_p + ns))
        self.positive = bool(o.positive_unknowns)
        if self.n_report:
            groups.append(_Group("report", m.ev["report"], self.n_report, self.n + n_p + ns))
        if self.n_adm:
            groups.append(_Group("admissible", m.ev["admissible"], self.n_adm,
                                 self.n + n_p + ns))
        self.groups = {g.name: g for g in groups}
        source = _PRELUDE + "\n\n" + "\n\n".join(s for g in groups for s in g.source)
        source += "\n\n" + self._driver(start, o)
        if self.checked:
            source += "\n\n" + self.check_source
        self.source = source
        self.module = _load(m, source)
        self.solve = self.module.solve_points

    # -- the driver's source ---------------------------------------------------------------------
    def _row(self, size) -> str:
        """A row of the batch's workspace ``W`` for one local array of ``size`` numbers (each
        function's each array its own row: no function holds a row while another that uses
        it runs); the source text of that row."""
        size = max(int(size), 1)
        self._rows.append(size)
        return f"W[{len(self._rows) - 1}, :{size}]"  # (its own length, as _np.empty(size))

    @staticmethod
    def _args(**counts) -> list:
        """The source texts ``name[0], name[1], ...`` of ``counts[name]`` numbers of each array
        named, in order: a group's arguments one by one (:meth:`_Group.call`)."""
        return [f"{name}[{j}]" for name, k in counts.items() for j in range(k)]

    def _driver(self, start, o) -> str:
        n, n_p, nr = self.n, self.n_p, self.n_roots
        ns = self.n_al + self.n_in
        chains = [len(c) for c in start.roots]
        lines = []
        # the local arrays of the point's functions are rows of one workspace ``W``, allocated
        # once per call of solve_points (allocating them anew at each point and each root step
        # was about half of the solve's time), and the groups are called with their arguments
        # one by one (Kernel._args, _Group.call), not in arrays
        self._rows = []
        # one scalar root and no inner one: solve_points first solves a batch's roots as two
        # continuation chains in lock step (root_0_0_pair), then the rest point by point
        # (a root whose function has no spectral average: with one, its sums dominate a step)
        self._pair = chains == [1] and not self.groups["s0_0_fdf"].n_inner
        # one solver per root of each chain (inner roots nested in the outer one's h)
        pos = 0
        for k, length in enumerate(chains):
            for depth in range(length):
                lines += self._root_solver(k, depth, length, pos, pos + length - depth,
                                           start.roots[k][depth].increasing, start)
                pos += 1
            pos -= length
            pos += length
        # staging of the start's aliases and inputs at the known roots: their values as a
        # tuple (start_stage_values), and written into st (start_staged)
        g = self.groups
        lines += ["@JIT",
                  "def start_stage_values(p, known, lam, mu, w, t):"]
        if start.no_aliases:
            lines += ["    return (" + "".join("0.0, " for _ in range(ns)) + ")"]
        else:
            lines += [f"    al = {g['s_aliases'].call(self._args(p=n_p, known=nr))}"]
            if self.n_in:
                args = [f"al[{i}]" for i in range(self.n_al)] + self._args(p=n_p)
                lines += [f"    r = {g['inputs'].call(args)}"]
            lines += ["    return (" + "".join(f"al[{i}], " for i in range(self.n_al))
                      + "".join(f"r[{i}], " for i in range(self.n_in)) + ")"]
        lines += ["", "", "@JIT",
                  "def start_staged(p, known, lam, mu, w, t, st):"]
        if ns:
            lines += ["    v = start_stage_values(p, known, lam, mu, w, t)"]
            lines += [f"    st[{i}] = v[{i}]" for i in range(ns)]
        lines += ["    return"]
        # staging of the system's aliases and inputs at x
        lines += ["", "@JIT", "def stage(x, p, lam, mu, w, t, st):"]
        if self.n_al:
            lines += [f"    al = {g['aliases'].call(self._args(x=n, p=n_p))}"]
            lines += [f"    st[{i}] = al[{i}]" for i in range(self.n_al)]
        if self.n_in:
            lines += [f"    r = {g['inputs'].call(self._args(st=self.n_al, p=n_p))}"]
            lines += [f"    st[{self.n_al + i}] = r[{i}]" for i in range(self.n_in)]
        lines.append("    return")
        if self.iterated or (self.checked and n):
            lines += self._newton(o)
        at_x = self._args(x=n, p=n_p, st=ns)  # (the groups' arguments at x, staged)
        # a checked kernel evaluates the reported values of REPORT_BLOCK points together
        # (report_block_source): each point's arguments gathered into RB, its values and its
        # marking for the check (report_finish) once its block is full, or at the batch's end
        block = None
        if self.checked and self.n_report and not self.groups["report"].n_inner:
            block = report_block_source(self.groups["report"].source[0], self.n_report)
        flush = ("            if mr:", "                report_finish(RB, lane_r, mr, X, REL, REP,"
                 " ADM, DO, COND, ERR, CODE, CHECK)")
        # an iterated checked kernel takes the first Newton sweep of NEWTON_BLOCK points together
        # (newton_block_source): the points gathered into NB after their start, finished (and
        # their reported values gathered into RB) by newton_finish once the block is full
        nblock = None
        if block and self.iterated and n and all(
                not self.groups[g].n_inner for g in ("aliases", "inputs", "equations", "jacobian")
                if g in self.groups):
            nblock = self._newton_block_source(o)
            flush = ("            if mn:",
                     "                mr = newton_finish(NB, lane_n, mn, P, lam, mu, w, t, W, NA, st,"
                     " X, SWEEPS, REL, ADM, RB, lane_r, mr, REP, DO, COND, ERR, CODE, CHECK, RTOL)"
                     ) + flush
        # the batch
        lines += ["", "@JIT",
                  "def solve_points(P, lam, mu, w, X, ITERS, REL, REP, ADM, SWEEPS, RTOL, COND, ERR,"
                  " CODE, CHECK, DO, DEFER, WARM, LO, HI):",
                  "    # the points LO <= i < HI; WARM: the outer roots carried from point to point"
                  " (continuation), read and left for the next call",
                  "    t = _np.empty(lam.shape[0])",
                  "    W = _np.empty((WS_ROWS, WS_WIDTH))  # the workspace (Kernel._row)",
                  f"    NA = _np.empty(({max(n, 1)}, {max(n, 1)}))"]
        if block:
            lines += [f"    RB = _np.zeros({len(at_x) + self.n_report} * REPORT_BLOCK)",
                      "    lane_r = _np.empty(REPORT_BLOCK, _np.int64)",
                      "    mr = _np.int64(0)"]
        if nblock:
            lines += [f"    NB = _np.zeros({self._nb_rows} * NEWTON_BLOCK)",
                      "    lane_n = _np.empty(NEWTON_BLOCK, _np.int64)",
                      "    mn = _np.int64(0)"]
        lines += [
                  f"    known = _np.empty({max(nr, 1)})",
                  f"    st = _np.empty({max(ns, 1)})",
                  # continuation: each outer root starts from the previous point's root
                  # where that lies inside this point's bracket
                  "    warm = WARM"]
        if self._pair:
            lines[:0] = [f"PAIR_MIN = {PAIR_MIN}", ""]
            # the roots first, as two continuation chains in lock step: chain a the points
            # LO <= i < MID (from WARM), chain b the points MID <= i < HI (from no root before:
            # a restart, as at a part's first point), a pair of points a step of root_0_0_pair;
            # each chain the roots root_0_0 gives point by point along it (Kernel._root_pair).
            # A batch of fewer than PAIR_MIN points is one chain (MID = HI). WARM is left as
            # the state after the last point
            lines += ["    nq = HI - LO if HI > LO else 0",
                      "    U = _np.empty(nq)",
                      "    UI = _np.empty(nq, _np.int64)",
                      "    MID = LO + (HI - LO + 1) // 2 if HI - LO >= PAIR_MIN else HI",
                      "    wb = _np.full(3, _np.nan)",
                      "    kb = _np.empty(1)",
                      "    for q in range(MID - LO):",
                      "        qa = LO + q",
                      "        qb = MID + q",
                      "        if not CONTINUATION:",
                      "            for j in range(3):",
                      "                warm[j] = _np.nan",
                      "                wb[j] = _np.nan",
                      "        if qb < HI:",
                      "            ia, ib = root_0_0_pair(P[:, qa], P[:, qb], known, kb, warm, wb,"
                      " lam, mu, w, t, W)",
                      "            U[qb - LO] = kb[0]",
                      "            UI[qb - LO] = ib",
                      "        else:",
                      "            ia = root_0_0(P[:, qa], known, warm, lam, mu, w, t, W)",
                      "        U[qa - LO] = known[0]",
                      "        UI[qa - LO] = ia",
                      "    if HI > MID:",
                      "        for j in range(3):",
                      "            warm[j] = wb[j]"]
        lines += ["    for i in range(LO, HI):",
                  "        p = P[:, i]",
                  "        its = 0"]
        if not self._pair:
            lines += ["        if not CONTINUATION:",
                      f"            warm = _np.full({self.warm_size}, _np.nan)"]
        pos = 0
        for k, length in enumerate(chains):
            # a root not found (ROOT_MAXITER steps): the point is left to the NumPy path
            # (SWEEPS -2, X NaN), whose start finds the same root failing there and names the
            # point's status (Machine.grid); the batch goes on (the continuation's roots are
            # those of the point before)
            lines += (["        it = UI[i - LO]", "        known[0] = U[i - LO]"] if self._pair
                      else [f"        it = root_{k}_0(p, known, warm, lam, mu, w, t, W)"]) + [
                      "        if it < 0:",
                      "            SWEEPS[i] = -2",
                      f"            for j in range({n}):",
                      "                X[j, i] = _np.nan",
                      "            REL[i] = _np.nan",
                      "            ADM[i] = False",
                      "            continue",
                      "        if it > its:",
                      "            its = it"]
            pos += length
        lines += ["        ITERS[i] = its",
                  "        start_staged(p, known, lam, mu, w, t, st)",
                  "        x0 = " + self.groups["s_values"].call(self._args(p=n_p, known=nr,
                                                                            st=ns))]
        lines += [f"        X[{j}, i] = x0[{j}]" for j in range(n)]
        i_newton = len(lines)  # (with nblock, from here the point's code moves to newton_finish)
        lines += ["        x = X[:, i]"]
        if self.iterated:
            # Newton from the declared start; a point it leaves (SWEEPS < 0) is for the NumPy
            # path, whose damped steps it would have needed
            lines += ["        sw, rel, state = newton_point(x, p, lam, mu, w, t, st, RTOL, W, NA)",
                      "        SWEEPS[i] = sw if state > 0 else -1",
                      "        REL[i] = rel",
                      "        if state < 0:",
                      "            ADM[i] = False",
                      "            continue"]
        if not self.iterated:  # (newton_point leaves st staged at x)
            lines += ["        stage(x, p, lam, mu, w, t, st)"]  # (an iterated point's relative change is newton_point's)
            lines += [f"        fx = {self.groups['equations'].call(at_x)}",
                      "        rel = -_np.inf"]
        for j in range(n if not self.iterated else 0):
            if self.fixed_point:
                lines += [f"        s = abs(x[{j}])", "        if not s > 1e-300:",
                          "            s = 1e-300",
                          f"        r = abs(fx[{j}] - x[{j}]) / s"]
            else:
                lines.append(f"        r = abs(fx[{j}])")
            lines += ["        if r != r or rel != rel:", "            rel = _np.nan",
                      "        elif r > rel:", "            rel = r"]
        if not self.iterated:
            lines += ["        REL[i] = rel if " + ("True" if n else "False") + " else 0.0"]
        if self.n_report and not block:
            lines += [f"        rv = {self.groups['report'].call(at_x)}"]
            lines += [f"        REP[{j}, i] = rv[{j}]" for j in range(self.n_report)]
        lines += ["        ok = True"]
        if self.n_adm:
            lines += [f"        av = {self.groups['admissible'].call(at_x)}"]
            lines += [f"        ok = ok and av[{j}] > 0" for j in range(self.n_adm)]
        lines += ["        ADM[i] = ok"]
        if self.checked:
            # the point's extended-precision check (fused_check), where it is a result: the
            # iteration converged, admissible, every unknown and reported value finite
            # and its status code (float64_checks.point_status, with 5 for an inadmissible
            # point that is not a result). Code 4 (max-iterations) where the unknowns or the
            # change are not finite is never a point's final status: an iterated kernel's
            # newton_point leaves such a point to the NumPy path (a non-finite map, x or
            # change: state -1), and an exact start's 4 is made 3, non-finite
            # (float64_checks.start_not_finite)
            from .float64_checks import CLAIM_RTOL, CONDITION_MAX

            m = self.machine
            nonneg = [m.report_names.index(k) for k in getattr(m.problem, "nonnegative", ())
                      if k in m.report_names]
            # (the check itself runs after the loop, on the points marked DO: check_marked)
            mark = ["        if CHECK:",
                    "            fin = _finite(REL[i])",
                    f"            for j in range({n}):",
                    "                fin = fin and _finite(X[j, i])",
                    "            rfin = True",
                    f"            for j in range({self.n_report}):",
                    "                rfin = rfin and _finite(REP[j, i])",
                    "            DO[i] = fin and ok and rfin",
                    "            if not DO[i]:",
                    "                COND[i] = _np.nan",
                    "                ERR[i] = _np.nan",
                    "                CODE[i] = 4 if not fin else (5 if not ok else 3)"]
            if not block:
                lines += mark
            else:
                lines += [f"        RB[{r} * REPORT_BLOCK + mr] = {a}" for r, a in enumerate(at_x)]
                lines += ["        lane_r[mr] = i", "        mr += 1",
                          "        if mr == REPORT_BLOCK:",
                          "            report_finish(RB, lane_r, mr, X, REL, REP, ADM, DO, COND,"
                          " ERR, CODE, CHECK)",
                          "            mr = _np.int64(0)"]
                if nblock:
                    post = lines[i_newton:]
                    del lines[i_newton:]
                    lines += [f"        NB[{j} * NEWTON_BLOCK + mn] = X[{j}, i]" for j in range(n)]
                    lines += [f"        NB[{n + j} * NEWTON_BLOCK + mn] = p[{j}]"
                              for j in range(n_p)]
                    lines += ["        lane_n[mn] = i", "        mn += 1",
                              "        if mn == NEWTON_BLOCK:",
                              "            mr = newton_finish(NB, lane_n, mn, P, lam, mu, w, t, W,"
                              " NA, st, X, SWEEPS, REL, ADM, RB, lane_r, mr, REP, DO, COND, ERR,"
                              " CODE, CHECK, RTOL)",
                              "            mn = _np.int64(0)"]
                    nblock += "\n\n" + "\n".join(self._newton_finish(post)) + "\n"
                block += "\n\n" + "\n".join([
                    f"REPORT_BLOCK = {REPORT_BLOCK}", "", "", "@JIT",
                    "def report_finish(RB, lane_r, mr, X, REL, REP, ADM, DO, COND, ERR, CODE,"
                    " CHECK):",
                    "    # the reported values of the mr points gathered in RB (their indices"
                    " lane_r), and their marking for the check",
                    "    report_block(RB)",
                    "    for q in range(mr):",
                    "        i = lane_r[q]",
                    f"        for j in range({self.n_report}):",
                    f"            REP[j, i] = RB[({len(at_x)} + j) * REPORT_BLOCK + q]",
                    "        ok = ADM[i]"] + mark) + "\n"
            if block:  # (the last points' block)
                lines += [ln[8:] for ln in flush]
            lines += ["    if CHECK and not DEFER:  # (DEFER: the caller runs them, on threads)",
                      "        check_marked(P, lam, mu, w, X, REP, DO, COND, ERR, CODE, LO, HI)"]
            check = ["", "", "@JIT",
                     "def check_marked(P, lam, mu, w, X, REP, DO, COND, ERR, CODE, lo, hi):",
                     "    # the compiled check of the points lo <= i < hi marked DO, and their"
                     " status codes",
                     "    check_range(P, lam, mu, w, X, REP, DO, COND, ERR, lo, hi)",
                     "    for i in range(lo, hi):",
                     "        if not DO[i]:",
                     "            continue",
                     "        c = COND[i]",
                     "        e = ERR[i]",
                     f"        good = e <= {CLAIM_RTOL!r} and c <= {CONDITION_MAX!r}",
                     "        neg = False"]
            check += [f"        neg = neg or REP[{k}, i] < 0" for k in nonneg]
            check += ["        CODE[i] = (2 if neg else 0) if good else 1"]
        lines += ["    return -1"]
        # (a variant without scalar roots or Newton sweeps uses no row: one unused row)
        lines += ["", f"WS_ROWS = {max(len(self._rows), 1)}",
                  f"WS_WIDTH = {max(self._rows, default=1)}", ""]
        if self.checked:
            lines += check
        if block:
            lines += ["", ""] + block.split("\n")
        if nblock:
            lines += ["", ""] + nblock.split("\n")
        return "\n".join(lines) + "\n"

    def _newton_block_source(self, o) -> str:
        r"""``newton_block(NB, rtol)``: the first sweep of ``newton_point`` at
        :data:`NEWTON_BLOCK` points at once. ``NB[r * NEWTON_BLOCK + b]``: the rows ``0 .. n-1``
        the start :math:`x` of the point in lane ``b``, then its parameters; written here, the
        lane's outcome (``flag``), its relative change, its unknowns and its staged aliases
        and inputs (:attr:`_nb_rows` rows in all).

        Each lane does ``newton_point``'s operations on the same operands in the same order, as
        far as its first sweep goes: :math:`\Phi(x)` (the staging and the ``equations``
        group), the relative change :math:`r` (``change``'s statements, its branches as
        selections), the Jacobian, :math:`A = I - \Phi'(x)`, :math:`b = \Phi(x) - x`, ``gesv``
        (:func:`~replica.numerics.fused_check.gesv_selections`), the full step
        :math:`x_n = x + 1.0\,b`, :math:`\Phi(x_n)` and its change :math:`r_n`. So each value
        is the one ``newton_point`` computes at that point, bit for bit, and the lane knows
        where ``newton_point`` would return after its first sweep: ``flag`` 1 where
        :math:`r <` ``rtol`` at the start (converged there, staged at :math:`x`), 2 where the
        full step is accepted (:math:`r_n < r`, every unknown positive where the outline says
        so, ``gesv`` succeeded, :math:`r` finite) and :math:`r_n <` ``rtol`` (converged at
        :math:`x_n`, staged there); 0 everywhere else -- a halved step, a second sweep, a
        point that ``newton_point`` leaves -- where ``newton_finish`` calls ``newton_point``
        from the start, which then repeats this sweep itself: every point's outcome is
        ``newton_point``'s. One loop over the lanes without calls that stay calls (the group
        functions are inlined) or branches that the compiler cannot turn into selections, so
        it evaluates the lanes several at a time (vector instructions), where ``newton_point``
        did them one at a time, with the divisions' latencies in series."""
        from .fused_check import gesv_selections

        n, n_p = self.n, self.n_p
        n_al, n_in = self.n_al, self.n_in
        ns = n_al + n_in
        self._nb_rows = 2 * n + n_p + 2 + ns
        flag, rrow, xrow, srow = 2 * n + n_p, 2 * n + n_p + 1, n + n_p, 2 * n + n_p + 2
        g = self.groups
        ps = [f"p{j}" for j in range(n_p)]

        def inl(group, args, suffix):
            got = inline_call(g[group].source[0], args, suffix)
            if got is None:
                raise ValueError(f"{group}: not straight-line code")
            return got

        def phi(xs, t):
            # stage at xs (the aliases, then the inputs), the equations: names ending in t
            out, st = [], []
            if n_al:
                code, vals = inl("aliases", xs + ps, f"_a{t}")
                out += code + [f"al{j}{t} = {v}" for j, v in enumerate(vals)]
                st += [f"al{j}{t}" for j in range(n_al)]
            if n_in:
                code, vals = inl("inputs", st[:n_al] + ps, f"_i{t}")
                out += code + [f"sp{j}{t} = {v}" for j, v in enumerate(vals)]
                st += [f"sp{j}{t}" for j in range(n_in)]
            code, vals = inl("equations", xs + ps + st, f"_e{t}")
            out += code + [f"fx{t}_{j} = {v}" for j, v in enumerate(vals)]
            return out, st

        def change(xs, t):
            # newton_point's change(fx, x): its statements, the branches as selections
            out = [f"cr{t}_0 = 0.0", f"ok{t}_0 = True"]
            for j in range(n):
                out += [f"ca{j}{t} = fx{t}_{j} + 0.0", f"cb{j}{t} = {xs[j]}",
                        f"cs{j}{t} = maximum(maximum(abs(ca{j}{t}), abs(cb{j}{t})), 1e-300)",
                        f"cq{j}{t} = abs(ca{j}{t} - cb{j}{t}) / cs{j}{t}",
                        f"cr{t}_{j + 1} = _np.nan if (cq{j}{t} != cq{j}{t}) | (cr{t}_{j} != "
                        f"cr{t}_{j}) else (cq{j}{t} if cq{j}{t} > cr{t}_{j} else cr{t}_{j})",
                        f"ok{t}_{j + 1} = ok{t}_{j} & _finite(ca{j}{t})"
                        + (f" & (cb{j}{t} > 0)" if self.positive else "")]
            out.append(f"r{t} = cr{t}_{n} if ok{t}_{n} else _np.inf")
            return out

        xs = [f"x{j}" for j in range(n)]
        ys = [f"y{j}" for j in range(n)]
        body = [f"x{j} = NB[{j} * NEWTON_BLOCK + b]" for j in range(n)]
        body += [f"p{j} = NB[{n + j} * NEWTON_BLOCK + b]" for j in range(n_p)]
        got, st_x = phi(xs, "x")
        body += got + change(xs, "x")
        code, jx = inl("jacobian", xs + ps + st_x, "_j")
        body += code + [f"jx{k} = {v}" for k, v in enumerate(jx)]
        for i in range(n):
            for j in range(n):
                # (as a float, which gesv's array A holds: an integer 0 is +0.0 either way)
                body.append(f"a{i}_{j} = float({'1.0 - ' if i == j else '-'}jx{n * i + j})")
            body.append(f"b{i} = fxx_{i} - x{i}")
        body.append("go = True")
        body += gesv_selections(n, picks=True)
        body += [f"y{j} = x{j} + 1.0 * b{j}" for j in range(n)]
        got, st_y = phi(ys, "y")
        body += got + change(ys, "y")
        good = "(ry < rx)" + "".join(f" & (y{j} > 0)" for j in range(n) if self.positive)
        body += [f"good = {good}",
                 "at_x = rx < rtol",
                 "at_y = (rx < _np.inf) & go & good & (ry < rtol)",
                 f"NB[{flag} * NEWTON_BLOCK + b] = 1.0 if at_x else (2.0 if at_y else 0.0)",
                 f"NB[{rrow} * NEWTON_BLOCK + b] = rx if at_x else ry"]
        body += [f"NB[{xrow + j} * NEWTON_BLOCK + b] = x{j} if at_x else y{j}" for j in range(n)]
        body += [f"NB[{srow + j} * NEWTON_BLOCK + b] = {a} if at_x else {c}"
                 for j, (a, c) in enumerate(zip(st_x, st_y))]
        out = [f"NEWTON_BLOCK = {NEWTON_BLOCK}", "", "", "@JIT", "def newton_block(NB, rtol):",
               "    _wide_vectors()", "    for b in range(NEWTON_BLOCK):"]
        out += ["        " + ln for ln in body]
        out.append("    return")
        return "\n".join(out) + "\n"

    def _newton_finish(self, post) -> list:
        """``newton_finish(...)``: the ``mn`` points gathered in ``NB`` (their indices
        ``lane_n``) after ``newton_block``: a lane that converged in its first sweep takes the
        block's unknowns, relative change and staged values (those ``newton_point`` would have
        left), the others are solved by ``newton_point`` from their start, point by point;
        then each point's code that followed ``newton_point`` in the loop (``post``: its
        admissibility, its reported values gathered into ``RB``); returns ``RB``'s count."""
        n, n_p = self.n, self.n_p
        ns = self.n_al + self.n_in
        flag, rrow, xrow, srow = 2 * n + n_p, 2 * n + n_p + 1, n + n_p, 2 * n + n_p + 2
        L = ["@JIT",
             "def newton_finish(NB, lane_n, mn, P, lam, mu, w, t, W, NA, st, X, SWEEPS, REL, ADM,"
             " RB, lane_r, mr, REP, DO, COND, ERR, CODE, CHECK, RTOL):",
             "    newton_block(NB, RTOL)",
             "    for q in range(mn):",
             "        i = lane_n[q]",
             "        p = P[:, i]",
             "        x = X[:, i]",
             f"        if NB[{flag} * NEWTON_BLOCK + q] > 0.0:"]
        L += [f"            X[{j}, i] = NB[{xrow + j} * NEWTON_BLOCK + q]" for j in range(n)]
        L += [f"            st[{j}] = NB[{srow + j} * NEWTON_BLOCK + q]" for j in range(ns)]
        L += [f"            sw, rel, state = 1, NB[{rrow} * NEWTON_BLOCK + q], 1",
              "        else:",
              "            sw, rel, state = newton_point(x, p, lam, mu, w, t, st, RTOL, W, NA)"]
        first = ["        x = X[:, i]",
                 "        sw, rel, state = newton_point(x, p, lam, mu, w, t, st, RTOL, W, NA)"]
        if post[:2] != first:
            raise ValueError("unexpected per-point code after the start")
        L += post[2:]
        L.append("    return mr")
        return L

    def _newton(self, o) -> list:
        r"""``newton_point(x, ...)``: the sweeps of
        :func:`~replica.numerics.newton.iterate_grid` (``newton_from = inf``) at one point,
        as long as each is a Newton step on :math:`x - \Phi(x)`: the step
        :math:`(I - \Phi'(x))^{-1}(\Phi(x) - x)` (Gaussian elimination with partial pivoting),
        halved up to 4 times until the relative change
        :math:`\max_j |\Phi_j - x_j| / \max(|\Phi_j|, |x_j|)` drops (and, for positive unknowns,
        every unknown stays positive). It stops converged where the relative change is below
        ``rtol``, or below ``100 rtol`` with no step lowering it (the rounding floor), as
        ``iterate_grid`` does. Where ``iterate_grid`` would take a damped step instead (a
        rejected Newton step above the floor, a singular or non-finite Jacobian, a non-finite
        map) it returns ``state = -1`` at once: that point is solved again by the NumPy path,
        so it ends exactly as it does there."""
        n, n_p = self.n, self.n_p
        ns = self.n_al + self.n_in
        at_x = self._args(x=n, p=n_p, st=ns)  # (the groups' arguments at x, staged)
        L = ["@JIT", "def phi_at(x, p, lam, mu, w, t, st):",
             "    stage(x, p, lam, mu, w, t, st)",
             f"    return {self.groups['equations'].call(at_x)}", "", "",
              "@JIT", "def change(fx, x):",
              "    r = 0.0", "    ok = True"]
        for j in range(n):
            L += [f"    a = fx[{j}] + 0.0", f"    b = x[{j}]",
                  "    s = maximum(maximum(abs(a), abs(b)), 1e-300)",
                  "    q = abs(a - b) / s",
                  "    if q != q or r != r:", "        r = _np.nan",
                  "    elif q > r:", "        r = q",
                  "    ok = ok and _finite(a)"]
            if self.positive:
                L += ["    ok = ok and b > 0"]
        L += ["    return r if ok else _np.inf", "", "",
              "@JIT", "def gesv(A, b):",
              "    # A y = b in place (b <- y), Gaussian elimination with partial pivoting",
              "    n = b.shape[0]",
              "    for k in range(n):",
              "        piv = k",
              "        for i in range(k + 1, n):",
              "            if abs(A[i, k]) > abs(A[piv, k]):",
              "                piv = i",
              "        if A[piv, k] == 0.0 or not _finite(A[piv, k]):",
              "            return False",
              "        if piv != k:",
              "            for j in range(n):",
              "                A[k, j], A[piv, j] = A[piv, j], A[k, j]",
              "            b[k], b[piv] = b[piv], b[k]",
              "        for i in range(k + 1, n):",
              "            f = A[i, k] / A[k, k]",
              "            for j in range(k, n):",
              "                A[i, j] -= f * A[k, j]",
              "            b[i] -= f * b[k]",
              "    for k in range(n - 1, -1, -1):",
              "        acc = b[k]",
              "        for j in range(k + 1, n):",
              "            acc -= A[k, j] * b[j]",
              "        b[k] = acc / A[k, k]",
              "    for k in range(n):",
              "        if not _finite(b[k]):",
              "            return False",
              "    return True", "", "",
              "@JIT", "def newton_point(x, p, lam, mu, w, t, st, rtol, W, A):",
              "    # st: left staged at x where the point converges (the last phi_at's, or"
              " staged again where that was at a rejected trial point)",
              f"    b = {self._row(n)}", f"    xn = {self._row(n)}",
              "    fx = phi_at(x, p, lam, mu, w, t, st)",
              "    r = change(fx, x)",
              f"    for it in range(1, {NEWTON_SWEEPS + 1}):",
              "        if r < rtol:", "            return it, r, 1",
              "        if not r < _np.inf:", "            return it, r, -1",
              f"        jx = {self.groups['jacobian'].call(at_x)}"]
        for i in range(n):
            for j in range(n):
                one = "1.0 - " if i == j else "-"
                L.append(f"        A[{i}, {j}] = {one}jx[{n * i + j}]")
            L.append(f"        b[{i}] = fx[{i}] - x[{i}]")
        L += ["        if not gesv(A, b):", "            return it, r, -1",
              "        tt = 1.0", "        accepted = False",
              "        for k in range(5):",
              f"            for j in range({n}):", "                xn[j] = x[j] + tt * b[j]",
              "            fn = phi_at(xn, p, lam, mu, w, t, st)",
              "            rn = change(fn, xn)",
              "            good = rn < r"]
        if self.positive:
            L += [f"            for j in range({n}):",
                  "                good = good and xn[j] > 0"]
        L += ["            if good:", "                accepted = True", "                break",
              "            tt /= 2",
              "        if not accepted:",
              "            if r < 100 * rtol:",
              "                stage(x, p, lam, mu, w, t, st)  # (the last phi_at: a trial point)",
              "                return it, r, 1",
              "            return it, r, -1",
              f"        for j in range({n}):", "            x[j] = xn[j]",
              "        fx = fn", "        r = rn",
              "        if r < rtol:", "            return it, r, 1",
              f"    return {NEWTON_SWEEPS}, r, -1", "", ""]
        return L

    def _root_solver(self, k, depth, length, pos, end, increasing, start):
        r"""``root_k_depth(p, known, warm, lam, mu, w, t)``: the root at ``known[pos]`` and the
        inner roots after it; returns its Newton steps (-1: no convergence).

        The start (continuation, ``warm``: :attr:`warm_size` numbers, three per root --
        ``warm[pos]`` the previous point's root :math:`u_1`, ``warm[R + pos]`` the one before,
        :math:`u_2`, ``warm[2R + pos]`` whether the predictor is trusted; ``R = max(n_roots,
        1)``): the bracket's start, replaced by :math:`u_1` where that lies inside this
        point's bracket, and (``PREDICT``) by the first-order predictor
        :math:`u_p = 2 u_1 - u_2` where that lies inside and the previous point's predictor was
        trusted: at that point :math:`|u_p - u| \le |u_1 - u|` (the predictor at least as near
        its root as the plain continuation; false while the history is incomplete, so a part's
        first three points never use it). On a grid's rows (points of a smooth path) the
        predictor's error is second order in the step, the plain start's first order: 8.1 ->
        3.5 and 5.0 -> 4.3 steps a point on the two lam = 0.1 benchmark grids (with the step
        rule below); on scattered points the trust test turns it off. The root is the same
        root either way: the start only chooses where the safeguarded iteration begins.

        A step: the bracket's end moved to ``x`` by the sign of :math:`f(x)`, the Newton step,
        and where it leaves the bracket (or is not finite) a bisection -- except a finite
        Newton step below the stopping tolerance (``|x_n - x| <= ROOT_RTOL |x_n|``): that
        leaves the bracket only because ``x`` is the bracket's end it just became (:math:`f`
        at its rounding floor, the step rounded onto ``x``), so ``x`` is the root and the
        iteration stops there (as it stops for any step below the tolerance) instead of
        bisecting away from the root to the bracket's middle and back (20-50 steps at a
        fifth of the tau = 2.25, lam = 0.1 grid's points; ``roots.bracketed_newton_vec``,
        the NumPy path's rule, still bisects there)."""
        n_p, nr = self.n_p, self.n_roots
        R = max(nr, 1)
        ns = self.n_al + self.n_in
        inner = depth + 1 < length
        name = f"root_{k}_{depth}"
        lines = ["@JIT", f"def {name}_h(u, p, known, iw, lam, mu, w, t, W):",
                 f"    known[{pos}] = u"]
        if inner:
            lines += [f"    if root_{k}_{depth + 1}(p, known, iw, lam, mu, w, t, W) < 0:",
                      "        return _np.nan, _np.nan"]
        fdf = self.groups[f"s{k}_{depth}_fdf"].call(self._args(p=n_p, known=end, st=ns))
        # the staged values as numbers (start_stage_values), not in a row of W: the compiler
        # then drops the staged values that the root's function does not read, with their
        # operations (the values read are those of start_staged, the same operations)
        lines += (["    st = start_stage_values(p, known, lam, mu, w, t)"] if ns else []) + [
                  f"    r = {fdf}",
                  "    return r[0] + 0.0, r[1] + 0.0", "", "",
                  "@JIT", f"def {name}(p, known, warm, lam, mu, w, t, W):"]
        lines += self._root_setup(k, depth, pos, R, "", "p", "warm")
        lines += [f"    iw = {self._row(3 * R)}",
                  f"    for j in range({3 * R}):", "        iw[j] = _np.nan",
                  "    its = 0", "    x = x0",
                  "    if need:",
                  "        lo, hi = lo_n, hi_n",
                  "        found = False",
                  f"        for it in range(1, {ROOT_MAXITER + 1}):"]
        lines += ["            " + ln for ln in self._root_step(name, increasing, "", "p", "known")]
        lines += ["            if done:", "                its = it",
                  "                found = True", "                break",
                  "        if not found:", "            return -1",
                  "    u = x if need else otherwise"]
        lines += ["    " + ln for ln in self._root_finish(pos, R, "", "warm", "known")]
        if inner:
            lines += [f"    if root_{k}_{depth + 1}(p, known, iw, lam, mu, w, t, W) < 0:",
                      "        return -1"]
        lines += ["    return its", "", ""]
        if self._pair and (k, depth) == (0, 0):
            lines += self._root_pair(name, increasing)
        return lines

    def _root_setup(self, k, depth, pos, R, s, p, warm) -> list:
        """The lines of a root's start (:meth:`_root_solver`): bracket, and the continuation's
        start from ``warm``; the local names with the suffix ``s`` (a lane of
        :meth:`_root_pair`), the point's parameters ``p``."""
        bracket = self.groups[f"s{k}_{depth}_bracket"].call(
            [a.replace("p[", f"{p}[", 1) for a in self._args(p=self.n_p, known=pos)])
        return [f"    b{s} = {bracket}",
                f"    lo{s} = b{s}[0] + 0.0", f"    hi{s} = b{s}[1] + 0.0",
                f"    x0{s} = b{s}[2] + 0.0",
                f"    need{s} = b{s}[3] > 0", f"    otherwise{s} = b{s}[4] + 0.0",
                f"    slack{s} = b{s}[5] + 0.0",
                f"    hi{s} = hi{s} * (1 + slack{s} * 2.2e-16) if _finite(hi{s}) else _np.inf",
                f"    lo_n{s} = lo{s} if need{s} else 0.0", f"    hi_n{s} = hi{s} if need{s} else 1.0",
                f"    if not (lo_n{s} < x0{s} and x0{s} < hi_n{s}):",
                f"        x0{s} = 0.5 * (lo_n{s} + hi_n{s}) if _finite(hi_n{s}) else 2 * lo_n{s} + 1",
                f"    if not need{s}:", f"        x0{s} = 0.5",
                f"    prev{s} = {warm}[{pos}]",
                f"    if need{s} and lo_n{s} < prev{s} and prev{s} < hi_n{s}:",
                f"        x0{s} = prev{s}",
                f"    xp{s} = 2.0 * prev{s} - {warm}[{R + pos}]  # (NaN without two roots before)",
                f"    if PREDICT and need{s} and {warm}[{2 * R + pos}] > 0 and lo_n{s} < xp{s}"
                f" and xp{s} < hi_n{s}:",
                f"        x0{s} = xp{s}"]

    @staticmethod
    def _root_step(name, increasing, s, p, known) -> list:
        """One safeguarded Newton step of a root (:meth:`_root_solver`), unindented: from
        ``x{s}`` in the bracket ``lo{s}, hi{s}`` to ``x{s}``, and ``done{s}``."""
        inc = "True" if increasing else "False"
        return [f"fx{s}, dfx{s} = {name}_h(x{s}, {p}, {known}, iw, lam, mu, w, t, W)",
                f"if (fx{s} > 0) == {inc}:", f"    hi{s} = x{s}",
                "else:", f"    lo{s} = x{s}",
                f"if dfx{s} == 0 or not (_finite(fx{s}) and _finite(dfx{s})):",
                f"    xn{s} = _np.nan", "else:",
                f"    xn{s} = x{s} - fx{s} / dfx{s}",
                f"if not _finite(xn{s}) or xn{s} <= lo{s} or xn{s} >= hi{s}:",
                f"    if _finite(xn{s}) and abs(xn{s} - x{s}) <= {ROOT_RTOL!r} * abs(xn{s}):",
                f"        xn{s} = x{s}  # (a step below the tolerance: x is the root)",
                f"    elif _finite(hi{s}):", f"        xn{s} = 0.5 * (lo{s} + hi{s})",
                f"    elif x{s} > 0:", f"        xn{s} = 2 * x{s}",
                "    else:", f"        xn{s} = 1 + abs(x{s})",
                f"if fx{s} == 0:", f"    xn{s} = x{s}",
                f"done{s} = (abs(xn{s} - x{s}) <= {ROOT_RTOL!r} * abs(xn{s}) or fx{s} == 0"
                f" or hi{s} - lo{s} <= {ROOT_RTOL!r} * abs(xn{s}))",
                f"x{s} = xn{s}"]

    @staticmethod
    def _root_finish(pos, R, s, warm, known) -> list:
        """The continuation's state after a root ``u{s}`` (:meth:`_root_solver`), unindented."""
        return [f"{warm}[{2 * R + pos}] = 1.0 if abs(xp{s} - u{s}) <= abs(prev{s} - u{s}) else 0.0",
                f"{warm}[{R + pos}] = prev{s}",
                f"{warm}[{pos}] = u{s}", f"{known}[{pos}] = u{s}"]

    def _root_pair(self, name, increasing) -> list:
        r"""``root_0_0_pair(pa, pb, ka, kb, wa, wb, lam, mu, w, t, W)``: the roots of two
        points (parameters ``pa``, ``pb``; ``known`` arrays ``ka``, ``kb``; continuation
        states ``wa``, ``wb``) in one loop, for a kernel whose start has one scalar root and no
        inner root (:attr:`_pair`). Each lane does the operations of ``root_0_0`` on its own
        point, step by step (:meth:`_root_setup`, :meth:`_root_step`, :meth:`_root_finish`),
        and stops where ``root_0_0`` stops: the same root, the same steps and the same state
        left in its ``warm``, bit for bit. The two lanes are independent, so the processor
        overlaps one lane's step -- a chain of divisions, each waiting for the one before --
        with the other's, where one call of ``root_0_0`` at a time leaves it waiting. Returns
        the two lanes' steps (-1: no convergence in :data:`ROOT_MAXITER` steps, that lane's
        ``warm`` left as it was, as ``root_0_0`` leaves it)."""
        out = ["@JIT", f"def {name}_pair(pa, pb, ka, kb, wa, wb, lam, mu, w, t, W):"]
        for s, p, warm in (("_a", "pa", "wa"), ("_b", "pb", "wb")):
            out += self._root_setup(0, 0, 0, 1, s, p, warm)
        out += [f"    iw = {self._row(3)}", "    for j in range(3):", "        iw[j] = _np.nan"]
        for s in ("_a", "_b"):
            out += [f"    its{s} = 0", f"    x{s} = x0{s}", f"    lo{s}, hi{s} = lo_n{s}, hi_n{s}",
                    f"    run{s} = need{s}", f"    found{s} = not need{s}"]
        out += [f"    for it in range(1, {ROOT_MAXITER + 1}):"]
        for s, p, known in (("_a", "pa", "ka"), ("_b", "pb", "kb")):
            out += [f"        if run{s}:"]
            out += ["            " + ln for ln in self._root_step(name, increasing, s, p, known)]
            out += [f"            if done{s}:", f"                its{s} = it",
                    f"                found{s} = True", f"                run{s} = False"]
        out += ["        if not (run_a or run_b):", "            break"]
        for s, warm, known in (("_a", "wa", "ka"), ("_b", "wb", "kb")):
            out += [f"    if found{s}:", f"        u{s} = x{s} if need{s} else otherwise{s}"]
            out += ["        " + ln for ln in self._root_finish(0, 1, s, warm, known)]
            out += ["    else:", f"        its{s} = -1"]
        out += ["    return its_a, its_b", "", ""]
        return out

    # -- the call --------------------------------------------------------------------------------
    def compile_now(self):
        """Compile the kernel's entry points (and the compiled check's) here, on empty arrays of
        the types of every call, so that generated code Numba cannot type fails at construction
        -- where :func:`kernel` falls back to the kernel without the compiled check, then to the
        NumPy path -- and not at a user's first call."""
        e1, e2 = np.empty((self.n_p, 0)), np.empty((self.n, 0))
        z = np.zeros(0)
        self.solve(e1, z, z, z, e2, np.zeros(0, dtype=np.int64), np.empty(0),
                   np.empty((self.n_report, 0)), np.empty(0, dtype=np.bool_),
                   np.zeros(0, dtype=np.int64), 1e-13, np.empty(0), np.empty(0),
                   np.empty(0, dtype=np.int8), bool(self.checked), np.zeros(0, dtype=np.bool_),
                   False, np.full(self.warm_size, np.nan), 0, 0)
        if self.checked:
            self.module.check_marked(e1, z, z, z, e2, np.empty((self.n_report, 0)),
                                     np.zeros(0, dtype=np.bool_), np.empty(0), np.empty(0),
                                     np.empty(0, dtype=np.int8), 0, 0)
            self.module.check_points(e1, z, z, z, e2, np.empty((self.n_report, 0)),
                                     np.zeros(0, dtype=np.bool_), np.empty(0), np.empty(0))

    def __call__(self, P, spec, shape, rtol=1e-13, check=False, iterated=True):
        """``(x, iterations, relative change, iterated, reported values, admissible, left)``
        at every point of ``shape`` (the reported values as one array, a row per value) (``P``: the parameters in the outline's order, broadcast to
        ``shape``; ``spec``: ``(lam, mu, weight)`` float64 arrays or ``None``). ``left``
        marks the points left to the NumPy path -- those an iterated variant's Newton sweeps
        leave (:meth:`_newton`) and those where a scalar root of the start was not found in
        :data:`ROOT_MAXITER` steps, whose status the NumPy path's start names
        (:meth:`~replica.numerics.machine.Machine.grid`); ``None`` for an exact start where
        every root was found. Their other outputs are not meaningful. With ``check`` and a
        compiled check (``checked``), an eighth item ``(condition, error, code)``: the check of
        :mod:`replica.numerics.fused_check` at every point that is a result (NaN elsewhere,
        and at the points left) and each point's status as a code of
        :func:`~replica.numerics.float64_checks.status_of_codes` (not meaningful at the points
        left). ``iterated=False``: the fourth item (the points whose unknowns and change are
        finite and which were not left) is ``None``, not computed -- the lean path
        (``replica.numerics.driver._whole_kernel_grid``) reads the codes instead, and the
        test over every unknown of every point was a tenth of a 10^4-point grid's Python."""
        N = math.prod(shape)
        Pm = np.empty((self.n_p, N))
        flat = len(shape) == 1
        for j, v in enumerate(P):
            if flat:
                Pm[j] = v  # broadcast into the row
            else:
                Pm[j].reshape(shape)[...] = v
        if spec is None:
            lam = mu = w = _NONE
        else:
            lam, mu, w = (a if type(a) is np.ndarray and a.dtype == np.float64
                          and a.flags.c_contiguous else np.ascontiguousarray(a, dtype=float)
                          for a in spec[:3])
        X = np.empty((self.n, N))
        iters = np.zeros(N, dtype=np.int64)
        rel = np.empty(N)
        rep = np.empty((self.n_report, N))
        adm = np.empty(N, dtype=np.bool_)
        sweeps = np.zeros(N, dtype=np.int64)
        cond = np.empty(N)
        cond.fill(np.nan)
        err = np.empty(N)
        err.fill(np.nan)
        code = np.empty(N, dtype=np.int8)
        code.fill(4)
        checking = bool(check and self.checked)
        threads = _threads() if checking and N >= PARALLEL_MIN else 1
        do = np.zeros(N, dtype=np.bool_)
        warm = np.full(self.warm_size, np.nan)
        solve_args = (Pm, lam, mu, w, X, iters, rel, rep, adm, sweeps, float(rtol), cond, err,
                      code, checking, do)
        if threads > 1:
            failed = self._solve_parts_on_threads(threads, solve_args, N)
        else:
            failed = self.solve(*solve_args, False, warm, 0, N)
        if failed >= 0:  # (not reached: a point whose root fails is left, SWEEPS -2)
            what = self.machine.outline.roots[0][0].what if self.machine.outline.roots else ""
            raise ConvergenceError(f"{what}: a grid point did not converge in {ROOT_MAXITER} "
                                   "safeguarded Newton steps (float64)",
                                   status=Status.MAX_ITERATIONS.value)
        iterated = np.isfinite(X).all(axis=0) & np.isfinite(rel) if iterated else None
        it = np.empty(shape, dtype=np.int64)
        it.fill(int(iters.max()) if N else 0)
        left = None
        if self.iterated:
            left = (sweeps < 0).reshape(shape)
            if iterated is not None:
                iterated &= ~left.reshape(N)
            it = it + np.where(left, 0, sweeps.reshape(shape))
        elif N and sweeps.min() < 0:  # (a scalar root of the start not found: -2)
            left = (sweeps < 0).reshape(shape)
            if iterated is not None:
                iterated &= ~left.reshape(N)
        if flat:  # (the arrays have their shape)
            out = (X, it, rel, iterated, rep, adm, left)
            if check and self.checked:
                out += ((cond, err, code),)
            return out
        out = (X.reshape((self.n,) + shape), it, rel.reshape(shape),
               None if iterated is None else iterated.reshape(shape),
               rep.reshape((self.n_report,) + shape), adm.reshape(shape), left)
        if check and self.checked:
            out += ((cond.reshape(shape), err.reshape(shape), code.reshape(shape)),)
        return out

    def _solve_parts_on_threads(self, threads, solve_args, N):
        """Solve and check the points on ``threads`` threads, in the chunks of consecutive
        points of :func:`chunk_points` (large first, small last): each thread (the calling
        thread one of them; the compiled code releases the GIL) takes the next chunk not yet
        taken (a shared counter) and solves and checks it by one ``solve_points`` call, until
        none is left -- a dynamic split, so a thread slowed by the machine's other work takes
        fewer points instead of the batch waiting for it. Each chunk's continuation starts
        afresh at its first point, from the declared start, and is carried through the chunk
        as in one call, whichever thread takes it: the values depend on the chunks' bounds
        (``N`` and ``threads``), not on the threads' timing. Every output of a point after a
        chunk's first point is that of the sequential solve whenever the roots carried to it
        are; at a chunk's first point (and where a root carried from it differs) the scalar
        roots are the same roots reached from other starts, so the values may differ in their
        last bits -- each within the error estimate its check reports
        (``tests/test_float64_kernels.py`` compares them). Each point's check depends on that
        point alone. Returns the first point that failed (``solve_points``' value), or -1."""
        import threading

        bounds = chunk_points(N, threads)
        failed: list = []
        errors: list = []
        lock = threading.Lock()
        taken = [0]

        def part():
            try:
                while not errors:
                    with lock:
                        k = taken[0]
                        taken[0] = k + 1
                    if k >= len(bounds) - 1:
                        return
                    warm = np.full(self.warm_size, np.nan)
                    f = self.solve(*solve_args, False, warm, bounds[k], bounds[k + 1])
                    if f >= 0:
                        failed.append(f)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
                errors.append(exc)

        workers = [threading.Thread(target=part, daemon=True) for _ in range(1, threads)]
        for t in workers:
            t.start()
        try:
            part()
        finally:
            for t in workers:
                t.join()
        if errors:
            raise errors[0]
        return min(failed) if failed else -1

    def check(self, P, spec, X, rep, do):
        """``(condition, error)`` of the compiled check (:mod:`replica.numerics.fused_check`)
        at the points ``do`` (a flat boolean array; ``P``: the parameters, each broadcastable
        to ``do``'s shape; ``X``: ``(n, N)``; ``rep``: the reported values, ``(k, N)``); NaN
        elsewhere."""
        N = do.size
        Pm = np.empty((self.n_p, N))
        for j, v in enumerate(P):
            Pm[j] = v
        if spec is None:
            lam = mu = w = np.zeros(0)
        else:
            lam, mu, w = (np.ascontiguousarray(a, dtype=float) for a in spec[:3])
        cond = np.empty(N)
        err = np.empty(N)
        self.module.check_points(Pm, lam, mu, w, np.ascontiguousarray(X, dtype=float),
                                 np.ascontiguousarray(rep, dtype=float),
                                 np.ascontiguousarray(do, dtype=np.bool_), cond, err)
        return cond, err


def _load(m, source):
    """Import the kernel's source as a module from the code cache's folder (Numba caches the
    compiled code beside it, in ``__pycache__``)."""
    import hashlib

    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = m.cache.path(f"kernel-{digest}")
    text = source.replace("cache=CACHE", "cache=True")
    if not (os.path.exists(path) and open(path).read() == text):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    name = f"replica_kernel_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(_numpy_namespace())
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception:
        sys.modules.pop(name, None)
        raise
    return module
