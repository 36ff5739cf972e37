"""While replaying, HTTP clients share their default TLS contexts (replay/tls.py): a client built per run does
not reload the CA bundle, and outside the replay nothing is changed."""

from __future__ import annotations

import ssl

import httpx

from helix_conformance.replay.tls import shared_tls_contexts


def _context(client: httpx.AsyncClient) -> ssl.SSLContext:
    return client._transport._pool._ssl_context  # type: ignore[attr-defined,no-any-return]


def test_clients_share_the_default_context_only_while_replaying() -> None:
    with shared_tls_contexts():
        first, second = httpx.AsyncClient(), httpx.AsyncClient()
        assert _context(first) is _context(second)
        assert ssl.create_default_context(cafile=None) is ssl.create_default_context(cafile=None)
    assert _context(httpx.AsyncClient()) is not _context(httpx.AsyncClient())
    assert ssl.create_default_context() is not ssl.create_default_context()


def test_a_context_asked_for_differently_is_its_own() -> None:
    with shared_tls_contexts():
        assert ssl.create_default_context() is not ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        unverified = httpx.AsyncClient(verify=False)
        assert _context(unverified).verify_mode == ssl.CERT_NONE
