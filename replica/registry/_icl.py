"""The options the built-in linear-attention models share in ``replica simulate``, ``check`` and
``sweep`` (their :class:`~replica.capabilities.LinearAttentionICL` declarations): the help of each
parameter, as the papers name it."""

from __future__ import annotations

from ..capabilities import Option

#: ``--rho`` of the papers A/B: the noise variance.
NOISE_VARIANCE = Option("rho", "label-noise VARIANCE (papers A/B notation; not the low-rank rank "
                               "ratio)")


def lam(normalisation: str) -> Option:
    """``--lam``, with the normalisation of the model's objective."""
    return Option("lam", f"ridge lambda (default 0: ridgeless limit; {normalisation})",
                  required=False, default="0")


def common(*noise: Option, normalisation: str) -> tuple:
    """``--alpha``, ``--tau``, ``--kappa``, the noise options and ``--lam``, in this order."""
    return (Option("alpha", "context length ratio l/d"),
            Option("tau", "pretraining contexts n/d^2"),
            Option("kappa", "task diversity k/d ('inf': a fresh task per context)"),
            *noise, lam(normalisation))


ALPHA_TEST = Option("alpha_test", "test context length ratio (default alpha)", required=False,
                    scored=True)
