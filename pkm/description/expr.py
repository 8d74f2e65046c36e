"""Safe arithmetic expressions for robot files (``h = "sqrt(c^2 - d^2)"``).

Expressions are parsed with :mod:`ast` and evaluated by walking the tree; nothing is ever passed
to ``eval``. Allowed: numbers, names (parameters and ``pi``), ``+ - * / ** ^`` (``^`` is a power,
as in maths), unary ``+``/``-``, parentheses and the functions in :data:`FUNCTIONS`.

All arithmetic is done on floats, so ``9^9^9`` overflows (an error) instead of building a huge
integer. Errors are :class:`ExprError` (a ``ValueError``) with a one-line message.
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Mapping

#: Functions an expression may call, with their number of arguments (None: one or more).
FUNCTIONS = {
    "sqrt": (math.sqrt, 1),
    "sin": (math.sin, 1),
    "cos": (math.cos, 1),
    "tan": (math.tan, 1),
    "asin": (math.asin, 1),
    "acos": (math.acos, 1),
    "atan": (math.atan, 1),
    "atan2": (math.atan2, 2),
    "radians": (math.radians, 1),
    "degrees": (math.degrees, 1),
    "abs": (abs, 1),
    "min": (min, None),
    "max": (max, None),
}

#: Names with a fixed meaning.
CONSTANTS = {"pi": math.pi}

#: Names a parameter may not take.
RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS)

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: math.pow,
}
_UNARY = {ast.USub: lambda a: -a, ast.UAdd: lambda a: a}


class ExprError(ValueError):
    """An expression is malformed, names something unknown, or cannot be evaluated."""


class CycleError(ExprError):
    """Parameters refer to each other in a cycle; :attr:`cycle` lists the names, first = last."""

    def __init__(self, cycle: list[str]):
        self.cycle = cycle
        super().__init__("parameters refer to each other in a cycle: " + " -> ".join(cycle))


def compile_expr(text: str) -> ast.Expression:
    """Parse ``text`` and check that it only uses allowed constructs; return the tree."""
    source = text.replace("^", "**").strip()
    if not source:
        raise ExprError("empty expression")
    try:
        with warnings.catch_warnings():  # e.g. SyntaxWarning for "1and": never print anything
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise ExprError(f"invalid expression {text!r}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExprError(f"expression too complex or invalid: {text[:40]!r}") from None
    try:
        _check(tree.body, text)
    except RecursionError:
        raise ExprError(f"expression too deeply nested: {text[:40]!r}") from None
    return tree


def _check(node: ast.AST, text: str) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExprError(f"only real numbers are allowed in expression {text!r}")
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise ExprError(f"function '{node.id}' used without arguments in {text!r}")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ExprError(f"operator not allowed in expression {text!r} (use + - * / ^ **)")
        _check(node.left, text)
        _check(node.right, text)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise ExprError(f"operator not allowed in expression {text!r}")
        _check(node.operand, text)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = getattr(node.func, "id", None)
            what = f"unknown function '{name}'" if name else "call not allowed"
            raise ExprError(f"{what} in expression {text!r} (allowed: {', '.join(FUNCTIONS)})")
        if node.keywords:
            raise ExprError(f"keyword arguments not allowed in expression {text!r}")
        nargs = FUNCTIONS[node.func.id][1]
        if (nargs is None and not node.args) or (nargs is not None and len(node.args) != nargs):
            want = "at least 1" if nargs is None else str(nargs)
            raise ExprError(f"{node.func.id}() takes {want} argument(s) in expression {text!r}")
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise ExprError(f"'*' arguments not allowed in expression {text!r}")
            _check(arg, text)
    else:
        raise ExprError(f"construct not allowed in expression {text!r}")


def free_names(tree: ast.Expression) -> set[str]:
    """Names an expression refers to, other than functions and constants."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in RESERVED:
            out.add(node.id)
    return out


def evaluate(expr: str | ast.Expression, values: Mapping[str, float], text: str | None = None) -> float:
    """Value of ``expr`` with names from ``values``; a finite float, else :class:`ExprError`.

    ``expr`` is a string or a tree from :func:`compile_expr`; ``text`` is the source for messages.
    """
    if text is None:
        text = expr if isinstance(expr, str) else "<expression>"
    tree = compile_expr(expr) if isinstance(expr, str) else expr
    try:
        result = _eval(tree.body, values, text)
    except ZeroDivisionError:
        raise ExprError(f"division by zero in {text!r}") from None
    except OverflowError:
        raise ExprError(f"numeric overflow in {text!r}") from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, ExprError):
            raise
        raise ExprError(f"math domain error in {text!r}") from None
    except RecursionError:
        raise ExprError(f"expression too deeply nested: {text[:40]!r}") from None
    if not math.isfinite(result):
        raise ExprError(f"{text!r} is not a finite number")
    return result


def _eval(node: ast.AST, values: Mapping[str, float], text: str) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id not in values:
            raise ExprError(f"unknown parameter '{node.id}' in expression {text!r}")
        return float(values[node.id])
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, values, text), _eval(node.right, values, text))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, values, text))
    if isinstance(node, ast.Call):
        func = FUNCTIONS[node.func.id][0]
        return float(func(*(_eval(a, values, text) for a in node.args)))
    raise ExprError(f"construct not allowed in expression {text!r}")  # pragma: no cover


class ParameterError(ExprError):
    """A problem with one parameter; :attr:`name` says which."""

    def __init__(self, name: str, message: str):
        self.name = name
        super().__init__(message)


def resolve_parameters(definitions: Mapping[str, float | str]) -> dict[str, float]:
    """Evaluate parameters that may refer to each other (in any order) to floats.

    Values are numbers or expression strings. Raises :class:`ParameterError` naming the
    offending parameter for bad names, syntax errors, unknown references and cycles.
    """
    trees: dict[str, ast.Expression | float] = {}
    deps: dict[str, set[str]] = {}
    for name, value in definitions.items():
        if not name.isidentifier():
            raise ParameterError(name, f"parameter name {name!r} is not an identifier")
        if name in RESERVED:
            raise ParameterError(name, f"'{name}' is a reserved name (a function or constant)")
        try:
            if isinstance(value, str):
                trees[name] = compile_expr(value)
                deps[name] = free_names(trees[name])
            else:
                trees[name] = float(value)
                deps[name] = set()
        except ExprError as exc:
            raise ParameterError(name, str(exc)) from None
        for ref in sorted(deps[name]):
            if ref not in definitions:
                raise ParameterError(name, f"unknown parameter '{ref}' in expression {value!r}")

    resolved: dict[str, float] = {}
    state: dict[str, int] = {}  # 1 = in progress, 2 = done

    def value_of(name: str) -> float:
        tree = trees[name]
        try:
            if isinstance(tree, float):
                if not math.isfinite(tree):
                    raise ExprError("not a finite number")
                return tree
            return evaluate(tree, resolved, text=str(definitions[name]))
        except ExprError as exc:
            raise ParameterError(name, str(exc)) from None

    # depth-first with an explicit stack, not recursion: a chain p1 = "p0+1", p2 = "p1+1", … of
    # any length resolves (a recursive visit raised RecursionError after ~1000 links)
    for root in definitions:
        if state.get(root) == 2:
            continue
        state[root] = 1
        path = [root]                              # the names in progress, in order
        todo = [iter(sorted(deps[root]))]          # their references still to visit
        while path:
            ref = next(todo[-1], None)
            if ref is None:                        # all references of path[-1] are resolved
                name = path.pop()
                todo.pop()
                resolved[name] = value_of(name)
                state[name] = 2
            elif state.get(ref) == 1:
                cycle = path[path.index(ref):] + [ref]
                raise ParameterError(cycle[0], str(CycleError(cycle)))
            elif state.get(ref) != 2:
                state[ref] = 1
                path.append(ref)
                todo.append(iter(sorted(deps[ref])))
    return {name: resolved[name] for name in definitions}
