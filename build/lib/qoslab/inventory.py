"""An Ansible inventory for a topology (``qoslab inventory -t TOPOLOGY``), for
``playbooks/ansible/provision.yml`` and for whatever else people run against their testbed.

Groups: ``head`` (the workload's head node), ``workers`` (the workload hosts), ``flood_senders``
and ``flood_receivers`` (from the flood definition), ``capture`` (the host with the SPAN capture
NIC, a cluster's ``capture:``), ``nodes`` (all of the above: what provisioning targets) and
``switch`` (the Catalyst as a ``cisco.ios.ios`` host over ``ansible.netcommon.network_cli``, its
login read from ``QOSLAB_SWITCH_USERNAME``/``_PASSWORD``/``_SECRET`` when used, never written).

Host keys are checked against a known_hosts file (``StrictHostKeyChecking=yes``). On the
embedded testbed the nodes are reached from the head node's namespace (``ProxyCommand ip netns
exec ... nc``: the addresses exist only inside the testbed), with the testbed's client key and
known_hosts (``qoslab testbed up --sshd``), and ``qoslab_shared_fs`` tells roles that every
node sees the same file system.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .testbedplan import host_namespace
from .topology import Topology
from .trafficgen.definitions import FloodDefinition

#: Where provisioning puts the jars when the topology does not say (``ssh.qoslab_dir``).
DEFAULT_QOSLAB_DIR = "/opt/qoslab"


def _ssh_vars(topo: Topology, sshd_dir: Path | None) -> dict[str, Any]:
    """Connection variables for the nodes (pure)."""
    s = topo.ssh
    key: str | None
    if topo.environment == "embedded":
        if sshd_dir is None:
            raise ValueError("an embedded topology's inventory needs the testbed's sshd folder")
        head_ns = host_namespace(topo.name, topo.hosts[0].name)
        known = sshd_dir / "known_hosts"
        key = str(sshd_dir / "id_ed25519")
        proxy = f" -o ProxyCommand='ip netns exec {head_ns} nc %h %p'"
        user, port = "root", 22
    else:
        known = Path(s.known_hosts).expanduser() if s and s.known_hosts else Path("~/.ssh/known_hosts")
        key = str(Path(s.identity_file).expanduser()) if s and s.identity_file else None
        proxy, user, port = "", s.user if s else "root", s.port if s else 22
    v: dict[str, Any] = {
        "ansible_user": user, "ansible_port": port, "ansible_python_interpreter": "/usr/bin/python3",
        "ansible_pipelining": True,
        "ansible_ssh_common_args": f"-o UserKnownHostsFile={known} -o StrictHostKeyChecking=yes "
                                   f"-o PasswordAuthentication=no -o IdentitiesOnly={'yes' if key else 'no'}{proxy}"}
    if key:
        v["ansible_ssh_private_key_file"] = key
    return v


def build_inventory(topo: Topology, *, workers: list[str] | None = None, flood: FloodDefinition | None = None,
                    sshd_dir: Path | None = None) -> dict[str, Any]:
    """The inventory of ``topo`` as plain data (pure; YAML inventory format). ``workers``: the
    workload hosts (default every host; the first is the head node); ``flood``: the flood whose
    senders and receivers are grouped; ``sshd_dir``: the embedded testbed's sshd folder."""
    from .trafficgen.patterns import expand

    workers = workers or topo.host_names
    flood = expand(flood, topo) if flood is not None else None
    addr = {h.name: (topo.ssh.addresses.get(h.name, h.ip) if topo.ssh else h.ip) for h in topo.hosts}

    def group(names: list[str]) -> dict[str, Any]:
        return {"hosts": {n: None for n in dict.fromkeys(names)}}

    children: dict[str, Any] = {
        "head": group(workers[:1]), "workers": group(workers),
        "flood_senders": group([f.src for f in flood.flows] if flood else []),
        "flood_receivers": group([f.dst for f in flood.flows] if flood else []),
        "capture": group([topo.capture.host] if topo.capture else []),
    }
    nodes = {**{h: {"ansible_host": addr[h]} for h in topo.host_names}}
    children["nodes"] = {"hosts": nodes, "children": {k: None for k in children}}
    mg = topo.switch.management
    children["switch"] = {"hosts": {topo.switch.hostname: {
        "ansible_host": mg.host, "ansible_port": mg.port,
        "ansible_connection": "ansible.netcommon.network_cli", "ansible_network_os": "cisco.ios.ios",
        "ansible_user": "{{ lookup('env', 'QOSLAB_SWITCH_USERNAME') }}",
        "ansible_password": "{{ lookup('env', 'QOSLAB_SWITCH_PASSWORD') }}",
        "ansible_become": True, "ansible_become_method": "enable",
        "ansible_become_password": "{{ lookup('env', 'QOSLAB_SWITCH_SECRET') }}",
        "qoslab_switch_model": topo.switch.model}}}
    node_vars = {**_ssh_vars(topo, sshd_dir),
                 "qoslab_topology": topo.name, "qoslab_environment": topo.environment,
                 "qoslab_dir": topo.ssh.qoslab_dir if topo.ssh else DEFAULT_QOSLAB_DIR,
                 "qoslab_link_rate_bps": topo.link.rate, "qoslab_shared_fs": topo.environment == "embedded",
                 "qoslab_addresses": {h.name: h.ip for h in topo.hosts}}
    children["nodes"]["vars"] = node_vars
    return {"all": {"children": children}}
