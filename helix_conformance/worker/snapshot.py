"""Plain-data pictures of what the adapter produced, and the objects the checks read rebuilt from them.

The worker encodes results, errors and callback arguments as JSON with tags (``$model``, ``$error``,
``$object``, ``$ref``…); the parent rebuilds contract objects (``TextStepResult``, ``HelixError``…) with
no validation (as ``model_construct``) so the checks judge them as before, and stand-ins of the same class name for anything
else. Nothing is unpickled and nothing of the adapter's code runs in the parent. The encoder bounds depth
and size: a value it cannot read (too deep, too large, or an attribute that raises) becomes an
``$unreadable`` marker, which the checks see as a result that is not a StepResult (RES-01).
"""

from __future__ import annotations

import base64
import math
from typing import Any

from .. import contract
from ..contract import HelixError
from ..contract._model import ContractModel
from ..replay.where import where_lines

MAX_DEPTH = 100
"""How deeply a value may nest; deeper is 'the result could not be read: nested deeper than 100'."""
MAX_BUDGET = 64 * 1024 * 1024
"""Characters (strings, bytes, one per node) a whole run's snapshot may hold."""
REPR_LIMIT = 1000

CONTRACT_MODELS: dict[str, type[ContractModel]] = {
    name: obj
    for name in contract.__all__
    if isinstance(obj := getattr(contract, name), type) and issubclass(obj, ContractModel)
}
_BY_CLASS = {cls: name for name, cls in CONTRACT_MODELS.items()}
_ERROR_FIELDS = ("message", "code", "retryable", "status_code", "category")


class Unreadable(Exception):
    """A value the encoder refuses: the reason is what the checks will show."""


def _qualified(cls: type) -> tuple[str, str]:
    return str(getattr(cls, "__module__", "?")), str(getattr(cls, "__qualname__", cls.__name__))


class Encoder:
    """Encodes one run's values, sharing identities (``$ref``) so ``is`` still holds after rebuilding (STR-06)."""

    def __init__(self, budget: int = MAX_BUDGET) -> None:
        self.budget = budget
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps encoded objects alive so their id() stays theirs

    def value(self, obj: Any) -> Any:
        """``obj`` encoded, or an ``$unreadable`` marker saying why it could not be."""
        try:
            return self._encode(obj, 0)
        except Unreadable as exc:
            return {"$unreadable": str(exc)}
        except BaseException as exc:  # an attribute that raises anything, KeyboardInterrupt included
            return {"$unreadable": f"reading it raised {_name(exc)}: {_safe_str(exc)}"}

    def _spend(self, amount: int) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise Unreadable(f"larger than {MAX_BUDGET // (1024 * 1024)} MB")

    def _encode(self, obj: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise Unreadable(f"nested deeper than {MAX_DEPTH}")
        self._spend(1)
        kind = type(obj)
        if obj is None or kind is bool or kind is int:
            return obj
        if kind is float:
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if kind is str:
            self._spend(len(obj))
            return obj
        if kind is bytes:
            self._spend(len(obj))
            return {"$bytes": base64.b64encode(obj).decode("ascii")}
        if kind is list:
            return [self._encode(v, depth + 1) for v in list(obj)]
        if kind is tuple:
            return {"$tuple": [self._encode(v, depth + 1) for v in obj]}
        if kind is dict:
            items = list(obj.items())
            if all(type(k) is str and not k.startswith("$") for k, _ in items):
                return {k: self._encode(v, depth + 1) for k, v in items}
            return {"$dict": [[self._encode(k, depth + 1), self._encode(v, depth + 1)] for k, v in items]}
        seen = self.ids.get(id(obj))
        if seen is not None:
            return {"$ref": seen}
        ref = self.ids[id(obj)] = len(self.ids)
        self.keep.append(obj)
        if isinstance(obj, BaseException):
            return self._error(obj, ref, depth)
        base = next((c for c in kind.__mro__ if c in _BY_CLASS), None)
        if base is not None:
            return self._model(obj, base, ref, depth)
        module, qualname = _qualified(kind)
        return {"$object": {"id": ref, "module": module, "qualname": qualname, "repr": _safe_repr(obj)}}

    def _model(self, obj: Any, base: type, ref: int, depth: int) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for name in base.model_fields:  # type: ignore[attr-defined]
            try:
                value = getattr(obj, name)
            except AttributeError:
                continue  # built with model_construct without it: missing in the parent too
            fields[name] = self._encode(value, depth + 1)
        extra = {k: v for k, v in dict(obj).items() if k not in fields}
        module, qualname = _qualified(type(obj))
        return {
            "$model": {
                "id": ref,
                "contract": _BY_CLASS[base],
                "module": module,
                "qualname": qualname,
                "fields": fields,
                "extra": {str(k): self._encode(v, depth + 1) for k, v in extra.items()},
            }
        }

    def _error(self, exc: BaseException, ref: int, depth: int) -> dict[str, Any]:
        module, qualname = _qualified(type(exc))
        fields = {}
        for name in _ERROR_FIELDS:
            try:
                value = getattr(exc, name)
            except Exception:
                continue
            fields[name] = self.value(value) if name != "category" else _plain_or_repr(value)
        cause = getattr(exc, "cause", None) if isinstance(exc, HelixError) else None
        return {
            "$error": {
                "id": ref,
                "module": module,
                "qualname": qualname,
                "helix": isinstance(exc, HelixError),
                "exact_helix": type(exc) is HelixError,
                "str": _safe_str(exc),
                "repr": _safe_repr(exc),
                "fields": fields,
                "cause": self._encode(cause, depth + 1) if cause is not None else None,
                "__cause__": self._encode(exc.__cause__, depth + 1) if exc.__cause__ is not None else None,
                "where": where_lines(exc),
            }
        }


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def _safe_str(obj: Any) -> str:
    try:
        return str(obj)[: REPR_LIMIT * 10]
    except BaseException as exc:
        return f"<str() raised {_name(exc)}>"


def _safe_repr(obj: Any) -> str:
    try:
        return repr(obj)[:REPR_LIMIT]
    except BaseException as exc:
        return f"<repr() raised {_name(exc)}>"


def _plain_or_repr(value: Any) -> Any:
    return value if type(value) in (str, int, float, bool, type(None)) else _safe_repr(value)


# --- the parent side -----------------------------------------------------------------------------------


class SnapshotError(Exception):
    """The worker's snapshot is malformed: a broken or tampering worker."""


class Foreign:
    """Stands for an object of a class the parent does not rebuild; its class keeps the original's name."""

    _helix_repr = ""

    def __repr__(self) -> str:
        return self._helix_repr


class UnreadableResult(Foreign):
    """What the worker could not read (too deep, too large, raising attributes): never a StepResult."""


def _stand_in_class(base: type, module: str, qualname: str, cache: dict[tuple[Any, ...], type]) -> type:
    key = (base, module, qualname)
    cls = cache.get(key)
    if cls is None:  # setdefault: one class per name even when two driver threads meet it at once
        name = qualname.rsplit(".", 1)[-1] or "Unknown"
        cls = cache.setdefault(key, type(name, (base,), {"__module__": module, "__qualname__": qualname}))
    return cls


_CLASSES: dict[tuple[Any, ...], type] = {}


class Decoder:
    """Rebuilds what an Encoder wrote; refs resolve to the same object, so identities survive."""

    def __init__(self) -> None:
        self.refs: dict[int, Any] = {}

    def value(self, data: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH * 3 + 10:
            raise SnapshotError("nested deeper than the encoder allows")
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):
            return [self.value(v, depth + 1) for v in data]
        if not isinstance(data, dict):
            raise SnapshotError(f"unexpected {type(data).__name__}")
        if len(data) == 1:
            ((tag, body),) = data.items()
            if tag.startswith("$"):
                return self._tagged(tag, body, depth)
        return {k: self.value(v, depth + 1) for k, v in data.items()}

    def _tagged(self, tag: str, body: Any, depth: int) -> Any:
        if tag == "$unreadable":
            stand_in = UnreadableResult()
            stand_in._helix_repr = f"<the result could not be read: {body}>"
            return stand_in
        if tag == "$ref":
            if not isinstance(body, int) or body not in self.refs:
                raise SnapshotError(f"a reference to nothing: {body!r}")
            return self.refs[body]
        if tag == "$float":
            return float(str(body))
        if tag == "$bytes":
            return base64.b64decode(str(body))
        if tag == "$tuple":
            return tuple(self.value(v, depth + 1) for v in _list(body))
        if tag == "$dict":
            return {_hashable(self.value(k, depth + 1)): self.value(v, depth + 1) for k, v in _pairs(body)}
        if tag == "$object":
            obj = _stand_in_class(Foreign, str(body["module"]), str(body["qualname"]), _CLASSES)()
            obj._helix_repr = str(body.get("repr", ""))
            self.refs[int(body["id"])] = obj
            return obj
        if tag == "$model":
            return self._model(body, depth)
        if tag == "$error":
            return self._error(body, depth)
        raise SnapshotError(f"unknown tag {tag!r}")

    def _model(self, body: dict[str, Any], depth: int) -> Any:
        cls = CONTRACT_MODELS.get(str(body.get("contract")))
        if cls is None:
            raise SnapshotError(f"not a contract model: {body.get('contract')!r}")
        # What model_construct does, without its per-call signature inspection of default factories:
        # a field the worker did not have stays missing here too.
        model = cls.__new__(cls)
        self.refs[int(body["id"])] = model
        fields = {str(k): self.value(v, depth + 1) for k, v in dict(body.get("fields") or {}).items()}
        extra = {str(k): self.value(v, depth + 1) for k, v in dict(body.get("extra") or {}).items()}
        object.__setattr__(model, "__dict__", {**fields, **extra})
        object.__setattr__(model, "__pydantic_fields_set__", set(fields))
        object.__setattr__(model, "__pydantic_extra__", None)
        object.__setattr__(model, "__pydantic_private__", None)
        return model

    def _error(self, body: dict[str, Any], depth: int) -> BaseException:
        module, qualname = str(body.get("module")), str(body.get("qualname"))
        if body.get("exact_helix"):
            cls: type[BaseException] = HelixError
        else:
            cls = _stand_in_class(HelixError if body.get("helix") else Exception, module, qualname, _CLASSES)
        error: BaseException = cls.__new__(cls)
        self.refs[int(body["id"])] = error
        error.args = (str(body.get("str", "")),)
        fields = dict(body.get("fields") or {})
        for name in ("message", "code", "retryable", "status_code"):
            if name in fields:
                setattr(error, name, self.value(fields[name], depth + 1))
        if isinstance(error, HelixError):
            error.cause = self.value(body.get("cause"), depth + 1)
        dunder = self.value(body.get("__cause__"), depth + 1)
        if isinstance(dunder, BaseException):
            error.__cause__ = dunder
        where = body.get("where")
        if isinstance(where, list) and where:
            error._helix_where = [str(line) for line in where]  # type: ignore[attr-defined]
        return error


def _list(body: Any) -> list[Any]:
    if not isinstance(body, list):
        raise SnapshotError("expected a list")
    return body


def _pairs(body: Any) -> list[tuple[Any, Any]]:
    return [(p[0], p[1]) for p in _list(body) if isinstance(p, list) and len(p) == 2]


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key
