"""Load a YAML file into a pydantic model with errors that name the file, line and field.

Every YAML file the project reads (topologies, QoS profiles, flood definitions, campaign
playbooks, device files, a campaign folder's playbook copy) goes through :func:`read_yaml` (and
:func:`load_model` on top of it), so a typo anywhere gives the same kind of message::

    playbooks/topologies/bad.yaml:14: hosts[2].address: 10.0.0.1 is outside 198.18.0.0/15 ...

The reader is strict where PyYAML is lenient: plain scalars are read by YAML 1.2's core schema and
YAML 1.1's implicit forms (``off``, ``2:11:12``, ``0x28``, ``131_072``) are refused by name
(:mod:`qoslab.yamlcore`); the file must be UTF-8 text of at most
MAX_YAML_BYTES; aliases (``*name``) are refused, so a few hundred bytes cannot expand to
gigabytes (a "billion laughs" alias bomb); a key given twice in one mapping is an error (PyYAML
silently keeps the last); nesting deeper than MAX_YAML_DEPTH is refused. Everything written back
(:func:`dump_yaml`) is alias-free, so it reads again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from .errors import ConfigError
from .laxtypes import scalar_mismatch
from .yamlcore import DUMP_RESOLVERS, PyStrictLoader, StrictLoader, yaml11_form

#: Largest YAML file read (bytes). The project's largest file is a few KB; the cap bounds memory
#: and time for anything handed to a loader by mistake or malice.
MAX_YAML_BYTES = 1 << 20
#: Deepest nesting of mappings/sequences read (PyYAML's composer recurses per level).
MAX_YAML_DEPTH = 50

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base of every model read from a file (topology, profile, flood, playbook, device):
    unknown fields are errors (a typo never passes silently), instances are frozen, and each
    field takes only its own type: a YAML boolean is never taken for a number, nor a number or
    string for a boolean, nor a string or a fractional number for an integer
    (:func:`scalar_mismatch`: pydantic's lax mode reads ``true`` as 1, ``1`` or ``"no"`` as a
    boolean and ``"40"`` or ``40.0`` as 40); a field with its own ``before`` validator parses its
    input itself."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, v: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        field = cls.model_fields.get(name)
        if field is None or name in _own_parsers(cls):
            return v
        text = isinstance(info.context, dict) and info.context.get(TEXT_OPTIONS) is True
        if (hit := scalar_mismatch(field.annotation, v, strings=not text)) is not None:
            raise SubFieldProblem(*hit)
        return v


#: Validation context key (``model.model_validate(data, context={TEXT_OPTIONS: True})``): the
#: values are command-line options, text by nature, so a string is taken for a number (``--size
#: 400``); booleans are still never numbers.
TEXT_OPTIONS = "text_options"


def _own_parsers(model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``model`` with a validator of their own that reads the raw input (``mode``
    before, wrap or plain: ``rate: 50Mbit`` for an int field); the lax-type check leaves their
    input to it."""
    found = _OWN_PARSERS.get(model)
    if found is None:
        found = _OWN_PARSERS[model] = frozenset(
            f for dec in model.__pydantic_decorators__.field_validators.values()
            if dec.info.mode in ("before", "wrap", "plain") for f in dec.info.fields if f != "*")
    return found


_OWN_PARSERS: dict[type[BaseModel], frozenset[str]] = {}


class FieldProblem(ConfigError):
    """Raised by a model validator for a cross-field problem that belongs to one field:
    ``loc`` is its pydantic-style location, e.g. ``("hosts", 3, "address")``. Pydantic lets it
    through unchanged, so :func:`load_model` can report the field's own line."""

    def __init__(self, loc: tuple[Any, ...], msg: str):
        self.loc, self.msg = tuple(loc), msg
        super().__init__(f"{format_loc(self.loc)}: {msg}")


class SubFieldProblem(ValueError):
    """Raised by a validator of a model that is nested in another (a playbook's ``workload``) for
    a problem of one of its own fields (``loc`` relative to the nested model): pydantic reports
    the nested model's location, :func:`error_loc` adds ``loc`` to it."""

    def __init__(self, loc: tuple[Any, ...], msg: str):
        self.loc = tuple(loc)
        super().__init__(msg)


def error_loc(err: Any) -> tuple[Any, ...]:
    """The full location of one pydantic error (``ValidationError.errors()`` item), a nested
    model's SubFieldProblem location included."""
    sub = (err.get("ctx") or {}).get("error")
    return tuple(err["loc"]) + (sub.loc if isinstance(sub, SubFieldProblem) else ())


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the field at ``loc`` (pydantic error location): the line of its key in a
    mapping (where the field is written, even when its value starts on the next line), of the
    item in a sequence; of its nearest existing parent when the field itself is missing."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            names = (key, str(key), str(key).lower())  # a YAML boolean key (`true:`) is True in the location
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) in names), None)
            nxt, at = (pair[1], pair[0]) if pair else (None, None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = at = node.value[key]
        else:
            nxt = at = None
        if nxt is None or at is None:
            break
        node, line = nxt, at.start_mark.line + 1
    return line


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('hosts', 2, 'address')`` -> ``hosts[2].address``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


#: Characters of a problem's text kept in an error line: a hostile file's 200 KB value is not
#: echoed whole.
MAX_PROBLEM_CHARS = 200


def clip(msg: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """``msg`` cut to ``limit`` characters, saying how long it was."""
    return msg if len(msg) <= limit else f"{msg[:limit]}... ({len(msg)} characters)"


def problem_text(err: Any) -> str:
    """One pydantic error (a dict of ``e.errors()``) as the problem's text: a NaN or an infinite
    number is named as such (pydantic says "should be <= 600" of a NaN), an unknown field is a
    typo, and the text is clipped (:func:`clip`)."""
    value = err.get("input")
    if isinstance(value, float) and value != value:
        return "not a number (NaN): give a finite number"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "infinite: give a finite number"
    if err["type"] == "extra_forbidden":
        return "unknown field (typo?)"
    return clip(" ".join(str(err["msg"]).removeprefix("Value error, ").split()))


def config_error(path: str | Path, loc: tuple[Any, ...], msg: str) -> ConfigError:
    """A ConfigError ``FILE:LINE: FIELD: msg`` for the field at ``loc`` (pydantic-style location)
    of the YAML file at ``path`` (the line of its nearest existing parent when it is missing)."""
    line = None
    try:
        line = _line_of(read_yaml(path)[1], loc)
    except ConfigError:
        pass
    msg = clip(msg)
    return ConfigError(f"{path}:{line}: {format_loc(loc)}: {msg}" if line else f"{path}: {format_loc(loc)}: {msg}")


_StrictLoader: Any = StrictLoader  # (a module global: a test swaps in the all-Python one)
_PyStrictLoader = PyStrictLoader


class _NoAliasDumper(yaml.SafeDumper):
    yaml_implicit_resolvers = DUMP_RESOLVERS  # quotes what YAML 1.1 or 1.2 would read as a non-string

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: Any) -> str:
    """``data`` (plain dicts, lists, scalars) as YAML text without anchors or aliases, keys in
    their given order, so :func:`read_yaml` reads it back."""
    return yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True)


def _check_tree(node: yaml.Node, path: Path, loc: tuple[Any, ...] = ()) -> None:
    """Refuse keys given twice in one mapping, nesting deeper than MAX_YAML_DEPTH and plain
    scalars in a YAML 1.1 form (:func:`qoslab.yamlcore.yaml11_form`)."""
    if (form := yaml11_form(node)) is not None:
        raise ConfigError(f"{path}:{node.start_mark.line + 1}: {format_loc(loc)}: {form}")
    if len(loc) > MAX_YAML_DEPTH:
        raise ConfigError(f"{path}:{node.start_mark.line + 1}: {format_loc(loc[:3])}...: nested deeper than "
                          f"{MAX_YAML_DEPTH} levels")
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else f"<{k.tag}>"
            if key in seen:
                raise ConfigError(f"{path}:{k.start_mark.line + 1}: {format_loc((*loc, key))}: key given twice in "
                                  f"one mapping (first on line {seen[key]})")
            seen[key] = k.start_mark.line + 1
            if (form := yaml11_form(k)) is not None:
                raise ConfigError(f"{path}:{k.start_mark.line + 1}: {format_loc((*loc, key))}: key {form}")
            _check_tree(v, path, (*loc, key))
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _check_tree(v, path, (*loc, i))


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file (``a named pipe``), else None."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _irregular(path: str | Path, what: str) -> str:
    return f"{path}: {what}, not a regular file: qoslab reads its inputs from regular files only"


def regular_file(path: str | Path) -> None:
    """Raise ConfigError ``PATH: ...`` unless ``path`` is a regular file (symbolic links followed).
    Decided by stat alone, so a named pipe or a device given as an input is refused by name without
    being opened: reading it could block forever or never end."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    if (what := _not_regular(mode)) is not None:
        raise ConfigError(_irregular(path, what))


def _text(path: Path) -> str:
    """The file's text: at most MAX_YAML_BYTES of UTF-8 of a regular file (:func:`regular_file`;
    opened non-blocking and checked again, so a file swapped for a pipe meanwhile cannot block).
    Raises ConfigError naming file and line."""
    regular_file(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if (what := _not_regular(os.fstat(f.fileno()).st_mode)) is not None:
                raise ConfigError(_irregular(path, what))
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(f"{path}: (file): larger than {MAX_YAML_BYTES} bytes; not a qoslab file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: (encoding): not UTF-8 text (byte 0x{raw[e.start]:02x} at offset "
                          f"{e.start})") from None


def read_yaml(path: str | Path) -> tuple[Any, yaml.Node | None]:
    """Read a YAML file strictly (see the module doc); returns (data, node tree) where the node
    tree gives line numbers (None for an empty file). Raises ConfigError ``FILE:LINE: ...`` for
    an unreadable, oversized or non-UTF-8 file, a syntax error, an alias, a duplicate key or too
    deep nesting."""
    path = Path(path)
    text = _text(path)
    loader = None
    try:
        loader = _StrictLoader(text)
        node = loader.get_single_node()
        if node is not None:
            _check_tree(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        if mark is None and isinstance(e, yaml.reader.ReaderError):
            # (libyaml counts the position in bytes of UTF-8, PyYAML in characters)
            if _StrictLoader is _PyStrictLoader:
                line = text[: e.position].count("\n") + 1
            else:
                line = text.encode()[: e.position].count(b"\n") + 1
            char = chr(e.character) if isinstance(e.character, int) else e.character
            raise ConfigError(f"{path}:{line}: YAML syntax error: {e.reason} (character {char!r})") from None
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(e, "problem", None) or str(e)
        if "nesting depth" in problem:  # libyaml's own limit (1000 levels)
            raise ConfigError(f"{where}: (structure): nested too deeply ({problem})") from None
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}:1: (structure): nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, node


def load_model(path: str | Path, model: type[M], *, overrides: dict[str, Any] | None = None) -> M:
    """Read ``path`` as YAML (:func:`read_yaml`) and validate it as ``model``.

    ``overrides`` are merged over the top-level mapping before validation (e.g. a test renaming
    a testbed). Raises ConfigError whose message is ``FILE:LINE: FIELD: problem`` (one line per
    problem) for an unreadable file, a YAML syntax error, or a validation failure.
    """
    path = Path(path)
    data, node = read_yaml(path)
    if not isinstance(data, dict):
        line = node.start_mark.line + 1 if node is not None else 1
        raise ConfigError(f"{path}:{line}: (top level): expected a mapping of fields, got "
                          f"{type(data).__name__ if data is not None else 'an empty file'}")
    if overrides:
        data = {**data, **overrides}
    try:
        return model.model_validate(data, context={"source": str(path)})
    except FieldProblem as e:
        line = _line_of(node, e.loc)
        raise ConfigError(f"{path}:{line}: {clip(str(e))}" if line else f"{path}: {clip(str(e))}") from None
    except ValidationError as e:
        locs: dict[tuple[Any, ...], Any] = {}
        # a typo first: it explains the "Field required" of the field it was meant to be
        for err in sorted(e.errors(), key=lambda err: err["type"] != "extra_forbidden"):
            locs.setdefault(data_loc(data, error_loc(err)), err)  # one per field (a union reports each member)
        shown = []
        for loc, err in list(locs.items())[:MAX_PROBLEMS_SHOWN]:  # lines only of those shown: linear in the file
            line = _line_of(node, loc)
            shown.append(f"{path}:{line}: " if line else f"{path}: ")
            shown[-1] += f"{format_loc(loc)}: {problem_text(err)}"
        raise ConfigError(one_line(shown, len(locs))) from None


#: Most problems one error line spells out; the others are counted (a file with 60,000 unknown
#: keys gives a line of a few hundred characters, not megabytes).
MAX_PROBLEMS_SHOWN = 3


def one_line(problems: list[str], total: int | None = None) -> str:
    """Several ``FILE:LINE: FIELD: problem`` texts as one line: the first, then the others after
    ``; N more: `` (``total``: how many problems there are, when only the first of them are in
    ``problems``), at most MAX_PROBLEMS_SHOWN spelled out and the rest counted (``and N more``)."""
    total = len(problems) if total is None else max(total, len(problems))
    if total == 1:
        return problems[0]
    shown = problems[:MAX_PROBLEMS_SHOWN]
    rest = total - len(shown)
    return f"{shown[0]}; {total - 1} more: " + "; ".join(shown[1:]) + (f"; and {rest} more" if rest else "")


def data_loc(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of a pydantic error location that names a place in ``data``: union-member and
    validator tags (``rate.str``, ``function-after[...]``) are dropped; a missing field's name is
    kept; the index 0 of a single mapping given for a list (``pattern: {...}``) is skipped, so the
    problem names the mapping's field. Pure."""
    out: list[Any] = []
    cur = data
    for key in loc:
        if isinstance(cur, dict) and key == 0 and isinstance(key, int) and key not in cur:
            continue  # one mapping given where a list of them is taken (``pattern: {...}``): its fields
        if isinstance(cur, dict):
            out.append(key)
            if key not in cur:
                break
            cur = cur[key]
        elif isinstance(cur, list) and isinstance(key, int) and 0 <= key < len(cur):
            out.append(key)
            cur = cur[key]
        else:
            break
    return tuple(out)
