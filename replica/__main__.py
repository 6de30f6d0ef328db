"""``python -m replica``: the same as the ``replica`` command."""

import sys

from .cli import main

sys.exit(main())
