"""First-order mutations of a Python module with the stdlib ``ast``: one small change per mutant.

Each mutant is the module's source with only the mutated span rewritten, so every other line keeps its
number: a mutant is reported at the line a developer reads, and coverage of the original tells whether the
suite reaches it. The rewrite is checked: the mutant must parse to exactly the mutated tree.
Docstrings, annotations, decorators, ``description=`` texts and the text of log and exception messages are
not mutated: changing them does not change what the contract judges.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Mutant", "MutatorError", "mutants_of", "statement_span"]


class MutatorError(Exception):
    """A mutant's rewritten source did not parse to the intended tree (a bug of the mutator)."""


@dataclass(frozen=True)
class Mutant:
    """One mutation of one file: where, what, and the mutated source of the whole module."""

    file: str
    line: int
    end_line: int
    operator: str
    mutation: str
    source_line: str
    reach: tuple[int, int]
    mutated_source: str = field(repr=False, compare=False)

    @property
    def key(self) -> tuple[str, int, str]:
        """What identifies the mutant across runs (and in ``equivalent_mutants.yaml``)."""
        return (self.file, self.line, self.mutation)

    @property
    def reach_lines(self) -> range:
        """The lines of the statement holding the change (a compound statement's header only): the suite
        reaches the mutant only if it executes one of them."""
        return range(self.reach[0], self.reach[1] + 1)


_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
_GENERICS = frozenset({"dict", "list", "tuple", "set", "frozenset", "type"})
_CALL_SWAPS = {"min": "max", "max": "min", "any": "all", "all": "any"}
_LOG_RECEIVERS = frozenset({"logger", "logging", "log", "warnings"})
_EXCEPTION_NAME = re.compile(r"^[A-Z]\w*(Error|Exception|Warning|Stalled|Aborted)$")
_MESSAGE_TARGET = re.compile(r"(message|detail|suffix)", re.IGNORECASE)
_DELETABLE = (ast.Expr, ast.Raise, ast.Break, ast.Continue, ast.Delete)
_DELETE = object()  # replacement marker: the statement becomes ``pass``


@dataclass
class _Site:
    """A node that may be mutated, and whether string constants under it are message text."""

    node: ast.AST
    in_message: bool


def mutants_of(source: str, file: str) -> list[Mutant]:
    """Every first-order mutant of ``source`` (the text of ``file``), in a deterministic order."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    starts = _line_starts(lines)
    expected_dump = ast.dump(tree)
    parents = _parents(tree)
    found: list[tuple[tuple[int, int, int], Mutant]] = []
    for order, site in enumerate(_sites(tree)):
        for rank, change in enumerate(_changes(site)):
            mutant = _build(source, lines, starts, parents, change, file)
            if mutant is not None:
                target = change[1]
                position = (target.lineno, target.col_offset, order * 100 + rank)  # type: ignore[attr-defined]
                found.append((position, mutant))
    if ast.dump(tree) != expected_dump:
        raise MutatorError(f"{file}: the original tree was left modified")
    found.sort(key=lambda pair: pair[0])
    return _numbered([mutant for _, mutant in found])


def _numbered(mutants: list[Mutant]) -> list[Mutant]:
    """Make ``mutation`` unique on its line: a repeated description gets ``#2``, ``#3``..."""
    seen: dict[tuple[str, int, str], int] = {}
    out: list[Mutant] = []
    for mutant in mutants:
        count = seen.get(mutant.key, 0) + 1
        seen[mutant.key] = count
        out.append(
            mutant if count == 1 else dataclasses.replace(mutant, mutation=f"{mutant.mutation} #{count}")
        )
    return out


# --- which nodes ----------------------------------------------------------------------------------


def _sites(tree: ast.Module) -> Iterator[_Site]:
    """The mutable nodes in source order, outside docstrings, annotations, decorators and log calls."""
    yield from _walk(tree, in_message=False)


def _walk(node: ast.AST, *, in_message: bool) -> Iterator[_Site]:
    if isinstance(node, ast.Expr) and _is_docstring_or_ellipsis(node):
        return
    if isinstance(node, ast.Call) and _is_log_call(node):
        return
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
        return
    if isinstance(node, ast.Assign) and any(_is_dunder_all(t) for t in node.targets):
        return
    if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
        return  # assignment targets are never mutated
    yield _Site(node, in_message)
    if isinstance(node, ast.JoinedStr):
        return  # an f-string is mutated as a whole (its parts have no reliable positions before 3.12)
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "decorator_list", "type_comment"):
            continue
        if name == "slice" and _is_generic_type(node):
            continue  # `Callable[[X], Y | Z]` in a type alias: a type, not a computation
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, ast.AST):
                yield from _walk(child, in_message=in_message or _is_message_field(node, name, child))


def _is_generic_type(node: ast.AST) -> bool:
    """A subscript of a capitalised or builtin generic name: ``Callable[...]``, ``dict[str, Any]``."""
    if not isinstance(node, ast.Subscript):
        return False
    value = node.value
    name = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else ""
    return (name[:1].isupper() and not name.isupper()) or name in _GENERICS


def _is_docstring_or_ellipsis(node: ast.Expr) -> bool:
    value = node.value
    return isinstance(value, ast.Constant) and (isinstance(value.value, str) or value.value is Ellipsis)


def _callee_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_log_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in _LOG_RECEIVERS
    return _callee_name(call) in ("getLogger", "TypeVar")


def _is_dunder_all(target: ast.expr) -> bool:
    return isinstance(target, ast.Name) and target.id == "__all__"


def _is_message_field(parent: ast.AST, name: str, child: ast.AST) -> bool:
    """Whether ``child`` holds the text of an exception or error message, or a ``description=`` (its
    strings are not mutated)."""
    if isinstance(child, ast.keyword) and child.arg == "description":
        return True
    if isinstance(parent, ast.Call) and _EXCEPTION_NAME.match(_callee_name(parent)):
        return name == "args" or (isinstance(child, ast.keyword) and child.arg in ("message", "msg"))
    if isinstance(parent, ast.Assign) and name == "value":
        return any(isinstance(t, ast.Name) and _MESSAGE_TARGET.search(t.id) for t in parent.targets)
    return False


# --- which changes --------------------------------------------------------------------------------

_Change = tuple[str, ast.AST, object]
"""(operator family, the node replaced, its replacement node or _DELETE)."""


def _changes(site: _Site) -> Iterator[_Change]:
    """The first-order changes of one site."""
    node = site.node
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            for swap in _COMPARE_SWAPS.get(type(op), ()):
                new = copy.deepcopy(node)
                new.ops[position] = swap()
                yield "compare", node, new
    elif isinstance(node, ast.BoolOp):
        new_bool = copy.deepcopy(node)
        new_bool.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolean", node, new_bool
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", node, copy.deepcopy(node.operand)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
        new_bin = copy.deepcopy(node)
        new_bin.op = _BINOP_SWAPS[type(node.op)]()
        yield "arithmetic", node, new_bin
    elif isinstance(node, ast.Constant):
        yield from _constant(node, site.in_message)
    elif isinstance(node, ast.JoinedStr) and not site.in_message:
        yield "constant", node, ast.Constant(value="")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAPS:
        new_call = copy.deepcopy(node)
        new_call.func = ast.Name(id=_CALL_SWAPS[node.func.id], ctx=ast.Load())
        yield "call", node, new_call
    elif isinstance(node, ast.Slice):  # off by one: a computed bound moves by one (constants: see _constant)
        for bound in (node.lower, node.upper):
            if bound is not None and not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                yield (
                    "slice",
                    bound,
                    ast.BinOp(left=copy.deepcopy(bound), op=ast.Add(), right=ast.Constant(1)),
                )
    elif isinstance(node, ast.stmt):
        yield from _statement(node)
    for test in _conditions(node):  # a comparison or a `not` is already negated by its own mutants
        if not isinstance(test, ast.Compare) and not (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        ):
            yield "negate", test, ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(test))


def _constant(node: ast.Constant, in_message: bool) -> Iterator[_Change]:
    """0 <-> 1 and n -> n + 1 (off by one), True <-> False, a string emptied (an empty one filled)."""
    value = node.value
    if isinstance(value, bool):
        yield "constant", node, ast.Constant(value=not value)
    elif isinstance(value, int):
        yield "constant", node, ast.Constant(value={0: 1, 1: 0}.get(value, value + 1))
    elif isinstance(value, float):
        yield "constant", node, ast.Constant(value=value + 1.0)
    elif isinstance(value, str) and not in_message:
        yield "constant", node, ast.Constant(value="" if value else "XX")
    elif isinstance(value, bytes) and not in_message:
        yield "constant", node, ast.Constant(value=b"" if value else b"XX")


def _statement(node: ast.stmt) -> Iterator[_Change]:
    """A statement removed (calls, awaited callbacks, raise, break, attribute and item stores), a return
    value dropped, an augmented assignment's operator swapped."""
    stores = isinstance(node, ast.Assign) and all(
        isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets
    )
    if isinstance(node, _DELETABLE) or stores:
        yield "delete", node, _DELETE
    elif isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
        yield "return", node, ast.Return(value=ast.Constant(value=None))
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOP_SWAPS:
        new = copy.deepcopy(node)
        new.op = _BINOP_SWAPS[type(node.op)]()
        yield "arithmetic", node, new


def _conditions(node: ast.AST) -> list[ast.expr]:
    """The conditions of ``if``, ``while``, ``assert``, conditional expressions and comprehension filters."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return [node.test]
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    return []


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


# --- writing a mutant ---------------------------------------------------------------------------


def _line_starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _offset(lines: list[str], starts: list[int], lineno: int, col_bytes: int) -> int:
    """Character offset of an ast position (1-based line, UTF-8 byte column)."""
    line = lines[lineno - 1]
    return starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))


def _build(
    source: str, lines: list[str], starts: list[int], parents: _Parents, change: _Change, file: str
) -> Mutant | None:
    """The mutant rewriting the changed node's span, or None when the span cannot be rewritten in place."""
    operator, target, replacement = change
    first, last = target.lineno, target.end_lineno  # type: ignore[attr-defined]
    assert last is not None
    start = _offset(lines, starts, first, target.col_offset)  # type: ignore[attr-defined]
    end = _offset(lines, starts, last, target.end_col_offset)  # type: ignore[attr-defined]
    breaks = "\n" * (last - first)  # keeps every later line at its number
    if replacement is _DELETE or isinstance(replacement, ast.stmt):
        rest = source[end : starts[last]].strip()
        if breaks and rest and not rest.startswith("#"):
            return None  # another statement follows on the line (``a; b``)
        new_node = ast.Pass() if replacement is _DELETE else replacement
        assert isinstance(new_node, ast.stmt)
        body = ast.unparse(new_node)
        text = body + breaks
        mutation = f"delete `{_short(ast.unparse(target))}`" if replacement is _DELETE else None
    else:
        assert isinstance(replacement, ast.expr)
        new_node, body = replacement, ast.unparse(replacement)
        text, mutation = f"({body}{breaks})", None  # parenthesised: precedence and line breaks are safe
    mutated = source[:start] + text + source[end:]
    _verify(parents, target, new_node, mutated, file)
    if mutation is None:
        mutation = _describe(ast.unparse(target), body)
    reach = _statement_lines(parents, target)
    return Mutant(file, first, last, operator, mutation, lines[first - 1].strip(), reach, mutated)


def _verify(parents: _Parents, target: ast.AST, new_node: ast.AST, mutated: str, file: str) -> None:
    """The rewritten source must parse to the original tree with exactly ``target`` replaced.

    The innermost function around the target (or its top-level statement) is parsed again from the mutant's
    text and compared: every line outside it is the original text, on its original line."""
    line = target.lineno  # type: ignore[attr-defined]
    scope = _scope(parents, target)
    first, last = _first_line(scope), scope.end_lineno
    text = "".join(mutated.splitlines(keepends=True)[first - 1 : last])
    nested = scope.col_offset > 0
    try:
        parsed = ast.parse("if 1:\n" + text if nested else text)
    except SyntaxError as exc:
        raise MutatorError(f"{file}:{line}: a mutant does not parse: {exc}") from exc
    body = parsed.body[0].body if nested and isinstance(parsed.body[0], ast.If) else parsed.body
    holder, name, index = parents[id(target)]
    original = getattr(holder, name)
    try:
        if index is None:
            setattr(holder, name, new_node)
        else:
            original[index] = new_node
        same = len(body) == 1 and _same_tree(body[0], scope)
    finally:
        if index is None:
            setattr(holder, name, original)
        else:
            original[index] = target
    if not same:
        raise MutatorError(f"{file}:{line}: a mutant does not parse to the intended tree")


_Parents = dict[int, tuple[ast.AST, str, "int | None"]]
"""id(node) -> (parent, field, index in the field's list or None)."""


def _parents(tree: ast.AST) -> _Parents:
    parents: _Parents = {}
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        parents[id(item)] = (parent, name, index)
            elif isinstance(value, ast.AST):
                parents[id(value)] = (parent, name, None)
    return parents


def _scope(parents: _Parents, target: ast.AST) -> ast.stmt:
    """The innermost function or class holding ``target``; else its top-level statement."""
    node = target
    while True:
        parent = parents[id(node)][0]
        if isinstance(parent, ast.Module):
            assert isinstance(node, ast.stmt)
            return node
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return parent
        node = parent


def _same_tree(a: object, b: object) -> bool:
    """Structural equality of two syntax trees, positions ignored (``ast.dump`` equality, faster)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            stack.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


def _statement_lines(parents: _Parents, target: ast.AST) -> tuple[int, int]:
    node = target
    while not isinstance(node, ast.stmt):
        node = parents[id(node)][0]
    return statement_span(node)


def statement_span(stmt: ast.stmt) -> tuple[int, int]:
    """First and last line of a simple statement, or of a compound statement's header (up to its body)."""
    inner = [
        child.lineno
        for name in ("body", "orelse", "handlers", "finalbody")
        for child in getattr(stmt, name, ())
        if isinstance(child, (ast.stmt, ast.excepthandler))
    ]
    first = _first_line(stmt)
    last = min(inner) - 1 if inner else stmt.end_lineno or stmt.lineno
    return first, max(first, last)


def _first_line(stmt: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _describe(before: str, after: str, width: int = 70) -> str:
    """```before` -> `after```, cut around the part that differs when either is long."""
    if len(before) <= width and len(after) <= width:
        return f"`{before}` -> `{after}`"
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return f"`{_window(before, prefix, suffix)}` -> `{_window(after, prefix, suffix)}`"


def _window(text: str, prefix: int, suffix: int, context: int = 24) -> str:
    start = max(0, prefix - context)
    end = min(len(text), len(text) - suffix + context)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 16] + "…" + text[-15:]
