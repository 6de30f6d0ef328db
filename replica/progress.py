"""Progress of long runs, on standard error.

One mechanism for every command that can run longer than a couple of seconds (appendices,
expansions, sweeps, simulations over seeds, phase-diagram grids, located transitions):

* on a terminal, a ``tqdm`` bar redrawn in place, with the rate and the estimated time left
  (ETA) when the total is known;
* otherwise (a log file, a pipe, a CI job), a plain line -- ``LABEL: 3/10 steps (30%), 12.4 s
  elapsed, about 29 s left`` -- at most every :data:`EVERY` seconds and once at the end, and
  never a carriage return; a heartbeat repeats the line while one step runs long.

Nothing is shown for a run that ends within :data:`AFTER` seconds. The environment sets both
(``REPLICA_PROGRESS_AFTER``, ``REPLICA_PROGRESS_EVERY``, in seconds); ``REPLICA_QUIET=1`` or
the command line's ``--quiet`` turn progress off.

Library functions take a ``progress`` callback ``report(done, total)`` (or ``None``) and never
print; the commands build it with :func:`callback`. Code deep inside a computation can also
advance the innermost open :class:`Progress` with :func:`tick`, without a callback through every
signature.
"""

from __future__ import annotations

import os
import sys
import threading
import time

AFTER = 2.0
"""Seconds a run must last before any progress is shown (``REPLICA_PROGRESS_AFTER``)."""

EVERY = 5.0
"""Seconds between two plain lines when standard error is not a terminal
(``REPLICA_PROGRESS_EVERY``)."""

_QUIET = [False]
_OPEN: list = []  # the open Progress objects, innermost last (for tick)


def set_quiet(quiet: bool = True) -> None:
    """Turn progress output off (the ``--quiet`` option) or back on."""
    _QUIET[0] = bool(quiet)


def quiet() -> bool:
    """Whether progress is off (``--quiet`` or ``REPLICA_QUIET`` set to anything but 0/empty)."""
    return _QUIET[0] or os.environ.get("REPLICA_QUIET", "") not in ("", "0")


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if value >= 0 else default


def _duration(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


class Progress:
    """Progress of one run of ``total`` units (``None``: unknown) on ``stream`` (stderr).

    Use as a context manager; ``update`` advances by ``n`` units, ``set`` to an
    absolute count; ``note`` says what is being done. ``enabled=False`` (or :func:`quiet`)
    shows nothing."""

    def __init__(self, label: str, total: int | None = None, unit: str = "step", stream=None,
                 enabled: bool = True, initial: int = 0, started: float | None = None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and not quiet()
        self.done = initial
        self.note = ""
        self.closed = False
        self.after = _seconds("REPLICA_PROGRESS_AFTER", AFTER)
        self.every = _seconds("REPLICA_PROGRESS_EVERY", EVERY)
        self.t0 = time.monotonic() if started is None else started  # time.monotonic() based
        self._rate_t0, self._rate_done0 = self.t0, initial
        self._last_line = None  # time of the last plain line (None: none yet)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bar = None
        self._thread = None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if not self.enabled:
            return
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=label, unit=f" {unit}s",
                             file=self.stream, delay=self.after, leave=True,
                             dynamic_ncols=True)
        else:
            self._thread = threading.Thread(target=self._heartbeat, daemon=True)
            self._thread.start()

    # -- plain lines ---------------------------------------------------------------------------
    def line(self) -> str:
        """The plain progress line for the current state."""
        elapsed = time.monotonic() - self.t0
        units = f"{self.unit}s" if self.total != 1 else self.unit
        if self.total:
            text = (f"{self.label}: {self.done}/{self.total} {units} "
                    f"({100 * self.done // self.total}%), {_duration(elapsed)} elapsed")
            counted = self.done - self._rate_done0
            if counted > 0 and self.done < self.total:
                # the rate since the total became known (a preparation before it does not count)
                left = (time.monotonic() - self._rate_t0) * (self.total - self.done) / counted
                text += f", about {_duration(left)} left"
        elif self.done:
            text = f"{self.label}: {self.done} {units}, {_duration(elapsed)} elapsed"
        else:
            text = f"{self.label}: {_duration(elapsed)} elapsed"
        return text + (f" ({self.note})" if self.note else "")

    def _emit(self, force: bool = False) -> None:
        now = time.monotonic()
        if now - self.t0 < self.after and not (force and self._last_line is not None):
            return
        if not force and self._last_line is not None and now - self._last_line < self.every:
            return
        self._last_line = now
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def _heartbeat(self) -> None:
        while not self._stop.wait(max(min(self.every, 1.0), 0.05)):
            with self._lock:
                self._emit()

    # -- the interface -------------------------------------------------------------------------
    def set_total(self, total: int | None) -> None:
        """Change the total (e.g. once a preparation has found how many steps follow); the
        ETA counts from here."""
        if total == self.total:
            return
        with self._lock:
            self.total = total
            self._rate_t0, self._rate_done0 = time.monotonic(), self.done
            if self._bar is not None:
                self._bar.total = total
                self._bar.refresh()

    def update(self, n: int = 1, note: str | None = None) -> None:
        self.set(self.done + n, note)

    def set(self, done: int, note: str | None = None) -> None:
        if not self.enabled:
            self.done = done
            return
        with self._lock:
            step = done - self.done
            self.done = done
            if note is not None:
                self.note = note
            if self._bar is not None:
                if note is not None:
                    self._bar.set_postfix_str(note, refresh=False)
                self._bar.update(step)
            else:
                self._emit()

    def close(self) -> None:
        """End the run: a terminal bar stays as its last state; off a terminal a final line
        is written if the run was shown at all (it lasted :data:`AFTER` seconds)."""
        if self.closed:
            return
        self.closed = True
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            elif self._last_line is not None or time.monotonic() - self.t0 >= self.after:
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def __enter__(self) -> "Progress":
        _OPEN.append(self)
        return self

    def __exit__(self, *exc) -> None:
        if self in _OPEN:
            _OPEN.remove(self)
        self.close()


def callback(label: str, unit: str = "step", stream=None, enabled: bool = True):
    """A ``report(done, total, note=None)`` callback for the library's ``progress=``
    parameters: it opens a :class:`Progress` at its first call (timed from the creation of the
    callback, so the work before the first report counts) and closes it when
    ``done == total``; a later call opens a new one."""
    state: dict = {"started": time.monotonic()}

    def report(done: int, total: int | None = None, note: str | None = None) -> None:
        bar = state.get("bar")
        if bar is None or bar.closed:
            bar = state["bar"] = Progress(label, total, unit, stream, enabled,
                                          started=state["started"])
        if total is not None:
            bar.set_total(total)
        bar.set(done, note)
        if total is not None and done >= total:
            bar.close()

    return report


def tick(n: int = 1, note: str | None = None) -> None:
    """Advance the innermost open :class:`Progress` (opened with ``with``) by ``n``; nothing if
    none is open."""
    if _OPEN:
        _OPEN[-1].update(n, note)
