"""EOS configuration sessions (pure): named copies of the running-config that are edited apart
and committed whole, as EOS users and its automation clients (NAPALM ``eos``, Ansible
``arista.eos``) change a switch (EOS User Manual, "Configuration Sessions").

- ``configure session NAME`` opens NAME (a copy of the running-config at that moment) or enters it
  again while it is pending; a committed or aborted session cannot be entered again;
- ``commit`` (in the session, or ``configure session NAME commit``) makes its config the
  running-config (the whole of it: what changed in the running-config meanwhile is replaced);
  ``abort`` discards it; leaving the session with ``end``/``exit`` or a lost connection keeps it
  pending;
- ``rollback clean-config`` in a session empties its config to the factory defaults (NAPALM's
  ``load_replace_candidate``);
- ``show session-config [named NAME] diffs``: the unified diff of the running-config and the
  session's config, headed ``--- system:/running-config`` / ``+++ session:/NAME-session-config``.

Sessions are the switch's, not a login's: any SSH or eAPI session may enter, commit or abort one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ....eos import EosConfig, EosError

#: At most this many pending sessions (``show configuration sessions``: maxOpenSessions).
MAX_PENDING = 5


@dataclass
class ConfigSession:
    """One session: its config and state (``pending``, ``completed``, ``aborted``)."""

    name: str
    config: EosConfig
    state: str = "pending"


class Sessions:
    """The switch's configuration sessions by name (see the module doc)."""

    def __init__(self) -> None:
        self.by_name: dict[str, ConfigSession] = {}

    def enter(self, name: str, running: EosConfig) -> ConfigSession:
        """Open ``name`` (a copy of ``running``) or return it while pending. Raises EosError as
        EOS refuses a finished session or one pending session too many."""
        s = self.by_name.get(name)
        if s is not None and s.state != "pending":
            raise EosError(f"configure session {name}", "message", 0,
                           f"Cannot enter session {name} (session has already been {s.state})")
        if s is None:
            if sum(x.state == "pending" for x in self.by_name.values()) >= MAX_PENDING:
                raise EosError(f"configure session {name}", "message", 0,
                               "Maximum number of pending sessions has been reached")
            s = self.by_name[name] = ConfigSession(name, running.copy())
        return s

    def finish(self, name: str, state: str) -> ConfigSession:
        """Mark ``name`` committed (``completed``) or ``aborted``. Raises EosError for a session
        that is not pending."""
        s = self.by_name.get(name)
        if s is None or s.state != "pending":
            raise EosError(f"configure session {name}", "message", 0, f"Session {name} does not exist")
        s.state = state
        return s

    def states(self) -> dict[str, str]:
        """Session name -> state, for ``show configuration sessions``."""
        return {n: s.state for n, s in sorted(self.by_name.items())}


def session_diff(running: str, session: str, name: str) -> str:
    """``show session-config diffs``: the unified diff of two ``show running-config`` texts."""
    lines = difflib.unified_diff(running.splitlines(), session.splitlines(), "system:/running-config",
                                 f"session:/{name}-session-config", lineterm="")
    return "\n".join(lines) + "\n"


def sessions_text(states: dict[str, str]) -> str:
    """``show configuration sessions``."""
    out = ["Maximum number of completed sessions: 1", f"Maximum number of pending sessions: {MAX_PENDING}", "",
           "  Name                 State         User    Terminal",
           "  -------------------- ------------- ------- --------"]
    out += [f"  {n:<20} {s:<13}" for n, s in states.items()]
    return "\n".join(out) + "\n"
