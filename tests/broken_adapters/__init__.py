"""A library of deliberately broken LLM adapters, each registered with the clause that must catch it.

Every entry is a small, realistic mistake, mostly a reference adapter with one method overridden or its
result post-processed (``_base.HookedAdapter`` exposes the OpenAI Chat reference's decisions as hooks,
``_anthropic_base.HookedAnthropicAdapter`` the Anthropic Messages one's, ``_gemini_base.HookedGeminiAdapter``
the Gemini one's); ``naive`` holds from-scratch adapters whose naivety is the point.
``tests/test_broken_adapters.py`` runs each one with ``run_conformance`` and requires its ``caught_by``
clause to fail on every listed scenario, while the controls of its wire profile (that profile's reference
adapter and its un-broken baseline, ``BASELINES``) pass the very same selections.

An entry with ``harness_gap`` is a bug the harness should catch but does not (yet): its test is a strict
xfail whose reason says what the check misses. (None is open: the six gaps found so far are fixed.)

Modules, by clause family: ``results`` (RES, FIN, STOP), ``streaming`` (STR), ``naive`` (STR, NT),
``requests`` (MSG, TOOL, CFG-01/02, CACHE), ``errors`` (ERR, CFG-03, NT, AB, HARN), ``coverage`` (the
remaining clauses, so that every registered check is tripped by at least one adapter), ``undeclared``
(HARN-05: capabilities left undeclared and then got silently wrong), ``hostile`` (BaseExceptions, None,
not async, unrecorded URLs: dangerous to a harness, reported on their clause), all OpenAI Chat;
``anthropic_requests`` (MSG, TOOL, CACHE) and ``anthropic_responses`` (MSG-08, STOP, RES, STR, ERR) for
Anthropic Messages, and ``gemini_requests`` (MSG, TOOL, CFG-01, CACHE-04) and ``gemini_responses`` (STR,
RES, MSG-08, STOP, ERR, CFG-05) for Gemini, in every family where that API has its own rules; ``bedrock``
(ERR-03/04/05, STOP-01, RES, STR-03, MSG-04/06/08) for Bedrock ConverseStream and ``cohere`` (RES-06/07/08,
ERR-03/04, STOP-01, CFG-01, MSG-04) for Cohere v2 chat; ``faults``
(ERR-03/04/05, RES-12, all three profiles) holds the bugs only the generated fault corpus catches, and
``recorded`` the ones only real traffic catches (``recorded/...`` scenarios, from ``cassettes/recorded``);
``timeouts`` (NT-04, AB-02), ``retry_gaps`` (CFG-03/05, ERR-01, RES-10) and ``request_gaps`` (MSG, TOOL,
CFG-01) the bugs from the field the suite missed until issue 18 (all profiles); ``power`` (ERR-07, RES-06)
the ones the harness-power measurement (``tools/harness_power.py``) showed no scenario could catch; ``crashes``
(RES-02, NT-01) one crash each, which must read as one cause (``tests/test_one_cause.py``); ``field_bugs`` (all
profiles) the classes of bugs adapters written elsewhere shipped (issue 32).
"""

from __future__ import annotations

from . import (
    anthropic_requests,
    anthropic_responses,
    bedrock,
    cohere,
    compat,
    coverage,
    crashes,
    errors,
    faults,
    field_bugs,
    gemini_requests,
    gemini_responses,
    generated,
    hostile,
    late_callbacks,
    minted_ids,
    naive,
    power,
    recorded,
    request_gaps,
    requests,
    responses_requests,
    responses_stream,
    results,
    retry_gaps,
    slow_callbacks,
    stream_gaps,
    streaming,
    timeouts,
    undeclared,
    wire_gaps,
)
from ._anthropic_base import ANTHROPIC_BASELINE
from ._base import BASELINE, BrokenAdapter
from ._bedrock_base import BEDROCK_BASELINE
from ._cohere_base import COHERE_BASELINE
from ._gemini_base import GEMINI_BASELINE
from ._responses_base import RESPONSES_BASELINE

__all__ = [
    "ANTHROPIC_BASELINE",
    "BASELINE",
    "BASELINES",
    "BEDROCK_BASELINE",
    "BROKEN_ADAPTERS",
    "COHERE_BASELINE",
    "FAMILIES",
    "GEMINI_BASELINE",
    "RESPONSES_BASELINE",
    "BrokenAdapter",
]

BASELINES: dict[str, BrokenAdapter] = {
    b.profile: b
    for b in (
        BASELINE,
        ANTHROPIC_BASELINE,
        GEMINI_BASELINE,
        RESPONSES_BASELINE,
        BEDROCK_BASELINE,
        COHERE_BASELINE,
    )
}
"""The un-broken hooked adapter of each wire profile, by profile: a control for that profile's selections."""

FAMILIES: tuple[str, ...] = (
    "RES",
    "FIN",
    "STOP",
    "STR",
    "MSG",
    "TOOL",
    "CFG",
    "ERR",
    "NT",
    "AB",
    "CACHE",
    "HARN",
)
"""The clause families the library must cover, each with at least one adapter the harness catches."""

BROKEN_ADAPTERS: list[BrokenAdapter] = [
    *results.ADAPTERS,
    *streaming.ADAPTERS,
    *naive.ADAPTERS,
    *requests.ADAPTERS,
    *errors.ADAPTERS,
    *faults.ADAPTERS,
    *coverage.ADAPTERS,
    *compat.ADAPTERS,
    *stream_gaps.ADAPTERS,
    *wire_gaps.ADAPTERS,
    *anthropic_requests.ADAPTERS,
    *anthropic_responses.ADAPTERS,
    *gemini_requests.ADAPTERS,
    *gemini_responses.ADAPTERS,
    *responses_requests.ADAPTERS,
    *responses_stream.ADAPTERS,
    *bedrock.ADAPTERS,
    *cohere.ADAPTERS,
    *undeclared.ADAPTERS,
    *hostile.ADAPTERS,
    *generated.ADAPTERS,
    *slow_callbacks.ADAPTERS,
    *late_callbacks.ADAPTERS,
    *minted_ids.ADAPTERS,
    *recorded.ADAPTERS,
    *timeouts.ADAPTERS,
    *retry_gaps.ADAPTERS,
    *request_gaps.ADAPTERS,
    *power.ADAPTERS,
    *crashes.ADAPTERS,
    *field_bugs.ADAPTERS,
]
