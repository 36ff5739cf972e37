"""The adapter worker: the adapter is imported, built and run in a child process of its own, so nothing it
does can end or rewrite the verdict, which stays in pytest's process (docs/worker-protocol.md)."""
