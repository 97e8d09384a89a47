"""How the executors reach a cluster's hosts: the ``ssh:`` block of a
:class:`qoslab.topology.Topology` (:class:`SshSettings`), used on a real cluster (and, for
``lease_s`` and ``work_dir``, by the embedded testbed's per-namespace sshd), and its ``slurm:``
block (:class:`SlurmSettings`: the allocation of the ``slurm`` executor)."""

from __future__ import annotations

import re
from typing import Literal

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


#: Slurm's time-limit forms: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``.
SLURM_TIME = r"^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2})$"
#: A Slurm name (partition, account, node): letters, digits, ``-``, ``_``, ``.``.
SLURM_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
#: A ``--constraint`` expression: feature names joined by ``&``, ``|``, brackets, counts (``*2``).
SLURM_CONSTRAINT = r"^[A-Za-z0-9_.&|\[\]*:-]+$"


class SlurmSettings(StrictModel):
    """How the ``slurm`` executor gets its nodes (the ``slurm:`` block of a topology). When qoslab
    runs outside an allocation it takes one (``salloc --no-shell``) with ``partition`` (None: the
    cluster's default), ``nodes`` (node names to ask for; empty: as many nodes as the topology has
    hosts, any), ``time_limit`` (Slurm's form, e.g. ``30``, ``1:00:00``, ``1-00:00:00``),
    ``account`` and ``constraint`` (``--constraint``); inside ``sbatch``/``salloc`` it uses that
    job (``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST``). ``bind``: how the topology's hosts map onto
    the allocation's nodes: ``name`` (a host is the node of the same name) or ``order`` (the
    i-th host is the i-th node of the expanded node list). On the embedded testbed the block also
    makes ``testbed up`` start its Slurm cluster (nodes named after the hosts, partition
    ``partition`` or ``qoslab``)."""

    partition: str | None = None
    nodes: list[str] = Field(default_factory=list)
    time_limit: str = "1:00:00"
    account: str | None = None
    constraint: str | None = None
    bind: Literal["name", "order"] = "name"

    @field_validator("partition", "account")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not re.match(SLURM_NAME, v):
            raise ValueError(f"{v!r} is not a Slurm name (letters, digits, '-', '_', '.'; not starting with '-')")
        return v

    @field_validator("time_limit")
    @classmethod
    def _time(cls, v: str) -> str:
        if not re.match(SLURM_TIME, v):
            raise ValueError(f"{v!r} is not a Slurm time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)")
        return v

    @field_validator("constraint")
    @classmethod
    def _constraint(cls, v: str | None) -> str | None:
        if v is not None and not re.match(SLURM_CONSTRAINT, v):
            raise ValueError(f"{v!r} is not a Slurm constraint (features joined by & | and brackets)")
        return v

    @field_validator("nodes")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        for n in v:
            if not re.match(SLURM_NAME, n):
                raise ValueError(f"{n!r} is not a Slurm node name")
        if len(set(v)) != len(v):
            raise ValueError("a node is named twice")
        return v
