"""The virtual EOS switch's show dispatch: an EXEC show action -> (text, JSON model) for the
session (:mod:`.session`), from the switch's state (:mod:`.state`), the text renderers
(:mod:`.show`) and the JSON models (:mod:`.showjson`). A command without a JSON model gives
:data:`NO_MODEL` (``| json`` and eAPI's ``format: json`` answer "unconverted command", as EOS does
for its commands that have none)."""

from __future__ import annotations

from typing import Any

from ....eos import EosError
from . import show as text
from . import showjson as js
from .confsess import session_diff, sessions_text
from .files import read
from .ops import OPS
from .showifs import interfaces_status
from .showsys import running_diffs, version_detail
from .state import VERSION, facts, ports

NO_MODEL = object()


def running_config(sw: Any, cfg: Any = None, defaults: bool = False) -> str:
    """``show running-config [all]``: EOS's comment header, then the configuration (``all``:
    with the interfaces' defaults, which pyeapi's ``interfaces`` and ``switchports`` read)."""
    f = facts(sw)
    cfg = cfg if cfg is not None else sw.running
    command = "show running-config all" if defaults else "show running-config"
    return str(cfg.render([f"! Command: {command}", f"! device: {cfg.hostname} ({f.model}, EOS-{VERSION})",
                           "!", f"! boot system flash:/EOS-{VERSION}.swi"], defaults))


def _startup(sw: Any) -> Any:
    """The startup-config as the switch would boot it (the factory configuration if never saved)."""
    cfg = sw.factory()
    p = sw.dir / "startup-config"
    if p.exists():
        sw.dialect.load(p.read_text(), cfg)
    return cfg


def _session_config(session: Any, values: dict[str, Any], diffs: bool) -> str:
    name = values.get("name") or session.csession
    store = session.sw.dialect.sessions
    if name is None:
        raise EosError("show session-config", "message", 0, "Not in a configuration session")
    if name not in store.by_name:
        raise EosError("show session-config", "message", 0, f"Session {name} does not exist")
    cfg_text = running_config(session.sw, store.by_name[name].config)
    return session_diff(running_config(session.sw), cfg_text, name) if diffs else cfg_text


def _port(sw: Any, values: dict[str, Any]) -> str | None:
    port = values.get("port")
    if port is not None and port not in sw.running.interfaces:
        raise EosError(f"show interfaces {port}", "message", 0, "Interface does not exist")
    return str(port) if port is not None else None


def show(session: Any, action: str, values: dict[str, Any]) -> tuple[str | None, Any]:
    """(text, JSON model or NO_MODEL) of show ``action`` with its slot ``values``. Raises
    EosError for what the switch does not have (an interface, a session)."""
    sw = session.sw
    if action == "version":
        f = facts(sw)
        return text.version(f), js.version(f)
    if action == "hostname":
        return text.hostname(sw.running.hostname), js.hostname(sw.running.hostname)
    if action == "clock":
        import time
        return time.strftime("%a %b %d %H:%M:%S %Y\n", time.gmtime()) + "Timezone: UTC\n", NO_MODEL
    if action in OPS:
        if action == "dir flash" and not str(values.get("url", "flash:")).startswith("flash:"):
            raise EosError(f"dir {values['url']}", "message", 0, f"Error opening {values['url']} (No such device)")
        out, model = OPS[action](session, values)
        return out, NO_MODEL if model is None else model
    if action == "version detail":
        f = facts(sw)
        return text.version(f), version_detail(sw, js.version(f))
    if action == "running-config diffs":
        return running_diffs(running_config(sw), running_config(sw, _startup(sw))), NO_MODEL
    if action in ("running-config", "running-config all"):
        return running_config(sw, defaults=action.endswith("all")), NO_MODEL
    if action == "running-config interface":
        return text.running_interface(sw.running, _port(sw, values) or ""), NO_MODEL
    if action == "startup-config":
        return read(sw, "startup-config") or "", NO_MODEL
    if action.startswith("session-config"):
        return _session_config(session, values, action.endswith("diffs")), NO_MODEL
    if action == "sessions":
        states = sw.dialect.sessions.states()
        return sessions_text(states), js.sessions(states)
    if action == "qos maps":
        return text.qos_maps(sw.running), NO_MODEL
    ps = ports(sw, _port(sw, values))
    if action == "qos interfaces":
        return text.qos_interfaces(sw.running.with_profiles(), [p.name for p in ps]), NO_MODEL
    if action == "interfaces":
        f = facts(sw)
        return text.interfaces_text(ps, f), js.interfaces(ps, f)
    if action == "interfaces status":
        return text.interfaces_status(ps), interfaces_status(ps)
    detail = action.endswith("detail")
    return text.counters_queue(ps, detail), js.counters_queue(ps, detail)
