r"""A model's equations as data: what ``replica equations MODEL`` prints.

For a model derived from a free energy (a problem with a
:class:`~replica.symbolic.saddle.SaddlePoint`): the free energy with its aliases, every
stationarity condition :math:`\partial f/\partial u = 0` (computed by differentiating the free
energy), and the fixed-point form (each condition solved for the variable paired with it). For a
model declared by its equations: the square system each variant solves (fixed-point map or
residuals, with its aliases). A model with a ``derivation`` (e.g. one built by :mod:`replica.glm`)
shows its steps first, each labelled stated or derived. ``systems=True`` adds the solved system of every variant in both
cases (for a saddle-point model: the closed map the engine iterates).

Three renderings of the same objects: plain text (``sympy.sstr``), LaTeX (``align*`` environments
with the model's symbol names) and JSON (each expression as ``str`` and as :func:`sympy.srepr`, so
a script can rebuild it).
"""

from __future__ import annotations

import dataclasses
import json

import sympy

from ..latex.printing import to_latex


@dataclasses.dataclass
class Block:
    """A titled list of equations ``lhs = rhs`` (``lhs`` ``None``: the display is ``rhs = 0``)."""

    key: str
    title: str
    equations: list
    symbol_names: dict = dataclasses.field(default_factory=dict, repr=False)
    """LaTeX names of the model's symbols (its ``symbol_names``), for :meth:`_repr_latex_`."""

    def latex_rows(self, symbol_names=None) -> list[str]:
        """One ``lhs &= rhs`` row per equation (``rhs &= 0`` where there is no left side)."""
        names = self.symbol_names if symbol_names is None else symbol_names
        return [f"{to_latex(rhs, names)} &= 0" if lhs is None
                else f"{to_latex(lhs, names)} &= {to_latex(rhs, names)}"
                for lhs, rhs in self.equations]

    def _repr_latex_(self) -> str:
        """The block as one display (rendered by Jupyter)."""
        return _display([self])


class EquationBlocks(list):
    """The list of :class:`Block` objects of one model; in Jupyter it renders as one LaTeX
    display (:meth:`_repr_latex_`), titles as text rows."""

    def _repr_latex_(self) -> str:
        return _display(self)


def _display(blocks) -> str:
    rows = []
    for b in blocks:
        title = b.title.replace("\\", "").replace("{", "").replace("}", "").replace("_", r"\_")
        rows.append(r"&\text{" + title + "}")
        rows += b.latex_rows()
    return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


def _lazy(value):
    if callable(value) and not isinstance(value, sympy.Basic):
        return value()
    return value


def equation_blocks(problem, systems: bool = False, variant: str | None = None) -> list[Block]:
    """The blocks ``replica equations`` shows for ``problem`` (an :class:`EquationBlocks` list,
    which Jupyter renders as LaTeX)."""
    S = getattr(problem, "saddle_point", None)
    out = EquationBlocks()
    model = getattr(problem, "model", None)
    derivation = getattr(model, "derivation", None)
    if derivation is not None:
        out.extend(derivation_blocks(derivation))
    if S is not None:
        out.append(Block("free_energy", "Free energy (extremised over the order parameters and "
                                        "their conjugates)",
                         [(sympy.Symbol(S.name), S.free_energy)]
                         + [(a.symbol, a.expression) for a in S.aliases]))
        out.append(Block("stationarity", "Stationarity conditions d%s/du = 0 (derived)" % S.name,
                         [(None, S.stationarity[u]) for u in S.unknowns]))
        out.append(Block("fixed_point", "Fixed-point form: each condition solved for its paired "
                                        "variable (derived; conjugates first)",
                         list(S.fixed_point.items())))
    if S is None or systems:
        names = [v for v, _ in problem.variants] if variant is None else [variant]
        for v in names:
            sysm = problem.system(v)
            eqs = [(a, _lazy(e)) for a, e in sysm.aliases]
            if sysm.fixed_point is not None:
                fp = _lazy(sysm.fixed_point)
                eqs += [(x, fp[x]) for x in sysm.unknowns]
                form = "fixed-point map"
            else:
                eqs += [(None, r) for r in _lazy(sysm.residuals)]
                form = "residuals"
            origin = "derived" if S is not None else "declared"
            if sysm.unknowns:
                what = f"{form} in {', '.join(map(str, sysm.unknowns))}; {origin}"
            else:
                what = "a closed form: no unknowns, every reported value is explicit"
            out.append(Block(f"system_{v}", f"System solved by the engine, variant {v!r} "
                                            f"({what})", eqs))
    names = dict(getattr(problem, "symbol_names", {}) or {})
    for b in out:
        b.symbol_names = names
    return out


def derivation_blocks(derivation) -> list[Block]:
    """One block per step of a model's ``derivation`` (how its free energy came from the model),
    titled with the step's sentence and labelled stated (with the reason) or derived."""
    blocks = []
    for step in derivation.steps():
        eqs = [(e.lhs, e.rhs) for e in step.objects.values() if isinstance(e, sympy.Eq)]
        if not eqs:
            continue
        label = f"[stated: {step.stated}]" if step.stated else "[derived]"
        blocks.append(Block(f"derivation_{step.name}", f"{step.sentence} {label}", eqs))
    return blocks


def as_text(problem, blocks) -> str:
    lines = [f"{problem.name}: {getattr(problem, 'title', '')}"]
    for b in blocks:
        lines.append("")
        lines.append(b.title + ":")
        for lhs, rhs in b.equations:
            lines.append(f"  {sympy.sstr(rhs)} = 0" if lhs is None
                         else f"  {sympy.sstr(lhs)} = {sympy.sstr(rhs)}")
    return "\n".join(lines) + "\n"


def as_latex(problem, blocks) -> str:
    names = dict(getattr(problem, "symbol_names", {}) or {})
    parts = [f"% {problem.name}: equations generated by replica from the model's SymPy objects"]
    for b in blocks:
        parts.append(f"% {b.title}")
        rows = ["  " + row for row in b.latex_rows(names)]
        parts.append("\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}")
    return "\n".join(parts) + "\n"


def as_json(problem, blocks) -> str:
    def enc(e):
        return None if e is None else {"text": sympy.sstr(e), "srepr": sympy.srepr(e)}

    data = {"model": problem.name, "title": getattr(problem, "title", ""),
            "blocks": [{"key": b.key, "title": b.title,
                        "equations": [{"lhs": enc(lhs), "rhs": enc(rhs)}
                                      for lhs, rhs in b.equations]} for b in blocks]}
    return json.dumps(data, indent=2) + "\n"
