"""The Responses API counterpart of ``_base``: the reference as a base class and the ``broken_responses`` helper.

``reference_adapters.openai_responses`` already keeps each decision a real adapter gets wrong in a small
method (``_body`` builds the request, ``_parser`` the stream reader, whose ``_item``, ``_content``,
``_event`` and ``result`` read the events), so each broken adapter overrides one of them and nothing else.
``RESPONSES_BASELINE`` is the reference subclassed with no override: the control tests prove it passes every
Responses selection a broken adapter fails, so a failure comes from the injected bug, not from the plumbing.
"""

from __future__ import annotations

from collections.abc import Sequence

from reference_adapters.openai_responses import OpenAIResponsesAdapter, _ResponsesStream
from reference_adapters.openai_responses import spec as _reference

from ._base import AdapterClass, BrokenAdapter, broken

__all__ = ["RESPONSES_BASELINE", "HookedResponsesAdapter", "HookedResponsesStream", "broken_responses"]


class HookedResponsesStream(_ResponsesStream):
    """The reference stream reader, named for the broken adapters that override one of its methods."""


class HookedResponsesAdapter(OpenAIResponsesAdapter):
    """The reference adapter, named for the broken adapters that override ``_body`` or ``_parser``."""


def broken_responses(
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
    *,
    harness_gap: str | None = None,
) -> BrokenAdapter:
    """A registry entry built like ``reference_adapters.openai_responses.spec``: same profile, model, caps."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        harness_gap=harness_gap,
        capabilities=_reference.capabilities,
        wire_profile=_reference.wire_profile,
        model=_reference.model,
    )


RESPONSES_BASELINE = broken_responses(
    "responses_baseline",
    HookedResponsesAdapter,
    "HARN-01",
    ("text_basic",),
    "The Responses reference subclassed with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Responses selection of the registry."""
