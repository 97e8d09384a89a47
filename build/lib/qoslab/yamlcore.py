"""YAML 1.2's core schema for PyYAML, and the YAML 1.1 forms it refuses by name.

PyYAML resolves plain scalars by YAML 1.1: ``off``/``yes``/``on``/``no`` are booleans, ``2:11:12``
is the sexagesimal 7872, ``131_072`` and ``0x10`` are integers, ``010`` is octal 8 and
``2026-11-29`` a date. YAML 1.2 (the version every current tool writes) reads the first four as
strings, ``010`` as 10, and has no dates. Here:

* :class:`CoreResolver` resolves plain scalars by YAML 1.2's core schema (null, ``true``/``false``
  in three spellings, decimal integers, floats with ``.inf``/``.nan``); everything else is a string,
  so ``capture: off`` is the policy ``"off"`` and ``offloads: off`` a string that the boolean field
  refuses (:mod:`qoslab.laxtypes`), and a date is text.
* :func:`yaml11_form` names a plain scalar that looks like a number but whose meaning differs
  between YAML 1.1 and 1.2 or that the project refuses in either (sexagesimal, hexadecimal, octal,
  binary, digit separators, a leading zero): rather than read either way, the loader
  (:func:`qoslab.yamlio.read_yaml`) raises ``FILE:LINE: FIELD: ...`` for it; quoting the text
  makes it a string in both versions.
* :data:`StrictLoader`: PyYAML's safe loader with this schema and without aliases (over libyaml's
  parser where PyYAML has it, composed in Python either way).
* :data:`DUMP_RESOLVERS` makes a dumper quote every string either version would read as something
  else, so what the project writes reads back the same by both.

Pure; no I/O.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^[-+]?[0-9]+$", re.ASCII)
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", re.ASCII)


class CoreResolver(yaml.resolver.BaseResolver):
    """PyYAML resolver for YAML 1.2's core schema (no 1.1 booleans, sexagesimals, dates, merge
    keys); :func:`yaml11_form` is checked on the same scalars before construction."""

    yaml_implicit_resolvers: dict[Any, Any] = {}


CoreResolver.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
CoreResolver.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])
CoreResolver.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
CoreResolver.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))

#: The YAML 1.1 implicit forms, each with its name and the advice given: (pattern, what, advice).
_FORMS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$", re.ASCII),
     "a YAML 1.1 sexagesimal (base 60) number (a string in YAML 1.2)", "write the number in decimal, or quote it"),
    (re.compile(r"^[-+]?0[xX][0-9a-fA-F_]+$"), "a hexadecimal number", "write it in decimal"),
    (re.compile(r"^[-+]?0[oObB][0-9_]+$"), "an octal or binary number", "write it in decimal"),
    (re.compile(r"^[-+]?0[0-9_]+$", re.ASCII),
     "a number with a leading zero (octal in YAML 1.1, decimal in YAML 1.2)", "write it without the leading zero"),
    (re.compile(r"^[-+]?[0-9._]*[0-9]_[0-9._]*(?:[eE][-+]?[0-9]+)?$", re.ASCII),
     "a number with digit separators (a number in YAML 1.1, a string in YAML 1.2)", "write it without the '_'"),
)


def yaml11_form(node: yaml.Node) -> str | None:
    """The problem of a plain (unquoted) scalar ``node`` whose text YAML 1.1 and 1.2 read
    differently or that the project refuses (``2:11:12``, ``0x28``, ``131_072``, ``010``), as
    ``'TEXT' is WHAT: ADVICE``; None for quoted scalars, collections and every other text. Pure."""
    if not isinstance(node, yaml.ScalarNode) or node.style:  # plain: None (PyYAML) or "" (libyaml)
        return None
    text = node.value
    for pattern, what, advice in _FORMS:
        if pattern.match(text):
            shown = text if len(text) <= 40 else text[:40] + "..."
            return f"{shown!r} is {what}: {advice}"
    return None


#: Implicit resolvers for a dumper: YAML 1.1's (PyYAML's) and YAML 1.2 core's together, so a
#: string that either version would read as a non-string is quoted on output.
DUMP_RESOLVERS: dict[Any, Any] = {}
for _src in (yaml.resolver.Resolver.yaml_implicit_resolvers, CoreResolver.yaml_implicit_resolvers):
    for _first, _items in _src.items():
        DUMP_RESOLVERS.setdefault(_first, []).extend(_items)
for _pattern, _what, _advice in _FORMS:  # every refused form quoted too (a string that reads back)
    for _first in "0123456789-+":
        DUMP_RESOLVERS.setdefault(_first, []).append(("tag:yaml.org,2002:yaml11", _pattern))


class _AliasFree:
    """A composer step refusing aliases (``*name``): a few hundred bytes of them can expand to
    gigabytes (a "billion laughs"); qoslab files never need one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):  # type: ignore[attr-defined]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in qoslab files",
                                              self.peek_event().start_mark)  # type: ignore[attr-defined]
        return super().compose_node(parent, index)  # type: ignore[misc]


class PyStrictLoader(_AliasFree, yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser,
                      yaml.composer.Composer, yaml.constructor.SafeConstructor, CoreResolver):
    """PyYAML's safe loader with YAML 1.2's core schema (qoslab.yamlcore) and without aliases,
    all in Python (where PyYAML was built without libyaml)."""

    def __init__(self, stream: str):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        CoreResolver.__init__(self)


#: The loader :func:`qoslab.yamlio.read_yaml` uses: libyaml's parser where PyYAML has it.
StrictLoader: Any = PyStrictLoader
if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class CStrictLoader(_AliasFree, yaml.composer.Composer, yaml.constructor.SafeConstructor, CoreResolver,
                         CParser):
        """The same loader over libyaml's parser (its events; composed in Python, so aliases and
        depth are checked as above): four times faster, so a 1 MiB file reads in well under a
        second."""

        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            CoreResolver.__init__(self)

    StrictLoader = CStrictLoader
