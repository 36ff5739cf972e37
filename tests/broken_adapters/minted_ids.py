"""Tool-call ids the adapter mints where the provider sends none (Gemini): what is still a bug.

Minting a fresh random id per run is allowed (runs compare ids only where the provider sent them, see
``tests/test_false_failures.py``); an empty or repeated id (RES-03), or an id on_tool_call reports that is
not the returned call's (STR-05), is not.
"""

from __future__ import annotations

import uuid

from helix_conformance.contract import ParsedToolCall, StepResult, ToolCallsStepResult

from ._base import BrokenAdapter
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini


class _EmptyIdStream(HookedGeminiStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: "the id is whatever the provider sent", and Gemini sent none.
        return [call.model_copy(update={"id": ""}) for call in super().parse_calls()]


class EmptyMintedIds(HookedGeminiAdapter):
    stream_class = _EmptyIdStream


class _OneIdPerResponseStream(HookedGeminiStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: one uuid4 minted per response and given to every call in it.
        minted = f"call_{uuid.uuid4().hex}"
        return [call.model_copy(update={"id": minted}) for call in super().parse_calls()]


class OneMintedIdPerResponse(HookedGeminiAdapter):
    stream_class = _OneIdPerResponseStream


class _MintedTwiceStream(HookedGeminiStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        return [call.model_copy(update={"id": f"call_{uuid.uuid4().hex}"}) for call in super().parse_calls()]

    async def result(self) -> StepResult:
        result = await super().result()  # on_tool_call got the calls of one conversion...
        if isinstance(result, ToolCallsStepResult):
            # Bug: ...and the result those of a second one, each minting its own ids.
            return result.model_copy(update={"tool_calls": self.parse_calls()})
        return result


class IdsMintedTwice(HookedGeminiAdapter):
    stream_class = _MintedTwiceStream


ADAPTERS: list[BrokenAdapter] = [
    broken_gemini(
        "gemini_empty_minted_ids",
        EmptyMintedIds,
        "RES-03",
        ["tool_call", "tool_call_parallel"],
        "Returns Gemini's missing call id as an empty string instead of minting one.",
    ),
    broken_gemini(
        "gemini_one_minted_id_per_response",
        OneMintedIdPerResponse,
        "RES-03",
        ["tool_call_parallel"],
        "Mints one uuid4 per response and gives it to every call: two calls share an id.",
    ),
    broken_gemini(
        "gemini_ids_minted_twice",
        IdsMintedTwice,
        "STR-05",
        ["tool_call", "tool_call_parallel"],
        "Mints ids once for on_tool_call and again for the result: the callback's id is not the call's.",
    ),
]
