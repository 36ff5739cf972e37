"""Tools offered to the model, and the framework's finish tool."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ._model import ContractModel

_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()
"""JSON Schema of each model class, generated once: pydantic builds it anew on every call (milliseconds)."""

FINISH_TOOL_NAME = "__finish__"
"""The tool the framework injects when the agent has an output schema (FIN-01)."""


class Tool(ContractModel):
    """A tool: ``input_schema`` is a pydantic model class or a JSON Schema dict."""

    name: str
    description: str
    input_schema: type[BaseModel] | dict[str, Any]
    output_schema: type[BaseModel] | dict[str, Any] | None = None
    execute: Callable[..., Any] | None = None
    strict: bool = False

    def json_schema(self) -> dict[str, Any]:
        """The input schema as JSON Schema, whichever form it was given in."""
        if isinstance(self.input_schema, dict):
            return self.input_schema
        model = self.input_schema
        if model not in _SCHEMAS:
            _SCHEMAS[model] = model.model_json_schema()
        return copy.deepcopy(_SCHEMAS[model])  # a fresh dict every call, as pydantic gives one
