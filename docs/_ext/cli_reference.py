"""Sphinx directive ``replica-cli``: the command-line reference, rendered from the parsers.

The directive calls :func:`replica.cli.build_parser` when the documentation is built and walks
every sub-parser (``replica solve``, ``replica solve lowrank``, ...). Each one becomes a section
with its description, its usage line and a list of its options with their help texts, so a new
command or option appears in the documentation without editing it. Section ids are the command
words joined by hyphens (``replica-solve-lowrank``). The option ``:model-file: PATH`` adds the
parsers that the commands build for ``--model PATH``, whose options are that model's declared
parameters (ids ``replica-solve-model``, ...).
"""

from __future__ import annotations

import argparse
import os

from docutils import nodes
from docutils.parsers.rst import Directive, directives


def subcommands(parser: argparse.ArgumentParser):
    """``[(name, help, sub-parser)]`` of ``parser``'s sub-commands, in declaration order."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name), sub))
    return found


def walk(parser: argparse.ArgumentParser, words=("replica",), help_text=None):
    """Yield ``(words, help, parser)`` for ``parser`` and every sub-parser below it."""
    yield words, help_text, parser
    for name, sub_help, sub in subcommands(parser):
        yield from walk(sub, words + (name,), sub_help)


def section_id(words) -> str:
    """``replica-solve-lowrank``; a ``--model PATH`` section is ``replica-solve-model``."""
    if "--model" in words:
        words = words[:words.index("--model")] + ("model",)
    return "-".join(words)


def _option_rows(parser):
    """``(invocation, help)`` for every option and positional of ``parser`` (not sub-parsers)."""
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        invocation = formatter._format_action_invocation(action)
        help_text = formatter._expand_help(action) if action.help else ""
        if action.required and action.option_strings:
            help_text = (help_text + " (required)").strip()
        rows.append((invocation, help_text))
    return rows


def _paragraph(text: str):
    return nodes.paragraph(text, text)


def _section(words, help_text, parser):
    section = nodes.section(ids=[section_id(words)], names=[nodes.fully_normalize_name(
        " ".join(words))])
    section += nodes.title(" ".join(words), " ".join(words))
    if help_text:
        section += _paragraph(help_text[0].upper() + help_text[1:] + ".")
    if parser.description:
        section += _paragraph(parser.description)
    usage = parser.format_usage().strip()
    section += nodes.literal_block(usage, usage, language="none")
    subs = subcommands(parser)
    if subs:
        items = nodes.bullet_list()
        for name, sub_help, _ in subs:
            item = nodes.list_item()
            para = nodes.paragraph()
            para += nodes.reference(name, name, refid=section_id(words + (name,)))
            if sub_help:
                para += nodes.Text(": " + sub_help)
            item += para
            items += item
        section += _paragraph("Sub-commands:")
        section += items
    rows = _option_rows(parser)
    if rows:
        options = nodes.definition_list()
        for invocation, text in rows:
            entry = nodes.definition_list_item()
            term = nodes.term()
            term += nodes.literal(invocation, invocation)
            entry += term
            definition = nodes.definition()
            definition += _paragraph(text or "(no help text)")
            entry += definition
            options += entry
        section += options
    if parser.epilog:
        section += _paragraph(parser.epilog)
    return section


def model_file_parsers(path: str):
    """``[(command, parser)]``: the parser each command builds for ``--model path`` (the options
    are the model's declared parameters), for every command that takes ``--model``. ``path`` is
    relative to the working directory."""
    from replica.cli import build_parser
    from replica.registry import FILE_TOKEN as USER_MODEL, route_model_file

    found = []
    try:
        for command, _, _ in subcommands(build_parser()):
            route_model_file([command, "--model", path])
            for name, _, sub in subcommands(build_parser()):
                if name != command:
                    continue
                for model, _, model_parser in subcommands(sub):
                    if model == USER_MODEL:
                        found.append((command, model_parser))
    finally:
        route_model_file([])  # forget the loaded model
    return found


class CliReference(Directive):
    """``.. replica-cli::`` -- one nested section per command of ``replica``; with the option
    ``:model-file: PATH`` (relative to the repository root) also the parsers the commands build
    for ``--model PATH``, in a last section."""

    has_content = False
    option_spec = {"model-file": directives.unchanged}

    def run(self):
        # argparse wraps usage lines at the terminal's width: the same width on every build
        width = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "92"
        try:
            return self._sections()
        finally:
            if width is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = width

    def _sections(self):
        from replica.cli import build_parser

        sections = {}
        top = []
        for words, help_text, parser in walk(build_parser()):
            sec = _section(words, help_text, parser)
            sections[words] = sec
            if len(words) == 1:
                top.append(sec)
            else:
                sections[words[:-1]] += sec
        path = self.options.get("model-file")
        if path:
            env = self.state.document.settings.env
            root = os.path.dirname(env.srcdir)
            env.note_dependency(os.path.join(root, path))
            title = f"replica COMMAND --model {path}"
            outer = nodes.section(ids=["replica-model-file"],
                                  names=[nodes.fully_normalize_name(title)])
            outer += nodes.title(title, title)
            text = (f"The options the commands offer for the model file {path}: its declared "
                    "parameters, beside the command's own options.")
            outer += _paragraph(text)
            here = os.getcwd()
            os.chdir(root)
            try:
                for command, parser in model_file_parsers(path):
                    outer += _section(("replica", command, "--model", path), None, parser)
            finally:
                os.chdir(here)
            top.append(outer)
        return top


def setup(app):
    app.add_directive("replica-cli", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
