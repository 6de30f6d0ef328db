"""The symbolic engine: spectral averages kept abstract, saddle points of free energies, the
code generator that turns SymPy expressions into evaluators, and derivation steps.

The names below are loaded on first use (PEP 562), so that importing the code generator alone --
which a process whose evaluators come from the disk cache does -- imports no SymPy."""

import importlib

_EXPORTS = {"LAMBDA_I": "spectral", "MU_I": "spectral", "SpectralAverage": "spectral",
            "avg": "spectral", "expand_averages": "spectral", "CodeCache": "codegen",
            "Evaluator": "codegen", "cache_key": "codegen", "Step": "steps"}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
