"""Broken adapters for requests the suite did not send before issue 18: tool schemas as MCP servers and zod
write them, strict tools with nested objects, two system messages, an explicit null for an unset parameter,
a request without its auth or content-type header (MSG-01, MSG-07, MSG-09, TOOL-02, TOOL-03, CFG-01)."""

from __future__ import annotations

from typing import Any

from helix_conformance.checks.schema_equivalence import opened
from helix_conformance.contract import LLMGenerateInput

from ._anthropic_base import HookedAnthropicAdapter, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, broken
from ._gemini_base import HookedGeminiAdapter, broken_gemini

# --- MSG-07: a schema cleaned in place ----------------------------------------------------------------------------


class CleansSchemasInPlace(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        for tool in input.tools:
            if isinstance(
                tool.input_schema, dict
            ):  # Bug: "Gemini rejects these": removed from the caller's dict
                tool.input_schema.pop("$schema", None)
                tool.input_schema.pop("additionalProperties", None)
        return super().build_body(input)


# --- TOOL-03 / TOOL-02: schemas as they arrive ----------------------------------------------------------------


def _inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    """``$ref`` replaced by its ``$defs`` entry, and nothing else changed."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline_refs(defs[str(schema["$ref"]).rsplit("/", 1)[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in schema.items() if k not in ("$defs", "definitions")}
    if isinstance(schema, list):
        return [_inline_refs(v, defs) for v in schema]
    return schema


class ForwardsSchemasToGemini(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for declaration, tool in zip(body.get("tools", [{}])[0].get("functionDeclarations", []), input.tools):
            schema = tool.json_schema()
            # Bug: only the $refs inlined; `$schema` and `additionalProperties` go to `parameters` as they came
            declaration["parameters"] = _inline_refs(schema, schema.get("$defs", {}))
        return body


class DropsDefs(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for entry in body.get("tools", []):
            parameters = entry["function"]["parameters"]
            parameters.pop("$defs", None)  # Bug: "definitions are noise": every $ref to them now dangles
        return body


class StrictTopLevelOnly(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for entry, tool in zip(body.get("tools", []), input.tools):
            if tool.strict:
                schema = tool.json_schema()
                properties = list(schema.get("properties", {}))
                # Bug: the root object closed and fully required; nested objects and $defs left as they were
                entry["function"]["parameters"] = {
                    **schema,
                    "additionalProperties": False,
                    "required": properties,
                }
        return body


class DropsAdditionalProperties(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for entry in body.get("tools", []):
            entry["input_schema"] = opened(entry["input_schema"])  # Bug: "not needed": objects sent open
        return body


# --- MSG-01: two system messages ------------------------------------------------------------------------------


class KeepsTheLastSystemMessage(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        if body.get("system"):
            body["system"] = body["system"][-1:]  # Bug: `system = m.content` in a loop: the last one wins
        return body


def _systems_joined(body: dict[str, Any], separator: str) -> dict[str, Any]:
    messages = body.get("messages", [])
    systems = [m for m in messages if m.get("role") == "system"]
    if len(systems) > 1:
        joined = {"role": "system", "content": separator.join(str(m["content"]) for m in systems)}
        body["messages"] = [joined, *(m for m in messages if m.get("role") != "system")]
    return body


class JoinsSystemMessages(HookedAdapter):
    """Not broken: the system messages joined with a blank line, as pydantic-ai joins system prompts."""

    separator = "\n\n"

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return _systems_joined(super().build_body(input), self.separator)


class JoinsSystemMessagesWithNothing(JoinsSystemMessages):
    separator = ""  # Bug: "You are terse." + "Answer in English." run together into one sentence


# --- CFG-01: null for unset -------------------------------------------------------------------------------------


class SendsNullForUnset(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        config = input.config
        # Bug: every parameter written out, None included: the Messages API takes no null
        body.update(temperature=config.temperature, top_p=config.top_p, top_k=config.top_k)
        return body


# --- MSG-09: headers --------------------------------------------------------------------------------------------


class KeyWithoutBearer(HookedAdapter):
    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        headers["Authorization"] = self._api_key  # Bug: the key alone, without "Bearer "
        return headers


class NoContentType(HookedGeminiAdapter):
    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        del headers["content-type"]  # Bug: httpx sets none for content= bytes
        return headers


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "drops_defs",
        DropsDefs,
        "TOOL-02",
        ["tool_schemas"],
        "Sends pydantic's schema without its $defs: the $refs to them point nowhere (reported as TOOL-02's "
        "message, not as jsonschema's PointerToNowhere traceback).",
    ),
    broken_gemini(
        "gemini_cleans_schemas_in_place",
        CleansSchemasInPlace,
        "MSG-07",
        ["tool_schemas_in_the_wild"],
        "Pops `$schema` and `additionalProperties` from the caller's own schema dict before translating it.",
    ),
    broken_gemini(
        "gemini_forwards_mcp_schemas",
        ForwardsSchemasToGemini,
        "TOOL-03",
        ["tool_schemas_in_the_wild"],
        "Inlines $refs but passes an MCP tool's `$schema` and `additionalProperties` on to `parameters`.",
    ),
    broken(
        "strict_top_level_only",
        StrictTopLevelOnly,
        "TOOL-03",
        ["tool_schemas_in_the_wild"],
        "Closes only the root object of a strict tool: nested objects, array items and $defs stay open.",
    ),
    broken_anthropic(
        "anthropic_drops_additional_properties",
        DropsAdditionalProperties,
        "TOOL-02",
        ["tool_schemas_in_the_wild"],
        "Strips `additionalProperties: false` from tool schemas: closed objects are sent open.",
    ),
    broken_anthropic(
        "anthropic_keeps_the_last_system_message",
        KeepsTheLastSystemMessage,
        "MSG-01",
        ["system_two_messages"],
        "Assigns each system message to `system` in turn: only the last one is sent.",
    ),
    broken(
        "joins_system_messages_with_nothing",
        JoinsSystemMessagesWithNothing,
        "MSG-01",
        ["system_two_messages"],
        "Joins two system messages into one with no separator: the two instructions run into one sentence "
        "(joined with whitespace, as pydantic-ai does, they pass).",
    ),
    broken_anthropic(
        "anthropic_sends_null_for_unset",
        SendsNullForUnset,
        "CFG-01",
        ["text_basic"],
        'Writes every sampling parameter out, unset ones as null ("temperature": null).',
    ),
    broken(
        "key_without_bearer",
        KeyWithoutBearer,
        "MSG-09",
        ["text_basic"],
        "Sends `Authorization: <key>` without the Bearer scheme.",
    ),
    broken_gemini(
        "gemini_no_content_type",
        NoContentType,
        "MSG-09",
        ["text_basic"],
        "Sends the JSON body with no Content-Type header.",
    ),
]
