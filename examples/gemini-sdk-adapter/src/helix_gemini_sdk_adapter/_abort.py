"""Racing SDK work against the Helix abort signal (AB-02): the SDK knows nothing of our AbortSignal."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from helix_conformance.contract import AbortSignal

T = TypeVar("T")


class Aborted(Exception):
    """The abort signal fired while the work was running; the work was cancelled and has finished."""


async def until_aborted(work: Coroutine[Any, Any, T], signal: AbortSignal | None) -> T:
    """``await work``, unless ``signal`` fires first: then cancel it (its ``async with`` closes the SDK
    stream) and raise Aborted. The work never outlives this call, whatever happens (HARN-04, NT-03)."""
    if signal is None:
        return await work
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if signal.aborted:
            raise Aborted
        return task.result()
    finally:
        for pending in (task, waiter):
            if not pending.done():
                pending.cancel()
            await asyncio.wait({pending})
            if not pending.cancelled():
                pending.exception()  # retrieved: no "exception was never retrieved" warning
