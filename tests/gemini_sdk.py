"""What the installed google-genai cannot read: a cassette that uses a Gemini feature newer than the SDK here
(the oldest versions tox -e oldest installs, the newest that Python 3.10 gets) is skipped, saying which."""

from __future__ import annotations

import re
from importlib import metadata

import pytest

_FINISH = re.compile(rb'"finishReason":\s*"(\w+)"')


def skip_when_the_sdk_predates(body: bytes) -> None:
    """Skip when ``body`` (a Gemini stream) uses what the installed google-genai's types do not have: a finish
    reason Gemini documents (the profile's table) that the SDK's enum lacks, or streamed function-call
    arguments. Any other value the SDK does not know still fails the test that reads it."""
    from google.genai import types

    from helix_conformance.profiles.gemini_summary import STOP_TABLE

    missing = [
        f"FinishReason.{reason}"
        for reason in sorted({m.decode() for m in _FINISH.findall(body)})
        if reason in STOP_TABLE and reason not in types.FinishReason.__members__
    ]
    if (
        b'"partialArgs"' in body or b'"willContinue"' in body
    ) and "partial_args" not in types.FunctionCall.model_fields:
        missing.append("FunctionCall.partial_args (streamed function-call arguments)")
    if missing:
        pytest.skip(
            f"google-genai {metadata.version('google-genai')}, installed here, predates {', '.join(missing)}; "
            "a newer release reads this cassette"
        )
