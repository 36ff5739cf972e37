"""Tools and conversation pieces shared by the scenarios."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from ..contract import FINISH_TOOL_NAME, ParsedToolCall, Tool, UserMessage


class Unit(str, Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class WeatherQuery(BaseModel):
    """Arguments of get_weather: an enum and an optional field (TOOL-02)."""

    city: str = Field(description="City name, e.g. Paris")
    unit: Unit | None = None


class DateRange(BaseModel):
    start: str
    end: str | None = None


class SearchFilters(BaseModel):
    tags: list[str] = Field(default_factory=list)
    range: DateRange | None = None


class SearchQuery(BaseModel):
    """Nested models, arrays, numbers and booleans: generated as ``$defs`` by pydantic (TOOL-02)."""

    query: str
    limit: int = 10
    exact: bool = False
    score: float | None = None
    filters: SearchFilters | None = None
    cursor: str | None = None


GET_WEATHER = Tool(
    name="get_weather",
    description="Get the current weather for a city.",
    input_schema=WeatherQuery,
)
SEARCH_DOCS = Tool(
    name="search_docs",
    description="Search the product documentation.",
    input_schema=SearchQuery,
)
GET_TIME = Tool(
    name="get_time",
    description="Get the current UTC time. Takes no arguments.",
    input_schema={"type": "object", "properties": {}},
)
LOOKUP_ORDER_STRICT = Tool(
    name="lookup_order",
    description="Look up an order by its id.",
    input_schema={
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^ord_[0-9]+$"},
            "include_items": {"type": "boolean"},
            "channel": {"type": "string", "enum": ["web", "store", "phone"]},
        },
        "required": ["order_id"],
    },
    strict=True,
)
FINISH = Tool(
    name=FINISH_TOOL_NAME,
    description="Return the final answer to the user in the required format.",
    input_schema={
        "type": "object",
        "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
        "required": ["answer", "confidence"],
    },
)
FINISH_LOOKALIKE = Tool(
    name="finish",
    description="Mark the current task as finished in the task tracker.",
    input_schema={"type": "object", "properties": {"task_id": {"type": "string"}}, "required": ["task_id"]},
)

WEATHER_QUESTION = UserMessage(content="What's the weather in Paris?")

# Opaque reasoning proofs in the shape Anthropic sends (base64); authored, not real signatures.
SIGNATURES = {
    "thinking_text": "ErUBCkYIBxgCXOmOVd+/Nbq7fi4t/Nw5/TV0gGeFTt6EGpaF6STG1u6jCQNYgmMIVYpic6VGbHc8o6ZGgmKXvKGK2HcKf8d2+kRPGMjW0PU+gfl8TtHNrmBSbEHzSoFlXIWnhulfHez8Q1+pxgE/tno=",
    "thinking_tool_call": "ErUBCkYIBxgCp9EU3kUAM9rAV8LRXCzRXbhxf+o7he/ksDVt8IeSvnTHJ6u1hAooiJBEdQQUs0ZP9dUwJzXX/nIYiXvfeCIc4AmFKXie87jahzy3t1QKX3qWpIjpMR+0uZx4JgUFOSlIHnEJRArU8XA=",
    "thinking_finish_tool": "ErUBCkYIBxgCGv6TUc8oYdcIVWjSwvn6CC7Aib7mlt4Zws6r62MISelKzC4VX8Y6XvzYExHKhOLCLEmL2J0nmXKE9gF1uocu+TVRFJZjOsdaUOfMuOfnFuxnDx9+qRUnfhrCsWHOy6fCUQEakOAf9zE=",
    "thinking_redacted": "ErUBCkYIBxgCsQQ4NGwGGnaze9K91qndSmJvVYdaTXkrfwwhweTlIDm3X4ebmCQvVkxJYKNX53mWpZv0klVQx5G3JGKiQXt0xmLoYVZf9aqeOxAJ6ex7DYtLP8xw8V289DlMO5qRv6sgjVSN4yIK0HM=",
    "thinking_history": "ErUBCkYIBxgCNnV62Ofatl9TkVs1GoNMrCL4Z87B/efc7B/0piojFaGmSwfsPhTiikR3ZFSybADQeB485hWQWGB3xBLmB/iS7mIKHn9JkW9+Jk3yN00lbSxBS8XFxVmwJz4GtHpJkhu9Qsbp1GKm0ls=",
}
REDACTED = (
    "ErUBCkYIBxgCDKp+LuWy0Wi0AJyhubMkxvuCNKAWsfxz/z4TbecPsMVAA78vlqxko1z/r1RSQY6oXf7cI+Sg0i5mjqEoGj+zrahsmG9xfKhpTxdfx675Fi6Xk41MouIjKyx7zsV2ikhp/6wnVuqbkmE=",
    "ErUBCkYIBxgCopX7cvMv89wZFY9m2P+ItX49BbowdqC3Y35MCRDjdG0ZojsXI6DVTuMf4TnARljQ5OUDVcK1N/XtEyEQRbhBerP6keOV2gPqXpBVM0wZ+y8Qk6yTRfB/+DaAWZKsDa5mhSZebWrKkLM=",
)


def call(call_id: str, name: str, arguments: dict[str, Any]) -> ParsedToolCall:
    return ParsedToolCall(id=call_id, name=name, arguments=arguments)
