"""Write the authored cassettes: each scenario's neutral script rendered by its wire profile.

Run ``python -m helix_conformance.authoring`` to (re)write ``cassettes/``; ``--check`` exits 1 when a
committed cassette differs from what the profile renders (the project's tests run it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .profiles import KNOWN_PROFILES, get_profile
from .replay.cassette import dump_cassette, interaction_dict
from .scenarios import scenarios_for
from .scenarios.model import Scenario, Stream, StreamError

AUTHORED_MODELS = {
    "openai-chat": "gpt-4o-mini-2024-07-18",
    "anthropic-messages": "claude-haiku-4-5-20251001",
    "gemini": "gemini-2.5-flash",
    "openai-responses": "gpt-5-mini-2025-08-07",
    "bedrock-converse": "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "cohere-chat": "command-a-03-2025",
}


def render_cassette(profile_name: str, scenario: Scenario) -> str | None:
    """The cassette text for one scenario, or None when it has no recorded exchange."""
    profile = get_profile(profile_name)
    exchanges = scenario.recorded_exchanges
    if not exchanges:
        return None
    model = AUTHORED_MODELS[profile_name]
    interactions = []
    for i, exchange in enumerate(exchanges):
        response = exchange.response
        if not isinstance(response, (Stream, StreamError)):  # recorded_exchanges holds only these
            continue
        body = profile.render_stream(response, seed=f"{scenario.id}:{i}", model=model)
        interactions.append(
            interaction_dict(
                profile.endpoint_method,
                profile.endpoint_url(model),
                200,
                profile.stream_content_type + ("" if profile.binary_stream else "; charset=utf-8"),
                body if profile.binary_stream else body.decode("utf-8"),
            )
        )
    provenance = {
        "kind": "authored",
        "profile": profile_name,
        "scenario": scenario.id,
        "model": model,
        "generator": "python -m helix_conformance.authoring",
        "note": (
            "Written by helix-conformance from the scenario's neutral script in the provider's exact wire "
            "format (framing and field order as in live recordings); each event is validated against the "
            "official SDK's response types by the project's tests. Not a live recording."
        ),
    }
    return dump_cassette(provenance, interactions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helix_conformance.authoring", description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=Path("cassettes"), help="cassette root (default: cassettes)"
    )
    parser.add_argument("--profile", action="append", choices=KNOWN_PROFILES, help="only this profile")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    args = parser.parse_args(argv)
    drift = []
    for profile_name in args.profile or KNOWN_PROFILES:
        for scenario in scenarios_for(profile_name):
            text = render_cassette(profile_name, scenario)
            if text is None:
                continue
            path = args.out / profile_name / f"{scenario.id}.yaml"
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    drift.append(str(path))
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if drift:
        print("cassettes differ from what the profiles render (run python -m helix_conformance.authoring):")
        print("\n".join(f"  {p}" for p in drift))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
