"""Issue 32's rules at the level of their parts: what the decoders report, how server-specific findings are
judged, what the null probes of TOOL-02 show, how a fault run that repeats the unfaulted failure is reported.

The rules end to end (a broken adapter caught on its clause, the controls passing) are in
``test_broken_adapters.py`` (``broken_adapters/field_bugs.py``).
"""

from __future__ import annotations

import json
from typing import Any

from broken_adapters._base import HookedAdapter, HookedChatStream, broken
from broken_adapters.field_bugs import DeveloperRole, declaring

from helix_conformance.checks.schema_equivalence import differences
from helix_conformance.contract import HelixError, StepResult
from helix_conformance.profiles import get_profile
from helix_conformance.profiles.server_rejections import SERVER_REJECTIONS, rejected_by
from helix_conformance.profiles.servers import SERVERS, declared_servers
from helix_conformance.testing import run_conformance

OPENAI = get_profile("openai-chat")
RESPONSES = get_profile("openai-responses")


def _chat(*messages: dict[str, Any]) -> Any:
    body = {"model": "gpt-4o-mini", "stream": True, "messages": list(messages)}
    return OPENAI.decode_request(json.dumps(body).encode())


def _call(arguments: Any) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_history_arguments_sent_as_an_object_are_an_msg03_breach_not_a_format_problem() -> None:
    decoded = _chat({"role": "user", "content": "Hi"}, _call({"city": "Paris"}))
    (breach,) = decoded.violations_of("MSG-03")
    assert "expected a string, but got an object" in breach
    assert not decoded.problems
    assert not _chat({"role": "user", "content": "Hi"}, _call('{"city": "Paris"}')).violations


def test_shapes_some_servers_refuse_are_findings_judged_only_for_declared_servers() -> None:
    decoded = _chat(
        {"role": "developer", "content": "Be terse."},
        {"role": "user", "content": "Hi"},
        {**_call("{}"), "content": ""},
    )
    assert decoded.server_findings == [
        ("developer_role", "messages[0]"),
        ("empty_content_beside_tool_calls", "messages[2].content"),
    ]
    assert not decoded.problems
    assert not decoded.empty_text
    assert rejected_by(decoded.server_findings, "MSG-01", frozenset()) == []
    (problem,) = rejected_by(decoded.server_findings, "MSG-01", frozenset({"deepseek"}))
    assert problem.startswith("messages[0]: a `developer` message")
    assert "deepseek" in problem
    assert rejected_by(decoded.server_findings, "MSG-06", frozenset({"deepseek"})) == []
    assert all(rule.evidence and rule.servers for rule in SERVER_REJECTIONS.values())


def test_every_server_a_rejection_names_is_a_server_of_its_profile() -> None:
    for rule in SERVER_REJECTIONS.values():
        known = {s.id for s in SERVERS if s.profile == rule.profile}
        assert rule.servers <= known, f"{rule.id}: unknown server(s) {sorted(rule.servers - known)}"


def test_declared_servers_are_the_specs_else_the_profiles_own_provider() -> None:
    entry = declaring(broken("x", HookedAdapter, "MSG-01", ("text_basic",), "x"), "deepseek")
    assert declared_servers(entry.spec, "openai-chat") == frozenset({"deepseek"})
    undeclared = broken("y", HookedAdapter, "MSG-01", ("text_basic",), "y", servers=frozenset()).spec
    assert declared_servers(undeclared, "openai-chat") == frozenset({"openai"})


def test_a_rejection_by_deepseek_does_not_fail_an_adapter_that_declares_no_server() -> None:
    """By default an adapter targets its profile's own provider (OpenAI), which takes `developer`: the servers
    that reject it are shown in the compatibility matrix, not the gate."""
    quiet = broken("dev", DeveloperRole, "MSG-01", ("system_multiturn",), "d", servers=frozenset()).spec
    report = run_conformance(quiet, clauses=["MSG-01"], scenarios=["system_multiturn"], timeout=3.0)
    rows = report["results"]
    assert [row["outcome"] for row in rows] == ["compat_failed"], rows
    assert report["exit_status"] == 0, report
    matrix = {row["id"]: row for row in report["compatibility"]["servers"]}
    assert (matrix["deepseek"]["failing"], matrix["deepseek"]["works"]) == (["MSG-01"], False), matrix
    assert matrix["openai"]["works"], matrix["openai"]
    loud = declaring(broken("dev", DeveloperRole, "MSG-01", ("system_multiturn",), "d"), "deepseek").spec
    rows = run_conformance(loud, clauses=["MSG-01"], scenarios=["system_multiturn"], timeout=3.0)["results"]
    assert [row["outcome"] for row in rows] == ["failed"], rows
    assert "deepseek" in rows[0]["message"]


def test_the_responses_reader_takes_reasoning_text_and_an_end_marker() -> None:
    body = (
        b'event: response.reasoning_text.delta\ndata: {"type":"response.reasoning_text.delta","delta":"hm"}\n\n'
        b'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed"}}\n\n'
        b"data: [DONE]\n\n"
    )
    summary = RESPONSES.summarise_response(200, {"content-type": "text/event-stream"}, body)
    assert summary.thinking == "hm"
    assert not summary.problems


def test_null_is_probed_where_the_schema_does_not_allow_it() -> None:
    original = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    nullable = {
        "type": "object",
        "properties": {"city": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["city"],
    }
    assert any("None" in d for d in differences(original, nullable, complete_only=False))
    assert differences(original, original, complete_only=False) == []
    optional = {"type": "object", "properties": {"city": {"type": "string"}}, "required": []}
    optional_nullable = {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
        "required": ["city"],
        "additionalProperties": False,
    }
    # OpenAI's own advice for an optional property of a strict tool is a union with null: not a difference
    assert not any("None" in d for d in differences(optional, optional_nullable, complete_only=True))


class _AlwaysFailingStream(HookedChatStream):
    async def result(self) -> StepResult:
        raise HelixError("openai: this adapter reads no stream", code="provider_error")


class _AlwaysFails(HookedAdapter):
    stream_class = _AlwaysFailingStream


def test_a_fault_run_that_fails_as_the_unfaulted_one_is_not_reported_as_the_faults() -> None:
    spec = broken("always_fails", _AlwaysFails, "ERR-04", ("text_basic",), "fails every stream").spec
    report = run_conformance(
        spec, clauses=["RES-02", "ERR-04", "ERR-03"], scenarios=["text_basic"], timeout=3.0
    )
    rows = {row["clause"]: row for row in report["results"]}
    assert rows["RES-02"]["outcome"] == "failed", rows["RES-02"]
    for clause in ("ERR-04", "ERR-03"):  # one bug, one cause (issue 29 section 4): the unfaulted run's error
        assert rows[clause]["outcome"] == "skipped", rows[clause]  # is RES-02's, and no fault run is blamed
        assert "an ErrorStepResult for a complete success response" in rows[clause]["message"]
        assert "(reported once, on RES-02)" in rows[clause]["message"]
