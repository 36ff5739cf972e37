"""A portable cancellation token: the AbortController/AbortSignal pair of the TypeScript framework."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

AbortListener = Callable[[Any], None]


class AbortSignal:
    """Read side of an abort: check ``aborted``, ``await wait()``, or register a listener."""

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[AbortListener] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_listener(self, listener: AbortListener) -> None:
        """Call ``listener(reason)`` once on abort; immediately if already aborted."""
        with self._lock:
            if not self._aborted:
                self._listeners.append(listener)
                return
        listener(self._reason)

    def remove_listener(self, listener: AbortListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    async def wait(self) -> Any:
        """Return the reason once the signal is aborted (immediately if it already is)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def settle(reason: Any) -> None:
            if not future.done():
                future.set_result(reason)

        def wake(reason: Any) -> None:
            loop.call_soon_threadsafe(settle, reason)

        self.add_listener(wake)
        try:
            return await future
        finally:
            self.remove_listener(wake)

    def _abort(self, reason: Any) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self._reason = reason
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(reason)


class AbortController:
    """Write side: ``abort(reason)`` trips the ``signal`` once; later calls do nothing."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = "aborted") -> None:
        self.signal._abort(reason)
