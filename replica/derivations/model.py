r"""The derivation of a declared model (a model file or any :class:`~replica.problem.Problem`), as
an appendix: from the free energy to a solved, verified point.

For a model with a free energy (:class:`replica.modeling.SaddlePointModel`):

0. when the model names a ``derivation``, its steps from the model (the loss, the data and the
   replicated integrals) to the free energy, and a check that it equals the declared one;
1. the free energy and its aliases, *as declared* (the input of the derivation);
2. every stationarity condition :math:`\partial f/\partial u = 0`, computed by differentiating the
   free energy (check: the derivative through the aliases equals the derivative of the free energy
   with the aliases substituted);
3. each condition solved for its paired variable (check: substituting the solution back gives 0);
4. the closed map on the order parameters, when the conjugate half does not involve the conjugates
   (check: it equals the order-parameter half with the conjugate half substituted);
5. a table of every reported value at a parameter point, printed to the digits verified by a
   re-solve at higher precision (check: the solve converged with at least one verified digit).

A model declared by its equations starts at step 5's system: its equations are displayed as
declared (stated, since the model gives them).

Notation: each symbol prints with the model's ``symbol_names``, else its parameter's declared
``notation`` (``Parameter("lam", ..., notation=r"\lambda")``), else a name the prose conventions
know (``lam`` -> :math:`\lambda`, ``mhat`` -> :math:`\hat m`); any other name of several letters
prints upright as one word (``\mathrm{mh}``), never as a product of italic letters. A display
that only repeats one already shown (the bare variable of a stationarity step, the right side of
an equation displayed next to it) is left out.

Every symbolic check runs under a time budget (:data:`CHECK_BUDGET_S`, in a child process): a
check that would take longer is replaced by the same identity evaluated at
:data:`NUMERIC_POINTS` random rational points with :data:`NUMERIC_DPS` digits (spectral averages
over a random three-point spectrum, abstract functions as independent unknowns), and the
verification table says so for that step. Gaussian integrals in it are taken as independent
unknowns first, then -- where an integrand holds an implicit root -- against a random discrete
measure (no quadrature: the saddle-point steps are algebra that holds for every measure), and
only where both differ evaluated by quadrature,
screened at :data:`SCREEN_DPS` digits before the full precision.
"""

from __future__ import annotations

import functools
import multiprocessing
import random
import re

import mpmath
import sympy

from ..latex.tables import TABLE_DIGITS, Value, ValueTable
from ..numerics.result import decimal_string
from ..latex.printing import _symbol_latex
from ..symbolic import Step
from ..symbolic.saddle import is_zero, tidy
from ..symbolic.spectral import LAMBDA_I, MU_I, SpectralAverage
from ..symbolic.gaussian import GaussianIntegral
from ..symbolic.implicit import ImplicitRoot
from .base import Derivation, Section

#: Seconds a symbolic check may take before it is replaced by a numerical one.
CHECK_BUDGET_S = 20.0
#: Digits of the numerical replacement of a check.
NUMERIC_DPS = 50
#: Random rational points at which the numerical replacement evaluates both sides.
NUMERIC_POINTS = 3
_SEED = 28


# ---------------------------------------------------------------------------------------------
# Checks bounded in time
# ---------------------------------------------------------------------------------------------
def _random_pairs(rng, k: int = 3) -> list:
    return [(sympy.Rational(rng.randint(1, 40), rng.randint(5, 20)),
             sympy.Rational(rng.randint(1, 40), rng.randint(5, 20))) for _ in range(k)]


def _on_random_spectrum(expr, pairs):
    """``expr`` with each spectral average replaced by the mean over the eigenvalue ``pairs``
    (the same pairs for every average)."""
    k = len(pairs)
    return expr.replace(lambda e: isinstance(e, SpectralAverage),
                        lambda e: sum(e.args[0].xreplace({LAMBDA_I: a, MU_I: b})
                                      for a, b in pairs) / k)


def numeric_identity(lhs, rhs, points: int = NUMERIC_POINTS, dps: int = NUMERIC_DPS) -> bool:
    """``lhs == rhs`` at ``points`` random rational points, evaluated with ``dps`` digits: every
    free symbol and every application of an abstract function (an independent unknown, so an
    identity in them holds for any values) drawn from (1/20, 8); agreement to ``dps - 10``
    digits relative to the larger side.

    Gaussian integrals and implicit roots are first replaced by independent unknowns (the same
    object on both sides by the same unknown): an identity that holds for arbitrary values of
    them holds in particular for their true values, and it needs no quadrature, so it holds
    also where the random point lies outside the integrals' domain (an overlap above 1, say).
    Where that opaque comparison differs, the integrals are next taken against a random discrete
    measure (:func:`_agree_on_a_random_measure`: finite sums, no quadrature), where
    :func:`_measure_applies`; only where that
    differs too are they evaluated by the engine's generated code (quadrature, an implicit root
    solved at every node): first with :data:`SCREEN_DPS` digits, where sides that differ are
    unequal, then with ``dps``; a point where that evaluation fails or where the two sides disagree
    with a complex value (outside the domain: a square root of a negative number) or with one
    beyond any float (:data:`OUT_OF_RANGE`: an integrand growing without bound outside the
    domain) is redrawn from (1/20, 1)
    at most :data:`_REDRAWS` times, and the last failure is raised."""
    rng = random.Random(_SEED)
    measure_rng = random.Random(_SEED + 1)  # (the quadrature's points drawn as before)
    for _ in range(points):
        pairs = _random_pairs(rng)
        a, b = (sympy.sympify(_on_random_spectrum(sympy.sympify(x), pairs)) for x in (lhs, rhs))
        opaque_a, opaque_b = _opaque(a, b)
        try:
            if _agree(opaque_a, opaque_b, _draw(opaque_a, opaque_b, rng, 160), dps):
                continue
            if opaque_a == a and opaque_b == b:  # nothing opaque: the comparison decided
                return False
        except (ArithmeticError, TypeError, ValueError):
            pass  # outside the domain: evaluated (and redrawn) below
        if _measure_applies(a, b):
            try:
                if _agree_on_a_random_measure(a, b, measure_rng, dps):
                    continue
            except (ArithmeticError, TypeError, ValueError):
                pass  # outside the domain: evaluated by quadrature (and redrawn) below
        for attempt in range(_REDRAWS + 1):
            values = _draw(a, b, rng, 160 if attempt == 0 else 19)
            try:
                agree = _agree(a, b, values, dps, screen=min(SCREEN_DPS, dps))
                break
            except (ArithmeticError, TypeError, ValueError):
                if attempt == _REDRAWS:
                    raise
        if not agree:
            return False
    return True


#: Redraws of a random point whose evaluation failed (:func:`numeric_identity`).
_REDRAWS = 4
#: Atoms of the random discrete measure that may replace the Gaussian one
#: (:func:`_agree_on_a_random_measure`).
MEASURE_ATOMS = 3


def _on_a_measure(expr, atoms):
    """``expr`` with each Gaussian integral :math:`\\int\\mathcal{D}z\\, f(z)` replaced by
    :math:`\\sum_k w_k f(z_k)`, ``atoms`` the pairs :math:`(z_k, w_k)` (the innermost integrals
    first, so a nested one is summed inside its outer one's terms)."""
    while True:
        innermost = [g for g in expr.atoms(GaussianIntegral)
                     if not g.args[0].has(GaussianIntegral)]
        if not innermost:
            return expr
        expr = expr.xreplace({g: sympy.Add(*(w * g.args[0].xreplace({g.args[1]: x})
                                              for x, w in atoms)) for g in innermost})


def _measure_applies(a, b) -> bool:
    """Whether :func:`_agree_on_a_random_measure` is tried: the sides hold an implicit root inside
    a Gaussian integral (whose quadrature solves the root at every node, the cost it saves) and
    no integral nested in another's integrand (whose finite sums would multiply: the teacher's
    closed map, left to the quadrature as before)."""
    integrals = a.atoms(GaussianIntegral) | b.atoms(GaussianIntegral)
    return any(g.args[0].has(ImplicitRoot) for g in integrals) and not any(
        g.args[0].has(GaussianIntegral) for g in integrals)


def _agree_on_a_random_measure(a, b, rng, dps: int) -> bool:
    r"""``a`` and ``b`` agree (:func:`_agree`, ``dps`` digits) at a random point with every
    Gaussian integral taken against the same random discrete measure of :data:`MEASURE_ATOMS`
    atoms (nodes k/10 - 3, k in 1..59, weights k/20, k in 1..20, drawn from ``rng``): an
    integral is then a finite sum, evaluated without quadrature.

    Why it may stand for the Gaussian: the steps it checks (solving a stationarity condition
    that is linear in its variable, substituting one half of the fixed point into the other)
    are algebra on the integrals and their integrands that holds for the integrals against any
    measure; if ``a - b`` vanishes for every measure it vanishes for the Gaussian one, and an
    expression that does not vanish identically in the measure's nodes and weights and the
    parameters is nonzero at a random choice of them (with probability one; at 50 digits, by far
    more than the 40 to which the sides must agree). A ``False`` decides nothing: an identity
    that uses a property of the Gaussian measure (a closed-form delta term, Stein's lemma) holds
    for it only, and the caller evaluates the integrals by quadrature."""
    atoms = [(sympy.Rational(rng.randint(1, 59), 10) - 3, sympy.Rational(rng.randint(1, 20), 20))
             for _ in range(MEASURE_ATOMS)]
    da, db = _on_a_measure(a, atoms), _on_a_measure(b, atoms)
    return _agree(da, db, _draw(da, db, rng, 160), dps)
_UNKNOWN_KINDS = (sympy.Symbol, sympy.Derivative, sympy.core.function.AppliedUndef)


def _opaque(a, b):
    """``a`` and ``b`` with each Gaussian integral and implicit root replaced by a fresh
    unknown, one per distinct object (shared by the two sides)."""
    fresh = {}

    def unknown(e):
        if e not in fresh:
            fresh[e] = sympy.Dummy(f"I{len(fresh)}", real=True)
        return fresh[e]

    def hide(e):  # top down: a derivative of an integral is one unknown, never collapsed to 0
        if isinstance(e, (GaussianIntegral, ImplicitRoot)) or (
                isinstance(e, sympy.Derivative) and e.has(GaussianIntegral, ImplicitRoot)):
            return unknown(e)
        if not e.args or not e.has(GaussianIntegral, ImplicitRoot):
            return e
        return e.func(*[hide(x) for x in e.args])

    return hide(a), hide(b)


def _draw(a, b, rng, top: int) -> dict:
    """Random rationals k/20, k in 1..top, for the free unknowns of ``a`` and ``b`` (not the
    variables bound by their Gaussian integrals)."""
    bound = {g.variable for g in a.atoms(GaussianIntegral) | b.atoms(GaussianIntegral)}
    atoms = sorted((a.atoms(*_UNKNOWN_KINDS) | b.atoms(*_UNKNOWN_KINDS)) - bound,
                   key=sympy.srepr)
    return {x: sympy.Rational(rng.randint(1, top), 20) for x in atoms
            if not isinstance(x, sympy.Symbol) or x not in (LAMBDA_I, MU_I)}


def _agree(a, b, values: dict, dps: int, screen: int | None = None) -> bool:
    """``a`` and ``b`` at ``values`` agree to ``dps - 10`` digits relative to the larger. With
    ``screen``, they are first evaluated with ``screen + 10`` digits only, and sides that differ
    there by more than ``10**(10 - screen)`` relative are unequal without more ado (see
    :data:`SCREEN_DPS`)."""
    evaluate = _numeric_evaluation(a, b, values)
    for digits in ((screen, dps) if screen is not None else (dps,)):
        with mpmath.workdps(digits + 10):
            va, vb = evaluate(digits + 10)
            if not all(mpmath.isfinite(v) for v in (va, vb)):
                raise ArithmeticError("a side is not finite at the random point")
            scale = max(abs(va), abs(vb), mpmath.mpf(1))
            if abs(va - vb) <= mpmath.mpf(10) ** (10 - digits) * scale:
                continue  # agree at these digits: on to the next (or done)
            if any(isinstance(v, mpmath.mpc) and v.imag != 0 for v in (va, vb)):
                # A square root of a negative number (an overlap outside the model's domain, say
                # q < m^2): the quadrature of a complex integrand decides nothing; redraw.
                raise ArithmeticError("a side is complex at the random point")
            if any(abs(v) > OUT_OF_RANGE for v in (va, vb)):
                # An overlap outside the model's domain where the integrand grows without bound
                # (the teacher's Bayes overlap m = 67/20 > 1: a side ~ 10^(8 10^68)): the
                # quadrature of such an integrand decides nothing either; redraw.
                raise ArithmeticError("a side is beyond any float at the random point")
            return False
    return True


#: Sides larger than this at a random point (beyond the largest float64, 1.8e308) are not
#: compared (:func:`_agree`): the point is outside the expressions' domain and is redrawn.
OUT_OF_RANGE = mpmath.mpf(2) ** 1024

#: Digits of the screening evaluation by quadrature (:func:`numeric_identity`): at
#: ``SCREEN_DPS + 10`` digits, the quadrature's error estimate below ``10**-(SCREEN_DPS + 10)``
#: of the integrand's magnitude, sides that differ by more than ``10**(10 - SCREEN_DPS)``
#: relative (twenty orders above that error) differ, and a wrong step -- a sign, a factor, a
#: term: a difference of order one at a random point -- is rejected there, at a fraction of the
#: cost of the full ``NUMERIC_DPS``; sides that agree there are compared at ``NUMERIC_DPS``.
SCREEN_DPS = 15


def _numeric_evaluation(a, b, values: dict | None = None):
    """A function of ``dps`` giving two expressions as ``mpf`` at the working precision: by
    SymPy's ``N``, or -- when they hold Gaussian integrals or implicit functions, which ``N``
    cannot evaluate -- by the engine's generated code (quadrature, roots), generated once.

    ``values`` (``{unknown: rational}``, the unknowns the expressions still hold: symbols,
    abstract functions' applications, derivatives) is the point. Where the expressions hold an
    implicit root, it is given to the generated code as its arguments: each unknown is replaced
    by a fresh positive symbol (in one pass, top down: a derivative or an application whole,
    before its arguments), and the rationals, rounded to the working precision, are passed.
    It is the same function at the same point as substituting the rationals first, but the
    code is then generated from a symbolic expression: with numbers substituted, every
    automatic simplification of the tree (signs, powers, the common-subexpression search)
    decides its questions by evaluating numbers, which cost most of a check with roots
    (logistic regression's closed map: 28 of 30 s). Otherwise the rationals are substituted
    first (Gaussian integrals without roots: constants folded before the quadrature, which
    measured cheaper -- benchmarks/README.md, section ``slowe``)."""
    values = values or {}
    if values and any(e.atoms(ImplicitRoot) for e in (a, b)):
        from ..symbolic.codegen import Evaluator

        fresh = {x: sympy.Dummy(f"u{k}", positive=True) for k, x in enumerate(values)}
        evaluator = Evaluator([a.xreplace(fresh), b.xreplace(fresh)], list(fresh.values()))
        point = [sympy.Rational(values[x]) for x in fresh]
        return lambda dps: tuple(evaluator.mp([mpmath.mpf(v.p) / v.q for v in point]))
    # (derivatives first: their arguments are symbols that are replaced too)
    for x in sorted(values, key=lambda x: not isinstance(
            x, (sympy.Derivative, sympy.core.function.AppliedUndef))):
        a, b = a.xreplace({x: values[x]}), b.xreplace({x: values[x]})
    if any(e.atoms(GaussianIntegral) or e.atoms(ImplicitRoot) for e in (a, b)):
        from ..symbolic.codegen import Evaluator

        evaluator = Evaluator([a, b], [])
        return lambda dps: tuple(evaluator.mp([]))
    return lambda dps: (mpmath.mpmathify(sympy.N(a, dps)), mpmath.mpmathify(sympy.N(b, dps)))


def _run_in_child(check, conn):
    try:
        conn.send(bool(check()))
    except Exception as exc:  # noqa: BLE001 -- reported to the parent as a failed check
        conn.send(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def bounded(check, numeric, budget_s: float | None = None, text: str | None = None):
    """A check that runs ``check`` (a symbolic check) in a child process for at most
    ``budget_s`` seconds (default :data:`CHECK_BUDGET_S`); past that, or where it returns False
    (SymPy did not reduce the difference to zero: not a proof that it is nonzero), ``numeric()``
    (the same identity at random rational points, :func:`numeric_identity`) decides, and the
    wrapper's docstring -- the text of the verification table -- says so. ``text`` replaces the check's own
    docstring as the description of the symbolic check."""
    described = text or _doc_of(check)

    def wrapper():
        limit = CHECK_BUDGET_S if budget_s is None else budget_s
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: run the symbolic check unbounded
            return bool(check())
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_run_in_child, args=(check, child), daemon=True)
        proc.start()
        child.close()
        result = parent.recv() if parent.poll(limit) else None
        if result is None:
            proc.kill()
        proc.join()
        if isinstance(result, str):
            raise RuntimeError(result)
        if result:
            wrapper.__doc__ = described
            return result
        # False from a symbolic check means that SymPy did not reduce the difference to zero,
        # not that it is nonzero (glm_lasso's closed map: erfc and square-root forms that
        # simplify() leaves as they are, while the identity holds): decide it numerically too
        why = (f"did not finish within {limit:g} s" if result is None
               else "did not reduce the difference to zero")
        wrapper.__doc__ = (
            f"The symbolic check ({described.rstrip('.')}) {why}, "
            "so the identity was evaluated numerically instead: at "
            f"{NUMERIC_POINTS} random rational points (spectral averages over a random "
            f"three-point spectrum), with {NUMERIC_DPS} digits, both sides agree to "
            f"{NUMERIC_DPS - 10} digits (Gaussian integrals and implicit roots first taken as "
            "independent unknowns; where that comparison differs and an integrand holds an "
            "implicit root, the integrals taken against a random discrete measure, an "
            "algebraic identity in them holding for every measure; where that differs too, "
            "evaluated by quadrature). "
            "Numerical, not symbolic.")
        return bool(numeric())

    wrapper.__doc__ = described
    return wrapper


def _doc_of(check) -> str:
    import inspect

    while isinstance(check, functools.partial):
        check = check.func
    doc = inspect.getdoc(check)
    return " ".join(doc.split()) if doc else "The step's check ran."


def _bounded_saddle_step(step, S, model):
    """``step`` (a stationarity or fixed-point step of the saddle point ``S``) with its check
    bounded in time; the numerical replacement checks the same identity."""
    if step.check is None:
        return step
    if step.name.startswith("stationarity_"):
        u = step.objects["variable"]

        def numeric():
            return numeric_identity(S.explicit(S.stationarity[u]), sympy.diff(S.explicit(), u))

        text = ("The derivative computed through the aliases equals the derivative of the free "
                "energy with the aliases substituted first (SymPy simplifies the difference to 0).")
    elif step.name.startswith("fixed_point_"):
        t = step.objects["variable"]
        u = S.partner(t)

        def numeric():
            return numeric_identity(S.stationarity[u].subs(t, S.fixed_point[t]), 0)

        text = ("Substituting the displayed solution into its stationarity condition gives 0 "
                "(SymPy simplifies it to 0).")
    else:
        return step
    import dataclasses

    return dataclasses.replace(step, check=bounded(step.check, numeric, text=text))


# ---------------------------------------------------------------------------------------------
# Notation and displays
# ---------------------------------------------------------------------------------------------
def _model_symbol_names(problem, sections) -> dict:
    r"""Display names of the model's symbols: its ``symbol_names``, then its parameters'
    ``notation``, then the prose conventions (``lam``, ``mhat``, ``Vhat``), else the name upright
    (``\mathrm{mh}``)."""
    names = dict(getattr(problem, "symbol_names", {}) or {})
    notation = {}
    schema = getattr(problem, "schema", None)
    for p in getattr(schema, "parameters", ()) or ():
        if getattr(p, "notation", ""):
            notation[p.name] = p.notation
    found = set()
    for section in sections:
        for step in section.steps:
            for obj in step.objects.values():
                if isinstance(obj, (sympy.Basic, sympy.MatrixBase)):
                    found.update(obj.atoms(sympy.Symbol))
    taken = {k.name for k in names if isinstance(k, sympy.Symbol)}
    for sym in sorted(found, key=lambda s: s.name):
        if sym in names or sym.name in taken:
            continue
        if sym.name in notation:
            names[sym] = notation[sym.name]
            continue
        plain = sympy.latex(sym)
        if re.fullmatch(r"(?:\\[A-Za-z]+(?:\{[^{}]*\})?|[A-Za-z])(?:_\{[^{}]*\})?'*", plain) \
                or re.fullmatch(r"\\[a-z]+\{[^{}]*\}(?:_\{[^{}]*\})?", plain):
            continue  # a letter, a Greek letter or an accented one: SymPy prints it well
        guess = _symbol_latex(sym.name)
        if guess is not None:
            names[sym] = guess[0]
        elif re.fullmatch(r"[A-Za-z]{2,}", sym.name):
            names[sym] = r"\mathrm{%s}" % sym.name
    return names


def _without_repeats(sections) -> tuple:
    """The sections with the displays that only repeat another left out: a bare symbol, an
    expression that is a side of an equation of the same step, an object already displayed."""
    import dataclasses

    shown, out = [], []
    for section in sections:
        steps = []
        for step in section.steps:
            relations = [o for o in step.objects.values() if isinstance(o, sympy.Equality)]
            sides = [s for r in relations for s in (r.lhs, r.rhs)]
            kept = {}
            for key, obj in step.objects.items():
                if isinstance(obj, (sympy.Symbol, sympy.MatrixSymbol)):
                    continue
                if isinstance(obj, sympy.Expr) and any(obj == s for s in sides):
                    continue
                if isinstance(obj, sympy.Basic) and any(obj == o for o in shown):
                    continue
                kept[key] = obj
                if isinstance(obj, sympy.Basic):
                    shown.append(obj)
            steps.append(dataclasses.replace(step, objects=kept))
        out.append(dataclasses.replace(section, steps=tuple(steps)))
    return tuple(out)


def _readable(expr):
    """``expr`` with the argument of every spectral average in :func:`tidy` form (one factored
    fraction, a leading minus sign taken out of the average), for display."""
    def readable(e):
        arg = tidy(e.args[0])
        return -SpectralAverage(-arg) if arg.could_extract_minus_sign() else SpectralAverage(arg)

    return expr.replace(lambda e: isinstance(e, SpectralAverage), readable)


def _on_symbolic_spectrum(expr, k: int = 3):
    """``expr`` with every spectral average replaced by its mean over ``k`` symbolic eigenvalue
    pairs: two expressions linear in the averages agree for every spectrum when these agree."""
    pairs = [sympy.symbols(f"c_{j} t_{j}", positive=True) for j in range(1, k + 1)]
    return expr.replace(lambda e: isinstance(e, SpectralAverage),
                        lambda e: sum(e.args[0].xreplace({LAMBDA_I: a, MU_I: b})
                                      for a, b in pairs) / k)


def _closed_map_step(model) -> Step:
    S = model.saddle
    phi, aliases = model.closed_map
    H = S.conjugate_map()
    psi = S.order_map()
    shown = {t: _readable(phi[t]) for t in phi}

    def check():
        """The closed map as displayed equals the order-parameter half of the fixed point with
        the conjugate half substituted (the difference cancels symbolically, the averages taken
        over a symbolic three-point spectrum)."""
        return all(is_zero(_on_symbolic_spectrum(shown[t] - psi[t].xreplace(H))) for t in phi)

    def numeric():
        return all(numeric_identity(shown[t], psi[t].xreplace(H)) for t in phi)

    objects = {f"map_{t}": sympy.Eq(t, shown[t]) for t in S.variables}
    objects.update({f"alias_{a}": sympy.Eq(a, e) for a, e in aliases.items()})
    return Step("closed_map", objects,
                "The conjugate half of the fixed point involves only the order parameters, so "
                "substituting it into the other half gives a closed map on the order parameters: "
                "the system the engine solves (Newton's method with the exact Jacobian).",
                bounded(check, numeric))


def _equals_declared(model) -> Step:
    derived = model.derivation.free_energy()

    def check():
        """The derived and the declared free energy are identical: their difference vanishes
        identically on a spectrum of three symbolic eigenvalues (both are linear in the
        averages, so they agree for every spectrum)."""
        return sympy.simplify(_on_symbolic_spectrum(derived - model.free_energy)) == 0

    def numeric():
        return numeric_identity(derived, model.free_energy)

    return Step("derived_equals_declared", {"derived": sympy.Eq(sympy.Symbol("f"), derived)},
                "The free energy computed from the model is the one the model declares, which "
                "the following sections differentiate.", bounded(check, numeric))


def _declared_step(problem) -> Step:
    sysm = problem.system(problem.variants[0][0])

    def lazy(v):
        return v() if callable(v) and not isinstance(v, sympy.Basic) else v

    objects = {f"alias_{a}": sympy.Eq(a, lazy(e)) for a, e in sysm.aliases}
    if sysm.fixed_point is not None:
        fp = lazy(sysm.fixed_point)
        objects.update({f"eq_{x}": sympy.Eq(x, fp[x]) for x in sysm.unknowns})
    else:
        objects.update({f"eq_{i}": sympy.Eq(r, 0) for i, r in enumerate(lazy(sysm.residuals))})
    return Step("declared_system", objects,
                "The equations as declared by the model (stated: they are its input).", None)


def _point_step(problem, point: dict, dps: int) -> Step:
    from ..numerics.driver import solve

    result = solve(problem, dps=dps, **point)
    names = problem.report_names()
    symbols = {str(u): u for u in problem.system(problem.variants[0][0]).unknowns}
    S = getattr(problem, "saddle_point", None)
    if S is not None:
        symbols.update({str(u): u for u in S.unknowns})
    # a reported name that is no symbol is prose: its words (free_energy -> "free energy")
    rows = tuple((symbols.get(n, n.replace("_", " ")), Value(result.all_values[n], result.digits))
                 for n in names if result.all_values.get(n) is not None)
    where = ", ".join(f"{k} = {v}" for k, v in result.params.items())
    table = ValueTable(
        caption=f"Every reported value at {where}, solved at {dps} digits and printed to the "
                f"digits verified by a re-solve at higher precision ({result.digits} verified; at "
                f"most {TABLE_DIGITS} shown, rounded).",
        columns=("quantity", "value"), rows=rows, align="lr")

    def check():
        """The solve converged and its re-solve at higher precision agreed on every reported
        value to at least one digit."""
        return result.converged and (result.digits or 0) >= 1

    return Step("solved_point", {"table": table},
                f"The engine's solution at one point (status {result.status.value}, scaled "
                f"residual {decimal_string(result.residual, 3)}, {result.iterations} "
                "iterations).", check)


def derivation_for(problem, point: dict | None = None, dps: int = 30) -> Derivation:
    """The :class:`~replica.derivations.base.Derivation` of ``problem`` (a declared model); with
    ``point`` (``{parameter: value}``), a table of the solution there."""
    model = getattr(problem, "model", None)
    S = getattr(problem, "saddle_point", None)
    sections = []
    derivation = getattr(model, "derivation", None) if model is not None else None
    if derivation is not None:
        sections.append(Section("From the model to the free energy",
                                tuple(derivation.steps()) + (_equals_declared(model),)))
    if S is not None:
        steps = S.steps()
        first, stationarity = steps[0], [s for s in steps if s.name.startswith("stationarity_")]
        fixed = [s for s in steps if s.name.startswith("fixed_point_")]
        sections.append(Section("The free energy", (first,)))
        sections.append(Section("Stationarity", tuple(_bounded_saddle_step(s, S, model)
                                                      for s in stationarity)))
        sections.append(Section("Fixed-point form", tuple(_bounded_saddle_step(s, S, model)
                                                          for s in fixed)))
        if model is not None and getattr(model, "reduced", False):
            sections.append(Section("The closed map", (_closed_map_step(model),)))
    else:
        sections.append(Section("The equations", (_declared_step(problem),)))
    if point is not None:
        sections.append(Section("A solved point", (_point_step(problem, point, dps),)))
    titles = dict(derivation.titles()) if hasattr(derivation, "titles") else {}
    if S is not None:
        titles["free_energy"] = "Free energy"
        for u in S.unknowns:
            titles[f"stationarity_{u}"] = f"Stationarity in {u}"
            titles[f"fixed_point_{S.partner(u)}"] = f"Solving for {S.partner(u)}"
    described = getattr(problem, "title", "") or problem.name.replace("_", " ")
    sections = list(_without_repeats(sections))
    intro = (f"This appendix was generated by replica from the declaration of the model "
             f"“{described}”. Every displayed equation after the free energy is the output of a "
             "computation, and every step's check ran before the document was written.")
    return Derivation(key=problem.name.replace("_", "-"), title=getattr(problem, "title", "")
                      or problem.name, sections=tuple(sections), intro=intro,
                      symbol_names=_model_symbol_names(problem, sections),
                      titles=titles, origin=_origin(problem))


def _origin(problem) -> str:
    import os

    files = getattr(problem, "source_files", ()) or ()
    if files:
        return "the model file " + os.path.basename(files[0])
    return f"the declaration of the model {problem.name}"
