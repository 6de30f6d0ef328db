"""Shared helpers for the benchmarks: timing (median of repeats), machine line, README sections."""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time

README = os.path.join(os.path.dirname(__file__), "README.md")


def median_time(fn, repeats=5):
    """Median wall time of ``fn()`` over ``repeats`` calls (and the last return value)."""
    times = []
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def machine_line():
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d')}")


def write_section(name, markdown):
    """Replace (or append) the README section ``name``."""
    text = open(README).read() if os.path.exists(README) else "# Benchmarks\n"
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{markdown.rstrip()}\n{end}"
    if begin in text and end in text:
        text = re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: block, text,
                      flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(README, "w") as fh:
        fh.write(text)


def finish(name, markdown_lines, failures, write=True):
    """Writes the section ``name`` of the README from ``markdown_lines`` (unless not
    ``write``), then exits with the list of ``failures`` (values that disagree with the
    baseline) where there are any."""
    if write:
        write_section(name, "\n".join(markdown_lines))
    if failures:
        raise SystemExit(f"values disagree with the baseline: {', '.join(failures)}")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def child_json(tree: str, code: str) -> dict:
    """Runs ``code`` in a fresh Python process with ``tree`` as the package's root (one BLAS
    thread) and returns the JSON object its last line of output prints: one side of a
    side-by-side measurement against another checkout."""
    import json

    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def baseline_argument(prog: str):
    """The checkout given by ``--baseline PATH`` on the command line, or ``None`` after a usage
    line for ``python -m benchmarks.<prog>``."""
    if "--baseline" not in sys.argv:
        print(f"usage: python -m benchmarks.{prog} --baseline PATH")
        return None
    return sys.argv[sys.argv.index("--baseline") + 1]
