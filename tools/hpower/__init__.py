"""Harness power: how much of the reference adapters the conformance suite executes, and how many
first-order mutations of them it notices (``python tools/harness_power.py``)."""
