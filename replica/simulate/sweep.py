"""Parameter sweeps: grids of (parameters x d x seeds), cached on disk, run locally or on Dask.

A sweep is a list of :class:`Job` s. A ``simulate`` job is one seed of one finite-size experiment
(:func:`replica.simulate.run_seed`, or for a model file's declared
:class:`~replica.capabilities.Simulation` :func:`replica.simulate.declared.run_declared_seed`); a
``theory`` job is one solve of the model's equations. Every
finished job is written at once to the cache, one JSON file per job, named by the SHA-256 of its
key: model, kind, the exact parameter strings (canonical: ``0.3`` and ``3/10`` are one key), ``d``
(simulations, and the theory of a model whose spectrum depends on ``d``), the base seed and seed
index, ``dps`` (theory), the simulation options, the bytes of every ``file:`` covariance it names,
for a model file the bytes of the file and of every input its loader recorded
(:meth:`~replica.simulate.source.ModelSource.digests`), and the code version (package version plus a hash of every source file of the package). Numbers are stored as decimal strings. Files are written
atomically (temporary file + rename), so a sweep that is killed leaves only complete entries, and
running it again computes only the missing jobs.

Seed ``i`` of a point with base seed ``S`` is ``SeedSequence(S).spawn(N)[i]``, as in
``replica simulate``: a sweep and a single simulation agree seed by seed.

Executors: ``serial`` (in this process), ``process`` (local processes,
:class:`concurrent.futures.ProcessPoolExecutor`, the default) and ``dask``
(:mod:`dask.distributed`, given a scheduler address or a ``Client``). Results always come back to
this process, which alone writes the cache, so workers need no shared file system; a worker
reloads a model file by its path (so the file must be readable there).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from ..errors import ParameterError
from ..params import INF, exact_str, numeric_columns
from ..progress import Progress
from ..version import __version__

@dataclasses.dataclass(frozen=True)
class Job:
    """One unit of work. ``params`` is a tuple of ``(name, exact string)`` pairs."""

    kind: str  # "simulate" or "theory"
    model: str
    params: tuple
    d: int | None = None
    seed: int | None = None
    index: int | None = None
    dps: int | None = None
    options: tuple = ()
    path: str | None = None  # a model file (absolute path); None: a built-in model

    @property
    def source(self):
        """The :class:`~replica.simulate.source.ModelSource` of the job's model."""
        from .source import ModelSource

        return ModelSource(self.model, self.path)

    def point(self) -> tuple:
        """The parameter point (with ``d`` for simulations), shared by its seeds."""
        return (self.model, self.params, self.d, self.options)

    def key(self) -> dict:
        """What the job's result depends on: its parameters, sizes, seed and options, the
        contents of every ``file:`` input they name (:func:`input_digests`) and the code."""
        key = {"kind": self.kind, "model": self.model, "params": dict(self.params), "d": self.d,
               "seed": self.seed, "index": self.index, "dps": self.dps,
               "options": dict(self.options),
               "inputs": input_digests(dict(self.params) | dict(self.options)),
               "code": code_version(self.kind)}
        if self.path is not None:
            key["model_file"] = self.source.digests()
        return key

    def digest(self) -> str:
        text = json.dumps(self.key(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def code_version(kind: str) -> str:
    """``replica`` version plus a hash of every source file of the package
    (:func:`~replica.symbolic.codegen.package_digest`): the closure of what a job of any ``kind``
    runs, so that no change to the code that computed a cached result goes unnoticed."""
    from ..symbolic.codegen import package_digest

    return f"{__version__}+{package_digest()[:16]}"


def input_digests(values: dict) -> dict:
    """``{SPEC: SHA-256 of the file's bytes}`` for every value that is a ``file:PATH`` (or
    ``file:PATH:raw``) SPEC: a sweep's cached rows are keyed on the file's contents, not on its
    name, so changing the file recomputes them. The file is hashed each time a key is taken (a
    modification time can miss a rewrite within the clock's granularity; a 300 x 300 matrix
    hashes in about a millisecond)."""
    from ..symbolic.codegen import file_digest

    found = {}
    for value in values.values():
        if isinstance(value, str) and value.startswith("file:"):
            path = value[len("file:"):]
            found[value] = file_digest(path[: -len(":raw")] if path.endswith(":raw") else path)
    return found


# ---------------------------------------------------------------------------------------------
# Building jobs
# ---------------------------------------------------------------------------------------------
def expand_grid(values: dict) -> list[dict]:
    """Cartesian product of ``{name: [v1, v2, ...]}`` (a scalar counts as a one-element list),
    in the order of the dict: ``[{name: v, ...}, ...]``."""
    names = list(values)
    lists = [v if isinstance(v, (list, tuple)) else [v] for v in values.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def split_list(text, name: str) -> list[str]:
    """``"1,2,3/10"`` -> ``["1", "2", "3/10"]`` (one-line error on an empty item)."""
    items = [t.strip() for t in str(text).split(",")]
    if not items or any(not t for t in items):
        raise ParameterError(name, f"empty item in the list {text!r}")
    return items


def _canonical(source, d, options: dict, params: dict, simulated: bool = True):
    """Validate one point and return ``(experiment-or-None, exact echo)``; the sizes (and the
    memory a seed needs) are checked where the point is ``simulated`` at a given ``d``."""
    from . import make_experiment

    dd = d if d is not None else 64  # a d-free theory: any d validates the params
    exp = make_experiment(source, dd, check_sizes=d is not None,
                          check_memory=d is not None and simulated, **options, **params)
    return exp, tuple(exp.echo().items()), tuple(sorted(exp.options().items()))


def _is_icl(source) -> bool:
    from ..capabilities import LinearAttentionICL

    return isinstance(source.simulation, LinearAttentionICL)


def make_jobs(model, points: list[dict], ds=None, seeds: int = 0, seed: int = 0,
              dps: int = 20, with_theory: bool = True, options: dict | None = None) -> list[Job]:
    """Jobs for every point: ``seeds`` simulation seeds at each ``d`` in ``ds`` and (if
    ``with_theory``) one theory solve per point (per ``d`` where the theory depends on it).
    ``model``: a built-in model's name, a registry entry or a
    :class:`~replica.simulate.source.ModelSource`."""
    from .source import as_source

    source = as_source(model)
    options = dict(options or {})
    ds = list(ds or [])
    if seeds and not ds:
        raise ParameterError("--d", "a simulation sweep needs --d or --ds")
    if not _is_icl(source):
        return _declared_jobs(source, points, ds, seeds, seed, dps, with_theory, options)
    if source.simulation.theory_at_d and not ds:
        raise ParameterError("--d", f"the {source.name} model needs --d or --ds (covariance "
                                    "size)")
    jobs: list[Job] = []
    seen: set = set()
    for p in points:
        for d in (ds or [None]):
            _, echo, opt_items = _canonical(source, d, options, p, simulated=bool(seeds))
            if seeds:
                jobs.extend(Job("simulate", source.name, echo, d, seed, i, None, opt_items,
                                source.path) for i in range(seeds))
            if with_theory:
                td = d if source.simulation.theory_at_d else None
                job = Job("theory", source.name, echo, td, dps=dps, path=source.path)
                if job not in seen:
                    seen.add(job)
                    jobs.append(job)
    return jobs


def _declared_jobs(source, points, ds, seeds, seed, dps, with_theory, options) -> list[Job]:
    """The jobs of a model whose simulation is a declared sample/train/measure (or that declares
    none: theory only). A point's parameters are its full exact echo (``d`` included where the
    model has that parameter: it is then the simulated dimension)."""
    from .declared import declared_simulation, parse_d, point

    if options:
        raise ParameterError("--" + sorted(options)[0].replace("_", "-"),
                             f"is an option of linear attention, not of {source.label}")
    if seeds:
        declared_simulation(source)  # the one-line error naming what to declare
    d_dependent = "d" in source.schema
    jobs: list[Job] = []
    seen: set = set()
    for p in points:
        for d in (ds or [None]):
            if d is not None:
                d = parse_d(d)
                echo = tuple(point(source, d, p).echo().items())
            else:
                echo = tuple(source.schema.parse(p).echo().items())
            if seeds:
                jobs.extend(Job("simulate", source.name, echo, d, seed, i, None, (),
                                source.path) for i in range(seeds))
            if with_theory:
                job = Job("theory", source.name, echo, d if d_dependent else None, dps=dps,
                          path=source.path)
                if job not in seen:
                    seen.add(job)
                    jobs.append(job)
    return jobs


# ---------------------------------------------------------------------------------------------
# Computing one job (runs in workers: module-level, picklable)
# ---------------------------------------------------------------------------------------------
def compute_job(job: Job) -> dict:
    """Run one job; the result holds only decimal strings (and ``None``)."""
    from . import experiment

    params = dict(job.params)
    if not _is_icl(job.source):
        return _compute_declared(job, params)
    if job.kind == "simulate":
        import numpy as np

        exp = experiment.make_experiment(job.source, job.d, **dict(job.options), **params)
        ss = np.random.SeedSequence(job.seed, spawn_key=(job.index,))
        out = experiment.run_seed(exp, ss)
        res = {"errors": {k: repr(v) for k, v in out["errors"].items()},
               "ridge": {"method": out["ridge"]["method"], "factor": out["ridge"]["factor"]}}
        if "order_parameters" in out:
            res["order_parameters"] = {k: repr(v) for k, v in out["order_parameters"].items()}
        return res
    d = job.d if job.d is not None else 64
    exp = experiment.make_experiment(job.source, d, check_sizes=False, **params)
    solved = experiment.theory_result(exp, job.dps)
    if solved is None:
        return {"errors": None}
    data = solved.to_json_dict()
    res = {"errors": data["errors"], "digits": data["digits"]}
    if "order_parameters" in data:
        res["order_parameters"] = data["order_parameters"]
    return res


def _compute_declared(job: Job, params: dict) -> dict:
    """A job of a model file: one seed of its declared simulation (``{"errors": {name:
    decimal}}``), or one verified solve (``{"status", "digits", "values": {name: decimal}}``,
    every value the model reports to its verified digits; ``None`` where the solve failed)."""
    from ..errors import ConvergenceError
    from ..numerics.result import decimal_string
    from .declared import run_declared_seed, solve_theory

    source = job.source
    parsed = source.schema.parse(params)
    if job.kind == "simulate":
        import numpy as np

        ss = np.random.SeedSequence(job.seed, spawn_key=(job.index,))
        out = run_declared_seed(source, job.d, parsed, ss)
        return {"errors": {k: repr(v) for k, v in out["errors"].items()}}
    names = source.problem.report_names()
    try:
        res = solve_theory(source, parsed, job.dps)
    except ConvergenceError as exc:
        return {"status": exc.status, "digits": 0, "values": {n: None for n in names}}
    digits = max(res.digits or 0, 1)
    return {"status": res.status.value, "digits": res.digits or 0,
            "values": {n: decimal_string(res.all_values.get(n), digits) for n in names}}


# ---------------------------------------------------------------------------------------------
# Cache
# ---------------------------------------------------------------------------------------------
class Cache:
    """One JSON file per finished job under ``root/<model>/<kind>/<2 hex>/<sha256>.json``."""

    def __init__(self, root):
        self.root = Path(root)

    def path(self, job: Job) -> Path:
        h = job.digest()
        return self.root / job.model / job.kind / h[:2] / f"{h}.json"

    def get(self, job: Job):
        path = self.path(job)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if data.get("key") != json.loads(json.dumps(job.key())):
            return None
        return data.get("result")

    def put(self, job: Job, result: dict):
        path = self.path(job)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump({"key": job.key(), "result": result}, fh, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def count(self) -> int:
        """Finished entries; a ``.tmp-*`` file left by a process killed mid-write is not one."""
        if not self.root.exists():
            return 0
        return sum(1 for p in self.root.rglob("*.json") if not p.name.startswith(".tmp-"))


# ---------------------------------------------------------------------------------------------
# Executors
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _blas_threads(n: int):
    """Set the BLAS/OpenMP thread variables while worker processes are started (they read them
    at import), so that ``workers`` processes do not oversubscribe the cores."""
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    old = {k: os.environ.get(k) for k in names}
    for k in names:
        os.environ[k] = str(n)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_serial(jobs):
    for job in jobs:
        yield job, compute_job(job)


def _die_with_parent(parent_pid: int):
    """Pool-worker initializer: the worker ends when the process that started it does, even if
    that one is killed (SIGKILL gives it no chance to shut the pool down). On Linux the kernel
    sends the worker SIGKILL when its parent dies (``PR_SET_PDEATHSIG``); everywhere, a daemon
    thread also watches the parent's pid and exits the worker once the parent is gone. With the
    workers gone, multiprocessing's resource tracker sees its last client leave and exits too,
    unlinking any semaphore left behind."""
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass
    if os.getppid() != parent_pid:  # the parent died before the initializer ran
        os._exit(1)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="replica-parent-watch").start()


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While a pool runs in the main thread, a plain ``kill PID`` (SIGTERM) ends the sweep as
    Ctrl-C does -- the pool is shut down, its workers and semaphores released -- instead of
    killing the parent alone."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _run_processes(jobs, workers: int):
    import concurrent.futures as cf
    import multiprocessing

    workers = max(1, min(workers, len(jobs)))
    threads = max(1, (os.cpu_count() or 1) // workers)
    with _terminate_as_interrupt():
        with _blas_threads(threads):
            pool = cf.ProcessPoolExecutor(max_workers=workers,
                                          mp_context=multiprocessing.get_context("spawn"),
                                          initializer=_die_with_parent,
                                          initargs=(os.getpid(),))
            futures = {pool.submit(compute_job, job): job for job in jobs}
        try:
            for fut in cf.as_completed(futures):
                yield futures[fut], fut.result()
        except BaseException:  # interrupted or a job failed: do not wait for running jobs
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


CONNECT_TIMEOUT = 3.0
"""Seconds a scheduler gets to accept the connection and answer Dask's handshake."""


def parse_scheduler_address(text, option: str = "--scheduler") -> str:
    """``tcp://HOST:PORT`` from ``tcp://HOST:PORT`` or ``HOST:PORT``; anything else (an empty
    string, another scheme such as ``http://``, ``tls://`` -- which needs certificates -- or
    ``inproc://``, a missing or non-numeric port) is a :class:`ParameterError`."""
    raw = str(text).strip()
    if not raw:
        raise ParameterError(option, "is empty; expected tcp://HOST:PORT")
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "tcp", raw
    if scheme.lower() != "tcp":
        raise ParameterError(option, f"{raw!r}: only tcp://HOST:PORT scheduler addresses are "
                                     f"supported, not {scheme}://")
    host, colon, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not colon or not host or "/" in host or " " in host:
        raise ParameterError(option, f"{raw!r} is not an address; expected tcp://HOST:PORT")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ParameterError(option, f"{raw!r}: the port must be a number in 1..65535")
    return f"tcp://{rest.rstrip('/')}"


def _reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Open (and close) a TCP connection to ``tcp://HOST:PORT`` within ``timeout`` seconds, so
    that a refused port or an unroutable host fails at once, with one line."""
    import socket

    host, _, port = address[len("tcp://"):].rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ParameterError("--scheduler", f"cannot connect to {address}: "
                                            f"{exc.strerror or exc}") from None


def _connect(distributed, address: str, timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client`` for ``address``, or :class:`ParameterError` within about
    ``timeout`` seconds: a server that accepts the connection but does not speak Dask's protocol
    (an HTTP server) would otherwise hang the handshake, so the client is made in a helper thread
    and abandoned when it does not answer in time."""
    import threading

    _reachable(address, timeout)
    box: dict = {}

    def make():
        try:
            box["client"] = distributed.Client(address, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - reported below
            box["error"] = exc

    t = threading.Thread(target=make, daemon=True, name="replica-dask-connect")
    t.start()
    t.join(timeout + 3)
    if "client" in box:
        return box["client"]
    why = box.get("error")
    raise ParameterError("--scheduler", f"cannot reach a Dask scheduler at {address}: "
                                        + (f"{type(why).__name__}: {why}".split("\n")[0][:200]
                                           if why is not None else
                                           f"no Dask handshake within {timeout + 3:g} s"))


def _run_dask(jobs, scheduler):
    try:
        import distributed
    except ImportError:
        raise ParameterError("--scheduler", "Dask is not installed: pip install "
                                            "'replica[cluster]'") from None
    if hasattr(scheduler, "scheduler_address"):  # a LocalCluster or another cluster object
        scheduler = scheduler.scheduler_address
    own = not isinstance(scheduler, distributed.Client)
    if own:
        client = _connect(distributed, parse_scheduler_address(scheduler))
    else:
        client = scheduler
    futures = []
    try:
        futures = [client.submit(compute_job, job, pure=False, key=f"replica-{job.digest()}")
                   for job in jobs]
        index = {f.key: job for f, job in zip(futures, jobs)}
        for fut in distributed.as_completed(futures):
            yield index[fut.key], fut.result()
    finally:
        for f in futures:
            f.cancel()
        if own:
            client.close()


@dataclasses.dataclass
class SweepRun:
    """Outcome of :func:`run_jobs`: the result of every job, and how many were computed now."""

    results: dict  # Job -> result dict
    computed: int
    cached: int
    seconds: float


def run_jobs(jobs: list[Job], cache_dir=None, executor: str = "process", workers: int | None = None,
             scheduler=None, progress: bool = True, stream=None) -> SweepRun:
    """Run ``jobs``, skipping those found in the cache at ``cache_dir`` and caching each finished
    one at once. ``executor``: ``serial``, ``process`` or ``dask`` (``scheduler``: an address such
    as ``tcp://127.0.0.1:8786`` or a ``distributed.Client``). A failing job stops the sweep (the
    others are cancelled) and its exception propagates; finished jobs stay cached."""
    t0 = time.monotonic()
    cache = Cache(cache_dir) if cache_dir is not None else None
    jobs = list(dict.fromkeys(jobs))
    results = {}
    todo = []
    for job in jobs:
        hit = cache.get(job) if cache is not None else None
        if hit is not None:
            results[job] = hit
        else:
            todo.append(job)
    bar = Progress("sweep", len(jobs), "job", stream, progress and bool(jobs),
                   initial=len(results))
    if results:
        bar.note = f"{len(results)} cached"
    if todo:
        if executor == "dask" or scheduler is not None:
            stream_ = _run_dask(todo, scheduler)
        elif executor == "process" and (workers or os.cpu_count() or 1) > 1 and len(todo) > 1:
            stream_ = _run_processes(todo, workers or os.cpu_count() or 1)
        elif executor in ("serial", "process"):
            stream_ = _run_serial(todo)
        else:
            raise ParameterError("--executor", f"unknown executor {executor!r}")
        try:
            for job, res in stream_:
                results[job] = res
                if cache is not None:
                    cache.put(job, res)
                bar.update()
        finally:
            bar.close()
    else:
        bar.close()
    return SweepRun(results, len(todo), len(jobs) - len(todo), time.monotonic() - t0)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------
def summarise(model, jobs: list[Job], run: SweepRun) -> tuple:
    """Group a finished sweep into :class:`replica.simulate.SimulationResult` s (one per point and
    ``d``, with the theory attached) and theory-only rows; returns ``(simulations, theories)``
    where ``theories`` maps ``(params, d)`` to the theory result dict."""
    from . import aggregate, make_experiment

    theories = {}
    groups: dict = {}
    for job in jobs:
        res = run.results[job]
        if job.kind == "theory":
            theories[(job.params, job.d)] = res
        else:
            groups.setdefault(job.point() + (job.seed, job.path), []).append((job.index, res))
    dps = next((j.dps for j in jobs if j.kind == "theory"), None)
    sims = []
    for (mdl, params, d, options, seed, path), items in groups.items():
        items.sort(key=lambda t: t[0])
        per_seed = [{g: {k: float(v) for k, v in r[g].items()}
                     for g in ("errors", "order_parameters") if g in r} for _, r in items]
        source = Job("simulate", mdl, params, d, path=path).source
        if not _is_icl(source):
            sims.append(_summarise_declared(source, params, d, seed, per_seed, theories, dps))
            continue
        th = theories.get((params, d if source.simulation.theory_at_d else None))
        th_f = None
        if th is not None and th.get("errors") is not None:
            th_f = {g: {k: float(v) for k, v in th[g].items() if v is not None}
                    for g in ("errors", "order_parameters") if g in th}
        exp = make_experiment(source, d, **dict(options), **dict(params))
        sims.append(aggregate(exp, per_seed, th_f, seed, dps if th_f else None))
    return sims, theories


def _summarise_declared(source, params, d, seed, per_seed, theories, dps):
    from .declared import result

    parsed = source.schema.parse(dict(params))
    th = theories.get((params, d if "d" in source.schema else None))
    theory = None
    if th is not None and th.get("values") is not None:
        values = th["values"]
        theory = {}
        for key in per_seed[0]["errors"]:
            name = key if key in values else key.rpartition(".")[2]
            if values.get(name) is not None:
                theory[key] = float(values[name])
    return result(source, parsed, d, seed, per_seed, theory, dps if theory else None)


def write_csv(path, model, jobs: list[Job], run: SweepRun):
    """Write the sweep as CSV (the rows of :func:`sweep_table`); returns the number of rows."""
    table = sweep_table(model, jobs, run)
    path = Path(path)
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    table.write_csv(path)
    return len(table.rows)


def sweep_table(model, jobs: list[Job], run: SweepRun):
    """The sweep as a :class:`replica.tables.Table` (``.to_pandas()``, ``.to_xarray()``): one
    row per simulated point and ``d`` (``<key>_mean``, ``_sem``, ``_theory``, ``_z`` for every
    error and declared order parameter), or one row per theory point when no simulation was
    asked for (decimal strings at the solve's precision; a model file's theory rows are those
    of :func:`replica.analysis.scan.sweep_table`: status, verified digits and every reported
    value). Every numeric parameter is a float column ``NAME`` and an exact column
    ``NAME_exact`` (``9/4``); a covariance SPEC is one text column."""
    from ..tables import Table
    from .source import as_source

    source = as_source(model)
    name = source.name
    sims, theories = summarise(source, jobs, run)
    icl = _is_icl(source)
    if not sims and not icl:
        from ..analysis.scan import sweep_table as theory_table

        rows = [{"params": dict(params), **res} for (params, _), res in theories.items()]
        return theory_table(source.problem, rows)
    names = [n for n, _ in jobs[0].params] if jobs else []
    if not icl:
        names = [n for n in names if n != "d"]  # the simulated dimension is the column d
    rows, points = [], []
    at_d = icl and source.simulation.theory_at_d
    if sims:
        keys = list(sims[0].errors) + list(sims[0].order_parameters)
        tail = ["d", "seed", "seeds"] + \
            [f"{k}_{s}" for k in keys for s in ("mean", "sem", "theory", "z")]
        for r in sims:
            est = dict(r.errors)
            est.update(r.order_parameters)
            points.append(r.params)
            row = [r.d, r.seed, len(r.per_seed)]
            for k in keys:
                e = est[k].to_json_dict()
                row += [e["mean"], e["sem"], e["theory"], e["z"]]
            rows.append(row)
    else:
        sim = source.simulation
        keys = list(sim.error_keys) + list(sim.order_parameters)
        tail = (["d"] if at_d else []) + keys
        for (params, d), th in theories.items():
            vals = dict(th.get("errors") or {})
            vals.update(th.get("order_parameters") or {})
            points.append(dict(params))
            rows.append(([d] if at_d else []) + [vals.get(k) for k in keys])
    # each numeric parameter as a float column and its exact string in NAME_exact
    header, param_cells = ["model"], [[name] * len(rows)]
    for n in names:
        h, cols = numeric_columns(n, [p[n] for p in points])
        header += h
        param_cells += cols
    header += tail
    rows = [[col[i] for col in param_cells] + row for i, row in enumerate(rows)]
    dims = names + (["d"] if sims or at_d else [])
    return Table(header, rows, dims, {"model": name})


def linspace_exact(lo, hi, num: int) -> list[str]:
    """``num`` equally spaced exact values from ``lo`` to ``hi`` as exact strings."""
    a, b = Fraction(lo), Fraction(hi)
    if num < 2:
        return [exact_str(a)]
    return [exact_str(a + (b - a) * i / (num - 1)) for i in range(num)]


def is_finite_value(text) -> bool:
    return str(text).strip().lower() not in (INF, "+inf", "infinity", "oo")
