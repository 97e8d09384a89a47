"""One CLI session of the virtual EOS switch (transport-free, as
:class:`qoslab.vswitch.session.IosSession` for the Catalysts): the SSH server drives
:meth:`EosSession.line`, the eAPI endpoint :meth:`EosSession.run` (same code, same switch state).

EOS as its clients meet it (EOS User Manual, "Command-Line Interface" and "Configuration
Sessions"): prompts ``host>``, ``host#``, ``host(config)#``, ``host(config-if-Et1)#``, in a
session ``host(config-s-NAME)#`` (the session name cut to six characters); ``enable`` asks for
the enable secret (three tries, ``% Access denied``); a privileged command in user EXEC answers
``% Invalid input (privileged mode required)``; EXEC commands run in configuration mode too (and
after ``do``); ``configure`` / ``configure terminal`` edit the running-config (applied to the data
path when the mode is left), ``configure session NAME`` a session (:mod:`.confsess`), applied at
``commit``; output modifiers ``| json``, ``| include|exclude|begin|section RE``, ``| no-more``;
``terminal length 0`` answers ``Pagination disabled.``, ``terminal width N`` ``Width set to N
columns.``, ``write memory`` ``Copy completed successfully.``.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from ....eos import EosError, Mode, interpret, short_name
from ....eos.commands import PROMPTS
from ....eos.grammar import Match, match
from ....errors import QoslabError
from ...eapi import INVALID_COMMAND, UNCONVERTED, CommandFailed
from ..base import Reply
from .commands import EXEC, SESSION, USER
from .files import copy, replace_config
from .render import NO_MODEL, show

PRIVILEGED = "% Invalid input (privileged mode required)\n"


class EosSession:
    """The state of one session: privilege, config mode and target (the running-config or a
    configuration session's), terminal length and width, a pending password prompt."""

    def __init__(self, switch: Any, secret: str, privileged: bool = False) -> None:
        self.sw = switch
        self.secret = secret
        self.privileged = privileged
        self.mode: Mode | None = None
        self.csession: str | None = None
        self.length, self.width = 24, 80
        self._tries = 0
        self._json = False  # eAPI's format: json (a show command's model without ``| json``)

    # -- what the SSH shell uses ---------------------------------------------------------------
    @property
    def prompt(self) -> str:
        """The prompt of the session's mode and privilege."""
        host = self.sw.running.hostname
        if self.mode is None:
            return f"{host}{'#' if self.privileged else '>'}"
        suffix = PROMPTS[self.mode.name].format(short_name(self.mode.target), self.mode.sub)
        if self.csession is not None:
            suffix = suffix.replace("(config", f"(config-s-{self.csession[:6]}", 1)
        return host + suffix

    def takes_help(self) -> bool:
        return True

    def help(self, line: str) -> str:
        """``?``: the commands whose words start as typed."""
        words = line.split()
        specs = sorted({t.spec.split()[len(words) - 1] if words and len(t.spec.split()) >= len(words) else
                        t.spec.split()[0] for t in EXEC if t.spec.startswith(" ".join(words[:-1]))})
        return "\n".join(f"  {s}" for s in specs if not words or s.startswith(words[-1])) + "\n"

    def interrupt(self) -> None:
        """Ctrl-C: nothing is pending between lines in this CLI."""

    def secret_line(self, text: str) -> Reply:
        """The answer to ``Password:`` after ``enable``."""
        if secrets.compare_digest(text.encode(), self.secret.encode()):
            self.privileged, self._tries = True, 0
            return Reply()
        self._tries += 1
        if self._tries >= 3:
            self._tries = 0
            return Reply("% Access denied\n")
        return Reply("Password: ", secret=True, prompt="")

    def close(self) -> None:
        """End of the login: ``configure`` changes are applied; a configuration session stays pending."""
        if self.mode is not None and self.csession is None:
            self._apply()
        self.mode, self.csession = None, None

    # -- lines -------------------------------------------------------------------------------------
    def line(self, text: str) -> Reply:
        """One typed line (without its newline)."""
        if not text.strip():
            return Reply()
        try:
            out = self._line(text)
        except EosError as e:
            return Reply(e.render())
        return out if isinstance(out, Reply) else Reply(_text(out))

    def _line(self, text: str) -> Any:
        if self.mode is not None:
            return self._config(text)
        return self._exec(text)

    def run(self, command: str, fmt: str, answer: str | None) -> Any:
        """eAPI: one command's JSON model (``fmt`` json) or text. Raises CommandFailed."""
        if command.strip() == "enable" and answer is not None and not self.privileged:
            if not secrets.compare_digest(answer.encode(), self.secret.encode()):
                raise CommandFailed(INVALID_COMMAND, "invalid command", ["Bad secret"])
            self.privileged = True
        self._json = fmt == "json"
        try:
            out = self._line(command)
        except EosError as e:
            raise CommandFailed(INVALID_COMMAND, "invalid command", [e.render().strip().removeprefix("% ")]) from None
        finally:
            self._json = False
        if isinstance(out, Reply):
            if out.secret:
                raise CommandFailed(INVALID_COMMAND, "invalid command", ["Password prompt over eAPI"])
            out = out.text
        if isinstance(out, str) and out.startswith("% "):
            code = UNCONVERTED if "unconverted" in out else INVALID_COMMAND
            raise CommandFailed(code, "unconverted command" if code == UNCONVERTED else "invalid command",
                                [out.strip().removeprefix("% ")])
        if fmt == "text":
            return _text(out)
        return out if isinstance(out, dict) else ({"messages": [out.strip()]} if out.strip() else {})

    # -- EXEC --------------------------------------------------------------------------------------
    def _exec(self, text: str) -> Any:
        cmd, mod = _split(text)
        m, _ = match(EXEC, cmd)
        a = m.template.action
        if not self.privileged and a not in USER:
            return PRIVILEGED
        if a == "exit":
            return Reply(close=True)
        if a == "enable":
            if self.privileged:
                return Reply()
            return Reply("Password: ", secret=True, prompt="")
        if a == "disable":
            self.privileged = False
        elif a == "terminal length":
            self.length = m.values["n"]
            return "Pagination disabled.\n" if self.length == 0 else ""
        elif a == "terminal width":
            self.width = m.values["n"]
            return f"Width set to {self.width} columns.\n"
        elif a in ("configure", "configure session", "session commit", "session abort"):
            return self._configure(a, m)
        elif a in ("write", "copy", "configure replace"):
            return self._files(a, m)
        elif a != "noop":
            return _modify(show(self, a, m.values), mod or ("json" if self._json else ""))
        return ""

    def _files(self, a: str, m: Match) -> str:
        if a == "write":
            self.sw.save()
            return "Copy completed successfully.\n"
        if a == "copy":
            return copy(self.sw, m.values["src"], m.values["dst"]) + (self._apply() if m.values["dst"] in (
                "running-config", "system:/running-config") else "")
        return replace_config(self.sw, m.values["url"]) + self._apply()

    def _configure(self, a: str, m: Match) -> str:
        name = str(m.values.get("name", ""))
        if a == "configure":
            self.mode = Mode()
        elif a == "configure session":
            self.sw.dialect.sessions.enter(name, self.sw.running)
            self.mode, self.csession = Mode(), name
        else:
            return self._finish(name, "completed" if a == "session commit" else "aborted")
        return ""

    def _finish(self, name: str, state: str) -> str:
        s = self.sw.dialect.sessions.finish(name, state)
        self.mode, self.csession = None, None
        if state == "completed":
            self.sw.running = s.config
            return self._apply()
        return ""

    # -- configuration mode ------------------------------------------------------------------------
    def _target(self) -> Any:
        if self.csession is not None:
            return self.sw.dialect.sessions.by_name[self.csession].config
        return self.sw.running

    def _config(self, text: str) -> Any:
        words = text.split()
        if words[0] == "do":
            return self._exec(text.split(None, 1)[1]) if len(words) > 1 else ""
        if self.csession is not None:
            try:
                m, _ = match(SESSION, text)
            except EosError:
                m = None
            if m is not None:
                if m.template.action == "clean-config":
                    self.sw.dialect.sessions.by_name[self.csession].config = self.sw.factory()
                    return ""
                return self._finish(self.csession, "completed" if m.template.action == "commit" else "aborted")
        try:
            new = interpret(self._target(), self.mode or Mode(), text)
        except EosError as e:
            try:
                return self._exec(text)  # EOS runs EXEC commands (show ...) in configuration mode
            except EosError:
                raise e from None
        if new.name == "exec":
            self.mode = None
            applied = self._apply() if self.csession is None else ""
            self.csession = None
            return applied
        self.mode = new
        return ""

    def _apply(self) -> str:
        try:
            self.sw.apply()
        except QoslabError as e:
            return f"% QOSLAB: the data path refused the configuration: {e}\n"
        return ""


def _split(text: str) -> tuple[str, str]:
    """``show x | json`` -> (``show x``, ``json``)."""
    cmd, bar, mod = text.partition("|")
    return (cmd.strip(), mod.strip()) if bar else (text.strip(), "")


def _text(out: Any) -> str:
    return json.dumps(out, indent=2) + "\n" if isinstance(out, dict) else str(out)


def _modify(out: tuple[str | None, Any], mod: str) -> Any:
    """Apply an output modifier to a show command's (text, JSON model) pair."""
    text, model = out
    words = mod.split(None, 1)
    if not words or words[0] == "no-more":
        return text if text is not None else model
    if "json".startswith(words[0]) and len(words) == 1:
        return model if model is not NO_MODEL else "% This is an unconverted command\n"
    if words[0] not in ("include", "exclude", "begin", "section") or len(words) < 2 or text is None:
        raise EosError(f"| {mod}", "invalid", 0, words[0])
    rx = re.compile(words[1])
    lines = text.splitlines()
    if words[0] == "include":
        lines = [x for x in lines if rx.search(x)]
    elif words[0] == "exclude":
        lines = [x for x in lines if not rx.search(x)]
    elif words[0] == "begin":
        lines = next((lines[i:] for i, x in enumerate(lines) if rx.search(x)), [])
    else:
        lines = _section(lines, rx)
    return "\n".join(lines) + ("\n" if lines else "")


def _section(lines: list[str], rx: re.Pattern[str]) -> list[str]:
    out, keep = [], False
    for x in lines:
        if not x.startswith(" "):
            keep = bool(rx.search(x))
        if keep and x.strip() != "!":
            out.append(x)
    return out
