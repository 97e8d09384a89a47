"""Error types. Every error a user can cause is a :class:`QoslabError` whose message names the
file, field, host or command at fault; the CLI prints the message, never a stack trace."""

from __future__ import annotations


class QoslabError(Exception):
    """Base class of all expected, user-facing errors."""


class ConfigError(QoslabError):
    """A configuration file (topology, profile, playbook, flood) is unreadable or invalid.

    The message starts with ``FILE[:LINE]: FIELD:`` so the user can go straight to the fault.
    """


class EnvironmentProblem(QoslabError):
    """The machine cannot do what was asked (not root, missing tool, kernel lacks a tc kind)."""


class CommandFailed(QoslabError):
    """A command run on a node exited non-zero.

    Attributes: ``node`` (host name), ``argv`` (the command), ``returncode``, ``stderr`` (text).
    """

    def __init__(self, node: str, argv: list[str], returncode: int, stderr: str):
        self.node, self.argv, self.returncode, self.stderr = node, list(argv), returncode, stderr
        tail = stderr.strip().splitlines()[-3:]
        detail = ("; ".join(tail)) if tail else "no error output"
        super().__init__(f"on {node}: `{' '.join(argv)}` exited {returncode}: {detail}")


class CommandTimeout(QoslabError):
    """A command run on a node did not finish within its timeout (seconds); it was killed."""

    def __init__(self, node: str, argv: list[str], timeout_s: float):
        self.node, self.argv, self.timeout_s = node, list(argv), timeout_s
        super().__init__(f"on {node}: `{' '.join(argv)}` did not finish within {timeout_s:g} s (killed)")


class UnsafeTarget(QoslabError):
    """Traffic was asked to go to an address outside the testbed (safety interlock)."""
