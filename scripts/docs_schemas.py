"""The schema reference pages (docs/reference/schemas/*.md), generated from the pydantic models.

:func:`render_all` returns ``{path: markdown}``: one page per file kind (playbook, topology, QoS
profile, flood, device file), each model a table of its fields with type, default, unit, bounds
and description; nested models get their own table. The description is the field's own
(``Field(description=...)``), else the one line that ``docs/reference/schemas/fields.yaml``
gives it (for models whose packages the docs do not edit); a field with neither is an error
(:class:`MissingDescription`), so a new field cannot reach the site undocumented.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types as at
import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from qoslab.profiles.model import Profile
from qoslab.registry import workloads
from qoslab.switch.device import Device
from qoslab.topology import Topology
from qoslab.trafficgen.definitions import FloodDefinition
from qoslab.trafficgen.patternmodel import Pattern
from qoslab.trials.playbook import Playbook

ROOT = Path(__file__).resolve().parents[1]
FIELDS_FILE = ROOT / "docs/reference/schemas/fields.yaml"

#: Unit of a field, by its name's suffix (the code's convention: ``timeout_s``, ``queue_ms``).
SUFFIX_UNITS = (("_ms", "ms"), ("_us", "µs"), ("_s", "s"), ("_bytes", "bytes"), ("_bps", "bit/s"),
                ("_pps", "packets/s"), ("_pct", "%"), ("_frames", "frames"), ("_mbit", "Mbit/s"))

#: (page, title, file kind, root model, the files it reads).
PAGES: list[tuple[str, str, type[BaseModel], str]] = [
    ("playbook", "Playbook", Playbook, "`playbooks/*.yaml` (a campaign: `qoslab campaign run FILE`)"),
    ("topology", "Topology", Topology, "`playbooks/topologies/*.yaml` (`qoslab topology validate FILE`)"),
    ("profile", "QoS profile", Profile, "`qos-profiles/*.yaml` (`qoslab switch render NAME`)"),
    ("flood", "Flood", FloodDefinition, "`traffic-gen/*.yaml` (`qoslab flood run FILE`)"),
    ("device", "Device file", Device, "a real switch's endpoint and credentials (`qoslab switch push --device FILE`)"),
]


class MissingDescription(Exception):
    """A field that has no description in its model nor in fields.yaml (message: model.field)."""


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " | ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"map {_type_name(args[0])} -> {_type_name(args[1])}" if args else "map"
    if ann is type(None):
        return "null"
    if isinstance(ann, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "Any": "any"}.get(
            ann.__name__, ann.__name__)
    return re.sub(r"typing\.", "", str(ann))


def _models_in(ann: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation refers to (nested tables)."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for a in typing.get_args(ann) for m in _models_in(a)]


def _bounds(field: Any) -> str:
    parts = []
    for m in field.metadata:
        for attr, sym in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            v = getattr(m, attr, None)
            if isinstance(m, (at.Gt, at.Ge, at.Lt, at.Le, at.Interval)) and v is not None:
                parts.append(f"{sym} {v:,}" if isinstance(v, int) else f"{sym} {v}")
        if isinstance(m, at.MinLen):
            parts.append(f"length >= {m.min_length}")
        if isinstance(m, at.MaxLen):
            parts.append(f"length <= {m.max_length}")
    return ", ".join(parts)


#: Units of fields whose names carry none (model.field -> unit).
NAMED_UNITS = {"Link.rate": "bit/s", "Topology.flood_rate_cap": "bit/s", "Host.cpu": "cores",
               "Buffers.switch_port_bytes": "bytes", "Police.rate_bps": "bit/s"}


def _unit(model: str, name: str) -> str:
    if f"{model}.{name}" in NAMED_UNITS:
        return NAMED_UNITS[f"{model}.{name}"]
    return next((u for suffix, u in SUFFIX_UNITS if name.endswith(suffix)), "")


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        try:
            d = field.default_factory()
        except TypeError:
            return "(computed)"
    else:
        d = field.default
    if d is PydanticUndefined or d is None:
        return ""
    if isinstance(d, BaseModel):
        return "(see its table)"
    return f"`{d!r}`" if isinstance(d, str) else f"`{d}`"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(model: type[BaseModel], notes: dict[str, str], missing: list[str]) -> list[str]:
    doc = " ".join((model.__doc__ or "").split()).replace("``", "`")
    doc = re.sub(r":(?:mod|func|class|attr):`([^`]+)`", r"`\1`", doc)
    out = [f"### `{model.__name__}`", "", doc, "",
           "| field | type | default | unit | bounds | description |", "| --- | --- | --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if field.exclude:  # bookkeeping (the file a model was read from), never written by a user
            continue
        key = f"{model.__name__}.{name}"
        # a field inherited from a base model (WorkloadBase.hosts) takes the base's description
        desc = field.description or next((notes[f"{c.__name__}.{name}"] for c in model.__mro__
                                          if f"{c.__name__}.{name}" in notes), None)
        if not desc:
            missing.append(key)
            desc = ""
        out.append(f"| `{field.alias or name}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} | "
                   f"{_unit(model.__name__, name)} | {_cell(_bounds(field))} | {_cell(desc)} |")
    return out + [""]


def _walk(root: type[BaseModel]) -> list[type[BaseModel]]:
    """The root model and every model its fields refer to, depth first, each once."""
    seen: list[type[BaseModel]] = []
    todo = [root]
    while todo:
        m = todo.pop(0)
        if m in seen:
            continue
        seen.append(m)
        for f in m.model_fields.values():
            todo.extend(x for x in _models_in(f.annotation) if x not in seen)
    return seen


def _extra_models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Models a field takes by name rather than by annotation: the playbook's workload backends,
    a flood's ``pattern:`` generators."""
    if root is Playbook:
        out = []
        for name in workloads.names_in_order():
            model = getattr(workloads.get(name), "settings_model", None)
            if isinstance(model, type) and issubclass(model, BaseModel):
                out.append(model)
        return out
    if root is FloodDefinition:
        return [Pattern]
    return []


def render_page(slug: str, title: str, root: type[BaseModel], files: str, notes: dict[str, str],
                missing: list[str]) -> str:
    models = _walk(root)
    for extra in _extra_models(root):
        models += [m for m in _walk(extra) if m not in models]
    lines = [f"# {title} schema", "",
             f"The files: {files}. Generated by `scripts/docs_gen.py` from the pydantic model "
             f"`{root.__module__}.{root.__name__}` and the models it nests: every field, its type, default, "
             "unit (from the field's name: `_s` seconds, `_ms` milliseconds, `_bytes`) and bounds. "
             "Unknown fields are errors, and every error names the file, line and field.", ""]
    for m in models:
        lines += _table(m, notes, missing)
    return "\n".join(lines).rstrip() + "\n"


def render_all() -> dict[Path, str]:
    """Every schema page: path relative to the repository -> Markdown. Raises
    :class:`MissingDescription` naming every field without a description."""
    notes: dict[str, str] = yaml.safe_load(FIELDS_FILE.read_text(encoding="utf-8")) or {}
    missing: list[str] = []
    out = {Path(f"docs/reference/schemas/{slug}.md"): render_page(slug, title, root, files, notes, missing)
           for slug, title, root, files in PAGES}
    if missing:
        raise MissingDescription(f"{FIELDS_FILE.relative_to(ROOT)}: no description for {len(missing)} field(s): "
                                 + ", ".join(missing))
    return out
