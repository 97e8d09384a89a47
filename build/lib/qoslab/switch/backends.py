"""Switch devices: what a campaign pushes QoS profiles to and reads statistics from.

A :class:`SwitchDevice` is registered by name in :data:`qoslab.registry.switches`:

- ``virtual``: the embedded testbed's virtual Catalyst 3750 (credentials and pinned host key from
  its state folder, generated per testbed);
- ``catalyst``: a real Catalyst reached over SSH, described by a device file::

      device: catalyst           # the backend
      host: 5.1.1.254
      port: 22
      platform: catalyst3750     # or catalyst9300 (IOS-XE MQC); cisco_ios / cisco_xe as aliases
      credentials_file: /root/.config/qoslab/ecenet-switch.json   # 0600; or QOSLAB_SWITCH_* env
      known_hosts: /root/.config/qoslab/known_hosts                # the switch's pinned host key
      ssh_profile: c3750      # SHA-1 kex + ssh-rsa offered too (12.2(55)SE); `modern`: paramiko's only

Both go through the same Netmiko path (:mod:`qoslab.switch.push`): render -> push -> verify -> save,
rollback on error. Playbooks name the device as ``device: virtual`` or ``device: FILE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from ..clusterconf import check_host
from ..errors import QoslabError
from ..platforms.base import ALIASES, get_platform, platform_for_model
from ..registry import platforms, switches
from ..testbedplan import vswitch_dir
from ..topology import Topology, repo_root
from ..yamlio import StrictModel, config_error, load_model, read_yaml
from .batch import send_batch
from .device import Device, known_hosts_line


@runtime_checkable
class SwitchDevice(Protocol):
    """A switch qoslab configures. ``name``: what messages call it; ``endpoint``: how to reach
    its CLI."""

    name: str
    endpoint: Device

    def push(self, profile_lines: list[str], out_dir: Path, profile_name: str, adopt: bool = False) -> Any:
        """Make the QoS config qoslab owns on the switch equal ``profile_lines`` (rendered for its
        platform), changing nothing qoslab did not make (:mod:`qoslab.switch.ownership`; ``adopt``:
        take over the profile's items the switch already has, identical); returns a
        :class:`qoslab.switch.push.PushReport`. Raises PushError (rolled back or not) or QoslabError."""
        ...

    def show(self, commands: list[str]) -> dict[str, str]:
        """Output of each show command (one session). Raises QoslabError when unreachable."""
        ...

    def close(self) -> None:
        """End any session the device keeps between calls (idempotent; never raises)."""
        ...


class NetmikoSwitch:
    """A switch reached with Netmiko ``cisco_ios`` (the virtual Catalyst and real ones alike).

    Show commands and pushes share one session kept open between calls (a campaign reads the
    statistics before and after every trial: one SSH login each time cost 0.7-0.8 s); a session
    that fails or is interrupted is dropped and the next call logs in again. A rollback logs in
    anew. :meth:`close` ends the kept session."""

    #: Send several show commands (and a push's config lines) in one write and split the output at
    #: the prompts (one round trip instead of one Netmiko ``send_command`` each, about 80 ms of
    #: prompt finding per command: 8 ports' statistics in 0.06 s instead of 0.66 s on the virtual
    #: Catalyst). On for the virtual switch; off for a real one until measured there (IOS
    #: type-ahead is not verified here).
    batch = False
    #: Read several ports' QoS statistics with one ``show mls qos interface statistics`` (all
    #: ports) instead of one command per port (:func:`qoslab.platforms.counters.read_statistics`):
    #: on for the virtual Catalyst, which answers it from one kernel reading (0.01 s against
    #: 0.05 s for 8 ports); off for a real one, whose 28-52 ports' tables are long.
    statistics_all = False

    def __init__(self, name: str, endpoint: Device) -> None:
        self.name, self.endpoint = name, endpoint
        #: the switch platform (qoslab.registry.platforms): what the switch meter reads it with
        self.platform = getattr(endpoint, "platform", "catalyst3750")
        self._conn: Any = None

    def push(self, profile_lines: list[str], out_dir: Path, profile_name: str, adopt: bool = False) -> Any:
        """See :meth:`SwitchDevice.push`. On the kept session (one login less: about 0.5 s of a
        push); a push that fails closes it (the next call logs in again)."""
        from .push import connect, push

        if self._conn is None:
            self._conn = connect(self.endpoint)
        try:
            return push(profile_lines, self.endpoint, out_dir, profile_name, conn=self._conn, batch=self.batch,
                        adopt=adopt)
        except BaseException:
            self.close()
            raise

    def show(self, commands: list[str]) -> dict[str, str]:
        """See :meth:`SwitchDevice.show`. Retries once on a fresh session when the kept one has
        gone (e.g. the switch restarted); raises QoslabError when that fails too."""
        try:
            return self._show_once(commands)
        except QoslabError:
            raise  # could not log in: a second try would not either
        except Exception:  # noqa: BLE001 - a broken kept session: log in again once
            pass
        try:
            return self._show_once(commands)
        except QoslabError:
            raise
        except Exception as e:  # noqa: BLE001 - the message names the switch and the error
            raise QoslabError(f"switch {self.name}: show failed: {type(e).__name__}: {e}") from None

    def _show_once(self, commands: list[str]) -> dict[str, str]:
        """The commands on the kept session (logging in when there is none); any failure or
        interruption drops the session (its output is unknown) and propagates."""
        from .push import connect

        if self._conn is None:
            self._conn = connect(self.endpoint)
        try:
            prompt = str(getattr(self._conn, "base_prompt", "") or "")
            if self.batch and prompt:
                return send_batch(self._conn, commands, prompt + "#", self.endpoint.timeout_s)
            return {c: strip_prompt_echo(self._conn.send_command(c), prompt) for c in commands}
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """End the kept show session (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.disconnect()
            except Exception:  # noqa: BLE001 - closing a dead session
                pass


def strip_prompt_echo(text: str, base_prompt: str) -> str:
    """``text`` without a stray prompt at its start (``Switch#GigabitEthernet1/0/1 (All ...``:
    a kept session read an earlier prompt late; it cost 1 of the 204 trials of the 10 Mbit/s
    Table-5 campaign its switch evidence: TextFSM rejected the output). Pure."""
    for mark in ("#", ">"):
        if base_prompt and text.startswith(base_prompt + mark):
            return text[len(base_prompt) + 1:]
    return text


def virtual_endpoint(topology: Topology) -> Device:
    """How to reach the virtual Catalyst of an embedded testbed (credentials and host key from
    its state folder; a known_hosts file pinning its key is written next to them).
    Raises QoslabError when it is not running."""
    d = vswitch_dir(topology.name)
    mg = topology.switch.management
    if not (d / "ssh_host_key.pub").exists():
        raise QoslabError(f"the virtual switch of {topology.name} is not running (run `qoslab testbed up`)")
    kh = d / "known_hosts"
    kh.write_text(known_hosts_line(d / "ssh_host_key.pub", mg.host, mg.port))
    plat = platform_for_model(topology.switch.model)
    # the server's profile (the topology's, else the platform's own) -> the client's settings:
    # the 3750's legacy algorithms need qoslab's LegacyTransport, any other profile stock paramiko
    server = mg.ssh_profile or get_platform(plat).ssh_profile
    return Device(host=mg.host, port=mg.port, credentials_file=d / "credentials", known_hosts=kh,
                  credentials_from_env=False, ssh_profile="c3750" if server == "c3750" else "modern",
                  platform=plat)


class VirtualSwitch(NetmikoSwitch):
    """``device: virtual``: the virtual Catalyst 3750 of the embedded testbed of ``topology``
    (show commands batched: :attr:`NetmikoSwitch.batch`; the trial's port statistics read with
    one ``show mls qos interface statistics``: :attr:`statistics_all`)."""

    batch = True
    statistics_all = True

    def __init__(self, topology: Topology, spec: str | None = None) -> None:
        super().__init__(f"virtual {topology.switch.model} of {topology.name}", virtual_endpoint(topology))


class CatalystFile(StrictModel):
    """A device file for a real Catalyst (see the module doc; ``~`` in paths is the user's home).
    Example: playbooks/devices/catalyst-ecenet.yaml."""

    device: Literal["catalyst"]
    host: str
    port: int = Field(22, ge=1, le=65535)
    #: a registered platform (``catalyst3750``, ``catalyst9300``) or a Netmiko type of earlier
    #: releases (``cisco_ios`` = catalyst3750, ``cisco_xe`` = catalyst9300)
    platform: str = "cisco_ios"
    credentials_file: Path | None = None
    known_hosts: Path
    timeout_s: float = Field(20.0, gt=0, le=600)
    ssh_profile: Literal["c3750", "modern"] = "c3750"

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        return check_host(v)  # an address or name: no metacharacter, not empty

    @field_validator("platform")
    @classmethod
    def _platform(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("empty: name the switch's platform (catalyst3750, catalyst9300, arista_eos)")
        return v

    def endpoint(self, plat: str) -> Device:
        """The :class:`Device` this file describes (``~`` in its paths the user's home)."""
        creds = self.credentials_file.expanduser() if self.credentials_file is not None else None
        return Device(host=self.host, port=self.port, credentials_file=creds, known_hosts=self.known_hosts.expanduser(),
                      timeout_s=self.timeout_s, ssh_profile=self.ssh_profile, platform=plat)


def check_device_files(spec: str, topology: Topology) -> None:
    """The device file at ``spec`` checked as a push would read it (:func:`device_file`, then its
    credentials file's type and mode and its known_hosts file's type, size and readability:
    :meth:`qoslab.switch.device.Device.file_problem`), before any campaign folder is made.
    Raises ConfigError naming the device file's line and field."""
    f, plat = device_file(spec, topology)
    if (problem := f.endpoint(plat).file_problem()) is not None:
        raise config_error(spec, (problem[0],), problem[1])


def device_file(spec: str, topology: Topology) -> tuple[CatalystFile, str]:
    """The device file at ``spec`` and its platform (aliases resolved), which must be the one of
    ``topology``'s switch model (the profiles render for that model). Reads only; a campaign
    checks it before it makes its folder or touches the testbed. Raises ConfigError naming the
    device file's line and field."""
    f = load_model(spec, CatalystFile)
    plat = ALIASES.get(f.platform, f.platform)
    if plat not in platforms.names():
        raise config_error(spec, ("platform",), f"unknown platform {f.platform!r} (known: "
                                                f"{', '.join(platforms.names())}, or cisco_ios, cisco_xe)")
    if plat != (topo_plat := platform_for_model(topology.switch.model)):
        raise config_error(spec, ("platform",), f"{plat}, but topology {topology.name}'s switch is a "
                                                f"{topology.switch.model} ({topo_plat}): profiles render for "
                                                "the topology's model")
    return f, plat


class CatalystSwitch(NetmikoSwitch):
    """``device: FILE`` with ``device: catalyst``: a real IOS switch over SSH."""

    def __init__(self, topology: Topology, spec: str | None = None) -> None:
        if spec is None:
            raise QoslabError("a catalyst switch needs a device file (host, port, known_hosts, credentials)")
        f, plat = device_file(spec, topology)
        super().__init__(f"{f.host}:{f.port}", f.endpoint(plat))


class _DeviceKind(StrictModel):
    device: str


def device_kind(spec: str) -> str:
    """The backend a playbook's ``device:`` value names: a registered switch name as it is
    (``virtual``; ``testbed`` is the older name of it), else the ``device:`` field of the device
    file at that path (relative to the repository). Raises ConfigError for an unknown name or file."""
    if spec == "testbed":
        return "virtual"
    if spec in switches.names():
        return spec
    path = Path(spec) if Path(spec).is_absolute() else repo_root() / spec
    if not path.is_file():
        raise QoslabError(f"device {spec!r}: neither a switch backend ({', '.join(switches.names())}) nor a file")
    data, _ = read_yaml(path)
    kind = data.get("device") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        raise config_error(path, ("device",), "missing (write e.g. `device: catalyst`)")
    if kind not in switches.names():
        raise config_error(path, ("device",), f"unknown switch backend {kind!r} (known: {', '.join(switches.names())})")
    if kind == "catalyst":
        load_model(path, CatalystFile)  # the whole file, checked now rather than at the first push
    return kind


def open_switch(spec: str, topology: Topology) -> SwitchDevice:
    """The switch device a playbook names (``virtual`` or a device file). Raises QoslabError."""
    kind = device_kind(spec)
    factory = switches.get(kind)
    path = None if kind == spec or spec == "testbed" else str(Path(spec) if Path(spec).is_absolute()
                                                              else repo_root() / spec)
    dev = factory(topology, path)
    assert isinstance(dev, SwitchDevice)
    return dev
