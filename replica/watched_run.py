"""Running a user's Python file under watch: what it reads, how it ends, how long it may take.

A model file (``--model FILE``) is the user's own code, run like any script they run. Two things
about that run matter to the workbench:

* **What it reads.** Code generated from the file's declaration is cached on disk keyed on
  contents (:func:`replica.symbolic.codegen.cache_key`). A declaration built from a data file beside
  it or from an environment variable depends on those too. :func:`run_watched` records every file
  the run opens (through Python's ``open`` audit event, :pep:`578`) and every environment variable
  it looks up (``os.environ`` is replaced by a recording view for the duration of the run), so
  that their contents can enter the key.
* **How it ends.** A file that calls ``sys.exit``, raises ``KeyboardInterrupt`` or never finishes
  must not end or hang the command that loads it: each becomes a :class:`WatchedRunError` with one
  line saying what happened. So does a file that tries to end the process itself, past
  ``SystemExit`` -- ``os._exit``, ``os.abort``, a signal sent to its own process or process group
  (``os.kill(os.getpid(), ...)``, ``os.killpg``, ``signal.raise_signal``,
  ``signal.pthread_kill``): for the run these functions are replaced by stand-ins that raise
  instead (:func:`_process_kept`), and restored after it. The time limit is
  ``REPLICA_MODEL_LOAD_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`; ``0`` for none) of
  CPU time -- a file that computes on a loaded machine is not refused for the others' load -- or
  of waiting, enforced with an interval timer in the main thread (:func:`_time_limit`).
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import gc
import os
import signal
import sys
import threading
import time

DEFAULT_TIMEOUT = 120.0
"""Seconds a model file may take to run (``REPLICA_MODEL_LOAD_TIMEOUT`` overrides)."""


class WatchedRunError(Exception):
    """The watched file ended the run in a way a library call must not: the message says how."""


@dataclasses.dataclass
class Reads:
    """What a watched run read: the files it opened for reading (absolute paths, in order) and
    the environment variables it looked up (name -> value, ``None`` for unset)."""

    files: list = dataclasses.field(default_factory=list)
    environment: dict = dataclasses.field(default_factory=dict)


class _RecordingEnviron(collections.abc.MutableMapping):
    """``os.environ`` seen through a recorder: every key looked up is noted with its value."""

    def __init__(self, real, reads: Reads):
        self._real, self._reads = real, reads

    def _note(self, key):
        if isinstance(key, str):
            self._reads.environment.setdefault(key, self._real.get(key))

    def __getitem__(self, key):
        self._note(key)
        return self._real[key]

    def get(self, key, default=None):
        self._note(key)
        return self._real.get(key, default)

    def __contains__(self, key):
        self._note(key)
        return key in self._real

    def __setitem__(self, key, value):
        self._real[key] = value

    def __delitem__(self, key):
        del self._real[key]

    def __iter__(self):
        # a run that lists the whole environment may depend on any of it
        for key in self._real:
            self._note(key)
        return iter(self._real)

    def __len__(self):
        return len(self._real)

    def copy(self):
        return {k: self[k] for k in self}


_ACTIVE: list = []  # the Reads of the runs being watched (innermost last)
_HOOKED = False


def _audit(event, args):
    if event == "open" and _ACTIVE and args and isinstance(args[0], (str, bytes, os.PathLike)):
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        if "r" in mode or "+" in mode:
            path = os.path.abspath(os.fsdecode(args[0]))
            if path not in _ACTIVE[-1].files:
                _ACTIVE[-1].files.append(path)


def load_timeout() -> float:
    """The time limit of a model file's run, in seconds (0: none), from
    ``REPLICA_MODEL_LOAD_TIMEOUT``; a malformed value is an error naming the variable."""
    text = os.environ.get("REPLICA_MODEL_LOAD_TIMEOUT", "")
    if not text.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise WatchedRunError(f"REPLICA_MODEL_LOAD_TIMEOUT: expected a number of seconds >= 0, "
                              f"got {text!r}")
    return value


class _TimeLimit(BaseException):
    """Raised inside the watched run when its time is up (a BaseException, so that the user's
    ``except Exception`` does not swallow it)."""


IDLE_SHARE = 0.05
"""A run that got less than this share of one core since the last check of its time limit is
waiting (on a ``sleep``, a socket, a lock), not computing: stopped at that check."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Stop the run (raise :class:`_TimeLimit` in it) once it has used ``seconds`` of CPU time, or
    when, at a check, it used less than :data:`IDLE_SHARE` of the wall-clock time since the last
    check (waiting, not computing; the first check is after ``seconds``, the next ones when the
    CPU time left to it could have been used up). A run that computes on a loaded machine,
    getting a fraction of a core, is not stopped for the others' load: the wall-clock timer is
    re-armed for as long as the run keeps computing and its CPU time stays under the limit."""
    if not seconds or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    start = last = time.process_time()
    last_wall = time.monotonic()

    def expire(signum, frame):
        nonlocal last, last_wall
        now, now_wall = time.process_time(), time.monotonic()
        if now - start >= seconds or now - last < IDLE_SHARE * (now_wall - last_wall):
            raise _TimeLimit()
        last, last_wall = now, now_wall  # computing, slowed by the machine's load: wait on
        signal.setitimer(signal.ITIMER_REAL, max(seconds - (now - start), 0.5))

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _ProcessEnd(BaseException):
    """Raised in the watched run in place of ending the process (a BaseException, so that the
    user's ``except Exception`` does not swallow it); ``args[0]`` says which call."""


def _signal_text(sig) -> str:
    try:
        return signal.Signals(sig).name
    except (ValueError, TypeError):
        return repr(sig)


@contextlib.contextmanager
def _process_kept(attempts: list):
    """For the duration of the block, the calls that end this process without ``SystemExit``
    raise :class:`_ProcessEnd` instead, after noting the call in ``attempts``: ``os._exit``,
    ``os.abort`` (and the same functions of ``posix``), ``os.kill`` and ``os.killpg`` aimed at
    this process or its group, ``signal.raise_signal`` and ``signal.pthread_kill`` (signal 0,
    which only asks whether the target exists, passes). A process forked during the run (a
    ``multiprocessing`` worker) calls the real functions: it may end as it asks. The real
    functions are restored on leaving the block, also when it raises."""
    owner = os.getpid()

    def ends_us(name, args):
        if name in ("_exit", "abort", "raise_signal"):
            return True
        if name == "pthread_kill":
            return len(args) > 1 and args[1] != 0
        if len(args) < 2 or args[1] == 0:
            return False
        if name == "kill":
            return args[0] in (owner, 0) or args[0] == -os.getpgrp()
        return args[0] in (0, os.getpgrp())  # killpg

    def stand_in(module_name, name, real):
        def call(*args, **kwargs):
            if os.getpid() != owner or not ends_us(name, args):
                return real(*args, **kwargs)
            shown = [repr(a) for a in args]
            if name in ("kill", "killpg", "pthread_kill") and len(args) > 1:
                shown[1] = _signal_text(args[1])
            elif name == "raise_signal" and args:
                shown[0] = _signal_text(args[0])
            how = f"{module_name}.{name}({', '.join(shown)})"
            attempts.append(how)
            raise _ProcessEnd(how)
        return call

    targets = [(os, "os", ("_exit", "abort", "kill", "killpg")),
               (signal, "signal", ("raise_signal", "pthread_kill"))]
    if os.name == "posix":
        import posix
        targets.append((posix, "posix", ("_exit", "abort", "kill", "killpg")))
    replaced = []
    try:
        for module, module_name, names in targets:
            for name in names:
                real = getattr(module, name, None)
                if real is not None:
                    replaced.append((module, name, real))
                    setattr(module, name, stand_in(module_name, name, real))
        yield
    finally:
        for module, name, real in reversed(replaced):
            setattr(module, name, real)


_START_UP_PAUSE: list = []
"""``[True]`` while the ``replica`` process's start-up pause of the cyclic garbage collector
holds (:func:`pause_collector`)."""


def pause_collector() -> None:
    """Pause Python's cyclic garbage collector for the start-up of the ``replica`` process
    (``replica.cli.console`` calls it first): the modules imported then (SymPy's alone are
    some 10^5 objects) live as long as the process, and a collector left on examines each of
    them in every generation it passes through -- about 0.07 s of CPU time, several percent of
    a 30-digit point of a Gaussian-integral model, for garbage it does not find. The pause ends
    with :func:`resume_collector`, before any user code runs (:func:`run_watched`) and before a
    command computes (``replica.cli.main``). A collector already disabled is left alone."""
    if gc.isenabled() and not _START_UP_PAUSE:
        gc.disable()
        _START_UP_PAUSE.append(True)


def resume_collector() -> None:
    """End :func:`pause_collector`'s pause, if one holds: the objects made so far (the imported
    modules) are moved to the collector's permanent generation (``gc.freeze``: later
    collections, the full ones included, skip them), then the collector is on again, with its
    usual thresholds, for everything made after (a model file's objects, a solve's). Without a
    pause nothing changes."""
    if _START_UP_PAUSE:
        _START_UP_PAUSE.clear()
        gc.freeze()
        gc.enable()


def run_watched(path: str, run, *, timeout: float | None = None):
    """``run()`` (which runs the file ``path``), watched: returns ``(result, reads)``.

    ``SystemExit``, ``KeyboardInterrupt`` raised by the file, an attempt to end the process
    (:func:`_process_kept`; even one the file caught) and a run longer than ``timeout`` seconds
    (default :func:`load_timeout`) raise :class:`WatchedRunError`; other exceptions propagate
    unchanged. The start-up pause of the garbage collector ends first
    (:func:`resume_collector`): the file is the user's code, run with the collector on."""
    global _HOOKED
    resume_collector()
    seconds = load_timeout() if timeout is None else timeout
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    reads = Reads()
    real_environ = os.environ
    _ACTIVE.append(reads)
    os.environ = _RecordingEnviron(real_environ, reads)
    ended = []  # the calls by which the run tried to end the process
    try:
        with _time_limit(seconds), _process_kept(ended):
            try:
                result = run()
            except BaseException:
                if not ended:
                    raise
            if ended:
                raise _ProcessEnd(ended[0])
    except _ProcessEnd as exc:
        raise WatchedRunError(f"{path}: the model file tried to end the process with "
                              f"{exc.args[0]} while loading (a model file declares a model; it "
                              "must not exit)") from None
    except SystemExit as exc:
        raise WatchedRunError(f"{path}: the model file called sys.exit({exc.code!r}) while "
                              "loading (a model file declares a model; it must not exit)") from None
    except KeyboardInterrupt:
        raise WatchedRunError(f"{path}: interrupted while loading (KeyboardInterrupt)") from None
    except _TimeLimit:
        raise WatchedRunError(f"{path}: the model file ran for more than {seconds:g} s while "
                              "loading (of CPU time, or idle; set REPLICA_MODEL_LOAD_TIMEOUT=SECONDS to allow more, 0 "
                              "for no limit)") from None
    finally:
        os.environ = real_environ
        _ACTIVE.remove(reads)
    return result, reads
