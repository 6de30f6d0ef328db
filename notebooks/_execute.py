"""Write the figure notebooks as executed Jupyter notebooks (``make notebooks``); not a notebook.

Each ``notebooks/NAME.py`` (jupytext ``py:percent``) is converted to a notebook with jupytext and
executed cell by cell in a fresh Python kernel (nbclient, ipykernel), in the folder
``notebooks/`` (where ``_common`` is imported from); the executed notebook, with its printed
output and its inline figures, is written to ``OUT/NAME.ipynb`` and the files the notebook writes
(PNG, PDF, SVG, CSV) go to ``OUT/files``::

    python notebooks/_execute.py [--out out/notebooks] [--quick] [--timeout S] [NAME ...]

``--quick`` sets ``REPLICA_QUICK=1`` for the kernel (the notebooks' small sizes). A notebook that
raises stops with exit status 1 and names the notebook and the cell's error.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def notebook_names() -> list[str]:
    """The notebooks: every ``notebooks/*.py`` not starting with ``_``."""
    return sorted(f[:-3] for f in os.listdir(HERE) if f.endswith(".py") and not f.startswith("_"))


def to_notebook(name: str):
    """The jupytext conversion of ``notebooks/NAME.py`` (a ``nbformat`` notebook), with the
    kernel of this Python (``python3``)."""
    import jupytext

    nb = jupytext.read(os.path.join(HERE, name + ".py"))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def execute(name: str, out_dir: str, *, quick: bool = False, timeout: int = 1800) -> str:
    """Convert, execute and write ``OUT/NAME.ipynb``; returns its path. The kernel runs in
    ``notebooks/`` with ``REPLICA_OUT=OUT/files`` (and ``REPLICA_QUICK=1`` if ``quick``) and the
    matplotlib backend left to the kernel (inline)."""
    import nbformat
    from nbclient import NotebookClient

    os.makedirs(out_dir, exist_ok=True)
    nb = to_notebook(name)
    saved = dict(os.environ)
    try:
        os.environ["REPLICA_OUT"] = os.path.abspath(os.path.join(out_dir, "files"))
        os.environ.pop("MPLBACKEND", None)
        if quick:
            os.environ["REPLICA_QUICK"] = "1"
        else:
            os.environ.pop("REPLICA_QUICK", None)
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": HERE}})
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    path = os.path.join(out_dir, name + ".ipynb")
    nbformat.write(nb, path)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Execute the figure notebooks into .ipynb files.")
    ap.add_argument("names", nargs="*", help="notebooks (default: all)")
    ap.add_argument("--out", default=os.path.join("out", "notebooks"), help="output folder")
    ap.add_argument("--quick", action="store_true", help="the notebooks' quick mode")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = ap.parse_args(argv)
    names = args.names or notebook_names()
    unknown = sorted(set(names) - set(notebook_names()))
    if unknown:
        sys.stderr.write(f"_execute: error: unknown notebook(s) {', '.join(unknown)} (have "
                         f"{', '.join(notebook_names())})\n")
        return 2
    from nbclient.exceptions import CellExecutionError

    for i, name in enumerate(names, 1):
        try:
            path = execute(name, args.out, quick=args.quick, timeout=args.timeout)
        except CellExecutionError as exc:
            first = str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
            sys.stderr.write(f"_execute: notebook {name} failed: {first}\n")
            return 1
        print(f"[{i}/{len(names)}] {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
