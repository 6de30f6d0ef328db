r"""Array modules for the iterative ridge solver: the same code on NumPy or on PyTorch.

The conjugate-gradient solver (:func:`replica.simulate.solver.ridge_cg`) needs only matrix
products, elementwise arithmetic, row-wise dot products, reductions to a scalar and one symmetric
eigendecomposition. An array module (:class:`NumpyModule`, :class:`TorchModule`, returned by
:func:`array_module`) supplies exactly these for one library:

* ``numpy`` (default, always available): float64 NumPy arrays, the BLAS NumPy links to;
* ``torch`` (optional extra ``gpu``, ``pip install "replica[gpu]"``): float64 tensors on the first
  CUDA device when PyTorch sees one, else on the CPU. The arithmetic is the same; on a CPU it is a
  check of the abstraction rather than a speed-up.

Everything stays in float64 on both, so the two agree to rounding (well below the solver's
stopping tolerance). :func:`array_module` raises :class:`~replica.errors.ParameterError` naming
``--backend`` for an unknown name or a backend whose library is not installed.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError

BACKENDS = ("numpy", "torch")


class NumpyModule:
    """float64 NumPy arrays."""

    name = "numpy"
    device = "cpu"

    def asarray(self, a):
        return np.ascontiguousarray(a, dtype=np.float64)

    def to_numpy(self, a) -> np.ndarray:
        return np.asarray(a)

    def zeros_like(self, a):
        return np.zeros_like(a)

    def eigh(self, a):
        return np.linalg.eigh(a)

    def row_dots(self, a, b):
        """``sum_j a[i, j] b[i, j]`` for every row ``i``."""
        return np.einsum("ij,ij->i", a, b)

    def inner(self, a, b) -> float:
        """Frobenius inner product of two arrays of the same shape, as a Python float."""
        return float(np.vdot(a, b))


class TorchModule:
    """float64 PyTorch tensors on ``device`` (``cuda`` if available, else ``cpu``)."""

    name = "torch"

    def __init__(self, device: str | None = None):
        import torch

        self.torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")

    def asarray(self, a):
        return self.torch.as_tensor(np.ascontiguousarray(a, dtype=np.float64),
                                    dtype=self.torch.float64, device=self.device)

    def to_numpy(self, a) -> np.ndarray:
        return a.detach().cpu().numpy()

    def zeros_like(self, a):
        return self.torch.zeros_like(a)

    def eigh(self, a):
        return self.torch.linalg.eigh(a)

    def row_dots(self, a, b):
        return (a * b).sum(dim=1)

    def inner(self, a, b) -> float:
        return float((a * b).sum())


def torch_available() -> bool:
    """Whether PyTorch can be imported (the optional ``gpu`` extra)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def array_module(name: str = "numpy"):
    """The :class:`NumpyModule` or :class:`TorchModule` called ``name``."""
    if name == "numpy":
        return NumpyModule()
    if name == "torch":
        if not torch_available():
            raise ParameterError("--backend", "torch is not installed (pip install "
                                              "'replica[gpu]', or use --backend numpy)")
        return TorchModule()
    raise ParameterError("--backend", f"must be one of {', '.join(BACKENDS)}, got {name!r}")
