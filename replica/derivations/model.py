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
"""

from __future__ import annotations

import sympy

from ..latex.tables import TABLE_DIGITS, Value, ValueTable
from ..numerics.result import decimal_string
from ..symbolic import Step
from ..symbolic.saddle import is_zero
from .base import Derivation, Section


def _closed_map_step(model) -> Step:
    S = model.saddle
    phi, aliases = model.closed_map
    H = S.conjugate_map()
    psi = S.order_map()

    def check():
        """The closed map equals the order-parameter half of the fixed point with the conjugate
        half substituted (the difference cancels symbolically)."""
        return all(is_zero(phi[t] - psi[t].xreplace(H)) for t in phi)

    objects = {f"map_{t}": sympy.Eq(t, phi[t]) for t in S.variables}
    objects.update({f"alias_{a}": sympy.Eq(a, e) for a, e in aliases.items()})
    return Step("closed_map", objects,
                "The conjugate half of the fixed point involves only the order parameters, so "
                "substituting it into the other half gives a closed map on the order parameters: "
                "the system the engine solves (Newton's method with the exact Jacobian).", check)


def _equals_declared(model) -> Step:
    from ..symbolic.spectral import on_symbolic_spectrum

    derived = model.derivation.free_energy()

    def check():
        """The derived and the declared free energy are identical: their difference vanishes
        identically on a spectrum of three symbolic eigenvalues (both are linear in the
        averages, so they agree for every spectrum)."""
        return sympy.simplify(on_symbolic_spectrum(derived - model.free_energy)) == 0

    return Step("derived_equals_declared", {"derived": sympy.Eq(sympy.Symbol("f"), derived)},
                "The free energy computed from the model is the one the model declares, which "
                "the following sections differentiate.", check)


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
    rows = tuple((symbols.get(n, n), Value(result.all_values[n], result.digits))
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
        sections.append(Section("Stationarity", tuple(stationarity)))
        sections.append(Section("Fixed-point form", tuple(fixed)))
        if model is not None and getattr(model, "reduced", False):
            sections.append(Section("The closed map", (_closed_map_step(model),)))
    else:
        sections.append(Section("The equations", (_declared_step(problem),)))
    if point is not None:
        sections.append(Section("A solved point", (_point_step(problem, point, dps),)))
    titles = {}
    if S is not None:
        titles["free_energy"] = "Free energy"
        for u in S.unknowns:
            titles[f"stationarity_{u}"] = f"Stationarity in {u}"
            titles[f"fixed_point_{S.partner(u)}"] = f"Solving for {S.partner(u)}"
    intro = (f"This appendix was generated by replica from the declaration of the model "
             f"{problem.name}. Every displayed equation after the free energy is the output of a "
             "computation, and every step's check ran before the document was written.")
    return Derivation(key=problem.name.replace("_", "-"), title=getattr(problem, "title", "")
                      or problem.name, sections=tuple(sections), intro=intro,
                      symbol_names=dict(getattr(problem, "symbol_names", {}) or {}),
                      titles=titles, origin=_origin(problem))


def _origin(problem) -> str:
    import os

    files = getattr(problem, "source_files", ()) or ()
    if files:
        return "the model file " + os.path.basename(files[0])
    return f"the declaration of the model {problem.name}"
