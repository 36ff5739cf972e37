"""The Cohere v2 chat counterpart of ``_base``: a hookable reference and the ``broken_cohere`` helper.

``HookedCohereAdapter`` is ``reference_adapters.cohere`` with the body (``_request_body``) and the stream
accumulator (``stream_class``) as hooks, so each broken adapter overrides one of them and nothing else.
``COHERE_BASELINE`` is the hooked adapter with no override: the control tests prove it passes every Cohere
selection a broken adapter fails.
"""

from __future__ import annotations

import functools
from typing import ClassVar

from reference_adapters._http import SafeCallbacks
from reference_adapters.cohere import CohereAdapter, _ChatStream
from reference_adapters.cohere import spec as reference_spec

from ._base import broken_like

__all__ = ["COHERE_BASELINE", "HookedChatStream", "HookedCohereAdapter", "broken_cohere"]

broken_cohere = functools.partial(broken_like, reference_spec)
"""A registry entry built like ``reference_adapters.cohere.spec``: same profile, model, capabilities."""


class HookedChatStream(_ChatStream):
    """The reference accumulator; broken adapters override its handlers (``_event``, ``_call_piece``,
    ``_message_end``, ``result``) directly."""


class HookedCohereAdapter(CohereAdapter):
    stream_class: ClassVar[type[_ChatStream]] = HookedChatStream

    def _parser(self, emit: SafeCallbacks) -> _ChatStream:
        return self.stream_class(emit)


COHERE_BASELINE = broken_cohere(
    "cohere_baseline",
    HookedCohereAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Cohere reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Cohere selection of the registry."""
