"""Copies of ``../shared/foreign-adapters`` (adapters written independently of this project on the official
SDKs), for the variants a test needs: the originals are never edited. Each copy says what it changes.

- ``openai_deepseek.py``: ``helix_foreign_adapters/openai_adapter.py`` as it is, its spec declaring
  ``servers={"openai", "deepseek"}`` (``tests/test_compat_matrix.py``: DeepSeek's quirks are judged again);
  ``_common.py`` is ``helix_foreign_adapters/_common.py`` unchanged (it imports it).
"""
