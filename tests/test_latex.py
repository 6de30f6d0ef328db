"""The LaTeX layer: printing with display names, prose escaping, references, tables, rendering,
failure on a wrong step, and the command line (without compiling; PDFs are in test_latex_pdf)."""

import functools
import os
import re
import sys

import mpmath
import pytest
import sympy

from replica.derivations import Derivation, Section, get
from replica.derivations import alignment as D
from replica.derivations.base import CheckOutcome
from replica.errors import ParameterError
from replica.latex import (CheckFailedError, Value, ValueTable, escape_text, normalise,
                           prose_to_latex, render, to_latex)
from replica.latex.pdf import undefined_references
from replica.models import alignment as A
from replica.numerics import Result, Status
from replica.symbolic import Step


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------
def test_display_names_hat_bar_tilde():
    qhat, chibar = sympy.symbols("qhat chibar")
    names = {qhat: r"\hat{q}", chibar: r"\bar{\chi}", A.lambda_tilde: r"\tilde{\lambda}"}
    tex = to_latex(qhat * chibar + A.lambda_tilde, names)
    assert r"\hat{q}" in tex and r"\bar{\chi}" in tex and r"\tilde{\lambda}" in tex


def test_display_names_apply_to_matrix_symbols():
    tex = to_latex(D.gamma_star, D.SYMBOL_NAMES)
    assert tex == r"\operatorname{vec}\Gamma^{*}"


def test_equation_never_collapses():
    assert to_latex(D.eq(A.M, A.M)) == "M = M"


def test_spectral_average_printed_as_bracket():
    assert to_latex(A.SELF_CONSISTENCY).count(r"\left\langle") == 1


def test_term_order_is_not_resorted():
    # order="none" prints SymPy's stored argument order; the default printer sorts by degree.
    x = sympy.Symbol("x")
    e = sympy.Add(1, x**2, evaluate=False)
    assert to_latex(e).startswith("1")
    assert sympy.latex(e).startswith("x^{2}")


# ---------------------------------------------------------------------------------------------
# Prose
# ---------------------------------------------------------------------------------------------
def test_escape_specials_and_arrows():
    assert escape_text("50% of a_b & {c} < d -> e") == \
        r"50\% of a\_b \& \{c\} $<$ d $\to$ e"


def test_escape_unicode_greek_with_accents():
    assert escape_text("χ̂ and λ̃ ≤ ρ") == r"$\hat{\chi}$ and $\tilde{\lambda}$ $\le$ $\rho$"


def test_escape_rejects_unknown_characters():
    with pytest.raises(ParameterError, match="cannot set character"):
        escape_text("a \u2603 snowman")


def test_placeholders_and_references():
    def inline(name):
        return {"lam": r"\lambda"}[name]

    def ref(label):
        if label != "ridge":
            raise KeyError(label)
        return r"\eqref{eq:ridge}"

    out = prose_to_latex("Take {lam} > 0 in [[ridge]].", inline, ref)
    assert out == r"Take $\lambda$ $>$ 0 in \eqref{eq:ridge}."
    with pytest.raises(KeyError):
        prose_to_latex("see [[nowhere]]", inline, ref)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------
def _result(value, digits):
    return Result(model="x", params={}, dps=30, groups={"g": {"v": value}}, status=Status.CONVERGED,
                       iterations=1, residual=0, digits=digits)


def test_value_prints_exactly_its_guaranteed_digits():
    with mpmath.workdps(40):
        v = mpmath.mpf(1) / 3
    cell = Value.from_result(_result(v, 12), "v")
    assert cell.text() == "0.333333333333"
    assert len(cell.text().replace("0.", "", 1)) == 12
    with pytest.raises(ValueError, match="no guaranteed digits"):
        Value.from_result(_result(v, None), "v")


def test_table_cells_and_width_check():
    t = ValueTable("cap", ("a", A.tau), (("x_1", sympy.Rational(1, 2)),))
    parts = t.to_latex()
    assert parts["header"] == ["a", r"$\tau$"]
    assert parts["body"] == [[r"x\_1", r"$\frac{1}{2}$"]]
    with pytest.raises(ValueError, match="cells"):
        ValueTable("cap", ("a", "b"), (("only one",),))


def test_undefined_references_parsed_from_log():
    log = ("LaTeX Warning: Reference `eq:a:b' on page 3 undefined on input line 9.\n"
           "LaTeX Warning: There were undefined references.\n")
    assert undefined_references(log) == ["eq:a:b"]
    assert undefined_references("all fine") == []


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def alignment_doc():
    return get("alignment")


def _all_passed(doc):
    return [CheckOutcome(s.name, True) for s in doc.steps]


def test_render_structure(alignment_doc):
    text = render(alignment_doc, outcomes=_all_passed(alignment_doc))
    assert text.startswith("% Generated by `replica appendix alignment`")
    assert text.count(r"\section{") == len(alignment_doc.sections)
    assert text.count(r"\subsection{") == len(alignment_doc.steps)
    assert text.count(r"\paragraph{Check: passed.}") == len(alignment_doc.steps)
    labels = re.findall(r"\\label\{([^}]+)\}", text)
    assert len(labels) == len(set(labels))
    for ref in re.findall(r"\\(?:eq)?ref\{([^}]+)\}", text):
        assert ref in labels
    assert r"\eqref{eq:alignment:self-consistency:m}" in text
    # Every display is printed from the library's objects.
    assert to_latex(A.Q, alignment_doc.symbol_names) in text
    assert to_latex(A.E_SCALAR, alignment_doc.symbol_names) in text


def test_renaming_a_symbol_changes_the_output(alignment_doc):
    outcomes = _all_passed(alignment_doc)
    before = render(alignment_doc, outcomes=outcomes)
    after = render(alignment_doc, outcomes=outcomes, symbol_names={A.lambda_tilde: r"\xi"})
    assert r"\tilde{\lambda}" in before and r"\xi" not in before
    assert r"\tilde{\lambda}" not in after
    assert after.count(r"\xi") == before.count(r"\tilde{\lambda}")


def test_render_without_checks_says_not_run(alignment_doc):
    text = render(alignment_doc, run_checks=False)
    assert r"\paragraph{Check: not run.}" in text


def test_normalise():
    assert normalise("a  \n\n\n\nb\n\n") == "a\n\nb\n"


def _wrong_m_prime_step():
    # The term M/kappa <lambda f^2> of the numerator is dropped: the check must catch it.
    from replica.symbolic import LAMBDA_I, avg

    wrong = -avg(A.F_I**2) / (1 + A.z / A.kappa * avg(LAMBDA_I * A.F_I**2))
    return Step("m_prime_wrong", {"M_prime": D.eq(A.M_prime, wrong)},
                "A deliberately wrong derivative.", functools.partial(D._check_m_prime, wrong))


def test_wrong_steps_are_caught():
    assert D._check_m_prime() is True
    assert _wrong_m_prime_step().verify() is False
    wrong_a = 1 - 1 / A.kappa + 2 * A.z * A.M / A.kappa
    assert D._check_silverstein() is True and D._check_silverstein(wrong_a) is False
    no_scale = sympy.BlockMatrix([[D.v22 * D.M11.T, D.v22 * D.m21]])  # 1/d missing
    assert D._check_h_z() is True and D._check_h_z(gamma_blocks=no_scale) is False


def test_a_document_with_a_wrong_step_is_not_written():
    good = Step("ok", {"e": D.eq(A.M, A.M)}, "Fine.", lambda: True)
    doc = Derivation(key="demo", title="Demo",
                     sections=(Section("S", (good, _wrong_m_prime_step())),))
    outcomes = doc.run_checks()
    assert [o.passed for o in outcomes] == [True, False]
    with pytest.raises(CheckFailedError, match="m_prime_wrong"):
        render(doc, outcomes=outcomes)


def test_a_raising_check_is_a_failure_with_its_reason():
    def boom():
        raise ZeroDivisionError("division by zero")

    doc = Derivation(key="demo", title="Demo",
                     sections=(Section("S", (Step("bad", {}, "x", boom),)),))
    (o,) = doc.run_checks()
    assert not o.passed and "ZeroDivisionError" in o.reason


def test_check_text_uses_the_docstring_of_a_partial():
    step = _wrong_m_prime_step()
    doc = Derivation(key="demo", title="Demo", sections=(Section("S", (step,)),))
    text = render(doc, outcomes=[CheckOutcome(step.name, True)])
    assert "Differentiate the self-consistent equation" in text
    assert "partial(func" not in text


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------
def test_cli_writes_the_appendix(cli, tmp_path):
    code, out, err = cli("appendix", "alignment", "-o", tmp_path)
    assert code == 0, err
    assert "step checks passed" in out
    text = (tmp_path / "alignment.tex").read_text()
    assert r"\begin{document}" in text and r"\end{document}" in text


def test_cli_pdf_without_latexmk_is_one_line_exit_2(tmp_path):
    import subprocess

    from conftest import REPO

    env = dict(os.environ, PATH=str(tmp_path))  # an empty folder: no latexmk on PATH
    proc = subprocess.run([sys.executable, "-m", "replica.cli", "appendix", "alignment", "-o",
                           str(tmp_path / "out"), "--pdf"], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "latexmk not found" in lines[0] and "--pdf" in lines[0]
    assert not (tmp_path / "out").exists()


def test_cli_unknown_derivation_exit_2(cli, tmp_path):
    code, _, err = cli("appendix", "nosuch", "-o", tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1
