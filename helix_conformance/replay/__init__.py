"""The replay: cassettes, the replay host and its service (the judging side), the link and the transport seam
(the adapter's side), delivery plans, faults, the trace, virtual time."""
