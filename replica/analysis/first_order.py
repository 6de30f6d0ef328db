r"""First-order transitions and spinodals of a declared model, located at any precision.

A model whose saddle-point equations have several solutions (branches) at the same parameters
-- a solution with partial recovery and one with perfect recovery, say -- has a **first-order
transition** where the free energies of two branches cross, and **spinodals** where a branch
ends. This module locates both for any :class:`~replica.problem.Problem` (a model file's
included), one parameter :math:`p` varying and the others fixed.

**Free-energy crossings** (:func:`free_energy_crossing`). A branch is a :class:`Branch`: a start
for Newton's method (the unknowns' values; the solution reached is the branch's point) with an
optional check that the solution is on the branch, or a closed form of the branch's free energy
(a solution at infinity, such as perfect recovery, whose free energy is a limit). The crossing
is the root of :math:`\Delta(p) = \Phi_a(p) - \Phi_b(p)` in a bracket where :math:`\Delta`
changes sign, found by the Illinois (bracketing secant) method at the working precision; each
evaluation of :math:`\Phi` solves the saddle point by the engine's Newton method (exact
Jacobians, Gaussian integrals by quadrature). Its digits are the agreement of the crossing
located again at a precision half as large again (both with guard digits).

**Spinodals** (:func:`fold`). A branch :math:`x(p)` of :math:`G(x; p) = 0` ends where it folds:
:math:`G = 0` and :math:`\det \partial_x G = 0`, a square system in :math:`(x, p)`. It is built
symbolically from the model's own equations (:math:`G = x - \Phi(x)` for a fixed-point map, or
the residuals), differentiated exactly (Gaussian integrals under the integral sign), and solved
by Newton's method in mpmath from a point near the fold; digits again by a re-solve at higher
precision. At a simple fold the augmented system's Jacobian is regular (the branch turns with a
non-zero second derivative), so Newton converges quadratically.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Callable, Mapping

import mpmath

from ..errors import ConvergenceError, ParameterError
from ..numerics.machine import machine
from ..numerics.precision import precision
from ..numerics.result import Status

__all__ = ["Branch", "Crossing", "Fold", "free_energy_crossing", "branch_value", "fold",
           "exact", "declared_branch", "parse_branch", "equilibrium", "follow"]

GUARD = 10
_TRACE = False
"""Guard digits of every computation here (the result is quoted at ``dps`` digits)."""


def exact(x) -> Fraction:
    """The exact rational value of a binary ``mpf`` (so that it can be a parameter value)."""
    x = mpmath.mpf(x)
    if not mpmath.isfinite(x):
        raise ValueError(f"{x} is not finite")
    sign, man, exp, _ = x._mpf_
    value = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -value if sign else value


@dataclasses.dataclass(frozen=True)
class Branch:
    """One solution branch: ``start`` (unknown name -> value) for Newton's method and ``accept``
    (the reported values by name -> bool) that the solution must satisfy; or ``closed_form``
    (the parameters -> the branch's free energy as an ``mpf``, at the working precision) for a
    branch known in closed form. ``label`` names it in messages."""

    label: str
    start: Mapping | None = None
    accept: Callable[[Mapping], bool] | None = None
    closed_form: Callable[[Any], Any] | None = None


_COMPARISONS = ("<=", ">=", "<", ">")


def _condition(text: str, option: str):
    """``(name, op, value)`` of a condition ``NAME < VALUE`` (or ``>``, ``<=``, ``>=``)."""
    from ..params import parse_exact

    for op in _COMPARISONS:
        name, sep, value = str(text).partition(op)
        if sep:
            name = name.strip()
            if not name.isidentifier():
                break
            return name, op, parse_exact(value.strip(), option)
    raise ParameterError(option, f"expected a condition NAME < VALUE (or >, <=, >=), got "
                                 f"{text!r}")


def declared_branch(problem, declared, option: str = "--branch") -> Branch:
    r"""The :class:`Branch` of a plain-data declaration (:class:`replica.capabilities.Branch`):
    its start values checked against the unknowns of ``problem``, its conditions parsed, and a
    closed-form free energy parsed by SymPy in the model's parameters and evaluated at the
    working precision (``sympy.Expr.evalf`` with the exact parameter values substituted). A
    mistake is a :class:`~replica.errors.ParameterError` naming ``option``."""
    label = declared.label
    if declared.free_energy is not None:
        import sympy

        names = {p.name: sympy.Symbol(p.name) for p in problem.schema.parameters
                 if not (p.is_covariance or p.is_spec)}
        try:
            expr = sympy.sympify(declared.free_energy, locals=dict(names))
        except (sympy.SympifyError, TypeError, SyntaxError):
            raise ParameterError(option, f"branch {label!r}: the free energy "
                                         f"{declared.free_energy!r} is not a formula") from None
        bad = {str(x) for x in expr.free_symbols} - set(names)
        if bad:
            raise ParameterError(option, f"branch {label!r}: the free energy refers to "
                                         f"{', '.join(sorted(bad))}, which are not parameters")

        def closed_form(params, expr=expr):
            subs = {names[str(x)]: sympy.Rational(getattr(params, str(x)))
                    for x in expr.free_symbols}
            value = expr.evalf(mpmath.mp.dps + 5, subs=subs)
            if value in (sympy.oo, -sympy.oo):  # a branch whose free energy diverges
                return mpmath.inf if value == sympy.oo else -mpmath.inf
            if not value.is_real:
                raise ParameterError(option, f"branch {label!r}: the free energy is not a real "
                                             "number here")
            return mpmath.mpf(sympy.Float(value, mpmath.mp.dps + 5)._mpf_)

        return Branch(label, closed_form=closed_form)
    try:
        unknowns = set(problem.system(problem.variants[0][0]).unknowns)
        unknowns = {str(u) for u in unknowns}
    except Exception:  # noqa: BLE001 - checked again when the branch is solved
        unknowns = set(declared.start)
    bad = set(declared.start) - unknowns
    if bad:
        raise ParameterError(option, f"branch {label!r}: {', '.join(sorted(bad))} is not an "
                                     f"unknown of the model ({', '.join(sorted(unknowns))})")
    from ..params import parse_exact

    start = {k: _mpf(parse_exact(v, option)) for k, v in declared.start.items()}
    conditions = [_condition(c, option) for c in declared.accept]
    if not conditions:
        return Branch(label, start=start)

    def accept(values, conditions=conditions):
        for name, op, bound in conditions:
            if name not in values:
                raise ParameterError(option, f"branch {label!r}: the model reports no value "
                                             f"{name!r}")
            v, b = values[name], _mpf(bound)
            if not {"<": v < b, ">": v > b, "<=": v <= b, ">=": v >= b}[op]:
                return False
        return True

    return Branch(label, start=start, accept=accept)


def parse_branch(text: str, free_energy: str | None, option: str = "--branch"):
    """A :class:`replica.capabilities.Branch` from the command line's
    ``LABEL:ITEM,ITEM,...``: ``NAME=VALUE`` a start value, ``FREE_ENERGY=FORMULA`` (the name of
    the model's free energy, ``free_energy``) a closed form, ``NAME<VALUE`` (``>``, ``<=``,
    ``>=``) a condition on a reported value."""
    from ..capabilities import Branch as Declared

    label, sep, items = str(text).partition(":")
    label = label.strip()
    if not sep or not label or not items.strip():
        raise ParameterError(option, f"expected LABEL:NAME=VALUE[,...], got {text!r}")
    start, accept, closed = {}, [], None
    for item in (i.strip() for i in items.split(",")):
        if not item:
            continue
        if any(op in item for op in _COMPARISONS):
            _condition(item, option)
            accept.append(item)
            continue
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier() or not value.strip():
            raise ParameterError(option, f"branch {label!r}: expected NAME=VALUE or NAME<VALUE, "
                                         f"got {item!r}")
        if free_energy is not None and name == free_energy:
            closed = value.strip()
        else:
            start[name] = value.strip()
    try:
        return Declared(label, start=start, accept=tuple(accept), free_energy=closed)
    except ValueError as exc:
        raise ParameterError(option, str(exc)) from None


def equilibrium(values: Mapping, extremum: str):
    """The key of ``values`` (free energies by label) of the equilibrium solution: the smallest
    free energy for ``extremum="min"``, the largest for ``"max"``."""
    pick = min if extremum == "min" else max
    return pick(values, key=lambda k: values[k])


@dataclasses.dataclass
class Crossing:
    """A first-order transition: ``parameter`` = ``value`` (an ``mpf``) with ``digits``
    significant digits (agreement with a re-solve at higher precision); ``free_energy`` of the
    two branches there, and the branches' reported values (``values``, of the first branch)."""

    parameter: str
    value: Any
    digits: int
    free_energy: Any
    values: dict
    how: str = ""


@dataclasses.dataclass
class Fold:
    """A spinodal: ``parameter`` = ``value`` where the branch ends, with the unknowns there
    (``point``), ``digits`` (agreement with a re-solve at higher precision), and the Newton
    iterations used."""

    parameter: str
    value: Any
    point: dict
    digits: int
    iterations: int
    how: str = ""


def _mpf(x):
    """``x`` (a string, number, ``Fraction`` or ``mpf``) at the working precision."""
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def _params(problem, fixed: Mapping, parameter: str, p):
    raw = dict(fixed)
    raw[parameter] = exact(_mpf(p))
    return problem.schema.parse(raw)


def branch_value(problem, branch: Branch, params, value: str):
    """``(free energy, reported values)`` of ``branch`` at ``params`` at the working precision
    (:class:`~replica.errors.ConvergenceError` where Newton does not reach the branch)."""
    if branch.closed_form is not None:
        return mpmath.mpf(branch.closed_form(params)), {}
    m = machine(problem, problem.variant_of(params))
    start = None
    if branch.start is not None:
        names = list(m.outline.unknowns)
        missing = set(names) - set(branch.start)
        if missing:
            raise ParameterError("start", f"branch {branch.label!r} has no start value for "
                                          f"{', '.join(sorted(missing))}")
        start = [mpmath.mpf(branch.start[n]) for n in names]
    values, _, _ = m.solve_mp_once(params, start)
    if branch.accept is not None and not branch.accept(values):
        raise ConvergenceError(f"the solution reached from the start of branch "
                               f"{branch.label!r} is not on it", tried="Newton from its start",
                               status=Status.STALLED)
    if value not in values:
        raise ParameterError("value", f"the model reports no value {value!r}")
    return values[value], values


def _crossing_at(problem, parameter, bracket, branches, fixed, value, dps):
    a, b = branches
    with precision(dps):
        def delta(p):
            params = _params(problem, fixed, parameter, p)
            return (branch_value(problem, a, params, value)[0]
                    - branch_value(problem, b, params, value)[0])

        lo, hi = (_mpf(x) for x in bracket)
        dlo, dhi = delta(lo), delta(hi)
        if dlo * dhi > 0:
            raise ConvergenceError(
                f"the free energies of {a.label!r} and {b.label!r} do not cross in "
                f"[{mpmath.nstr(lo, 8)}, {mpmath.nstr(hi, 8)}] (differences "
                f"{mpmath.nstr(dlo, 3)} and {mpmath.nstr(dhi, 3)})",
                tried="a sign change of the free-energy difference", status=Status.NO_DIGITS)
        # Illinois: a secant step kept inside the bracket; the retained end's value is halved
        # when the same end is kept twice (superlinear, never leaves the bracket)
        side = 0
        tol = mpmath.mpf(10) ** -(dps - 2) * max(abs(lo), abs(hi))
        for _ in range(200):
            p = (lo * dhi - hi * dlo) / (dhi - dlo)
            dp = delta(p)
            if dp == 0:
                lo = hi = p
                break
            if (dp > 0) == (dhi > 0):
                hi, dhi = p, dp
                if side == -1:
                    dlo /= 2
                side = -1
            else:
                lo, dlo = p, dp
                if side == 1:
                    dhi /= 2
                side = 1
            if hi - lo < tol or abs(dp) < mpmath.mpf(10) ** -(dps - 2):
                break
        else:
            raise ConvergenceError("the free-energy crossing did not converge",
                                   tried="200 Illinois steps", status=Status.MAX_ITERATIONS)
        p = (lo * dhi - hi * dlo) / (dhi - dlo) if hi != lo else lo
        params = _params(problem, fixed, parameter, p)
        f, values = branch_value(problem, a, params, value)
        return p, f, values


def free_energy_crossing(problem, parameter: str, bracket, branches, fixed: Mapping | None = None,
                         value: str = "free_entropy", dps: int = 30) -> Crossing:
    """The value of ``parameter`` in ``bracket`` where the reported free energy ``value`` of the
    two :class:`Branch` es is equal, the other parameters ``fixed`` (raw values by name), to
    ``dps`` digits (see the module docstring).

    The crossing is first located at 15 digits in ``bracket``; the bracket is then narrowed to
    a relative :math:`10^{-9}` around it (the sign change is checked again, so a wrong
    narrowing is an error, not a wrong answer) for the location at ``dps`` plus guard digits
    and the re-location at half as many digits again."""
    fixed = dict(fixed or {})
    rough, _, _ = _crossing_at(problem, parameter, bracket, branches, fixed, value, 15)
    width = abs(rough) * mpmath.mpf(10) ** -9
    narrow = (rough - width, rough + width)
    work = dps + GUARD
    p1, f1, values = _crossing_at(problem, parameter, narrow, branches, fixed, value, work)
    hi = work + max(10, work // 2)
    p2, _, _ = _crossing_at(problem, parameter, narrow, branches, fixed, value, hi)
    digits = _agreement(p1, p2, dps)
    return Crossing(parameter, p2, digits, f1, values,
                    how=f"agreement of the crossing located at {work} and at {hi} digits")


def _agreement(a, b, dps: int) -> int:
    with mpmath.workdps(dps + 20):
        if a == b:
            return dps
        rel = abs(a - b) / max(abs(a), abs(b))
        return max(0, min(dps, int(-mpmath.log10(rel))))


# ---------------------------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------------------------
class _FoldSystem:
    """The augmented system ``[G(x; p), det dG/dx] = 0`` in ``(x, p)`` and its Jacobian, built
    from a model's system (aliases substituted, evaluation form applied), as evaluators."""

    def __init__(self, problem, variant: str, parameter: str, level=None):
        """``level``: ``None`` for the fold's ``det dG/dx = 0``; ``(quantity, value)`` for the
        reported value ``quantity`` equal to ``value`` instead."""
        import sympy

        from ..symbolic.codegen import Evaluator

        system = problem.system(variant)
        if system.spectrum is not None:
            raise ParameterError("model", "fold: systems with spectral averages are not "
                                          "supported")
        if parameter not in system.symbols:
            raise ParameterError(parameter, "is not a parameter of the model's equations")
        x = list(system.unknowns)
        if system.fixed_point is not None:
            G = [u - sympy.sympify(system.fixed_point[u]) for u in x]
        else:
            G = [sympy.sympify(r) for r in system.residuals]
        for sym, expr in reversed(list(system.aliases)):
            G = [g.xreplace({sym: expr}) for g in G]
        form = system.evaluation_form or (lambda e: e)
        G = [form(g) for g in G]
        p = system.symbols[parameter]
        if level is None:
            J = sympy.Matrix([[sympy.diff(g, u) for u in x] for g in G])
            D = J.det(method="berkowitz") if len(x) > 1 else J[0, 0]
        else:
            quantity, value = level
            exprs = {}
            for name, expr, sym in system.report:
                exprs[sym] = sympy.sympify(expr).xreplace(exprs)
                if name == quantity:
                    D = exprs[sym]
                    break
            else:
                raise ParameterError("--quantity", f"the model reports no value {quantity!r}")
            for sym, expr in reversed(list(system.aliases)):
                D = D.xreplace({sym: expr})
            D = form(D) - sympy.Rational(value)
        F = G + [D]
        variables = x + [p]
        self.unknowns = [str(u) for u in x]
        self.args = variables + [s for s in system.parameters if s != p]
        self.names = [str(s) for s in x] + [parameter] + [
            n for n, s in system.symbols.items() if s != p and s in system.parameters]
        order = {s: n for n, s in system.symbols.items()}
        self.other = [order[s] for s in system.parameters if s != p]
        self.F = Evaluator(F, self.args)
        self.J = Evaluator([sympy.diff(f, v) for f in F for v in variables], self.args)
        self.n = len(F)


def fold(problem, parameter: str, guess, start: Mapping, fixed: Mapping | None = None,
         dps: int = 30, maxiter: int = 60, level=None) -> Fold:
    """The fold (spinodal) of the branch through ``start`` (the unknowns' values) near
    ``parameter`` = ``guess``, the other parameters ``fixed``: Newton's method on
    ``[G, det dG/dx] = 0`` in the unknowns and the parameter (module docstring), to ``dps``
    digits, verified by a re-solve at higher precision. Newton runs from the start at 15 digits,
    then from that point at ``dps`` plus guard digits and, for the verification, at half as
    many digits again.

    ``level = (quantity, value)`` (``value`` exact, e.g. a ``Fraction``) locates instead the
    point of the branch where the reported value ``quantity`` equals ``value`` -- Newton's
    method on ``[G(x; p), Q(x; p) - value] = 0``, the same square system with the determinant
    replaced by the level condition (e.g. the AT line, replicon = 0): no scan of the branch,
    each step one evaluation of the equations and their exact Jacobian."""
    fixed = dict(fixed or {})
    params = _params(problem, fixed, parameter, _mpf(guess))
    variant = problem.variant_of(params)
    system = _FoldSystem(problem, variant, parameter, level)
    m = machine(problem, variant)
    others = dict(zip(m.outline.parameters, m.parameter_values_mp(params)))

    rest_names = system.other
    n = system.n

    def evaluate(y):
        rest = [others[k] for k in rest_names]
        f = system.F.mp(list(y) + rest)
        jac = system.J.mp(list(y) + rest)
        return f, mpmath.matrix([[jac[n * i + j] for j in range(n)] for i in range(n)])

    def size(f):
        return max(abs(v) for v in f)

    def on_branch(y, work):
        """Newton on G(x; p) = 0 at the fixed parameter (the augmented Jacobian's first
        columns): the start put on the branch."""
        with precision(work):
            y = [mpmath.mpf(v) for v in y]
            for _ in range(maxiter):
                f, J = evaluate(y)
                Jx = mpmath.matrix([[J[i, j] for j in range(n - 1)] for i in range(n - 1)])
                step = mpmath.lu_solve(Jx, mpmath.matrix(f[:n - 1]))
                y = [y[i] - step[i] for i in range(n - 1)] + [y[-1]]
                if max(abs(step[i]) for i in range(n - 1)) < mpmath.mpf(10) ** -(work // 2):
                    return y
            raise ConvergenceError("fold: no point of the branch at the start",
                                   tried=f"{maxiter} Newton steps at the guessed parameter",
                                   status=Status.MAX_ITERATIONS)

    def solve(work, y0):
        """Damped Newton on [G, det dG/dx] = 0: each step halved until the residual's largest
        component decreases (a fold's basin is narrow: the full step from a point of the
        branch can overshoot past it)."""
        with precision(work):
            y = [mpmath.mpf(v) for v in y0]
            f, J = evaluate(y)
            for it in range(1, maxiter + 1):
                try:
                    step = mpmath.lu_solve(J, mpmath.matrix(f))
                except ZeroDivisionError:
                    raise ConvergenceError("fold: singular augmented Jacobian (not a simple "
                                           "fold?)", tried="Newton on [G, det dG/dx] = 0",
                                           status=Status.SINGULAR_JACOBIAN) from None
                if max(abs(step[i]) / max(abs(y[i]), 1) for i in range(n)) < \
                        mpmath.mpf(10) ** -(work - 3):
                    return y, it  # converged to the rounding of the residual
                lam = mpmath.mpf(1)
                for _ in range(30):
                    trial = [y[i] - lam * step[i] for i in range(n)]
                    try:
                        ft, Jt = evaluate(trial)
                        if all(mpmath.isfinite(v) for v in ft) and size(ft) < size(f):
                            break
                    except (ArithmeticError, ValueError):
                        pass
                    lam /= 2
                else:
                    raise ConvergenceError("fold: no step decreases the residual",
                                           tried="damped Newton on [G, det dG/dx] = 0",
                                           status=Status.STALLED)
                y, f, J = trial, ft, Jt
                if _TRACE:
                    print("fold", work, it, lam, [mpmath.nstr(v, 12) for v in y],
                          mpmath.nstr(size(f), 3))
                small = max(abs(lam * step[i]) / max(abs(y[i]), 1) for i in range(n))
                if lam == 1 and small < mpmath.mpf(10) ** -(work - 2):
                    return y, it
                if size(f) == 0:
                    return y, it
            raise ConvergenceError("fold: Newton did not converge", tried=f"{maxiter} steps",
                                   status=Status.MAX_ITERATIONS)

    missing = set(system.unknowns) - set(start)
    if missing:
        raise ParameterError("--branch", f"the branch's start has no value for "
                                         f"{', '.join(sorted(missing))}")
    y0 = [_mpf(start[u]) for u in system.unknowns] + [_mpf(guess)]
    rough, iters = solve(15, on_branch(y0, 15))  # the iterations from the start are the cheap ones
    work = dps + GUARD
    y1, more = solve(work, rough)
    hi = work + max(10, work // 2)
    y2, _ = solve(hi, rough)
    iters += more
    digits = min(_agreement(a, b, dps) for a, b in zip(y1, y2))
    point = dict(zip(system.unknowns, y2[:-1]))
    what = "fold" if level is None else f"point where {level[0]} = {level[1]}"
    return Fold(parameter, y2[-1], point, digits, iters,
                how=f"agreement of the {what} located at {work} and at {hi} digits")


# ---------------------------------------------------------------------------------------------
# Continuation: one branch along a parameter
# ---------------------------------------------------------------------------------------------
#: The largest relative distance between a continued solution and its extrapolation.
JUMP = mpmath.mpf(1) / 4
#: How many times a step of :func:`follow` may be halved before the branch is called lost.
HALVINGS = 8


def follow(problem, parameter: str, values, start: Mapping, fixed: Mapping | None = None,
           dps: int = 30, progress=None, halvings: int | None = None,
           log: bool = False) -> list:
    r"""Follow one branch of solutions along ``parameter`` through ``values`` (raw values, in
    order), the other parameters ``fixed``: natural-parameter continuation with step control.
    The first point is solved by Newton's method from ``start`` (``{unknown: value}``); each next
    one from the linear extrapolation of the last two solutions (the secant predictor
    :math:`x_{k+1} \approx x_k + (x_k - x_{k-1})(p_{k+1} - p_k)/(p_k - p_{k-1})`; from the last
    solution at the second point), so the solve stays on the branch it started on -- a
    metastable branch included -- as long as the steps are small against the distance to the
    other branches. Each point is a verified solve (:func:`replica.numerics.driver.solve_params`
    with ``start=``), started from the float64 solution reached from the extrapolation where
    that converges near it (``_polished``), else from the extrapolation.

    A step is accepted when Newton's method converges and its solution is within ``JUMP``
    (relative, max over the unknowns) of the extrapolation. Otherwise the step from the last
    solution :math:`p_k` towards the requested value :math:`P` is halved: the branch is solved at
    :math:`p_k + (P - p_k)/2^j` (an exact rational), :math:`j = 1, \dots,` ``halvings``, and
    after each accepted intermediate point the step towards :math:`P` is doubled again. On a
    smooth branch the extrapolation's error falls like the step squared, so small enough steps
    are accepted; past the branch's end (a spinodal), or where Newton's method jumps to another
    branch at every step size, the distance stays of order one and the continuation stops after
    ``halvings`` halvings (default ``HALVINGS``), at a step :math:`2^{-\text{halvings}}` of
    the requested one.

    ``log=True`` (a branch along a positive parameter on which the unknowns vary like powers of
    it, e.g. :math:`V \sim 1/\lambda` as a ridge :math:`\lambda \to 0`; the values then
    usually geometric): the secant predictor is taken in :math:`s = \log p`, and for each
    unknown positive at both previous solutions in :math:`\log x`,
    :math:`x_{k+1} \approx x_k (x_k/x_{k-1})^t`,
    :math:`t = \log(p_{k+1}/p_k)/\log(p_k/p_{k-1})` (exact for a power law
    :math:`x = c\,p^{\gamma}`, where the linear predictor errs by a relative
    :math:`O(1)` at each geometric step); the other unknowns linearly in :math:`s`; the halved step
    is halved in :math:`s` (a geometric mean, rounded to six significant digits).
    Intermediate points feed the extrapolation and are not returned. Returns
    ``[(raw value, Result or ConvergenceError)]`` for the requested values reached, the last a
    :class:`ConvergenceError` when the continuation stopped."""
    from ..numerics.driver import solve_params
    from ..params import exact_str

    fixed = dict(fixed or {})
    halvings = HALVINGS if halvings is None else halvings
    out = []
    history = []  # (exact parameter value, {unknown: mpf})

    def attempt(raw):
        """Solve at ``raw`` from the extrapolation of ``history``: ``(params value, result or
        error)``; a solution too far from the extrapolation is a STALLED error."""
        params = problem.schema.parse({**fixed, parameter: raw})
        exact = getattr(params, parameter)
        if not history:
            guess = dict(start)
        elif len(history) == 1:
            guess = {k: mpmath.nstr(v, dps + GUARD) for k, v in history[-1][1].items()}
        else:
            (p0, x0), (p1, x1) = history[-2], history[-1]
            with mpmath.workdps(dps + GUARD):
                if log:
                    t = mpmath.log(_mpf(exact) / _mpf(p1)) / mpmath.log(_mpf(p1) / _mpf(p0))
                    guess = {k: mpmath.nstr(x1[k] * (x1[k] / x0[k]) ** t if x0[k] > 0
                                            and x1[k] > 0 else x1[k] + (x1[k] - x0[k]) * t,
                                            dps + GUARD) for k in x1}
                else:
                    t = (_mpf(exact) - _mpf(p1)) / (_mpf(p1) - _mpf(p0))
                    guess = {k: mpmath.nstr(x1[k] + (x1[k] - x0[k]) * t, dps + GUARD)
                             for k in x1}
        try:
            res = solve_params(problem, params, dps=dps, start=_polished(problem, params, guess))
        except ConvergenceError as exc:
            return exact, exc
        if history:
            with mpmath.workdps(dps + GUARD):
                jump = max(abs(res.all_values[k] - _mpf(v)) / max(abs(_mpf(v)), mpmath.mpf(1) / 100)
                           for k, v in guess.items())
            if jump > JUMP:
                return exact, ConvergenceError(
                    f"the solution at {parameter} = {raw} is {mpmath.nstr(jump, 3)} (relative) "
                    "from the branch's extrapolation", tried="Newton from the extrapolated point",
                    status=Status.STALLED)
        return exact, res

    def accept(exact, res):
        history.append((exact, {k: res.all_values[k] for k in start}))

    for i, raw in enumerate(values):
        exact, res = attempt(raw)
        div = 1
        while isinstance(res, ConvergenceError) and history and div < 2 ** halvings:
            last = Fraction(history[-1][0])
            div *= 2
            mid_exact, mid = attempt(exact_str(_toward(last, Fraction(exact), div, log)))
            if isinstance(mid, ConvergenceError):
                continue
            accept(mid_exact, mid)
            div = 1
            exact, res = attempt(raw)
        if isinstance(res, ConvergenceError):
            if history:
                last = history[-1][0]
                res = ConvergenceError(
                    f"{_without_tried(res)}; the branch is lost between "
                    f"{parameter} = {exact_str(Fraction(last))} (the last solution) and {raw}: "
                    f"steps halved {halvings} times, down to "
                    f"{mpmath.nstr(abs(_mpf(Fraction(exact) - Fraction(last))) / 2 ** halvings, 3)}"
                    " (it ends, or jumps to another branch)",
                    tried=getattr(res, "tried", None) or "Newton from the extrapolated point",
                    status=getattr(res, "status", Status.STALLED))
            out.append((raw, res))
            break
        accept(exact, res)
        out.append((raw, res))
        if progress:
            progress(i + 1, len(values))
    return out


def _polished(problem, params, guess: Mapping) -> Mapping:
    """The start of :func:`follow`'s verified solve: the float64 solution from ``guess`` (the
    extrapolation; :func:`replica.numerics.grid.float64_start`) where that iteration converges
    within ``JUMP`` (relative) of it -- Newton's method in mpmath then starts about 1e-8 from
    the solution, a few iterations, where from the extrapolation it may take many, each as
    dear as a Gaussian quadrature at the working precision -- else ``guess`` itself (the
    jump check of :func:`follow` applies to the verified solution either way)."""
    import math

    from ..numerics.grid import float64_start

    names = list(machine(problem, problem.variant_of(params)).outline.unknowns)
    if set(names) != set(guess):
        return guess
    try:
        near = [float(mpmath.mpf(guess[k])) for k in names]
        x, _ = float64_start(problem, params, start=near)
    except (ArithmeticError, ValueError, TypeError):
        return guess
    if x is None or not all(math.isfinite(v) for v in x):
        return guess
    if max(abs(v - g) / max(abs(g), 0.01) for v, g in zip(x, near)) > JUMP:
        return guess
    return {k: repr(v) for k, v in zip(names, x)}


def _toward(last: Fraction, target: Fraction, div: int, log: bool) -> Fraction:
    """The point ``1/div`` of the way from ``last`` to ``target``: in the parameter, or with
    ``log`` in its logarithm (:func:`log_point`)."""
    if not log:
        return last + (target - last) / div
    return log_point(last, target, Fraction(1, div))


#: Significant digits of the points of a geometric path (:func:`log_point`).
LOG_DIGITS = 6


def log_point(a: Fraction, b: Fraction, f: Fraction) -> Fraction:
    r"""The point the fraction ``f`` (in ``[0, 1]``) of the way from ``a`` to ``b`` (nonzero, of
    one sign) in the logarithm, :math:`a\,(b/a)^f`, as an exact rational: ``a`` and ``b`` at
    ``f = 0, 1``, exact where the power is rational (``1/1000`` from ``1/10`` to ``1/10000``
    at ``f = 2/3``), else rounded to :data:`LOG_DIGITS` significant digits (the exact binary
    value where that rounding is not strictly between ``a`` and ``b``)."""
    a, b, f = Fraction(a), Fraction(b), Fraction(f)
    if f == 0 or f == 1:
        return a if f == 0 else b
    r = b / a
    num, den = _root(r.numerator, f), _root(r.denominator, f)
    if num is not None and den is not None:
        return a * Fraction(num, den)
    with mpmath.workdps(30):
        mid = _mpf(a) * _mpf(r) ** (mpmath.mpf(f.numerator) / f.denominator)
        rounded = Fraction(mpmath.nstr(mid, LOG_DIGITS))
    if not min(a, b) < rounded < max(a, b):
        return exact(mid)
    return rounded


def _root(n: int, f: Fraction):
    """``|n|^f`` with its sign when it is an integer (``f = p/q``: an exact ``q``-th root), else
    None."""
    sign, n = (-1 if n < 0 else 1), abs(n)
    k = round(n ** (1 / f.denominator)) if n < 2 ** 1000 else None
    if k is None or sign < 0:
        return None
    for c in (k - 1, k, k + 1):
        if c >= 0 and c ** f.denominator == n:
            return c ** f.numerator
    return None


def _without_tried(exc: ConvergenceError) -> str:
    """The message of ``exc`` without its ``(tried: ...)`` tail."""
    text = str(exc)
    tail = f" (tried: {exc.tried})" if getattr(exc, "tried", "") else ""
    return text[:-len(tail)] if tail and text.endswith(tail) else text

