"""Up-front estimates of time, memory and output size for heavy runs, and the refusal of a run
the machine cannot hold.

A heavy command (a large ``phase-diagram`` grid, a simulation at large ``d``, a theory solve
with a dense ``file:`` covariance) first builds an :class:`Estimate` from its sizes and the
per-unit costs measured below, then calls :func:`check`:

* the estimate is printed as one line on stderr when the run should take more than
  :data:`ANNOUNCE_SECONDS` (not with ``--quiet``);
* the run is refused (:class:`~replica.errors.ParameterError`, exit 2, one line naming the
  option that sets the size, what the run would need and the override) when it needs more
  memory than is available now (:func:`available_memory`), writes more than the free space at
  its output path (:func:`free_disk`), or takes more than :data:`MAX_SECONDS`.

``--force-large`` (anywhere on the command line; :func:`set_force_large`) turns the refusal
into the printed estimate only. The constants are measured on the development machine (2 cores
shared with other jobs, so on the slow side); an estimate is meant to be right within a factor
of a few, enough to tell a minute from a day.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys

from .errors import ParameterError

MAX_SECONDS = 3600.0
"""Longest run started without ``--force-large``: an hour."""

ANNOUNCE_SECONDS = 5.0
"""A run estimated to take longer than this prints its estimate on stderr first."""

OVERRIDE = "--force-large"
"""The option that runs a refused estimate anyway."""

_FORCE = [False]


def set_force_large(force: bool = True) -> None:
    """Run refused estimates anyway (the ``--force-large`` option) or refuse them again."""
    _FORCE[0] = bool(force)


def force_large() -> bool:
    """Whether refusals are overridden (``--force-large`` or ``REPLICA_FORCE_LARGE=1``)."""
    env = os.environ.get("REPLICA_FORCE_LARGE", "")
    return _FORCE[0] or env not in ("", "0")


def available_memory() -> int:
    """Bytes of memory available to a new run now (``MemAvailable`` in ``/proc/meminfo``, else
    the physical memory); ``REPLICA_MAX_MEMORY`` (bytes) overrides."""
    env = os.environ.get("REPLICA_MAX_MEMORY")
    if env:
        return int(float(env))
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 2 ** 40


def free_disk(path) -> int | None:
    """Free bytes on the file system that would hold ``path`` (its nearest existing folder), or
    ``None`` if that cannot be told."""
    here = os.path.abspath(str(path))
    while not os.path.isdir(here):
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    try:
        return shutil.disk_usage(here).free
    except OSError:
        return None


def amount(x: float, unit: str) -> str:
    """A size or duration for a message (:func:`replica.spectra.amount_text`)."""
    from .spectra import amount_text

    return amount_text(float(x), unit)


@dataclasses.dataclass
class Estimate:
    """What a run would take: ``seconds``, peak ``memory`` and ``output`` bytes written under
    ``out_path``; ``what`` names the run in messages, ``option`` the option that sets its size."""

    what: str
    option: str
    seconds: float
    memory: float
    output: float = 0.0
    out_path: str | None = None

    def text(self) -> str:
        parts = [f"about {amount(self.seconds, 's')}",
                 f"{amount(self.memory, 'B')} of memory"]
        if self.output:
            parts.append(f"{amount(self.output, 'B')} written")
        return ", ".join(parts)

    def excess(self) -> list:
        """The machine's limits this estimate exceeds, as phrases (empty: it fits)."""
        out = []
        have = available_memory()
        if self.memory > have:
            out.append(f"{amount(self.memory, 'B')} of memory ({amount(have, 'B')} available)")
        if self.output and self.out_path is not None:
            free = free_disk(self.out_path)
            if free is not None and self.output > free:
                out.append(f"{amount(self.output, 'B')} of disk ({amount(free, 'B')} free at "
                           f"{self.out_path})")
        if self.seconds > MAX_SECONDS:
            out.append(f"about {amount(self.seconds, 's')} (the limit is {MAX_SECONDS:.0f} s)")
        return out


def check(est: Estimate, stream=None) -> Estimate:
    """Refuse ``est`` (exit 2, naming ``est.option``) if it exceeds this machine's memory, the
    free disk at its output or :data:`MAX_SECONDS`, unless ``--force-large``; print it on stderr
    when it should take more than :data:`ANNOUNCE_SECONDS`. Returns ``est``."""
    excess = est.excess()
    if excess and not force_large():
        raise ParameterError(est.option, f"{est.what} would need {' and '.join(excess)}; "
                                         f"reduce {est.option} or pass {OVERRIDE} to run it "
                                         "anyway")
    if est.seconds > ANNOUNCE_SECONDS or excess:
        from .progress import quiet

        if not quiet():
            (stream or sys.stderr).write(f"replica: estimate: {est.what}: {est.text()}\n")
    return est


# ---------------------------------------------------------------------------------------------
# The per-unit costs, measured
# ---------------------------------------------------------------------------------------------

PLANE_SECONDS_PER_POINT = 1e-4
PLANE_BYTES_PER_POINT = 700
PLANE_OUTPUT_PER_POINT = 270
PLANE_BASE_SECONDS = 3.0
PLANE_BASE_BYTES = 150e6


def plane_estimate(nx: int, ny: int, what: str, out_dir=None) -> Estimate:
    """A ``phase-diagram --x ... --y ...`` grid of ``nx * ny`` float64 solves, drawn as PNG,
    PDF and SVG and written as CSV.

    Measured (isotropic ``e_icl`` over ``alpha`` x ``tau``, ``--quiet``, GNU time): a 20 x 20
    grid 3.1 s, 151 MB peak, 0.19 MB written (the start-up and the figure's fixed cost); 300 x
    300: 8.7 s, 150 MB, 23.7 MB written (CSV 5.5 MB, SVG 16.7 MB, PDF 1.5 MB: 263 B a point);
    700 x 700: 39.8 s, 419 MB, 131.7 MB written (75 us, 550 B and 269 B a point beyond the
    fixed cost); a 2000 x 2000 grid (issue 25) took 7 minutes, 2.8 GB and wrote 1.08 GB (105 us,
    700 B and 270 B a point). So: 3 s and 150 MB fixed, then 100 us, 700 B of memory and 270 B
    written per point."""
    n = float(nx) * float(ny)
    return Estimate(what, "--x", PLANE_BASE_SECONDS + PLANE_SECONDS_PER_POINT * n,
                    PLANE_BASE_BYTES + PLANE_BYTES_PER_POINT * n, PLANE_OUTPUT_PER_POINT * n,
                    out_dir)


DENSE_SECONDS_PER_D3 = 5.5e-5
"""Seconds per ``d**3`` of a verified solve with a dense (non-diagonal) covariance at 20 digits."""


def dense_solve_estimate(d: int, dps: int, option: str) -> Estimate:
    """A verified solve whose covariances include a dense ``d x d`` matrix (``option`` names it):
    its eigendecomposition in mpmath at the working precision dominates.

    Measured (``replica solve alignment ... --train file:DENSE.npy --test identity``, a random
    Wishart matrix, GNU time): d = 40 at --dps 20: 4.7 s; d = 80: 27.9 s (so about
    5.5e-5 d^3 s); d = 40 at --dps 60: 7.2 s (the cost grows about as sqrt(dps / 20)). Memory:
    under 100 MB at d = 80 (d^2 mpmath numbers, about 1 kB each with the work arrays)."""
    seconds = DENSE_SECONDS_PER_D3 * float(d) ** 3 * max(1.0, dps / 20) ** 0.5
    return Estimate(f"a solve with the dense {d} x {d} covariance of {option}", option,
                    seconds, 60e6 + 1000.0 * float(d) ** 2)
