"""One CLI session of the virtual Catalyst: EXEC and config modes, prompts, IOS errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..device import Credentials
from ..errors import QoslabError
from ..ios import IosError, Mode, interpret

if TYPE_CHECKING:
    from .catalyst import VirtualCatalyst


class IosSession:
    """One CLI session: modes and prompts; ``handle(line)`` returns the text to print."""

    def __init__(self, switch: VirtualCatalyst, creds: Credentials) -> None:
        self.sw = switch
        self.creds = creds
        self.privileged = False
        self.mode: Mode | None = None  # None = EXEC
        self.in_config = False

    @property
    def prompt(self) -> str:
        """The IOS prompt of the current mode: ``Switch>``, ``Switch#``, ``Switch(config-if)#``."""
        host = self.sw.running.hostname
        if self.mode is not None:
            return f"{host}{self.mode.prompt_suffix}#"
        return f"{host}{'#' if self.privileged else '>'}"

    def exec_command(self, line: str) -> tuple[str, bool]:
        """Run an EXEC command; returns (output, close_session)."""
        w = line.split()
        cmd = w[0].lower()
        if cmd in ("exit", "logout", "quit"):
            return "", True
        if cmd.startswith("term"):
            return "", False
        if cmd.startswith("sh") and "show".startswith(cmd):
            out = self.sw.show(w[1:])
            if out is None:
                return _invalid(len(self.prompt) + line.index(w[1]) if len(w) > 1 else len(line)), False
            return out, False
        if not self.privileged:
            return _invalid(len(self.prompt) + line.index(w[0])), False
        if cmd in ("conf", "config", "configure") and (len(w) == 1 or "terminal".startswith(w[1].lower())):
            self.mode = Mode()
            return "Enter configuration commands, one per line.  End with CNTL/Z.\n", False
        if (cmd == "wr" or "write".startswith(cmd) and len(cmd) >= 2) and (len(w) == 1 or "memory".startswith(w[1])) \
                or w[:3] == ["copy", "running-config", "startup-config"] or w[:3] == ["copy", "run", "start"]:
            self.sw.save()
            return "Building configuration...\n[OK]\n", False
        if cmd == "disable":
            self.privileged = False
            return "", False
        return _invalid(len(self.prompt) + line.index(w[0])), False

    def config_command(self, line: str) -> str:
        """Run a config-mode line (``do`` runs an EXEC command); returns the text to print."""
        w = line.split()
        if w and w[0] == "do":
            out, _ = self.exec_command(line.split(None, 1)[1] if len(w) > 1 else "")
            return out
        prompt_len = len(self.prompt)
        try:
            new = interpret(self.sw.running, self.mode or Mode(), line)
        except IosError as e:
            return e.render(prompt_len)
        if new.name == "exec":
            self.mode = None
            return self._leave_config()
        self.mode = new
        return ""

    def _leave_config(self) -> str:
        try:
            self.sw.apply()
        except QoslabError as e:
            return f"%QOSLAB-3-TC: {e}\n"
        return ""

    def close(self) -> None:
        """The session ends: a config session still open is left (and applied), as IOS does."""
        if self.mode is not None:
            self.mode = None
            self._leave_config()


def _invalid(column: int) -> str:
    return " " * column + "^\n% Invalid input detected at '^' marker.\n\n"
