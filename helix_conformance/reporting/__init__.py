"""Turning outcomes into things people and pipelines read: failure text, summary table, JSON."""
