"""``python -m helix_conformance.worker --fds R,W``: the adapter worker process (worker/child.py)."""

import sys

from .child import main

main(sys.argv[1:])
