"""Helix JSON (camelCase, as the TypeScript framework serialises it) to and from the contract's objects.

To a driver: the step's input (messages, tools with their JSON Schema, config). From a driver: results,
callback arguments and errors, rebuilt into contract objects by the contract's aliases without validation,
so RES-01 judges them: an unknown type, a missing field or an unknown key is a failure of the result, never
an exception in the harness. Errors with the same driver ``ref`` become the same object (STR-06 uses ``is``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from pydantic.fields import FieldInfo

from ..contract import (
    ErrorStepResult,
    HelixError,
    LLMConfig,
    ParsedSubAgentCall,
    ParsedToolCall,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)
from ..contract._model import ContractModel
from ..contract.messages import Message
from ..contract.tools import Tool
from .snapshot import UnreadableResult, _stand_in_class

JS_MODULE = "javascript"
"""The ``__module__`` of stand-in classes for JavaScript errors (``javascript.TypeError``)."""
RESULT_TYPES: dict[str, type[ContractModel]] = {
    "text": TextStepResult,
    "tool_calls": ToolCallsStepResult,
    "structured_output": StructuredOutputStepResult,
    "error": ErrorStepResult,
}
MAX_CAUSE_DEPTH = 8
_CLASSES: dict[tuple[Any, ...], type] = {}


def encode_input(
    messages: tuple[Message, ...] | list[Message],
    tools: tuple[Tool, ...] | list[Tool],
    config: LLMConfig,
    agent_id: str,
    agent_type: str,
) -> dict[str, Any]:
    """The ``input`` of a ``run`` message: LLMGenerateInput as Helix JSON (abortSignal and callbacks are the
    driver's)."""
    return {
        "messages": [m.model_dump(mode="json", by_alias=True) for m in messages],
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.json_schema(), "strict": t.strict}
            for t in tools
        ],
        "config": config.model_dump(mode="json", by_alias=True),
        "agentId": agent_id,
        "agentType": agent_type,
    }


def snake(name: str) -> str:
    """``onTextDelta`` -> ``on_text_delta``: the callback names the checks read."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def unreadable(reason: str) -> UnreadableResult:
    stand_in = UnreadableResult()
    stand_in._helix_repr = f"<the result could not be read: {reason}>"
    return stand_in


class HelixDecoder:
    """Rebuilds one run's values; errors sharing a ``ref`` are one object."""

    def __init__(self) -> None:
        self.errors: dict[Any, BaseException] = {}

    def result(self, data: Any) -> Any:
        """A StepResult from its JSON; anything else stays what it is (a dict, a string…) for RES-01."""
        try:
            if isinstance(data, dict) and set(data) == {"$unreadable"}:
                return unreadable(str(data["$unreadable"]))
            if not isinstance(data, dict) or not isinstance(data.get("type"), str):
                return data
            cls = RESULT_TYPES.get(data["type"])
            return self._model(cls, data) if cls is not None else data
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            return unreadable(f"{type(exc).__name__}: {exc}")

    def callback_args(self, name: str, args: Any) -> tuple[Any, ...]:
        """The arguments of one callback, typed as the Python callbacks receive them."""
        if not isinstance(args, list):
            return (args,)
        if name == "on_tool_call" and args and isinstance(args[0], dict):
            return (self._model(ParsedToolCall, args[0]), *args[1:])
        if name == "on_error" and args:
            return (self.error(args[0]), *args[1:])
        return tuple(args)

    def error(self, data: Any, depth: int = 0) -> BaseException:
        """A JavaScript error ({name, message, code?, retryable?, statusCode?, cause?, ref?}) as an exception:
        a HelixError when it carries a ``code``, else a stand-in of the JavaScript class name."""
        if not isinstance(data, dict):
            return _js_error(type(data).__name__, str(data))
        ref = data.get("ref")
        if ref is not None and not isinstance(ref, (dict, list)) and ref in self.errors:
            return self.errors[ref]
        name = str(data.get("name") or "Error")
        message = str(data.get("message", ""))
        code = data.get("code")
        error: BaseException
        if isinstance(code, str):
            cls: type[HelixError] = (
                HelixError if name == "HelixError" else _stand_in_class(HelixError, JS_MODULE, name, _CLASSES)
            )
            helix = cls.__new__(cls)
            helix.args = (message,)
            helix.message, helix.code = message, code
            helix.__dict__["retryable"] = data.get("retryable")  # as sent: ERR-02 judges a non-boolean
            helix.status_code = data.get("statusCode")
            helix.cause = None
            error = helix
        else:
            error = _js_error(name, message)
        if ref is not None and not isinstance(ref, (dict, list)):
            self.errors[ref] = error
        cause = data.get("cause")
        if cause is not None and depth < MAX_CAUSE_DEPTH:
            rebuilt = self.error(cause, depth + 1)
            error.__cause__ = rebuilt
            if isinstance(error, HelixError):
                error.cause = rebuilt
        return error

    def _model(self, cls: type[ContractModel], data: dict[str, Any]) -> ContractModel:
        """``cls`` from Helix JSON by alias (field names accepted too), unvalidated: defaults fill what is
        absent (an absent TypeScript optional), unknown keys are kept as extras so RES-01 sees them."""
        fields: dict[str, Any] = {}
        used: set[str] = set()
        for name, info in cls.model_fields.items():
            key = info.alias if info.alias in data else name if name in data else None
            if key is None:
                if not info.is_required():
                    fields[name] = _default(info)
                continue
            used.add(key)
            fields[name] = self._field(name, data[key])
        extra = {k: v for k, v in data.items() if k not in used}
        model = cls.__new__(cls)
        object.__setattr__(model, "__dict__", {**fields, **extra})
        object.__setattr__(model, "__pydantic_fields_set__", set(fields))
        object.__setattr__(model, "__pydantic_extra__", None)
        object.__setattr__(model, "__pydantic_private__", None)
        return model

    def _field(self, name: str, value: Any) -> Any:
        if name == "thinking" and isinstance(value, dict):
            return self._model(ThinkingContent, value)
        if name == "tool_calls" and isinstance(value, list):
            return [self._model(ParsedToolCall, c) if isinstance(c, dict) else c for c in value]
        if name == "sub_agent_calls" and isinstance(value, list):
            return [self._model(ParsedSubAgentCall, c) if isinstance(c, dict) else c for c in value]
        if name == "error":
            return self.error(value)
        return value


def raised(data: Any) -> BaseException:
    """What generateStep threw ({name, message, stack}), as an exception of that class name (NT-01)."""
    if not isinstance(data, dict):
        return _js_error("Thrown", str(data)[:2000])
    error = _js_error(str(data.get("name") or "Error"), str(data.get("message", ""))[:2000])
    stack = data.get("stack")
    if isinstance(stack, str):
        error.js_stack = stack[:4000]  # type: ignore[attr-defined]
    return error


def _js_error(name: str, message: str) -> Exception:
    """An exception whose class is named as the JavaScript one (``javascript.TypeError``)."""
    cls: type[Exception] = _stand_in_class(Exception, JS_MODULE, name, _CLASSES)
    return cls(message)


def _default(info: FieldInfo) -> Any:
    """A field's default without ``FieldInfo.get_default(call_default_factory=True)``, which inspects the
    factory's signature, parsing builtins' text signatures with ``ast``: CPython 3.11's AST state is per
    interpreter, so a parse in a driver thread while pytest formats a failure (``ast.parse`` too) ends the
    session with "AST constructor recursion depth mismatch". The contract's factories take no argument."""
    if info.default_factory is None:
        return info.get_default()
    return cast("Callable[[], Any]", info.default_factory)()
