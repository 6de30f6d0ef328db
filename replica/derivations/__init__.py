"""One derivation per paper, as ordered lists of :class:`~replica.symbolic.Step` records.

``get("alignment")`` / ``get("lowrank")`` build (once per process) the
:class:`~replica.derivations.base.Derivation` from which ``replica appendix``
(:func:`replica.derivations.appendix.write_appendix`) writes the LaTeX appendix; the generated
``.tex`` files are kept in the repository's top-level ``derivations/`` folder. The step lists
live in this package so that an installed ``replica`` finds them from any working directory.
"""

from __future__ import annotations

import importlib

from .base import CheckOutcome, Derivation, Section, run_check

#: Derivation name -> module with a ``derivation()`` function.
DERIVATIONS = {
    "alignment": "replica.derivations.alignment",
    "lowrank": "replica.derivations.lowrank",
}


def names() -> list[str]:
    return list(DERIVATIONS)


def get(name: str) -> Derivation:
    """The derivation called ``name`` (``alignment`` or ``lowrank``)."""
    from ..errors import ParameterError

    if name not in DERIVATIONS:
        raise ParameterError("derivation", f"unknown derivation {name!r} "
                                           f"({', '.join(DERIVATIONS)})")
    return importlib.import_module(DERIVATIONS[name]).derivation()


__all__ = ["CheckOutcome", "Derivation", "Section", "run_check", "DERIVATIONS", "names", "get"]
