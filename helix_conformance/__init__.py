"""helix-conformance: the conformance harness for Helix Agents LLM adapters.

Importing this package is cheap on purpose: the pytest plugin loads it in every project that has it
installed, so heavy modules are imported only when ``--adapter`` is given.
"""

__version__ = "0.1.0"
