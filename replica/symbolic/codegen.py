r"""The code generator: numeric evaluators of SymPy expressions, for every problem alike.

:class:`Evaluator` turns a list of SymPy expressions in the symbols ``args`` into a function for
one *backend*:

* ``"mp"`` -- mpmath at the caller's working precision (parameters arrive as ``mpf``; rationals in
  the expressions are printed as ``mpf(p)/mpf(q)``, never through a binary float);
* ``"np"`` -- NumPy float64, vectorised: the arguments may be arrays of any common shape (a
  parameter grid).

Both come from ``sympy.lambdify`` (with common subexpressions eliminated) of the same
expressions: no formula is typed twice. An expression may contain spectral averages
:math:`\langle\phi\rangle = \sum_j w_j\,\phi(\lambda_j, \mu_j)`
(:class:`~replica.symbolic.spectral.SpectralAverage`): each distinct average becomes an inner
function of :math:`(\lambda, \mu)` and the arguments, summed exactly (``mpmath.fsum``) over the
spectral pairs in mpmath, or along a trailing axis in float64.

**Disk cache.** Generating code for a large system (the low-rank saddle point, its Jacobian and
every reported value) takes seconds; the generated Python source is cached on disk
(:class:`CodeCache`), keyed on the contents of the files the expressions come from (the
problem's declaration and the engine's symbolic modules) and the SymPy, mpmath and NumPy versions,
so any change to an equation regenerates it. ``REPLICA_LAMBDIFY_CACHE=0`` disables the cache;
``REPLICA_LAMBDIFY_CACHE=DIR`` chooses its folder (default ``~/.cache/replica/lambdify``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
from typing import Callable, Sequence

import mpmath
import numpy as np
import sympy

from .spectral import LAMBDA_I, MU_I, SpectralAverage

BACKENDS = {"mp": "mpmath", "np": "numpy"}
"""Backend name -> the ``lambdify`` module it uses."""

ENGINE_SOURCES = ("spectral.py", "saddle.py", "codegen.py")
"""Files of this package whose contents enter every cache key."""


@functools.lru_cache(maxsize=None)
def _namespace(backend: str) -> dict:
    """The global namespace ``lambdify`` gives its generated code for ``backend`` (plus
    ``functools.reduce``, which the printers use for ``Max``/``Min``)."""
    ns = dict(sympy.lambdify([], [], modules=BACKENDS[backend]).__globals__)
    ns.setdefault("reduce", functools.reduce)
    return ns


def _cacheable(f, backend: str) -> bool:
    """Whether every global name the generated function uses is in the standard namespace (so
    that its source, loaded again, runs)."""
    ns = _namespace(backend)
    names = set(f.__code__.co_names)
    for const in f.__code__.co_consts:
        if hasattr(const, "co_names"):
            names |= set(const.co_names)
    import builtins

    return all(n in ns or hasattr(builtins, n) for n in names)


class CodeCache:
    """Generated source code on disk, one file per (key, name)."""

    def __init__(self, key: str):
        self.key = key

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def folder() -> str | None:
        setting = os.environ.get("REPLICA_LAMBDIFY_CACHE", "")
        if setting.lower() in ("0", "off", "no", "false"):
            return None
        folder = setting or os.path.join(os.path.expanduser("~"), ".cache", "replica", "lambdify")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            return None
        return folder

    def path(self, name: str) -> str | None:
        folder = self.folder()
        return None if folder is None else os.path.join(folder, f"{self.key}-{name}.py")

    def load(self, name: str, backend: str) -> dict | None:
        """The namespace of the cached module ``name`` (``None`` if absent or unreadable)."""
        path = self.path(name)
        if path is None or not os.path.exists(path):
            return None
        try:
            with open(path) as fh:
                source = fh.read()
            ns = dict(_namespace(backend))
            exec(compile(source, path, "exec"), ns)  # noqa: S102 - code this module generated
            return ns
        except Exception:  # a damaged cache file: regenerate
            return None

    def store(self, name: str, source: str) -> None:
        path = self.path(name)
        if path is None:
            return
        try:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                fh.write(source)
            os.replace(tmp, path)
        except OSError:
            pass


def cache_key(label: str, source_files: Sequence[str]) -> str:
    """A key for :class:`CodeCache`: ``label`` and a hash of the files' contents, of this
    package's symbolic modules and of the library versions."""
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for path in list(source_files) + [os.path.join(here, f) for f in ENGINE_SOURCES]:
        try:
            with open(path, "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(path.encode())
    h.update(f"{sympy.__version__} {mpmath.__version__} {np.__version__}".encode())
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
    return f"{safe}-{h.hexdigest()[:24]}"


def _function_source(f: Callable, name: str) -> str:
    src = inspect.getsource(f)
    return src.replace("def _lambdifygenerated(", f"def {name}(", 1)


class Evaluator:
    """Evaluators of ``exprs`` as functions of ``args`` (and of a spectrum, if the expressions hold
    spectral averages), for the backends ``"mp"`` and ``"np"``.

    ``build`` may replace ``exprs``: a callable returning the expressions, called only when the
    generated code is not in the cache (``cache`` and ``name`` given).
    """

    def __init__(self, exprs=None, args: Sequence = (), *, build: Callable | None = None,
                 cache: CodeCache | None = None, name: str = ""):
        if (exprs is None) == (build is None):
            raise ValueError("give either exprs or build")
        self._exprs = None if exprs is None else [sympy.sympify(e) for e in exprs]
        self._build = build
        self.args = list(args)
        self.cache = cache
        self.name = name
        self._fns: dict = {}

    @property
    def exprs(self) -> list:
        if self._exprs is None:
            self._exprs = [sympy.sympify(e) for e in self._build()]
        return self._exprs

    def _generate(self, backend: str):
        """``(outer, inners)``: the outer function of ``args`` and the averages' values, and one
        inner function of ``(lambda, mu, *args)`` per distinct average."""
        cname = f"{self.name}-{backend}" if self.name else None
        if self.cache is not None and cname:
            ns = self.cache.load(cname, backend)
            if ns is not None:
                n = ns["N_INNER"]
                return ns["outer"], [ns[f"inner_{k}"] for k in range(n)]
        exprs = self.exprs
        # averages may be nested (an average inside another, e.g. a trace inside a resolvent):
        # replace the innermost ones first; average k is a function of (lambda, mu), the
        # arguments and the averages before it
        current, dummies, inner_exprs = list(exprs), [], []
        while True:
            found = set()
            for e in current:
                found |= e.atoms(SpectralAverage)
            leaves = sorted((a for a in found if not a.args[0].atoms(SpectralAverage)),
                            key=sympy.default_sort_key)
            if not leaves:
                break
            mapping = {}
            for a in leaves:
                d = sympy.Dummy(f"avg{len(dummies)}")
                inner_exprs.append((a.args[0], list(dummies)))
                dummies.append(d)
                mapping[a] = d
            current = [e.xreplace(mapping) for e in current]
        module = BACKENDS[backend]
        outer = sympy.lambdify(self.args + dummies, current, modules=module, cse=True)
        inners = [sympy.lambdify([LAMBDA_I, MU_I] + self.args + before, e, modules=module,
                                 cse=True) for e, before in inner_exprs]
        if self.cache is not None and cname and all(
                _cacheable(f, backend) for f in [outer] + inners):
            try:
                parts = [_function_source(outer, "outer")]
                parts += [_function_source(f, f"inner_{k}") for k, f in enumerate(inners)]
                parts.append(f"N_INNER = {len(inners)}\n")
                self.cache.store(cname, "\n\n".join(parts))
            except (OSError, TypeError):
                pass
        return outer, inners

    def functions(self, backend: str):
        if backend not in self._fns:
            self._fns[backend] = self._generate(backend)
        return self._fns[backend]

    @property
    def has_averages(self) -> bool:
        return bool(self.functions("mp")[1]) if "mp" in self._fns else bool(
            self.functions("np")[1])

    def mp(self, values, pairs=None) -> list:
        """Evaluate at ``values`` (``mpf``, in the order of ``args``) at the working precision;
        ``pairs`` is a :class:`~replica.spectra.SpectralPairs` (needed only for averages)."""
        outer, inners = self.functions("mp")
        avgs: list = []
        for f in inners:
            avgs.append(mpmath.fsum(w * f(lam, mu, *values, *avgs)
                                    for lam, mu, w in zip(pairs.lam, pairs.mu, pairs.weight)))
        return list(outer(*values, *avgs))

    def f64(self, values, arrays=None) -> list:
        """Vectorised float64 evaluation; ``arrays = (lam, mu, weight)`` NumPy vectors. The
        results are broadcast to the common shape of ``values``."""
        outer, inners = self.functions("np")
        vals = [np.asarray(v, dtype=float) for v in values]
        avgs = []
        if inners:
            lam, mu, w = arrays
            expanded = [v[..., None] for v in vals]
            for f in inners:
                prev = [np.asarray(a)[..., None] for a in avgs]
                avgs.append(np.sum(w * np.asarray(f(lam, mu, *expanded, *prev), dtype=float),
                                   axis=-1))
        shape = np.broadcast_shapes(*(v.shape for v in vals)) if vals else ()
        out = [np.asarray(o, dtype=float) for o in outer(*vals, *avgs)]
        return [o if o.shape == shape else np.broadcast_to(o, shape) for o in out]

    def __call__(self, backend: str, values, spectrum=None) -> list:
        return self.mp(values, spectrum) if backend == "mp" else self.f64(values, spectrum)


def mp_function(args: Sequence, expr) -> Callable:
    """A scalar mpmath function of ``args`` (the call signature of ``sympy.lambdify``) evaluating
    one expression at the caller's working precision: :class:`Evaluator` for a single value."""
    ev = Evaluator([expr], list(args))

    def f(*values):
        return ev.mp(list(values))[0]

    return f
