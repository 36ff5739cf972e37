"""``helix-conformance list adapters|profiles|servers|scenarios|clauses``: what the suite holds, as a table."""

from __future__ import annotations

import argparse
import textwrap

from . import UsageFailure

HELP = (
    "list the adapters you can pass to --adapter, the wire profiles, the servers that speak them (for "
    "AdapterSpec.servers), the scenarios or the clauses"
)
KINDS = ("adapters", "profiles", "servers", "scenarios", "clauses")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=KINDS, help="what to list")
    parser.add_argument(
        "--profile",
        help="scenarios or servers of this wire profile only (openai-chat, anthropic-messages, gemini, ...)",
    )
    parser.add_argument("--area", help="clauses of this area only (RES, STR, MSG, ...)")


def run(args: argparse.Namespace) -> int:
    lines = {
        "adapters": _adapters,
        "profiles": _profiles,
        "servers": _servers,
        "scenarios": _scenarios,
        "clauses": _clauses,
    }[args.kind](args)
    print("\n".join(lines))
    return 0


def _adapters(args: argparse.Namespace) -> list[str]:
    from ..adapters import BUILTINS, AdapterNotFound, available, resolve_adapter

    lines = [f"{'name':<16} {'origin':<12} {'profile':<20} {'model':<24} capabilities"]
    for name, target in sorted(available().items()):
        origin = "built-in" if name in BUILTINS else "entry point"
        try:
            spec = resolve_adapter(name).spec
        except AdapterNotFound as exc:  # one broken package must not hide the others
            lines.append(f"{name:<16} {origin:<12} cannot be loaded: {exc}")
            continue
        caps = ", ".join(sorted(spec.capabilities)) or "none"
        lines.append(f"{name:<16} {origin:<12} {spec.wire_profile:<20} {spec.model:<24} {caps}")
        lines.append(f"{'':<16} {target}")
    lines.append(
        "Also accepted: --adapter=pkg.module (a module exposing `spec`) or --adapter=pkg.module:attr."
    )
    return lines


def _profiles(args: argparse.Namespace) -> list[str]:
    from ..profiles import KNOWN_PROFILES
    from ..scenarios import scenarios_for
    from ..scenarios.recorded import REFERENCE_ADAPTERS
    from ..suite import bundled_cassettes

    root = bundled_cassettes()
    lines = [f"{'profile':<20} {'scenarios':>9} {'cassettes':>9}  reference adapter"]
    for name in KNOWN_PROFILES:
        cassettes = len(list((root / name).glob("*.yaml")))
        lines.append(
            f"{name:<20} {len(scenarios_for(name)):>9} {cassettes:>9}  --adapter={REFERENCE_ADAPTERS[name]}"
        )
    lines.append(
        f"{'custom':<20} {'recorded':>9} {'yours':>9}  wire_profile='custom' with your cassette_dir: "
        "see docs/recording.md"
    )
    return lines


def _servers(args: argparse.Namespace) -> list[str]:
    from ..profiles import KNOWN_PROFILES
    from ..profiles.servers import servers_of

    if args.profile and args.profile not in KNOWN_PROFILES:
        raise UsageFailure(f"unknown wire profile {args.profile!r}; known: {', '.join(KNOWN_PROFILES)}")
    lines = [f"{'profile':<20} {'server':<18} name"]
    for profile in [args.profile] if args.profile else KNOWN_PROFILES:
        for n, server in enumerate(servers_of(profile)):
            own = " (the profile's own: the default)" if n == 0 else ""
            lines.append(f"{profile:<20} {server.id:<18} {server.name}{own}")
    lines.append(
        "Declare the servers an adapter targets in AdapterSpec(servers=frozenset({...})); the quirks of the "
        "others are shown in the compatibility matrix and do not fail the gate."
    )
    return lines


def _scenarios(args: argparse.Namespace) -> list[str]:
    from ..profiles import KNOWN_PROFILES
    from ..scenarios import SCENARIOS, scenarios_for

    if args.profile and args.profile not in KNOWN_PROFILES:
        raise UsageFailure(f"unknown wire profile {args.profile!r}; known: {', '.join(KNOWN_PROFILES)}")
    chosen = scenarios_for(args.profile) if args.profile else SCENARIOS
    lines = []
    for scenario in chosen:
        where = ", ".join(sorted(scenario.profiles)) if scenario.profiles else "every profile"
        needs = f"; needs {', '.join(sorted(scenario.requires))}" if scenario.requires else ""
        lines.append(f"{scenario.id}  [{where}{needs}]")
        lines.extend(
            textwrap.wrap(scenario.description, 100, initial_indent="    ", subsequent_indent="    ")
        )
    lines.append(f"{len(chosen)} scenarios. Run one: pytest --adapter=NAME -k SCENARIO")
    return lines


def _clauses(args: argparse.Namespace) -> list[str]:
    from ..clauses import AREAS, CLAUSES

    area = args.area.upper() if args.area else None
    if area and area not in AREAS:
        raise UsageFailure(f"unknown area {args.area!r}; known: {', '.join(AREAS)}")
    lines = []
    for clause in CLAUSES.values():
        if area and clause.area != area:
            continue
        text = textwrap.shorten(clause.text, 90, placeholder=" …")
        lines.append(f"{clause.id:<9} {clause.level:<6} {clause.source:<11} {text}")
    lines.append("Details: helix-conformance explain CLAUSE")
    return lines
