"""Generated code is the same in every process (job f64status, session 53).

``sympy.lambdify`` replaces every argument by a new ``Dummy()`` as soon as one argument is a
``Dummy``, and names it by SymPy's process-wide counter; the printer and ``cse`` order terms
and factors by those names as strings (``Dummy_1001`` < ``Dummy_999``). So the same
expressions generated in a process that had made more symbols before (other models, other test
modules on the same worker) gave code with the operations in another order: hinge SVM's float64
grid differed in the last bits at 3 of 9 points between two such processes, and a test that
solved a model twice in one process, the code cache shared with other workers, saw two versions.
:func:`replica.symbolic.codegen.lambdify_canonical` names the arguments by position first.
"""

from __future__ import annotations

import inspect

import numpy as np
import sympy

from replica.symbolic import codegen


def _exprs():
    z = sympy.Dummy("z", real=True)
    a, b = sympy.Dummy(), sympy.Dummy()  # (default names: Dummy_<counter>)
    return [z, a, b], [b / (b - z**2 * a**2), z * a + b, sympy.exp(-z**2 / 2) * a**2 / (2 * b)]


def _source(generate, args, exprs):
    return inspect.getsource(generate(args, exprs, modules="numpy", cse=True))


def test_generated_code_does_not_depend_on_the_symbols_made_before():
    """(about 0.1 s) The same expressions generated before and after 1500 more symbols were
    made (the counter crosses a power of ten) give the same source text, and it computes the
    expressions (against NumPy written here)."""
    args, exprs = _exprs()
    first = _source(codegen.lambdify_canonical, args, exprs)
    for _ in range(1500):
        sympy.Dummy()
    assert _source(codegen.lambdify_canonical, args, exprs) == first
    args2, exprs2 = _exprs()  # the same expressions in new symbols
    assert _source(codegen.lambdify_canonical, args2, exprs2) == first
    f = codegen.lambdify_canonical(args, exprs, modules="numpy", cse=True)
    z, a, b = 0.3, 1.7, 2.9
    assert np.allclose(f(z, a, b), [b / (b - z * z * a * a), z * a + b,
                                    np.exp(-z * z / 2) * a * a / (2 * b)], rtol=1e-15)


def test_codegen_calls_lambdify_only_through_the_canonical_wrapper():
    """(< 0.1 s) Every ``lambdify`` of the code generator goes through the wrapper."""
    src = inspect.getsource(codegen)
    assert src.count("sympy.lambdify(") == 2  # (the wrapper's call and its docstring)
    assert "lambdify_canonical(canonical" not in src
