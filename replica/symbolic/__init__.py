"""Symbolic machinery shared by the models: spectral averages kept abstract, their evaluation,
and derivation steps."""

from .spectral import LAMBDA_I, MU_I, SpectralAverage, avg, expand_averages
from .compile import CompiledExpression, compile_expressions
from .steps import Step

__all__ = ["LAMBDA_I", "MU_I", "SpectralAverage", "avg", "expand_averages",
           "CompiledExpression", "compile_expressions", "Step"]
