"""Sphinx directive ``replica-gallery``: the figures of the notebooks, if they have been drawn.

``make gallery`` runs every notebook (``notebooks/*.py``) in its quick mode into
``docs/_gallery``; the directive then shows, for each notebook, its title (the first heading of
its first Markdown cell), every PNG it wrote and the command that draws it at full size. Nothing
is computed while the documentation is built: without ``docs/_gallery`` the page says how to draw
the figures.
"""

from __future__ import annotations

import os
import re

from docutils import nodes
from docutils.parsers.rst import Directive


def notebook_title(path: str) -> str:
    """The first ``# # Title`` line of a jupytext ``py:percent`` notebook (else its name)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            match = re.match(r"#\s+#\s+(.+)", line)
            if match:
                return match.group(1).strip()
    return os.path.basename(path)


def notebook_figures(gallery_dir: str, stem: str) -> list[str]:
    """The PNGs that notebook ``stem`` wrote into ``gallery_dir`` (its own subfolder included),
    relative to ``gallery_dir``, sorted."""
    found = []
    for root, _, files in os.walk(gallery_dir):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), gallery_dir)
            if name.endswith(".png") and (rel.startswith(stem + ".") or
                                          rel.startswith(stem + os.sep)):
                found.append(rel)
    return sorted(found)


def title_node(title: str):
    """A section title with the ``$...$`` parts of a notebook's heading as inline math."""
    node = nodes.title(title, "")
    for i, part in enumerate(re.split(r"\$([^$]+)\$", title)):
        if part:
            node += nodes.math(part, part) if i % 2 else nodes.Text(part)
    return node


class Gallery(Directive):
    """``.. replica-gallery::`` -- one section per notebook, with the figures it drew."""

    has_content = False

    def run(self):
        env = self.state.document.settings.env
        src = env.srcdir
        notebooks = os.path.join(os.path.dirname(src), "notebooks")
        gallery = os.path.join(src, "_gallery")
        have = os.path.isdir(gallery)
        out = []
        if not have:
            text = ("The figures have not been drawn in this build: run `make gallery` "
                    "(every notebook in quick mode, about a minute on two cores), then "
                    "`make docs`.")
            out.append(nodes.paragraph(text, text))
        for name in sorted(os.listdir(notebooks)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            stem = name[:-3]
            path = os.path.join(notebooks, name)
            env.note_dependency(path)
            title = notebook_title(path)
            section = nodes.section(ids=["gallery-" + stem.replace("_", "-")],
                                    names=[nodes.fully_normalize_name(stem)])
            section += title_node(title)
            command = f".venv/bin/python notebooks/{name} [--quick] [--out DIR] [--no-sim]"
            section += nodes.literal_block(command, command, language="none")
            for rel in notebook_figures(gallery, stem) if have else []:
                uri = "_gallery/" + rel.replace(os.sep, "/")
                section += nodes.image(uri=uri, alt=f"{stem}: {rel}", width="90%")
            out.append(section)
        return out


def setup(app):
    app.add_directive("replica-gallery", Gallery)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
