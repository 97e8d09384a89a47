"""Where YAML data holds a scalar that pydantic's lax mode would coerce across booleans and
numbers (``true`` read as 1 for an int, ``1`` or ``"no"`` read as a boolean), found by walking a
field's type annotation (unions, ``Annotated``, ``Literal``, lists, tuples, dicts) beside its
raw value. Pure; :class:`qoslab.yamlio.StrictModel` raises on what :func:`scalar_mismatch`
finds, so every file the project reads gets the check."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

_NUMBERS = (int, float)


def _admits(annotation: Any, kinds: tuple[type, ...]) -> bool:
    """True when a value of one of ``kinds`` is a leaf of ``annotation`` (its unions, Literal
    values and Annotated types looked through; Any and object admit everything)."""
    if annotation in (Any, object) or annotation in kinds:
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _admits(args[0], kinds)
    if origin is Literal:
        return any(type(a) in kinds for a in args)
    if origin in (Union, UnionType):
        return any(_admits(a, kinds) for a in args)
    return False


_BOOL_FOR_NUMBER = "a YAML boolean (true/false, yes/no, on/off) where a number is expected: write the number"
_NOT_BOOL = "a {kind} where a boolean is expected: write true or false"


def _leaf_mismatch(annotation: Any, value: Any) -> str | None:
    """The problem of one scalar ``value`` at a leaf of ``annotation`` pydantic's lax mode would
    coerce silently, or None."""
    if isinstance(value, bool):
        return _BOOL_FOR_NUMBER if _admits(annotation, _NUMBERS) and not _admits(annotation, (bool,)) else None
    if isinstance(value, (int, float, str)) and _admits(annotation, (bool,)):
        kind = "string" if isinstance(value, str) else "number"
        if not _admits(annotation, (str,) if isinstance(value, str) else _NUMBERS):
            return _NOT_BOOL.format(kind=f"{kind} ({value!r})")
    return None


def scalar_mismatch(annotation: Any, value: Any) -> tuple[tuple[Any, ...], str] | None:
    """Where in ``value`` (a field's raw input: YAML data) a scalar stands that pydantic's lax
    mode would coerce across booleans and numbers, and the message: a boolean where
    ``annotation`` takes a number but no boolean (``rto_min_ms: true`` = 1 ms), or a number or
    string where it takes a boolean but neither (``congestion: 1``, ``congestion: "no"``). The
    location is relative to the field (``()`` for the field itself, ``(0, 0)`` for
    ``port_ranges: [[true, 5]]``); None when nowhere. Nested models are left to their own
    validator. Pure."""
    if not isinstance(value, (list, tuple, dict)):
        msg = _leaf_mismatch(annotation, value)
        return None if msg is None else ((), msg)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return scalar_mismatch(args[0], value)
    if origin in (Union, UnionType):
        return next((hit for a in args if (hit := scalar_mismatch(a, value)) is not None), None)
    if isinstance(value, dict) and origin is dict and len(args) == 2:
        for k, item in value.items():
            hit = scalar_mismatch(args[0], k)
            if hit is not None or (hit := scalar_mismatch(args[1], item)) is not None:
                return (k, *hit[0]), hit[1]
        return None
    if isinstance(value, (list, tuple)) and origin in (list, tuple, set, frozenset) and args:
        for i, item in enumerate(value):
            if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
                if i >= len(args):
                    break
                inner = args[i]
            else:
                inner = args[0]
            if (hit := scalar_mismatch(inner, item)) is not None:
                return (i, *hit[0]), hit[1]
    return None
