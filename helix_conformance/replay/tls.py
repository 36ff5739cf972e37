"""One TLS context per configuration while replaying: an HTTP client built per run costs nothing to verify.

httpx and httpx2 build a verified ``ssl.SSLContext`` for every client (loading the CA bundle: 30–70 ms of
CPU), and most adapters build a client per adapter or per step (the official SDKs' default). The harness
makes an adapter for every run (thousands in a suite), so without this the CA bundle would be loaded
thousands of times. A replayed request never reaches a TLS handshake (replay/transport.py answers it), so
the contexts are shared: the client is still built exactly as the adapter asks, only the bundle is read once.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator
from typing import Any

_made: dict[tuple[Any, ...], ssl.SSLContext] = {}


def _memoized(make: Callable[..., ssl.SSLContext]) -> Callable[..., ssl.SSLContext]:
    def shared(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        key = (make, args, tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # ``cadata`` as a bytearray, say: build it as asked
            return make(*args, **kwargs)
        if key not in _made:
            _made[key] = make(*args, **kwargs)
        return _made[key]

    shared.__wrapped__ = make  # type: ignore[attr-defined]
    return shared


def _targets() -> list[tuple[Any, str]]:
    """Where the HTTP clients get their default contexts: the ssl module (httpx, aiohttp, requests) and
    httpcore2's own default (httpx2, the official SDKs' client)."""
    targets: list[tuple[Any, str]] = [(ssl, "create_default_context")]
    with contextlib.suppress(ImportError):
        import httpcore2

        if hasattr(httpcore2, "default_ssl_context"):
            targets.append((httpcore2, "default_ssl_context"))
    return targets


@contextlib.contextmanager
def shared_tls_contexts() -> Iterator[None]:
    """Within the block, default TLS contexts are made once per configuration and shared (see above)."""
    saved = [(owner, name, getattr(owner, name)) for owner, name in _targets()]
    for owner, name, original in saved:
        setattr(owner, name, _memoized(original))
    try:
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
