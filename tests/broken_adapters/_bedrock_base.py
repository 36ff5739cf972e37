"""The Bedrock ConverseStream counterpart of ``_base``: a hookable reference and the ``broken_bedrock`` helper.

``HookedBedrockAdapter`` is ``reference_adapters.bedrock_converse`` built with the replay's dummy credentials;
the body (``_request_body``), the stream accumulator (``stream_class``) and the event-stream decoder
(``decoder_class``) are its hooks, so each broken adapter overrides one of them and nothing else.
``BEDROCK_BASELINE`` is the hooked adapter with no override: the control tests prove it passes every Bedrock
selection a broken adapter fails, so a failure comes from the injected bug, not from this plumbing.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from reference_adapters._http import SafeCallbacks
from reference_adapters.bedrock_converse import (
    REPLAY_ACCESS_KEY_ID,
    AwsCredentials,
    BedrockConverseAdapter,
    _ConverseStream,
    _Decoder,
)
from reference_adapters.bedrock_converse import spec as reference_spec

from ._base import broken_like

__all__ = ["BEDROCK_BASELINE", "HookedBedrockAdapter", "HookedConverseStream", "broken_bedrock"]

broken_bedrock = functools.partial(broken_like, reference_spec)
"""A registry entry built like ``reference_adapters.bedrock_converse.spec``: profile, model, capabilities."""


class HookedConverseStream(_ConverseStream):
    """The reference accumulator; broken adapters override its handlers (``_message``, ``_start``,
    ``_delta``, ``result``) directly."""


class HookedBedrockAdapter(BedrockConverseAdapter):
    """The reference adapter, signed with the replay's dummy key pair, with its parts as hooks."""

    stream_class: ClassVar[type[_ConverseStream]] = HookedConverseStream
    decoder_class: ClassVar[type[Any]] = _Decoder

    def __init__(self, *, api_key: str, base_url: str, timeout: float) -> None:
        credentials = AwsCredentials(REPLAY_ACCESS_KEY_ID, api_key)
        super().__init__(credentials=credentials, base_url=base_url, timeout=timeout)

    def _parser(self, emit: SafeCallbacks) -> _ConverseStream:
        return self.stream_class(emit)

    def _decoder(self) -> Any:
        return self.decoder_class()


BEDROCK_BASELINE = broken_bedrock(
    "bedrock_baseline",
    HookedBedrockAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Bedrock reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Bedrock selection of the registry."""
