"""The symbolic engine: spectral averages kept abstract, saddle points of free energies, the
code generator that turns SymPy expressions into evaluators, and derivation steps."""

from .spectral import LAMBDA_I, MU_I, SpectralAverage, avg, expand_averages
from .codegen import CodeCache, Evaluator, cache_key
from .steps import Step

__all__ = ["LAMBDA_I", "MU_I", "SpectralAverage", "avg", "expand_averages",
           "CodeCache", "Evaluator", "cache_key", "Step"]
