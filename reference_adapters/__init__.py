"""Reference LLM adapters that pass the conformance suite, written to be read and copied."""
