"""Resolve Python cross-references written with a short or re-exported name.

The docstrings name objects as their readers know them: ``:class:`ParameterError``` from any
module, ``:class:`replica.numerics.Result``` for the class that the package re-exports from
:mod:`replica.numerics.result`. Sphinx resolves only the name relative to the current module, so
this handler (``missing-reference``) looks for the documented Python objects whose dotted name ends
with the reference's last component; it resolves the reference when exactly one of them lies in
the package the reference names (the whole project for a short name), or when one of them is
nearest to the module the reference is made in (the longest common dotted prefix), or when
they are one object documented where it is defined and where it is re-exported (the defining
module's entry is taken). The candidates are those of the role's object types. Anything
else stays unresolved and is reported by ``-n``.
"""

from __future__ import annotations

import importlib

from sphinx.util.nodes import make_refnode


def _lookup(dotted: str):
    """The Python object of a documented dotted name (a fresh ``object()`` if none)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return object()
        return obj
    return object()


def resolve(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target:
        return None
    domain = env.get_domain("py")
    head, _, last = target.rpartition(".")
    types = set(domain.objtypes_for_role(node.get("reftype", "")) or ())
    found = [(name, obj) for name, obj in domain.objects.items()
             if (name == last or name.endswith("." + last)) and not obj.aliased
             and (not head or name.startswith(head + ".")) and obj.objtype in types]
    if len(found) > 1:  # prefer the objects nearest to the module the reference is made in
        context = (node.get("py:module") or "").split(".")

        def shared(name):
            parts = name.split(".")
            n = 0
            while n < min(len(parts), len(context)) and parts[n] == context[n]:
                n += 1
            return n

        best = max(shared(name) for name, _ in found)
        found = [(name, obj) for name, obj in found if shared(name) == best]
    if len(found) > 1 and len({id(_lookup(name)) for name, _ in found}) == 1:
        found = [max(found, key=lambda item: item[0].count("."))]  # one object, re-exported
    if len(found) != 1:
        return None
    name, obj = found[0]
    return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, name)


def setup(app):
    app.connect("missing-reference", resolve)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
