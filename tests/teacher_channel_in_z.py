"""The teacher-perceptron example with its channel term declared as it was before it moved to
x = z/sqrt(1 - m): 2 E_z[H(cz) log H(cz)], c = sqrt(m/(1 - m)), whose integrand varies on the
scale 1/c of z -- the case where the float64 rule's own error is large, kept for the tests of the
float64 check (test_float64_boundary, test_float64_rule_error)."""

from __future__ import annotations

from pathlib import Path

MODEL = str(Path(__file__).resolve().parents[1] / "examples" / "perceptron_teacher.py")


def model_channel_in_z(directory) -> str:
    """The example rewritten with the channel term in z, as a model file in ``directory``
    (the same function of m: ``test_teacher_large_alpha.test_channel_term_in_x_is_the_one_in_z``)."""
    source = Path(MODEL).read_text()
    declared = ("PSI_OUT = 2 * gauss(SCALE * H(sympy.sqrt(m) * x)"
                " * sympy.log(H(sympy.sqrt(m) * x)), x)")
    assert source.count(declared) == 1
    in_z = ("PSI_OUT = 2 * gauss(H(sympy.sqrt(m / (1 - m)) * z)"
            " * sympy.log(H(sympy.sqrt(m / (1 - m)) * z)), z)")
    path = Path(directory) / "perceptron_teacher_in_z.py"
    path.write_text(source.replace(declared, in_z))
    return str(path)
