"""Sphinx directives that show what a model declares, taken from the code when the site is built.

``.. replica-parameters:: MODEL`` -- a table of the built-in model's parameter schema
(:data:`replica.models.parameters.SCHEMAS`): option, meaning, domain, default, the paper's symbol.

``.. replica-math:: MODULE:NAME`` -- a display of the SymPy object ``NAME`` of ``MODULE``, printed
by the project's LaTeX printer (:func:`replica.latex.printing.to_latex`) with the module's
``SYMBOL_NAMES``; the option ``:lhs:`` puts ``LHS =`` in front (an ``Eq`` prints both sides
itself). The equations on the theory pages are therefore the ones the code solves.
"""

from __future__ import annotations

import importlib

from docutils import nodes
from docutils.parsers.rst import Directive, directives


def _cell(text: str, literal: bool = False):
    entry = nodes.entry()
    para = nodes.paragraph()
    para += nodes.literal(text, text) if literal else nodes.Text(text)
    entry += para
    return entry


def _default_text(param) -> str:
    from replica.problem import REQUIRED, SameAs

    if param.default is REQUIRED:
        return "required"
    if isinstance(param.default, SameAs):
        return f"same as {param.default.name}"
    return str(param.default)


class Parameters(Directive):
    required_arguments = 1

    def run(self):
        from replica.models.parameters import SCHEMAS

        schema = SCHEMAS[self.arguments[0]]
        headers = ["option", "meaning", "domain", "default", "symbol"]
        table = nodes.table()
        group = nodes.tgroup(cols=len(headers))
        table += group
        for width in (16, 50, 14, 12, 8):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        row = nodes.row()
        for h in headers:
            row += _cell(h)
        head += row
        group += head
        body = nodes.tbody()
        for p in schema.parameters:
            row = nodes.row()
            row += _cell(p.option, literal=True)
            row += _cell(p.help)
            row += _cell(str(p.domain))
            row += _cell(_default_text(p))
            symbol = nodes.entry()
            if p.notation:
                para = nodes.paragraph()
                para += nodes.math(p.notation, p.notation)
                symbol += para
            row += symbol
            body += row
        group += body
        return [table]


class Math(Directive):
    required_arguments = 1
    option_spec = {"lhs": directives.unchanged}

    def run(self):
        from replica.latex.printing import to_latex

        module_name, name = self.arguments[0].split(":")
        module = importlib.import_module(module_name)
        obj = getattr(module, name)
        tex = to_latex(obj, symbol_names=getattr(module, "SYMBOL_NAMES", None))
        if "lhs" in self.options:
            tex = self.options["lhs"] + " = " + tex
        env = self.state.document.settings.env
        env.note_dependency(module.__file__)
        node = nodes.math_block(tex, tex, nowrap=False, number=None, docname=env.docname)
        caption = f"{module_name}.{name}"
        para = nodes.paragraph()
        para += nodes.Text("(")
        para += nodes.literal(caption, caption)
        para += nodes.Text(")")
        return [node, para]


def setup(app):
    app.add_directive("replica-parameters", Parameters)
    app.add_directive("replica-math", Math)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
