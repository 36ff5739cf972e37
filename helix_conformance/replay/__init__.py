"""The replay engine: cassettes, interception of httpx/httpx2, delivery plans, faults and the trace."""
