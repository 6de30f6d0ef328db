r"""PDF compilation with ``latexmk -pdf -interaction=nonstopmode -halt-on-error``.

The document is compiled in a temporary folder (latexmk reruns pdflatex until cross-references
settle); the PDF and the log are copied next to the ``.tex``. Failures are one line:

* :class:`LatexToolMissing` (exit status 2) -- ``latexmk`` is not on ``PATH``;
* :class:`LatexCompileError` (exit status 1) -- pdflatex stopped with an error (the first ``!``
  line of the log and its line number), or the PDF still has undefined references.

:func:`log_problems` reads the final log for what a careful author fixes: undefined references or
citations, overfull boxes wider than :data:`OVERFULL_TOLERANCE_PT`, requests to rerun LaTeX, and
every other LaTeX or package warning; ``CompileReport.warnings`` lists them, one line each.
Files next to the ``.tex`` that it needs (``NAME.bib``, ``*-macros.tex``, ``*-body.tex``, other
``.bib`` files) are compiled with it; latexmk runs BibTeX when the document has a bibliography.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile

from ..errors import ParameterError, ReplicaError

LATEXMK_ARGS = ("-pdf", "-interaction=nonstopmode", "-halt-on-error")
INSTALL_HINT = ("install TeX Live (Debian: apt-get install latexmk texlive-latex-recommended "
                "texlive-fonts-recommended)")


class LatexToolMissing(ParameterError):
    """``latexmk`` is not installed (exit status 2, like any unusable option)."""

    def __init__(self, option: str = "--pdf"):
        super().__init__(option, f"latexmk not found on PATH; {INSTALL_HINT}, or omit {option}")


class LatexCompileError(ReplicaError):
    """pdflatex reported an error, or references stayed undefined."""

    exit_status = 1


@dataclasses.dataclass(frozen=True)
class CompileReport:
    """Where the PDF and log went, and what the log says."""

    pdf: str
    log: str
    undefined_references: tuple
    warnings: tuple
    seconds: float


def latexmk_path() -> str:
    """Path of ``latexmk``; raises :class:`LatexToolMissing` when it is not installed."""
    path = shutil.which("latexmk")
    if path is None:
        raise LatexToolMissing()
    return path


def _first_error(log_text: str) -> str:
    lines = log_text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("! "):
            where = next((m.group(0) for m in (re.match(r"l\.\d+", x) for x in lines[i:i + 12])
                          if m), "")
            return (ln[2:].strip() + (f" (input {where})" if where else "")).strip()
    return "see the log"


def undefined_references(log_text: str) -> list[str]:
    """Labels reported as undefined in a LaTeX log."""
    refs = re.findall(r"(?:Reference|Citation) `([^']+)'\s+on\s+page\s+\d+\s+undefined",
                      log_text)
    refs = ["".join(r.split()) for r in refs]
    if not refs and "There were undefined references" in log_text:
        refs = ["(unnamed)"]
    return sorted(set(refs))


#: Overfull boxes up to this width (points) are not reported (TeX's own rounding-level excess).
OVERFULL_TOLERANCE_PT = 1.0


def log_problems(log_text: str, tolerance_pt: float = OVERFULL_TOLERANCE_PT) -> list[str]:
    """Warnings of a final LaTeX log, one line each: LaTeX/package/class warnings (undefined
    references and citations, "Rerun to get cross-references right", ...) and overfull boxes
    wider than ``tolerance_pt``."""
    out = []
    for m in re.finditer(r"^((?:LaTeX|Package|Class) (?:[A-Za-z]+ )?Warning: [^\n]*(?:\n\([^)]*\)"
                         r"[^\n]*)*)", log_text, re.MULTILINE):
        text = " ".join(re.sub(r"\n\([^)]*\)\s*", " ", m.group(1)).split())
        out.append(text)
    for m in re.finditer(r"^Overfull \\[hv]box \(([\d.]+)pt too (?:wide|high)\)([^\n]*)", log_text,
                         re.MULTILINE):
        if float(m.group(1)) > tolerance_pt:
            out.append(f"Overfull box ({m.group(1)}pt){m.group(2)}")
    return list(dict.fromkeys(out))


_RERUN = re.compile(r"Rerun to get (?:cross-references|outlines) right|Label\(s\) may have "
                    r"changed")


def _companions(tex_path: str) -> list[str]:
    """The files a generated ``.tex`` may read: ``.bib`` files, ``*-macros.tex`` /
    ``*-body.tex`` and the figures (``.png`` files, ``.pdf`` files other than its own output) in
    its folder."""
    folder = os.path.dirname(tex_path)
    own_pdf = os.path.splitext(os.path.basename(tex_path))[0] + ".pdf"
    names = sorted(os.listdir(folder))
    return [os.path.join(folder, n) for n in names
            if n.endswith(".bib") or n.endswith("-macros.tex") or n.endswith("-body.tex")
            or (n.endswith((".pdf", ".png")) and n != own_pdf)]


def compile_pdf(tex_path: str, timeout: float = 300) -> CompileReport:
    """Compile ``tex_path``; the PDF and ``.log`` are written next to it. Its companion files
    (:func:`_companions`) are copied into the build folder with it."""
    import time

    exe = latexmk_path()
    tex_path = os.path.abspath(tex_path)
    if not os.path.isfile(tex_path):
        raise ParameterError("tex", f"no such file: {tex_path}")
    base = os.path.splitext(os.path.basename(tex_path))[0]
    outdir = os.path.dirname(tex_path)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="replica-latex-") as work:
        for extra in _companions(tex_path):
            if extra != tex_path:
                shutil.copy(extra, os.path.join(work, os.path.basename(extra)))
        shutil.copy(tex_path, os.path.join(work, base + ".tex"))
        try:
            # Long log lines (kpathsea reads these from the environment) keep messages whole.
            env = dict(os.environ, max_print_line="10000", error_line="254",
                       half_error_line="238")
            proc = subprocess.run([exe, *LATEXMK_ARGS, base + ".tex"], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
            # latexmk decides from the auxiliary files whether to run pdflatex again; a source
            # written in the second latexmk starts can make it stop while LaTeX still asks
            # for a rerun. Then pdflatex runs again (twice at most).
            for _ in range(2):
                log_file = os.path.join(work, base + ".log")
                if proc.returncode != 0 or not os.path.exists(log_file):
                    break
                with open(log_file, encoding="latin-1") as fh:
                    if not _RERUN.search(fh.read()):
                        break
                proc = subprocess.run([exe, "-g", *LATEXMK_ARGS, base + ".tex"], cwd=work,
                                      env=env, capture_output=True, text=True, timeout=timeout,
                                      stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise LatexCompileError(f"latexmk did not finish within {timeout:.0f} s on "
                                    f"{tex_path}") from None
        log_path = os.path.join(work, base + ".log")
        log_text = ""
        if os.path.exists(log_path):
            with open(log_path, encoding="latin-1") as fh:
                log_text = fh.read()
            shutil.copy(log_path, os.path.join(outdir, base + ".log"))
        pdf_work = os.path.join(work, base + ".pdf")
        if proc.returncode != 0 or not os.path.exists(pdf_work):
            raise LatexCompileError(f"LaTeX error in {os.path.basename(tex_path)}: "
                                    f"{_first_error(log_text)}")
        undefined = undefined_references(log_text)
        if undefined:
            raise LatexCompileError(f"{os.path.basename(tex_path)}: undefined references "
                                    f"{', '.join(undefined)}")
        pdf = os.path.join(outdir, base + ".pdf")
        shutil.copy(pdf_work, pdf)
    warnings = tuple(log_problems(log_text))
    return CompileReport(pdf, os.path.join(outdir, base + ".log"), tuple(undefined), warnings,
                         time.perf_counter() - t0)
