"""The ``replica`` command line (its options and JSON output are documented in the README).

Exit status: 0 success; 2 bad input (one line naming the parameter); 3 a solve that did not
converge (one line saying what was tried); 1 an internal error (one line; set ``REPLICA_DEBUG=1``
for the traceback); 141 (128 + SIGPIPE, what a shell reports for ``yes | head -1``) when standard
output was closed before everything was written (``replica ... | head -1``): quietly, no message.
"""

from __future__ import annotations

import importlib
import os
import sys

from .commands.common import OneLineParser
from .commands.phase_diagram import route_builtin_plane
from .errors import ReplicaError
from .registry import forget_model_file, route_model_file
from .watched_run import pause_collector, resume_collector

#: Sub-command modules, each with ``register(subparsers)``; add new commands here.
COMMAND_MODULES = [
    "replica.commands.solve",
    "replica.commands.equations",
    "replica.commands.transition",
    "replica.commands.phase_diagram",
    "replica.commands.expand",
    "replica.commands.appendix",
    "replica.commands.simulate",
    "replica.commands.sweep",
    "replica.commands.check",
]


def build_parser(command: str | None = None) -> OneLineParser:
    """The ``replica`` parser. With ``command`` (the command word of the line) only that
    command's parsers are built -- one per model of the registry, which costs the imports of
    their declarations -- and every other command is listed by its one-line ``HELP``."""
    parser = OneLineParser(prog="replica",
                           description="Workbench for the replica and random-matrix theory of "
                                       "in-context learning by linear attention.")
    from .version import __version__

    parser.add_argument("--version", action="version", version=f"replica {__version__}")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress output on stderr (also accepted after the command; "
                             "or set REPLICA_QUIET=1)")
    parser.add_argument("--force-large", action="store_true",
                        help="run what the up-front estimate of time, memory and disk would "
                             "refuse (also accepted after the command)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=OneLineParser)
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        word = name.rsplit(".", 1)[1].replace("_", "-")
        if command is None or command == word:
            module.register(sub)
        else:
            sub.add_parser(word, help=module.HELP)
    return parser


def _stdout_closed() -> int:
    """The reader of standard output has gone (``| head``): point stdout at ``/dev/null`` so that
    nothing more (nor the interpreter's final flush) fails, and return 141, as for SIGPIPE (the
    Python documentation's recipe for ``BrokenPipeError``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind sys.stdout
        pass
    return 141


#: Flags accepted anywhere on the line, each with the module and function that switches it:
#: ``--force-large`` runs what the up-front estimates would refuse; ``--quiet`` (like
#: ``REPLICA_QUIET=1``) silences progress output.
GLOBAL_FLAGS = {"--force-large": ("replica.estimates", "set_force_large"),
                "--quiet": ("replica.progress", "set_quiet")}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for flag, (module, setter) in GLOBAL_FLAGS.items():
        if flag in argv:
            switch = getattr(importlib.import_module(module), setter)
            switch(True)
            try:
                return main([a for a in argv if a != flag])
            finally:
                switch(False)
    try:
        argv = route_model_file(route_builtin_plane(argv))
        command = next((t for t in argv if not t.startswith("-")), None)
        args = build_parser(command).parse_args(argv)
        resume_collector()  # (console's start-up pause ends before the command computes)
        status = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's final flush
        return status
    except BrokenPipeError:
        return _stdout_closed()
    except ReplicaError as exc:
        sys.stderr.write(f"replica: error: {exc}\n")
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_closed()
        return exc.exit_status
    except KeyboardInterrupt:
        sys.stderr.write("replica: interrupted\n")
        return 130
    except MemoryError:  # a run larger than the machine, e.g. one let through by --force-large
        sys.stderr.write("replica: error: out of memory: the run needs more memory than this "
                         "machine has (the up-front estimate refuses such runs unless "
                         "--force-large is given)\n")
        return 2
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get("REPLICA_DEBUG"):
            raise
        sys.stderr.write(f"replica: internal error: {type(exc).__name__}: {exc} "
                         "(set REPLICA_DEBUG=1 for a traceback)\n")
        return 1
    finally:
        forget_model_file()  # a later parser in this process (tests, docs) offers no stale file


def exit_now(status) -> None:
    """End the process with ``status`` (as ``sys.exit`` reads it: ``None`` is 0, an integer
    itself, anything else printed to stderr and 1) without the interpreter's teardown: the
    standard streams flushed and the ``atexit`` functions run (the remembered quadrature levels,
    logging, temporary files, worker pools), then ``os._exit``. Tearing down the modules of a
    solve (SymPy's among them) costs about 0.1 s of CPU time, a tenth of a 30-digit point of a
    Gaussian-integral model, and frees nothing the operating system does not. (The replica
    command starts no non-daemon thread, whose end the teardown would wait for.)"""
    import atexit

    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:
        sys.stderr.write(f"{status}\n")
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BrokenPipeError:
                code = _stdout_closed() if stream is sys.stdout else code
            except (OSError, ValueError):
                pass
        os._exit(code)


def console() -> None:
    """The ``replica`` command and ``python -m replica``: :func:`main`, then :func:`exit_now`.
    The start-up -- the imports, the parsers -- runs with the cyclic garbage collector paused
    (:func:`replica.watched_run.pause_collector`), until a model file runs or the command
    starts."""
    pause_collector()
    try:
        status = main()
    except SystemExit as exc:  # argparse's --help and usage errors
        status = exc.code
    exit_now(status)


if __name__ == "__main__":
    console()
