"""The example adapter packages in ``examples/``, run the way their authors run them.

Each example is a separately installable package built on an official SDK (``openai``, ``anthropic``), or on
another HTTP client (``aiohttp``, boto3's urllib3), and
registered as an entry point in group ``helix_conformance.adapters``. ``pytest --adapter=NAME`` runs the full
suite against it, in a subprocess inside a fresh pytester directory, from the bundled cassettes; it must pass
every clause. An example that is not installed fails (it is part of the project's test command), with the
command that installs it. One full run per example (each takes 15-30 s), but for the one the guide's
walkthrough runs whole (``FULL_SUITE_ELSEWHERE``).
"""

from __future__ import annotations

import ast
from importlib import metadata
from pathlib import Path

import pytest
from plugin_runs import assert_no_crash, output, run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GROUP = "helix_conformance.adapters"
CASES = {  # entry point name -> (project directory, import package)
    "openai-sdk": ("openai-sdk-adapter", "helix_openai_sdk_adapter"),
    "anthropic-sdk": ("anthropic-sdk-adapter", "helix_anthropic_sdk_adapter"),
    "gemini-sdk": ("gemini-sdk-adapter", "helix_gemini_sdk_adapter"),
    "openai-responses-sdk": ("openai-responses-sdk-adapter", "helix_openai_responses_sdk_adapter"),
    "openai-aiohttp": ("aiohttp-adapter", "helix_aiohttp_adapter"),  # not an SDK: any HTTP client is served
    "bedrock-boto3": ("bedrock-boto3-adapter", "helix_bedrock_boto3_adapter"),  # boto3: sync, in a thread
}


def _require_installed(name: str) -> None:
    """Fail, not skip, when the example's entry point is missing: the gate would silently check nothing."""
    directory = CASES[name][0]
    if not any(ep.name == name for ep in metadata.entry_points(group=GROUP)):
        pytest.fail(
            f"example adapter {name!r} is not installed (no entry point {name!r} in group {GROUP!r}); "
            f'install it with: pip install -e ".[test]" -e examples/{directory}',
            pytrace=False,
        )


FULL_SUITE_ELSEWHERE = {
    # docs/writing-an-adapter.md ends by copying this example's modules into the guide's package, with the same
    # spec but its name, and running the whole suite: tests/test_writing_an_adapter_doc.py runs that, and a
    # second full run of the same code here would buy nothing (it took 20-30 s of CI).
    "openai-sdk": "tests/test_writing_an_adapter_doc.py",
}
SAME_SDK_AS_A_FOREIGN_ADAPTER = {"anthropic-sdk", "gemini-sdk"}
"""Whole runs in `tox -e exhaustive`, not CI: in CI, the adapters of ../shared/foreign-adapters on the same SDK
and profile (anthropic, google-genai) already go through the whole suite (tests/test_foreign_adapters.py)."""


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.exhaustive] if name in SAME_SDK_AS_A_FOREIGN_ADAPTER else [])
        for name in sorted(set(CASES) - set(FULL_SUITE_ELSEWHERE))
    ],
)
def test_example_passes_the_full_suite(pytester: pytest.Pytester, name: str) -> None:
    _require_installed(name)
    result = run(pytester, f"--adapter={name}", "-q")
    text = output(result)
    assert result.ret == pytest.ExitCode.OK, text[-6000:]
    assert_no_crash(result)
    outcomes = result.parseoutcomes()
    assert set(outcomes) <= {"passed", "xfailed", "skipped"}, outcomes
    assert outcomes["passed"] > 1000, outcomes  # the whole suite ran, not a selection
    assert f"helix-conformance summary for adapter '{name}'" in text
    assert "VERDICT: PASS" in text


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_imports_only_the_public_contract(name: str) -> None:
    """Examples are what third-party authors copy: from our package they may use only
    ``helix_conformance.contract``, the public API (as the reference adapters do)."""
    directory, package = CASES[name]
    sources = sorted((EXAMPLES / directory / "src" / package).glob("*.py"))
    assert sources, f"no sources under examples/{directory}/src/{package}"
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for module in modules:
                if module.split(".")[0] in ("helix_conformance", "reference_adapters"):
                    assert module == "helix_conformance.contract", f"{source.name} imports {module}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_declares_its_entry_point(name: str) -> None:
    """The installed entry point is the one the example's pyproject.toml declares."""
    _require_installed(name)
    directory, package = CASES[name]
    pyproject = (EXAMPLES / directory / "pyproject.toml").read_text(encoding="utf-8")
    assert f'{name} = "{package}:spec"' in pyproject
    (entry_point,) = [ep for ep in metadata.entry_points(group=GROUP) if ep.name == name]
    assert entry_point.value == f"{package}:spec"


def test_the_examples_left_out_of_the_full_runs_are_run_whole_elsewhere() -> None:
    """What FULL_SUITE_ELSEWHERE says stays true: the guide copies that example's modules, then runs the whole
    suite (no -k) on them."""
    from test_writing_an_adapter_doc import GUIDE, blocks

    commands = [b.body for b in blocks(GUIDE.read_text(encoding="utf-8")) if b.lang == "sh"]
    for name, where in FULL_SUITE_ELSEWHERE.items():
        assert where == "tests/test_writing_an_adapter_doc.py", where  # the only place checked here
        source = f"examples/{CASES[name][0]}/src/{CASES[name][1]}/"
        copied = next((i for i, c in enumerate(commands) if source in c), None)
        assert copied is not None, f"the guide no longer copies {source}: run {name} whole in this file again"
        whole = [c for c in commands[copied:] if "pytest --adapter=" in c and " -k" not in c]
        assert whole, f"the guide no longer runs the whole suite after copying {source}"


BUFFERED_BOTO3 = '''
"""The bedrock-boto3 example, broken: its reader thread hands the events over only once the stream has ended."""
import dataclasses

from helix_bedrock_boto3_adapter import _adapter, spec as example


def _read_all_then_hand_over(self):
    response = self.client.converse_stream(**self.arguments)
    self.stream = response["stream"]
    events = list(self.stream)
    for event in events:
        self.loop.call_soon_threadsafe(self.events.put_nowait, ("event", event))
    self.loop.call_soon_threadsafe(self.events.put_nowait, ("end", None))


_adapter._Call._read = _read_all_then_hand_over
spec = dataclasses.replace(example, name="buffered-boto3")
'''


@pytest.mark.slow
def test_a_sync_client_that_buffers_in_its_thread_fails_str_02(pytester: pytest.Pytester) -> None:
    """The dual of the idle report's order (tests/test_replay_host.py): a reader thread that parses the whole
    stream before handing anything to the loop is still caught as buffered, on the Bedrock recordings the example
    passes whole (``test_example_passes_the_full_suite``)."""
    _require_installed("bedrock-boto3")
    pytester.makepyfile(buffered_boto3=BUFFERED_BOTO3)
    result = run(pytester, "--adapter=buffered_boto3:spec", "-q", "-k", "test_bedrock_model_stream and STR-")
    text = output(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text[-4000:]
    failed = {line.split("::")[-1].split("]")[0] for line in text.splitlines() if line.startswith("FAILED")}
    assert failed == {"STR-02"}, text[-4000:]
