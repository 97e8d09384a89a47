"""Where YAML data holds a scalar that pydantic's lax mode would coerce across types (``true``
read as 1 for an int, ``1`` or ``"no"`` read as a boolean, ``"40"`` or ``40.0`` read as the
integer 40), found by walking a
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


_BOOL_FOR_NUMBER = "a YAML boolean (true/false) where a number is expected: write the number"
_NOT_BOOL = "a {kind} where a boolean is expected: write true or false"
#: YAML 1.1's boolean words: a string in YAML 1.2 (qoslab.yamlcore), named as such where a boolean is expected.
_YAML11_BOOL = frozenset("y Y yes Yes YES n N no No NO on On ON off Off OFF".split())
_STR_FOR_NUMBER = "a string ({value!r}) where a number is expected"
_FRACTION_FOR_INT = "a fractional number ({value!r}) where an integer is expected: write {hint}"


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().isascii()


def _leaf_mismatch(annotation: Any, value: Any, strings: bool = True) -> str | None:
    """The problem of one scalar ``value`` at a leaf of ``annotation`` pydantic's lax mode would
    coerce silently, or None (``strings`` False: a string for a number is let through)."""
    if isinstance(value, bool):
        return _BOOL_FOR_NUMBER if _admits(annotation, _NUMBERS) and not _admits(annotation, (bool,)) else None
    if isinstance(value, (int, float, str)) and _admits(annotation, (bool,)):
        kind = "string" if isinstance(value, str) else "number"
        if not _admits(annotation, (str,) if isinstance(value, str) else _NUMBERS):
            if isinstance(value, str) and value in _YAML11_BOOL:
                return _NOT_BOOL.format(kind=f"string ({value!r}: a boolean in YAML 1.1 only)")
            return _NOT_BOOL.format(kind=f"{kind} ({value!r})")
    if strings and isinstance(value, str) and _admits(annotation, _NUMBERS) and not _admits(annotation, (str,)):
        msg = _STR_FOR_NUMBER.format(value=value if len(value) <= 40 else value[:40] + "...")
        return msg + (": write the number without quotes" if _looks_numeric(value) else "")
    if isinstance(value, float) and _admits(annotation, (int,)) and not _admits(annotation, (float,)):
        hint = f"{int(value)}" if value.is_integer() else "a whole number"
        return _FRACTION_FOR_INT.format(value=value, hint=hint)
    return None


def scalar_mismatch(annotation: Any, value: Any, strings: bool = True) -> tuple[tuple[Any, ...], str] | None:
    """Where in ``value`` (a field's raw input: YAML data) a scalar stands that pydantic's lax
    mode would coerce across types, and the message: a boolean where ``annotation`` takes a
    number but no boolean (``rto_min_ms: true`` = 1 ms), a number or string where it takes a
    boolean but neither (``congestion: 1``, ``congestion: "no"``), a string where it takes a
    number but no string (``set_dscp: "40"``, a quoted port ``"9274"``), a fractional number where
    it takes an integer but no float (``set_dscp: 40.0``). The
    location is relative to the field (``()`` for the field itself, ``(0, 0)`` for
    ``port_ranges: [[true, 5]]``); None when nowhere. Nested models are left to their own
    validator. ``strings`` False lets a string stand for a number (command-line options, text by
    nature). Pure."""
    if not isinstance(value, (list, tuple, dict)):
        msg = _leaf_mismatch(annotation, value, strings)
        return None if msg is None else ((), msg)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return scalar_mismatch(args[0], value, strings)
    if origin in (Union, UnionType):
        return next((hit for a in args if (hit := scalar_mismatch(a, value, strings)) is not None), None)
    if isinstance(value, dict) and origin is dict and len(args) == 2:
        for k, item in value.items():
            hit = scalar_mismatch(args[0], k, strings)
            if hit is not None or (hit := scalar_mismatch(args[1], item, strings)) is not None:
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
            if (hit := scalar_mismatch(inner, item, strings)) is not None:
                return (i, *hit[0]), hit[1]
    return None
