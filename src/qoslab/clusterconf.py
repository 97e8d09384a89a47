"""How the ``ssh`` executor reaches a cluster's hosts (:class:`SshSettings`): the ``ssh:`` block
of a :class:`qoslab.topology.Topology`, used on a real cluster (and, for ``lease_s`` and
``work_dir``, by the embedded testbed's per-namespace sshd)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from .yamlio import StrictModel

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}\Z")


def check_host(v: str) -> str:
    """``v`` when it is an IP address or a host name (letters, digits, ``.``, ``:``, ``-``; not
    empty, no space or shell metacharacter: it reaches ssh and Netmiko as it is), else ValueError
    (a switch's management host, a device file's host)."""
    if not _HOST.match(v):
        raise ValueError(f"{v!r} is not an IP address or host name" if v.strip() else "empty: give the switch's "
                         "IP address or host name")
    return v


class SshSettings(StrictModel):
    """How the ``ssh`` executor reaches the hosts (a real cluster; on the embedded testbed only
    ``lease_s`` and ``work_dir`` apply): login ``user`` and ``port``; ``identity_file`` (a private
    key; none = the SSH agent of ``SSH_AUTH_SOCK``, never a password); ``known_hosts`` (the
    hosts' pinned keys: an unknown key refuses the connection); ``addresses`` (host -> name or
    address to log in to, default its experiment address); ``qoslab_dir`` (where provisioning
    put the jars); ``work_dir`` (base of the run's ``qoslab-<run>`` folder on each node);
    ``lease_s`` (seconds after which a node ends the run's processes when the runner stopped
    renewing its lease); ``connect_timeout_s``."""

    user: str = "root"
    port: int = Field(22, ge=1, le=65535)
    identity_file: str | None = None
    known_hosts: str | None = None
    addresses: dict[str, str] = Field(default_factory=dict)
    qoslab_dir: str = "/opt/qoslab"
    work_dir: str = "/tmp"
    lease_s: float = Field(30.0, ge=3, le=3600)
    connect_timeout_s: float = Field(10.0, gt=0, le=300)

    @field_validator("work_dir", "qoslab_dir")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/") or ".." in v.split("/") or any(c.isspace() for c in v):
            raise ValueError(f"{v!r} must be an absolute path without '..' or spaces")
        return v.rstrip("/") or "/"
