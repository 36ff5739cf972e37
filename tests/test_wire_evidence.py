"""Every wire rule rests on the provider's documentation or a real recording (issue 16).

A rule about a provider's wire that no document or recording supports fails adapters written on the official
SDKs, LiteLLM, LangChain or the Vercel AI SDK, and gets baselined away. So each clause of source ``wire``, and
each other clause that enforces a provider rule, carries an **Evidence.** paragraph in ``docs/contract.md`` that
cites a page (a URL) or a recording (a ``recordings/`` path), and the rules that had no evidence are gone:
the adapters below do what the providers document and must pass.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from broken_adapters._base import HookedAdapter, broken
from broken_adapters._gemini_base import HookedGeminiAdapter, broken_gemini

from helix_conformance.clauses import CLAUSES
from helix_conformance.contract import AdapterSpec, LLMGenerateInput
from helix_conformance.profiles.gemini import PROFILE as GEMINI
from helix_conformance.profiles.gemini import GeminiTool
from helix_conformance.testing import run_conformance

DOCS = Path(__file__).parent.parent / "docs/contract.md"
RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "recordings"

WIRE_RULES_ELSEWHERE = ("STOP-01", "MSG-04", "MSG-05", "MSG-10", "CFG-01", "ERR-01", "CACHE-02")
"""Clauses of another source whose checks still enforce a provider's wire (a per-profile table, a decoder
violation, a field name): they need evidence too."""
CITATION = re.compile(r"https?://[^\s)>\]]+|recordings/[\w./\[\]-]+\.(?:yaml|json|txt|sse)")
EVIDENCE = re.compile(r"^\*\*Evidence\.\*\*(.*)$", re.MULTILINE)


def _sections() -> dict[str, str]:
    """The text of each clause's section of docs/contract.md, by clause id."""
    text = DOCS.read_text(encoding="utf-8")
    parts = re.split(r"^### ([A-Z]+-\d\d) — .*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def _evidence(clause_id: str) -> str:
    return " ".join(EVIDENCE.findall(_sections().get(clause_id, "")))


def _wire_clauses() -> list[str]:
    return [c.id for c in CLAUSES.values() if c.source == "wire"] + list(WIRE_RULES_ELSEWHERE)


@pytest.mark.parametrize("clause_id", _wire_clauses())
def test_every_wire_rule_cites_its_evidence(clause_id: str) -> None:
    evidence = _evidence(clause_id)
    assert evidence, f"{clause_id} enforces a provider's wire but has no **Evidence.** paragraph in {DOCS}"
    assert CITATION.search(evidence), (
        f"{clause_id}'s Evidence paragraph cites neither a page (URL) nor a recording (recordings/ path)"
    )


@pytest.mark.skipif(
    not RECORDINGS.exists(), reason=f"the recordings {RECORDINGS} are absent in this checkout"
)
def test_cited_recordings_exist() -> None:
    text = DOCS.read_text(encoding="utf-8")
    cited = {m.split("recordings/", 1)[1] for m in CITATION.findall(text) if m.startswith("recordings/")}
    assert cited, "no recording is cited at all"
    missing = sorted(path for path in cited if not (RECORDINGS / path).is_file())
    assert not missing, f"cited recordings that do not exist under {RECORDINGS}: {missing}"


def test_the_check_finds_a_wire_clause_without_evidence() -> None:
    """The Evidence test would fail a new wire clause: a section without the paragraph has no citation."""
    assert _evidence("RES-01") == ""
    assert not CITATION.search("**Evidence.** The reference adapter does it this way.")
    assert CITATION.search("see ../shared/recordings/google/google-429-retry-info.json")


# --- rules removed for want of evidence: the documented alternatives pass ---------------------------------


def _passes(
    spec: AdapterSpec, clauses: tuple[str, ...], scenarios: tuple[str, ...], matrix: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Run the clauses; each holds (``matrix``: or is a compatibility-matrix finding only, never the gate's)."""
    report = run_conformance(spec, clauses=list(clauses), scenarios=list(scenarios), timeout=3.0, examples=3)
    rows: list[dict[str, Any]] = report["results"]
    allowed = {"passed"}
    failed = [
        f"{r['clause']} on {r['scenario']}: {r['message']}"
        for r in rows
        if r["outcome"] not in (allowed | ({"compat_failed"} if r["clause"] in matrix else set()))
    ]
    assert not failed, "\n".join(failed)
    return rows


class GeminiKeyInQuery(HookedGeminiAdapter):
    """The API key as ``?key=``, as Google documents beside the x-goog-api-key header (LiteLLM sends it)."""

    def url(self, model: str) -> str:
        return f"{super().url(model)}&key={self._api_key}"

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        del headers["x-goog-api-key"]
        return headers


def test_the_gemini_api_key_as_a_query_parameter_passes() -> None:
    """Google: "You can pass the API key into a REST API call as a query parameter" (or the header)."""
    spec = broken_gemini("gemini_key_in_query", GeminiKeyInQuery, "MSG-09", ["text_basic"], "").spec
    rows = _passes(spec, ("MSG-09", "MSG-10", "HARN-01"), ("text_basic", "tool_call"))
    assert len(rows) == 6


class EmptyContentBesideToolCalls(HookedAdapter):
    """``content: ""`` on an assistant turn that only carries tool calls, as the Vercel AI SDK sends it."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body: dict[str, Any] = super().build_body(input)
        for message in body["messages"]:
            if message.get("tool_calls") and message.get("content") is None:
                message["content"] = ""
        return body


def test_empty_content_beside_openai_tool_calls_passes_msg06() -> None:
    """OpenAI: assistant ``content`` is "Required unless tool_calls or function_call is specified"."""
    spec = broken("openai_empty_content", EmptyContentBesideToolCalls, "MSG-06", ["text_basic"], "").spec
    # declared for OpenAI alone: gateways in front of Claude refuse it (profiles/server_rejections.py), and a
    # broken adapter declares every server of its profile
    spec = dataclasses.replace(spec, servers=("openai",))
    rows = _passes(spec, ("MSG-06", "MSG-02", "MSG-09"), ("tool_result_roundtrip",), matrix=("MSG-06",))
    assert len(rows) == 3  # Anthropic and Gemini keep their MSG-06 broken adapters (tests/broken_adapters)
    (msg06,) = [
        r for r in rows if r["clause"] == "MSG-06"
    ]  # the gateways' 400 is in the matrix, not the gate
    assert msg06["outcome"] == "compat_failed", msg06
    assert "cliproxyapi" in msg06["servers"], msg06


def _gemini_tool(name: str) -> GeminiTool:
    schema = {"type": "object", "properties": {}}
    return GeminiTool(name=name, description="d", parameters=schema, sent=schema, fields=("parameters",))


@pytest.mark.parametrize("name", ["mcp:get_weather", "ns.tool-1", "_private", "a" * 128])
def test_gemini_tool_names_the_sdk_documents_pass_tool03(name: str) -> None:
    """google-genai: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores,
    dots, colons and dashes, with a maximum length of 128"."""
    assert GEMINI.tool_problems(_gemini_tool(name)) == []


@pytest.mark.parametrize("name", ["get weather!", "1tool", "a" * 129, "tool/x", ""])
def test_gemini_tool_names_outside_the_documented_pattern_fail_tool03(name: str) -> None:
    problems = GEMINI.tool_problems(_gemini_tool(name))
    assert problems, name
    assert "does not match" in problems[0], problems
