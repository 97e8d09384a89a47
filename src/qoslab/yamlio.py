"""Load a YAML file into a pydantic model with errors that name the file, line and field.

Every validated file of the project (topologies, QoS profiles, flood definitions, campaign
playbooks) goes through :func:`load_model`, so a typo anywhere gives the same kind of message::

    playbooks/topologies/bad.yaml:14: hosts[2].address: 10.0.0.1 is outside 198.18.0.0/15 ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import ConfigError

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base of every model read from a file (topology, profile, flood, playbook, device):
    unknown fields are errors (a typo never passes silently) and instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldProblem(ConfigError):
    """Raised by a model validator for a cross-field problem that belongs to one field:
    ``loc`` is its pydantic-style location, e.g. ``("hosts", 3, "address")``. Pydantic lets it
    through unchanged, so :func:`load_model` can report the field's own line."""

    def __init__(self, loc: tuple[Any, ...], msg: str):
        self.loc, self.msg = tuple(loc), msg
        super().__init__(f"{format_loc(self.loc)}: {msg}")


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (pydantic error location), or of its nearest
    existing parent when the field itself is missing."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        else:
            nxt = None
        if nxt is None:
            break
        node, line = nxt, nxt.start_mark.line + 1
    return line


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('hosts', 2, 'address')`` -> ``hosts[2].address``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def config_error(path: str | Path, loc: tuple[Any, ...], msg: str) -> ConfigError:
    """A ConfigError ``FILE:LINE: FIELD: msg`` for the field at ``loc`` (pydantic-style location)
    of the YAML file at ``path`` (the line of its nearest existing parent when it is missing)."""
    line = None
    try:
        line = _line_of(yaml.compose(Path(path).read_text(), Loader=yaml.SafeLoader), loc)
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        pass
    return ConfigError(f"{path}:{line}: {format_loc(loc)}: {msg}" if line else f"{path}: {format_loc(loc)}: {msg}")


def load_model(path: str | Path, model: type[M], *, overrides: dict[str, Any] | None = None) -> M:
    """Read ``path`` as YAML and validate it as ``model``.

    ``overrides`` are merged over the top-level mapping before validation (e.g. a test renaming
    a testbed). Raises ConfigError whose message is ``FILE:LINE: FIELD: problem`` (one line per
    problem) for an unreadable file, a YAML syntax error, or a validation failure.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: YAML syntax error: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    if overrides:
        data = {**data, **overrides}
    try:
        return model.model_validate(data, context={"source": str(path)})
    except FieldProblem as e:
        line = _line_of(node, e.loc)
        raise ConfigError(f"{path}:{line}: {e}" if line else f"{path}: {e}") from None
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = tuple(err["loc"])
            line = _line_of(node, loc)
            where = f"{path}:{line}" if line else str(path)
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field (typo?)"
            lines.append(f"{where}: {format_loc(loc)}: {msg}")
        raise ConfigError("\n".join(lines)) from None
