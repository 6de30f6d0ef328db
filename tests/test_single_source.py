"""One source of truth, checked on the code itself.

* There is one code generator: ``sympy.lambdify`` is called only in
  :mod:`replica.symbolic.codegen`; every numeric evaluator of the package and the notebooks is an
  :class:`~replica.symbolic.codegen.Evaluator` of SymPy expressions.
* Declarations hold mathematics only: no module of ``replica/models`` imports the numerical
  engine or contains a solver loop; the engine never imports a model.
* Consumers ask models by name: nothing outside ``replica/models`` uses a private name of a model
  module (``L._something``).
* Each checker is shown to fail on a small counter-example.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted((REPO / "replica").rglob("*.py")) + sorted((REPO / "notebooks").glob("*.py"))
GENERATOR = REPO / "replica" / "symbolic" / "codegen.py"
MODELS = REPO / "replica" / "models"


def lambdify_calls(tree) -> list[int]:
    """Lines that call ``lambdify`` (as ``sympy.lambdify``, ``lambdify`` or an alias)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "lambdify":
                out.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and any(a.name == "lambdify" for a in node.names):
            out.append(node.lineno)
    return sorted(out)


def private_model_uses(tree) -> list[str]:
    """``alias._name`` where ``alias`` is bound to a module of ``replica.models``."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module.endswith("models") or ".models." in f".{node.module}."):
            for a in node.names:
                aliases.add(a.asname or a.name)
        if isinstance(node, ast.Import):
            for a in node.names:
                if ".models." in f".{a.name}.":
                    aliases.add(a.asname or a.name)
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            out.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    return out


SOLVER_CALLS = {"lu_solve", "findroot", "bracketed_newton", "bracketed_newton_vec", "newton_mp",
                "newton_arb",
                "iterate_grid", "newton_grid", "damped_mp"}


def engine_uses_in_declaration(tree) -> list[str]:
    """Imports of the numerical engine and solver calls in a declaration."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "numerics" in node.module:
            out.append(f"import of {node.module} (line {node.lineno})")
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in SOLVER_CALLS:
                out.append(f"{name}() (line {node.lineno})")
    return out


def parse(path: Path):
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_one_code_generator():
    found = {str(p.relative_to(REPO)): lambdify_calls(parse(p)) for p in SOURCES if p != GENERATOR}
    assert {k: v for k, v in found.items() if v} == {}
    assert lambdify_calls(parse(GENERATOR))  # the generator itself does call it


def test_declarations_hold_no_numerics():
    found = {str(p.relative_to(REPO)): engine_uses_in_declaration(parse(p))
             for p in sorted(MODELS.glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_consumer_uses_a_private_name_of_a_model():
    found = {str(p.relative_to(REPO)): private_model_uses(parse(p))
             for p in SOURCES if MODELS not in p.parents}
    found.update({str(p.relative_to(REPO)): private_model_uses(parse(p))
                  for p in sorted((REPO / "tests").glob("*.py"))
                  + sorted((REPO / "benchmarks").glob("*.py"))})
    assert {k: v for k, v in found.items() if v} == {}


def test_the_checkers_catch_counter_examples():
    bad = ast.parse("import sympy\nf = sympy.lambdify([x], x**2)\nfrom sympy import lambdify\n")
    assert lambdify_calls(bad) == [2, 3]
    bad = ast.parse("from replica.models import lowrank as L\nL._compiled(False)\nL.PROBLEM\n")
    assert private_model_uses(bad) == ["L._compiled (line 2)"]
    bad = ast.parse("from ..numerics import bracketed_newton\nbracketed_newton(f, 0, 1, 0.5)\n")
    assert len(engine_uses_in_declaration(bad)) == 2
