"""What a JavaScript adapter (the Vercel AI SDK through the Node driver) sends, accepted where the API accepts it.

Found by running the Vercel adapter (examples/vercel-ai-adapter) through the gate: JavaScript has one number
type, so history arguments drawn as ``0.0`` reach the provider as ``0`` (``JSON.stringify(0.0) === "0"``);
and @ai-sdk/google wraps a tool result as ``{name, content}`` in ``functionResponse.response``, a free-form
object for the Gemini API. Strings, numbers and booleans still stay apart, and a result object that is not
that wrapping is compared whole.
"""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.checks.common import json_equal, json_text
from helix_conformance.contract import ToolMessage
from helix_conformance.profiles import get_profile

GEMINI = get_profile("gemini")
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def test_integral_floats_are_the_json_number_they_equal() -> None:
    assert json_equal({"x": 0.0, "y": [1.0, 2.5]}, {"x": 0, "y": [1, 2.5]})
    assert json_text({"b": 3.0, "a": 1}) == '{"a": 1, "b": 3}'


def test_strings_numbers_and_booleans_stay_apart() -> None:
    assert not json_equal({"x": 1}, {"x": True})
    assert not json_equal({"x": 0}, {"x": False})
    assert not json_equal({"x": 5}, {"x": "5"})
    assert not json_equal({"x": 0.5}, {"x": 0})


def _tool_result(response: dict[str, Any], name: str = "get_weather") -> str:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": name, "response": response}}]},
        ]
    }
    decoded = GEMINI.decode_request(json.dumps(body).encode(), URL)
    (tool,) = [m for m in decoded.messages if isinstance(m, ToolMessage)]
    return tool.content


def test_the_vercel_wrapping_of_a_gemini_tool_result_is_the_result() -> None:
    assert _tool_result({"name": "get_weather", "content": "18 C, sunny"}) == "18 C, sunny"
    assert _tool_result({"output": "18 C, sunny"}) == "18 C, sunny"


def test_any_other_result_object_is_compared_whole() -> None:
    other_name = _tool_result({"name": "elsewhere", "content": "18 C, sunny"})
    assert json.loads(other_name) == {"name": "elsewhere", "content": "18 C, sunny"}
    more_keys = _tool_result({"name": "get_weather", "content": "18 C", "extra": 1})
    assert json.loads(more_keys) == {"content": "18 C", "extra": 1, "name": "get_weather"}
