"""``python -m replica``: the same as the ``replica`` command."""

from .cli import console

console()
