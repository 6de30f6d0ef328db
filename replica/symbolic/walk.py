r"""Walks of SymPy expression trees that visit each *distinct* subexpression once.

A differentiated integrand is a tree with many copies of few subexpressions: phase retrieval's
Jacobian holds trees of tens of thousands of nodes with a few hundred distinct ones. SymPy's
``expr.atoms(T)`` walks every node of the tree (``preorder_traversal``), so its cost is the
tree's size, not the number of distinct subexpressions; the first float64 solve of phase
retrieval spent about a third of its time in such walks. :func:`distinct_atoms` returns the
same set,

.. math::  \{\,n \in \operatorname{nodes}(e) : n \text{ is an instance of } T\,\},

from a walk that skips a subexpression equal (SymPy ``==``, i.e. the same contents: the same
functions, numbers and symbols with the same assumptions) to one already visited: two equal
subexpressions have equal sets of nodes, so the union is unchanged.
"""

from __future__ import annotations

__all__ = ["distinct_atoms"]


def distinct_atoms(expr, *types) -> set:
    """``expr.atoms(*types)`` (``types`` classes, at least one), each distinct subexpression
    visited once (see the module docstring)."""
    if not types:
        raise TypeError("distinct_atoms needs at least one type")
    seen: set = set()
    found: set = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, types):
            found.add(node)
        stack.extend(node.args)
    return found
