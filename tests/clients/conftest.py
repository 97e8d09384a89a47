"""A virtual Catalyst without tc (``qoslab switch serve --no-apply``) on a free loopback port, for
the client tests: no namespaces, no testbed lock. Each test module gets its own switch (a unique
topology name, so its state folder /run/qoslab/vswitch-NAME is its own and removed afterwards)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import ECENET, REPO
from qoslab.testbedplan import vswitch_dir


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/clients" in str(item.fspath):
            item.add_marker(pytest.mark.clients)


@dataclass
class Switch:
    """A running virtual switch: where it listens, its login, its topology file."""

    name: str
    host: str
    port: int
    username: str
    password: str
    secret: str
    topology: Path
    state: Path
    eapi_port: int | None = None

    def push_thesis(self, out: Path) -> subprocess.CompletedProcess:
        """``qoslab switch push thesis`` to this switch (device ``virtual``), backups in ``out``."""
        return subprocess.run([sys.executable, "-m", "qoslab", "switch", "push", "thesis", "-t", str(self.topology),
                               "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=120)

    def netmiko(self, device_type: str, ssh_profile: str | None = None, password: str | None = None,
                enable: bool = True):
        """An open Netmiko session in privileged EXEC (unless ``enable`` is false): stock
        ``ConnectHandler`` (paramiko's own algorithms) when ``ssh_profile`` is None, else the class
        qoslab uses for that SSH profile (``netmiko_class("c3750")``: the 3750's legacy algorithms).
        ``password`` replaces the switch's (a wrong-password test). Close it after use."""
        if ssh_profile is None:
            from netmiko import ConnectHandler as cls
        else:
            from qoslab.switch.legacyssh import netmiko_class

            cls = netmiko_class(ssh_profile)
        c = cls(device_type=device_type, host=self.host, port=self.port, username=self.username,
                password=password or self.password, secret=self.secret, allow_agent=False, use_keys=False,
                ssh_strict=False, system_host_keys=False, conn_timeout=10, auth_timeout=10)
        if enable:
            c.enable()
        return c

    def stock_netmiko(self, device_type: str):
        """Stock Netmiko ``ConnectHandler`` (paramiko's own algorithms) in privileged EXEC."""
        return self.netmiko(device_type)

    def thesis_lines(self) -> list[str]:
        """The thesis profile's IOS lines for this switch (``qoslab switch render thesis``)."""
        out = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", "thesis", "-t", str(self.topology)],
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(suffix: str, tmp: Path, ssh_profile: str | None = "c3750", model: str | None = None,
           topology: Path = ECENET, eapi: bool = False) -> tuple[Switch, subprocess.Popen]:
    name = f"c{os.getpid() % 100000}{suffix}"
    data = yaml.safe_load(topology.read_text())
    data["name"] = name
    if model:
        data["switch"]["model"] = model
    data["switch"]["management"]["port"] = port = _free_port()
    if ssh_profile is not None:  # None: the topology's own (as shipped: the switch model's profile)
        data["switch"]["management"]["ssh_profile"] = ssh_profile
    eapi_port = data["switch"]["management"]["eapi_port"] = _free_port() if eapi else None
    topo = tmp / f"{name}.yaml"
    topo.write_text(yaml.safe_dump(data, sort_keys=False))
    state = vswitch_dir(name)
    shutil.rmtree(state, ignore_errors=True)
    proc = subprocess.Popen([sys.executable, "-m", "qoslab", "switch", "serve", "--no-apply", "-t", str(topo)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"qoslab switch serve exited: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    c = json.loads((state / "credentials").read_text())
    return Switch(name, "127.0.0.1", port, c["username"], c["password"], c["secret"], topo, state, eapi_port), proc


def scrapli_cli(vswitch: Switch, definition: str):
    """An open scrapli 2.x ``Cli`` (ssh2) with the platform ``definition`` on the switch, the
    enable secret as the ``enable`` lookup (close it after use)."""
    from scrapli import AuthOptions, Cli, LookupKeyValue, TransportSsh2Options

    c = Cli(vswitch.host, port=vswitch.port, definition_file_or_name=definition,
            auth_options=AuthOptions(username=vswitch.username, password=vswitch.password,
                                     lookups=[LookupKeyValue(key="enable", value=vswitch.secret)]),
            transport_options=TransportSsh2Options())
    c.open()
    return c


@pytest.fixture(scope="module")
def vswitch(request, tmp_path_factory):
    """A fresh virtual switch for one test module (topology: the module's ``TOPOLOGY``, else
    ecenet.yaml, with its own name and a free port; SSH profile: the module's ``SSH_PROFILE``, else
    ``c3750``, a 3750 on 12.2(55)SE; ``SSH_PROFILE = None`` keeps the topology's; model: the
    module's ``SWITCH_MODEL``, else the topology's; an eAPI endpoint on a free port when the module
    sets ``EAPI``); stopped (by PID) and its state removed after."""
    if os.geteuid() != 0:
        pytest.skip("the virtual switch keeps its state in /run/qoslab (run as root, as `make test` does)")
    suffix = request.module.__name__.rsplit("_", 1)[-1][:3]
    profile = getattr(request.module, "SSH_PROFILE", "c3750")
    sw, proc = _start(suffix, tmp_path_factory.mktemp("vswitch"), profile, getattr(request.module, "SWITCH_MODEL", None),
                      getattr(request.module, "TOPOLOGY", ECENET), getattr(request.module, "EAPI", False))
    yield sw
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(sw.state, ignore_errors=True)
