"""The run request's payload (parent to worker, trusted direction): a pickle that also carries exceptions
whose ``__init__`` takes keyword-only arguments (HelixError in scripted results), which plain pickle cannot."""

from __future__ import annotations

import io
import pickle
from typing import Any


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseException):
            return _rebuild_exception, (type(obj), obj.args, dict(obj.__dict__), obj.__cause__)
        return NotImplemented


def _rebuild_exception(
    cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any], cause: BaseException | None
) -> BaseException:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    error.__cause__ = cause
    return error


def dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()
