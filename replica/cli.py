"""The ``replica`` command line (its options and JSON output are documented in the README).

Exit status: 0 success; 2 bad input (one line naming the parameter); 3 a solve that did not
converge (one line saying what was tried); 1 an internal error (one line; set ``REPLICA_DEBUG=1``
for the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys

from .commands.common import OneLineParser, route_model_file
from .commands.phase_diagram import route_builtin_plane
from .errors import ReplicaError

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


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="replica",
                           description="Workbench for the replica and random-matrix theory of "
                                       "in-context learning by linear attention.")
    from .version import __version__

    parser.add_argument("--version", action="version", version=f"replica {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=OneLineParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        argv = route_model_file(route_builtin_plane(argv))
        args = build_parser().parse_args(argv)
        return int(args.run(args) or 0)
    except ReplicaError as exc:
        sys.stderr.write(f"replica: error: {exc}\n")
        return exc.exit_status
    except KeyboardInterrupt:
        sys.stderr.write("replica: interrupted\n")
        return 130
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get("REPLICA_DEBUG"):
            raise
        sys.stderr.write(f"replica: internal error: {type(exc).__name__}: {exc} "
                         "(set REPLICA_DEBUG=1 for a traceback)\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
