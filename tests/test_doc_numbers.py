"""Every number in README.md and docs/*.md is generated, measured (a dated record), checked against the code,
or not a claim about this project (issue 33: docs that are true on a fresh machine). See ``doc_numbers``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_facts import FACTS
from doc_numbers import DOCS, ROOT, Number, incidental, numbers, regions
from doc_regions import GENERATED, check_region, guide_checks, profile_table

GENERATED_FILES = {
    "docs/scenarios.md": "python -m helix_conformance.scenarios.docs; tests/test_catalogue.py compares",
}
"""Whole docs generated from the code and compared by a test of their own."""

DECLARED: list[tuple[str, str, str]] = [
    # (doc, a regex around the number, why it cannot drift)
    (
        "docs/contract.md",
        r"^\| 424 \||498 \(a deny-listed token\), 499 \(request cancelled\) and 501 \(not implemented\)",
        "HTTP statuses Cohere documents, named as its error reference numbers them",
    ),
    ("docs/contract.md", r"Gemini 3", "a model generation's name, quoted from Google's docs"),
    (
        "docs/contract.md",
        r"choice 0 is the step's answer|choice 1 ends with",
        "OpenAI's choice indices as the wire numbers them (n: 2 streams indices 0 and 1)",
    ),
    (
        "docs/contract.md",
        r"a `minItems` of 0 or 1",
        "the array bound Anthropic's strict mode supports, quoted from its structured-outputs limitations",
    ),
    (
        "docs/contract.md",
        r"passes 4, which the API",
        "Anthropic's documented limit of 4 cache breakpoints, quoted",
    ),
    ("docs/harness-power.md", r"--examples 1 ", "a command line's option value"),
    (
        "README.md",
        r"replay host on 127\.0\.0\.1",
        "the loopback address, where the replay host listens (replay/host.py)",
    ),
    (
        "docs/writing-an-adapter.md",
        r"replay host on 127\.0\.0\.1|POST http://127\.0\.0\.1:…",
        "the loopback address, where the replay host listens (replay/host.py)",
    ),
    (
        "docs/typescript-adapters.md",
        r"openai 7,|@google/genai 3, ai 7 and @ai-sdk/\* 4|declare Node >= 22\. Tested: Node 20 and 22\.",
        "the major versions npm installs of third-party SDKs and their engines field, cited as of writing; the Node "
        "versions CI runs are tests/node_versions/",
    ),
    (
        "docs/typescript-adapters.md",
        r"Node 22\.18\+",
        "the Node release that unflagged type stripping (Node's docs)",
    ),
    (
        "docs/typescript-adapters.md",
        r"undici's 300 s|^\s+300 s\.$|openai-node 7\.5|^\s+0\.120\)\. A streamed body",
        "third-party defaults and versions, cited from their sources (undici's bodyTimeout, the SDKs' client.ts)",
    ),
    (
        "docs/contract.md",
        r"since Node 15",
        "the Node release that made unhandled rejections throw (Node's docs)",
    ),
    ("docs/contract.md", r"promptly \(within 1 s\)", "checks/errors.py: cancel_latency_s > 1.0 fails NT-03"),
    (
        "docs/worker-protocol.md",
        r"at most 64",
        "drivers/node/src/output.js keeps HEAD_CHARS (16 Ki) + TAIL_CHARS (48 Ki) of a run's output",
    ),
    (
        "README.md",
        r"2 parallel tool calls expected",
        "a sample failure message, quoted as the check words it",
    ),
    (
        "README.md",
        r"1 cause behind 3 failed checks|1\. +HARN-01 on 3 checks|the first 3 scenarios",
        "the sample of a wrong wire profile: FAIL_FAST_AFTER scenarios, pinned by tests/test_root_causes.py",
    ),
    (
        "docs/recording.md",
        r"\((?:13|19) chars\)|1 rewritten, 2 authored, 1 refused",
        "a sample recording log, for the shape of the lines",
    ),
    (
        "docs/recording.md",
        r"interaction 0 › response\.body › event 3|\(108 chars\)",
        "a sample scan finding, for the shape of the line",
    ),
    ("docs/recording.md", r"127\.0\.0\.1", "the loopback address"),
    (
        "docs/worker-protocol.md",
        r"203\.0\.113\.5', 443",
        "a sample refusal (a documentation address, RFC 5737)",
    ),
    ("docs/worker-protocol.md", r"PEP 578", "the PEP that defines audit hooks"),
    ("docs/worker-protocol.md", r"SO_LINGER 0", "the socket option that makes a close an RST"),
    ("docs/worker-protocol.md", r"HTTP/1\.1", "the HTTP version the server speaks"),
    ("docs/worker-protocol.md", r"\(0 for most messages\)", "no payload: zero bytes"),
    (
        "docs/worker-protocol.md",
        r"# Version 2|## Cost \(version 2\)|version 2 \(below\)|version 2 is another|version 2\.$|as in version 1",
        "the protocol versions, checked where the header first names them (doc_facts)",
    ),
    ("docs/writing-an-adapter.md", r"<!-- exit: 1 -->", "the exit code the walkthrough test asserts"),
    ("docs/speed.md", r"session \d+|Session \d+", "the numbered work sessions the measurements name"),
    (
        "docs/speed.md",
        r"70% of every answer",
        "what the chunk bytes were of an answer then, the reason for the change (measured below)",
    ),
    (
        "docs/worker-protocol.md",
        r"\(version 2, \[driver commands",
        "the protocol version (a Fact where the header names it)",
    ),
    ("docs/speed.md", r"then 2, 4, …", "the recheck doubles its wait each time, up to the limit (a Fact)"),
    (
        "docs/speed.md",
        r"virtual time: 41\.5 s .* 3013 runs|real waiting: 12\.0 s",
        "a sample of the summary's time lines",
    ),
    ("docs/speed.md", r"HELIX_REAL_TIME=1", "an environment value: on"),
    (
        "docs/ci.md",
        r"\(60 s is common|a realistic 60 s or 600 s|\(httpx and httpx2 carry",
        "read timeouts seen in the field, as examples (the SDKs' default is a Fact)",
    ),
    ("docs/contract.md", r"call 0's|call 1's", "wire examples: the index values a provider sends"),
    ("docs/contract.md", r"instead of 1 \+", "the count of attempts: one plus the retries"),
    ("docs/contract.md", r"\b402\b", "an HTTP status a provider sends"),
    (
        "docs/contract.md",
        r"at most 4|more than 4|exceeding 4",
        "Anthropic's documented limit of 4 cache breakpoints (its Evidence paragraph quotes it)",
    ),
    (
        "docs/real-traffic.md",
        r"\(exit status 2\)",
        "the CLI's exit status for bad input, tests/test_cli.py::test_bad_input_is_one_line_and_exit_2",
    ),
    (
        "docs/real-traffic.md",
        r"test_complex_agent_run\[0\]|interaction 0 of",
        "a sample test id: interaction 0 of a recording",
    ),
    (
        "docs/contract.md",
        r"[Ii]ssue \d+",
        "this project's issue numbers: where a rule's history is told",
    ),
    (
        "docs/worker-protocol.md",
        r"[Ii]ssue \d+",
        "this project's issue numbers: where a design's history is told",
    ),
    (
        "docs/contract.md",
        r"passed all 77 checks",
        "the count of checks before issue 29: history, it cannot drift",
    ),
    (
        "docs/contract.md",
        r"about 76 s late|its 300 s idle timeout",
        "figures from the reports an Evidence paragraph cites",
    ),
    (
        "docs/worker-protocol.md",
        r"from 1\)|PID 1\b|PID 2\b",
        "the frames' numbering; the PIDs an init and its first child get in a new PID namespace",
    ),
    (
        "docs/writing-an-adapter.md",
        r"0\.4 and 0\.9 s apart",
        "the gaps in the trace shown above it (the SDK's backoff is random: the walkthrough checks the trace's shape)",
    ),
]


def _covered_by_facts(path: Path) -> set[int]:
    """Offsets of the numbers some fact checks."""
    text = path.read_text(encoding="utf-8")
    covered: set[int] = set()
    for fact in FACTS:
        if ROOT / fact.doc == path:
            for match in fact.matches(text):
                covered.update(match.start(g) for g in range(1, (match.lastindex or 0) + 1) if match.group(g))
    return covered


def _declared(number: Number) -> bool:
    doc = str(number.path.relative_to(ROOT))
    line = number.path.read_text(encoding="utf-8").splitlines()[number.line - 1]
    for where, pattern, _ in DECLARED:
        if where == doc:
            for match in re.finditer(pattern, line):
                if number.text in match.group():
                    return True
    return False


def unclassified() -> list[Number]:
    found = []
    for path in DOCS:
        if str(path.relative_to(ROOT)) in GENERATED_FILES:
            continue
        covered = _covered_by_facts(path)
        for number, offset in numbers(path):
            if offset in covered or incidental(number) or _declared(number):
                continue
            found.append(number)
    return found


def test_every_number_in_the_docs_is_generated_measured_checked_or_declared() -> None:
    left = unclassified()
    assert not left, (
        f"{len(left)} number(s) in README.md or docs/*.md that no test keeps true. Put each inside a generated "
        "or measured region, add a Fact (tests/doc_facts.py) or, if it is no claim about this project, a "
        "DECLARED entry with the reason:\n" + "\n".join(map(str, left[:60]))
    )


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f"{f.doc}:{f.pattern[:40]}")
def test_each_fact_in_the_docs_is_what_the_code_says(fact: object) -> None:
    from doc_numbers import Fact

    assert isinstance(fact, Fact)
    text = (ROOT / fact.doc).read_text(encoding="utf-8")
    matches = fact.matches(text)
    assert matches, f"{fact.doc}: no longer says {fact.pattern!r}: drop the fact or fix the doc"
    want = fact.value()
    for match in matches:
        written = next(g for g in match.groups() if g is not None)
        assert written == want, f"{fact.doc} says {written} ({match.group()!r}); the code says {want}"


def test_measured_regions_say_when_where_and_how() -> None:
    for path in DOCS:
        for kind, header, _, _ in regions(path.read_text(encoding="utf-8")):
            if kind != "measured":
                continue
            parts = [part.strip() for part in header.split(";")]
            assert len(parts) == 3, f"{path.name}: a measured region says 'WHEN; WHERE; HOW', not {header!r}"
            assert all(parts), f"{path.name}: the date or commit, the machine and the command: {header!r}"
            assert re.search(r"\d{4}-\d\d-\d\d|[0-9a-f]{7,}", parts[0]), f"{path.name}: no date in {header!r}"


def test_generated_regions_are_known_and_the_cheap_ones_match() -> None:
    """Each region names its generator; those computed from the code are compared here, the ones that need a
    real run where that run happens (README's sample summary: tests/test_plugin_e2e.py)."""
    for path in DOCS:
        for kind, header, _, _ in regions(path.read_text(encoding="utf-8")):
            if kind == "generated":
                assert header in GENERATED, f"{path.name}: unknown generated region {header!r}"
    check_region(ROOT / "README.md", "profile-table", profile_table())
    check_region(ROOT / "docs" / "writing-an-adapter.md", "guide-checks", guide_checks())
