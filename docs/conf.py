"""Sphinx configuration of the replica documentation (``make docs``).

The pages are Markdown (MyST); the API reference comes from the docstrings (autodoc; they are reST),
the command-line reference from the argparse parsers (``_ext/cli_reference.py``) and the gallery
from the figures the notebooks drew (``_ext/gallery.py``, filled by ``make gallery``).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))  # the source tree's package, also when not installed

from replica.version import __version__  # noqa: E402

project = "replica"
author = "the replica developers"
copyright = "the replica developers, MIT licence"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "cli_reference",
    "gallery",
    "model_facts",
    "short_names",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_gallery", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "no-value": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True

# Cross-references are checked (``-n``). Without network access there is no intersphinx
# inventory, so references into other libraries are not resolved: they are listed here, as are
# private helpers that docstrings mention by name.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(fractions|enum|concurrent|numbers|typing|collections|pathlib)(\..*)?"),
    (r"py:.*", r"(sympy|numpy|mpmath|flint|scipy|matplotlib|dask|jinja2)(\..*)?"),
    (r"py:.*", r"(.*\.)?_[A-Za-z].*"),
    (r"py:class", r"LatexPrinter"),  # sympy.printing.latex.LatexPrinter
]
# Dataclass fields and module constants without a doc comment have no entry to link to.
nitpick_ignore = [
    ("py:attr", "status"),
    ("py:attr", "Result.certificate"),
    ("py:attr", "Derivation.inline"),
    ("py:data", "ARB_NAMESPACE"),
]


html_theme = "alabaster"
html_title = f"replica {release}"
html_static_path = []


# Help texts and parameter meanings are quoted verbatim ('inf', --rho): no typographic quotes.
smartquotes = False
