"""The config-mode handlers of the IOS-XE dialect's MQC lines (:mod:`.xe`), registered into
:data:`qoslab.ios.interpret.HANDLERS` when :mod:`qoslab.ios` is imported (pure apart from
mutating the config they are given).

- ``match dscp`` / ``match ip dscp`` in a class-map: kept as ``match dscp NAME ...`` (IOS-XE prints
  the names, RFC 2474/2597/3246, whatever was typed);
- a policy-map class action: one per kind (``set``, ``police``, ``priority``, ``bandwidth``,
  ``queue-buffers``, and ``queue-limit dscp V`` per DSCP), a new one replacing the old.
  IOS-XE's own checks (Catalyst 9300 QoS configuration guide, 17.x, "Restrictions for QoS"):
  ``priority`` and ``bandwidth`` exclude each other in one class (refused here with the caret
  under the line; IOS-XE's own message text is not reproduced).
"""

from __future__ import annotations

from .config import Mode
from .grammar import IosError
from .interpret import HANDLERS, Ctx
from .xe import normalize_dscp_words, pmapc_key


def _remove(lines: list[str], key: str) -> None:
    lines[:] = [x for x in lines if not (x == key or x.startswith(key + " "))]


def xe_cmap_line(c: Ctx) -> Mode:
    """``match dscp ...`` in ``(config-cmap)``."""
    assert c.mode.target is not None
    children = c.rc.class_maps[c.mode.target].children
    text = " ".join(normalize_dscp_words(c.words))
    if c.negate:
        _remove(children, text)
    elif text not in children:
        children.append(text)
    return c.mode


def xe_pmapc_line(c: Ctx) -> Mode:
    """An action in ``(config-pmap-c)`` (see the module doc). Raises IosError (at the first word)
    for ``priority`` beside ``bandwidth`` in one class."""
    assert c.mode.target is not None
    sec = next(s for s in c.rc.policy_maps[c.mode.target].subsections if s.header == f"class {c.mode.sub}")
    words = normalize_dscp_words(c.words)
    key = pmapc_key(words)
    if c.negate:
        _remove(sec.children, key)
        return c.mode
    other = {"priority": "bandwidth", "bandwidth": "priority"}.get(key)
    if other and any(x.split()[0] == other for x in sec.children):
        raise IosError(c.line, c.body[0][1])
    text = " ".join(words)
    if key == "police" and "conform-action" not in text:
        text += " conform-action transmit exceed-action drop"  # the defaults, shown as IOS-XE shows them
    for i, existing in enumerate(sec.children):
        if pmapc_key(existing.split()) == key:
            sec.children[i] = text
            return c.mode
    sec.children.append(text)
    return c.mode


HANDLERS.update({"xe-cmap": xe_cmap_line, "xe-pmapc": xe_pmapc_line})
