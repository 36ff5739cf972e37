"""Broken adapters only generated inputs catch: the explicit scenarios hold no ``&``, no nested history
arguments, no enum inside array items, no newline in a tool result, so each bug below passes every written
scenario and is found by Hypothesis on ``random_histories`` (MSG-01..05) or ``random_tool_schemas`` (TOOL-02).
"""

from __future__ import annotations

import html
import json
from typing import Any

from helix_conformance.contract import LLMGenerateInput

from ._base import BrokenAdapter, HookedAdapter, broken

Body = dict[str, Any]


class HtmlEscapesText(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for message in body["messages"]:
            if isinstance(message.get("content"), str):
                message["content"] = html.escape(message["content"], quote=False)  # Bug: "safe" text
        return body


class DropsNestedHistoryArguments(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for message in body["messages"]:
            for call in message.get("tool_calls") or []:
                function = call["function"]
                arguments = json.loads(function["arguments"])
                flat = {k: v for k, v in arguments.items() if not isinstance(v, (dict, list))}  # Bug
                function["arguments"] = json.dumps(flat)
        return body


class DropsEnumsInArrayItems(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for tool in body.get("tools", []):
            _strip_item_enums(tool["function"]["parameters"])
        return body


def _strip_item_enums(schema: Any) -> None:
    if isinstance(schema, dict):
        items = schema.get("items")
        if isinstance(items, dict):
            items.pop("enum", None)  # Bug: "arrays of enums confuse the model"
        for value in schema.values():
            _strip_item_enums(value)
    elif isinstance(schema, list):
        for value in schema:
            _strip_item_enums(value)


class FlattensToolResultLines(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for message in body["messages"]:
            if message["role"] == "tool" and isinstance(message.get("content"), str):
                message["content"] = message["content"].replace("\n", " ")  # Bug: one-line results
        return body


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "html_escapes_text",
        HtmlEscapesText,
        "MSG-02",
        ["random_histories"],
        "HTML-escapes message text (& < >) before sending it.",
    ),
    broken(
        "drops_nested_history_arguments",
        DropsNestedHistoryArguments,
        "MSG-03",
        ["random_histories"],
        "Drops history tool-call arguments whose values are objects or arrays.",
    ),
    broken(
        "drops_enums_in_array_items",
        DropsEnumsInArrayItems,
        "TOOL-02",
        ["random_tool_schemas"],
        "Removes enum from the items of array parameters.",
    ),
    broken(
        "flattens_tool_result_lines",
        FlattensToolResultLines,
        "MSG-04",
        ["random_histories"],
        "Joins the lines of tool results into one.",
    ),
]
