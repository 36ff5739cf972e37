"""``python -m helix_conformance``: the same as the ``helix-conformance`` command."""

import sys

from .cli import main

sys.exit(main())
