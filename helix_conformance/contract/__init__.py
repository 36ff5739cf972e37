"""The Helix Agents LLMAdapter contract in Python: the public API adapter authors import.

Everything here is pinned by ``tests/test_contract_api.py``; adding a name is a deliberate API change.
"""

from .abort import AbortController, AbortSignal
from .adapter import LLMAdapter, LLMGenerateInput
from .callbacks import LLMStreamCallbacks, invoke_callback
from .config import LLMConfig
from .errors import (
    ERROR_CODES,
    PROVIDER_AUTH_ERROR,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    REQUEST_ABORTED,
    HelixError,
)
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ThinkingContent,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from .results import (
    STOP_REASONS,
    ErrorStepResult,
    ParsedSubAgentCall,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from .spec import CAPABILITIES, AdapterContext, AdapterSpec, Capability, RecordMode
from .tools import FINISH_TOOL_NAME, Tool

__all__ = [
    "CAPABILITIES",
    "ERROR_CODES",
    "FINISH_TOOL_NAME",
    "PROVIDER_AUTH_ERROR",
    "PROVIDER_ERROR",
    "PROVIDER_INVALID_REQUEST",
    "PROVIDER_OVERLOADED",
    "PROVIDER_RATE_LIMITED",
    "PROVIDER_TIMEOUT",
    "REQUEST_ABORTED",
    "STOP_REASONS",
    "AbortController",
    "AbortSignal",
    "AdapterContext",
    "AdapterSpec",
    "AssistantMessage",
    "Capability",
    "ErrorStepResult",
    "HelixError",
    "LLMAdapter",
    "LLMConfig",
    "LLMGenerateInput",
    "LLMStreamCallbacks",
    "Message",
    "ParsedSubAgentCall",
    "ParsedToolCall",
    "RecordMode",
    "StepResult",
    "StopReason",
    "StructuredOutputStepResult",
    "SystemMessage",
    "TextStepResult",
    "ThinkingContent",
    "Tool",
    "ToolCallInfo",
    "ToolCallsStepResult",
    "ToolMessage",
    "UserMessage",
    "invoke_callback",
]
