"""Broken adapters that leave a capability undeclared and then get it silently wrong (HARN-05, two-way):
an undeclared capability must be refused with a typed error, supported fully, or left out cleanly."""

from __future__ import annotations

from helix_conformance.contract import (
    LLMGenerateInput,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import REFERENCE_CAPABILITIES, BrokenAdapter, broken


class GluesThinkingOntoText(OpenAIChatAdapter):
    """Does not declare thinking, and 'supports' it by prepending the reasoning to the answer."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, TextStepResult) and result.thinking is not None:
            glued = result.thinking.content + "\n\n" + result.content
            return result.model_copy(update={"content": glued, "thinking": None})
        return result


class KeepsOnlyTheFirstCall(OpenAIChatAdapter):
    """Does not declare parallel tool calls, and quietly drops every call after the first."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ToolCallsStepResult) and len(result.tool_calls) > 1:
            return result.model_copy(update={"tool_calls": result.tool_calls[:1]})
        return result


class RaisesWhenAborted(OpenAIChatAdapter):
    """Does not declare abort, and raises when the signal fires instead of ignoring or honouring it."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if input.abort_signal is not None and input.abort_signal.aborted:
            raise RuntimeError("aborted")
        return result


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "undeclared_thinking_glued_to_text",
        GluesThinkingOntoText,
        "HARN-05",
        ["thinking_text"],
        "Leaves 'thinking' undeclared but prepends the reasoning to the answer text.",
        capabilities=REFERENCE_CAPABILITIES - {"thinking"},
    ),
    broken(
        "undeclared_parallel_calls_dropped",
        KeepsOnlyTheFirstCall,
        "HARN-05",
        ["tool_call_parallel"],
        "Leaves 'parallel_tool_calls' undeclared and silently returns only the first of several calls.",
        capabilities=REFERENCE_CAPABILITIES - {"parallel_tool_calls"},
    ),
    broken(
        "undeclared_abort_raises",
        RaisesWhenAborted,
        "HARN-05",
        ["abort_midstream"],
        "Leaves 'abort' undeclared and raises once the signal has fired.",
        capabilities=REFERENCE_CAPABILITIES - {"abort"},
    ),
]
