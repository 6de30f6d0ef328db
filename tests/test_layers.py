"""The package's layers: every import inside ``replica`` goes to the same or a lower layer, and no
two modules import each other (directly or through others).

Every module under ``replica/`` is parsed with :mod:`ast`; module-level and function-level imports
both count, relative imports are resolved. ``from PKG import NAME`` is an import of the module
``PKG.NAME`` when that module exists, else of ``PKG``. Imports by string
(``importlib.import_module``) are not seen.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

PACKAGE = "replica"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE

#: The layers, lowest first; a module belongs to the layer whose entry is the longest dotted
#: prefix of its name (the facade ``replica`` itself matches only exactly). ``replica.latex``
#: renders documents and ``replica.figures`` styles and writes figures for the consumers, so
#: they sit below them and know none of them.
LAYERS = (
    ("base", ("replica.errors", "replica.params", "replica.version", "replica.tables",
              "replica.watched_run",
              "replica.progress")),
    ("engine", ("replica.problem", "replica.symbolic", "replica.numerics", "replica.spectra",
                "replica.estimates")),
    ("declarations", ("replica.models", "replica.modeling", "replica.capabilities",
                      "replica.glm")),
    ("rendering", ("replica.latex", "replica.figures")),
    ("consumers", ("replica.analysis", "replica.simulate", "replica.derivations")),
    ("commands", ("replica.commands", "replica.registry", "replica.cli", "replica.demo", "replica.__main__",
                  PACKAGE)),
)

#: Upward imports inside ``replica/models/`` that are known and wait for the models' redesign:
#: ``(importer, imported)`` pairs. Nothing else may be listed here (none at present).
PENDING_MODEL_EDGES: tuple = ()


@dataclasses.dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


def module_names(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package."""
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, modules) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (``None`` outside it)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, path: Path, modules) -> list[Import]:
    """The package-internal imports of one module (module-level and inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [_resolve(alias.name, modules) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [_resolve(f"{base}.{alias.name}", modules) for alias in node.names]
        else:
            continue
        found.extend(Import(module, t, node.lineno) for t in targets
                     if t is not None and t != module)
    return found


def package_imports(package_dir: Path = PACKAGE_DIR) -> list[Import]:
    modules = module_names(package_dir)
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def layer_of(module: str) -> int | None:
    """Index of ``module``'s layer in :data:`LAYERS` (``None``: the module has no layer)."""
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact_only = prefix == PACKAGE
            if module == prefix or (not exact_only and module.startswith(prefix + ".")):
                if len(prefix) > best_len:
                    best, best_len = rank, len(prefix)
    return best


def upward_imports(imports, allowed=()) -> list[str]:
    """Messages for every import into a higher layer, except the ``(source, target)`` pairs in
    ``allowed``."""
    allowed = set(allowed)
    bad = []
    for imp in imports:
        src, dst = layer_of(imp.source), layer_of(imp.target)
        if src is None or dst is None or (imp.source, imp.target) in allowed:
            continue
        if dst > src:
            bad.append(f"{imp} goes up from {LAYERS[src][0]} to {LAYERS[dst][0]}")
    return bad


def import_cycles(imports) -> list[str]:
    """One message per strongly connected component of more than one module (Tarjan), naming the
    imports inside it."""
    graph: dict[str, list[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, []).append(imp.target)
        graph.setdefault(imp.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    messages = []
    for component in components:
        if len(component) > 1:
            inside = sorted((str(i) for i in imports
                             if i.source in component and i.target in component))
            messages.append("import cycle: " + ", ".join(inside))
    return messages


# ---------------------------------------------------------------------------------------------
# The package itself
# ---------------------------------------------------------------------------------------------
def test_every_module_has_a_layer():
    missing = [m for m in module_names() if layer_of(m) is None]
    assert not missing, f"modules in no layer of LAYERS: {missing}"


def test_the_import_graph_is_read():
    found = {(i.source, i.target) for i in package_imports()}
    # a module-level, a function-level and a relative-from-package import
    assert ("replica.cli", "replica.errors") in found
    assert ("replica.registry.isotropic", "replica.analysis.transitions") in found
    assert ("replica.analysis.phase_diagram", "replica.analysis.transitions") in found


def test_no_import_goes_to_a_higher_layer():
    bad = upward_imports(package_imports(), allowed=PENDING_MODEL_EDGES)
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_pending_model_edges_are_model_imports_that_exist():
    found = {(i.source, i.target) for i in package_imports()}
    for source, target in PENDING_MODEL_EDGES:
        assert source.startswith("replica.models."), (source, target)
        assert (source, target) in found, f"{source} -> {target} is gone: remove it from the list"


def test_no_import_cycles():
    cycles = import_cycles(package_imports())
    assert not cycles, "\n".join(cycles)


# ---------------------------------------------------------------------------------------------
# The checker reports what it should
# ---------------------------------------------------------------------------------------------
def test_checker_reports_an_upward_import_and_a_cycle():
    imports = [
        Import("replica.analysis.transitions", "replica.models.alignment", 3),  # downward: fine
        Import("replica.models.alignment", "replica.analysis.transitions", 7),  # upward
        Import("replica.simulate.a", "replica.simulate.b", 11),
        Import("replica.simulate.b", "replica.simulate.c", 12),
        Import("replica.simulate.c", "replica.simulate.a", 13),
    ]
    up = upward_imports(imports)
    assert up == ["replica.models.alignment -> replica.analysis.transitions (line 7) goes up "
                  "from declarations to consumers"]
    assert upward_imports(imports, allowed=[("replica.models.alignment",
                                              "replica.analysis.transitions")]) == []
    cycles = import_cycles(imports)
    assert len(cycles) == 2  # {models.alignment, analysis.transitions} and {simulate.a, b, c}
    assert ("import cycle: replica.analysis.transitions -> replica.models.alignment (line 3), "
            "replica.models.alignment -> replica.analysis.transitions (line 7)") in cycles
    assert ("import cycle: replica.simulate.a -> replica.simulate.b (line 11), "
            "replica.simulate.b -> replica.simulate.c (line 12), "
            "replica.simulate.c -> replica.simulate.a (line 13)") in cycles


def test_checker_resolves_relative_and_function_level_imports(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "models").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("")
    (pkg / "models" / "__init__.py").write_text("from . import alignment\n")
    (pkg / "models" / "alignment.py").write_text(
        "from ..errors import X\n\n\ndef f():\n    from .. import cli\n")
    (pkg / "cli.py").write_text("import replica.models.alignment\n")
    found = {str(i) for i in package_imports(pkg)}
    assert found == {"replica.models -> replica.models.alignment (line 1)",
                     "replica.models.alignment -> replica.errors (line 1)",
                     "replica.models.alignment -> replica.cli (line 5)",
                     "replica.cli -> replica.models.alignment (line 1)"}
    assert upward_imports(package_imports(pkg)) == [
        "replica.models.alignment -> replica.cli (line 5) goes up from declarations to commands"]
