"""Sub-commands of the ``replica`` command line; each module has ``register(subparsers)``."""
