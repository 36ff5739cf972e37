"""``python -m helix_conformance.worker --fds R,W [--control C]``: the adapter worker process (worker/child.py),
confined first by its keeper (worker/sandbox.py) when the parent passed a control socket."""

import sys

from .sandbox import confine

confine(sys.argv[1:])  # returns in the confined worker only; the keeper never gets here

from .child import main  # noqa: E402 - after the fork: the keeper imports nothing it does not need

main(sys.argv[1:])
