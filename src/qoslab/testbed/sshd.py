"""An OpenSSH server inside every host namespace of the embedded testbed, so a campaign can drive
the testbed over SSH exactly as it drives a real cluster (``executor: ssh``).

Per testbed, in ``/run/qoslab/sshd-<topology>/`` (mode 0700, every key 0600 from the first byte):

- ``id_ed25519``: the client key qoslab logs in with (``authorized_keys`` accepts it only from the
  testbed network, without forwarding of any kind);
- ``host-<host>``: each host's own ed25519 host key; ``known_hosts`` pins them by address, so the
  client never accepts an unknown key;
- ``sshd-<host>.conf``: key-only (no passwords, no keyboard-interactive, no PAM), listening on
  the host's testbed address port 22 only; ``sshd-<host>.pid``, ``sshd-<host>.log``.

The servers run as ``ip netns exec NS /usr/sbin/sshd -D -e -f CONF`` (Debian ``openssh-server``,
installed by ``make setup``). ``Testbed.down`` ends them with everything else in the namespaces.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from ..errors import EnvironmentProblem, QoslabError
from ..executors.ssh import SshTarget
from ..switch.device import write_private
from ..testbedplan import STATE_DIR, host_namespace
from ..topology import TESTBED_NETWORK, Topology, repo_root
from .cpuplace import CpuPlacement, joiner
from .procs import cmdline, kill_pids, pid_alive

#: The OpenSSH server binary (Debian ``openssh-server``).
SSHD = Path("/usr/sbin/sshd")
#: OpenSSH's privilege-separation directory; sshd refuses to start without it.
PRIVSEP_DIR = Path("/run/sshd")
#: Seconds every sshd may take to listen.
SSHD_START_TIMEOUT_S = 10.0
#: SSH port of the testbed's hosts.
SSH_PORT = 22


def sshd_dir(topology: str) -> Path:
    """State folder of the testbed's SSH servers: ``/run/qoslab/sshd-<topology>``."""
    return STATE_DIR / f"sshd-{topology}"


def config_text(d: Path, host: str, ip: str, port: int = SSH_PORT) -> str:
    """The sshd_config of ``host`` (pure): key-only login, listening on ``ip:port`` only, no
    forwarding, SFTP in-process, its files in ``d``."""
    return "\n".join([
        f"ListenAddress {ip}:{port}",
        f"HostKey {d / f'host-{host}'}",
        f"PidFile {d / f'sshd-{host}.pid'}",
        f"AuthorizedKeysFile {d / 'authorized_keys'}",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "AllowTcpForwarding no",
        "AllowAgentForwarding no",
        "X11Forwarding no",
        "PermitTunnel no",
        "PrintMotd no",
        "PrintLastLog no",
        "UseDNS no",
        "MaxStartups 64:30:128",
        "Subsystem sftp internal-sftp",
        "LogLevel ERROR",
        "",
    ])


def _keypair(path: Path, comment: str) -> str:
    """Create an ed25519 key at ``path`` (0600) and ``path.pub`` unless present; returns the
    public key line (``TYPE BASE64 COMMENT``)."""
    import asyncssh

    if not path.exists():
        key = asyncssh.generate_private_key("ssh-ed25519", comment=comment)
        write_private(path, key.export_private_key())
        path.with_name(path.name + ".pub").write_bytes(key.export_public_key())
    return path.with_name(path.name + ".pub").read_text().strip()


def ensure_keys(topo: Topology) -> Path:
    """Create (once per testbed) the client key, ``authorized_keys``, every host's host key and
    ``known_hosts`` pinning them; returns the state folder."""
    d = sshd_dir(topo.name)
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    client = _keypair(d / "id_ed25519", f"qoslab@{topo.name}")
    opts = f'from="{TESTBED_NETWORK}",no-port-forwarding,no-agent-forwarding,no-X11-forwarding'
    (d / "authorized_keys").write_text(f"{opts} {client}\n")
    os.chmod(d / "authorized_keys", 0o600)
    lines = []
    for h in topo.hosts:
        pub = _keypair(d / f"host-{h.name}", f"{h.name}@{topo.name}").split()
        lines.append(f"{h.ip} {pub[0]} {pub[1]}\n")
    (d / "known_hosts").write_text("".join(lines))
    return d


def _pid_of(d: Path, host: str) -> int | None:
    """PID of ``host``'s running sshd (from its pid file, checked against its command line)."""
    try:
        pid = int((d / f"sshd-{host}.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    conf = str(d / f"sshd-{host}.conf")
    return pid if pid_alive(pid) and any(conf in c for c in cmdline(pid)) else None


def server_pids(topo: Topology) -> dict[str, int]:
    """Host -> PID of its running sshd (hosts without one are left out)."""
    d = sshd_dir(topo.name)
    return {h.name: pid for h in topo.hosts if (pid := _pid_of(d, h.name)) is not None}


def server_and_session_pids(topo: Topology) -> list[int]:
    """PIDs of the testbed's listening sshd processes and of every process below them (the
    sessions they serve): what a clean-up of the hosts must leave alone."""
    roots = set(server_pids(topo).values())
    if not roots:
        return []
    parent: dict[int, int] = {}
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                stat = Path(f"/proc/{e.name}/stat").read_text()
                parent[int(e.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    keep = set(roots)
    grew = True
    while grew:
        new = {p for p, pp in parent.items() if pp in keep and p not in keep}
        keep |= new
        grew = bool(new)
    return sorted(keep)


def start(topo: Topology, hosts: list[str] | None = None) -> list[str]:
    """Start an sshd in the namespace of every host (or of ``hosts``) that has none running and
    wait until each listens; returns the hosts started. Idempotent. Raises EnvironmentProblem
    when sshd is not installed, QoslabError naming the host when one does not start."""
    if not SSHD.exists():
        raise EnvironmentProblem(f"{SSHD} is missing: install openssh-server (make setup)")
    d = ensure_keys(topo)
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    started: dict[str, subprocess.Popen[bytes]] = {}
    # an sshd in its host's CPU budget: its sessions' processes inherit it; without a cpu: block outside
    # the testbed's CPU shield, as a real node's sshd is (a flood sender over SSH keeps the real-time class)
    place = CpuPlacement(topo)
    for h in topo.hosts:
        if (hosts is not None and h.name not in hosts) or _pid_of(d, h.name) is not None:
            continue
        conf = d / f"sshd-{h.name}.conf"
        conf.write_text(config_text(d, h.name, h.ip))
        (d / f"sshd-{h.name}.pid").unlink(missing_ok=True)
        with open(d / f"sshd-{h.name}.log", "ab") as log:
            started[h.name] = subprocess.Popen(
                ["ip", "netns", "exec", host_namespace(topo.name, h.name), str(SSHD), "-D", "-e", "-f", str(conf)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                preexec_fn=joiner(place.procs_files(h.name) if place.active else place.emulation_files()))
    deadline = time.monotonic() + SSHD_START_TIMEOUT_S
    for host, p in started.items():
        while _pid_of(d, host) is None:  # sshd writes its pid file once it listens
            if p.poll() is not None or time.monotonic() > deadline:
                tail = (d / f"sshd-{host}.log").read_text(errors="replace").strip().splitlines()[-2:]
                raise QoslabError(f"sshd on {host} did not start: {' / '.join(tail) or 'no output'}")
            time.sleep(0.02)
    return list(started)


def stop(topo: Topology, hosts: list[str] | None = None) -> list[int]:
    """End the listening sshd of every host (or of ``hosts``) by PID: no new logins; a session
    already open lives until its client disconnects. Returns the PIDs signalled."""
    pids = [pid for h, pid in server_pids(topo).items() if hosts is None or h in hosts]
    return kill_pids(pids)


def targets(topo: Topology, head: str | None = None) -> dict[str, SshTarget]:
    """How the ``ssh`` executor reaches every host of the testbed: its address, port 22, root,
    the per-testbed client key, the pinned ``known_hosts``, connections opened from the head
    node's namespace (``head``, default the first host: the controller sits on the experiment
    network as the thesis's jp-1 did), jars in this checkout (shared file system)."""
    d = sshd_dir(topo.name)
    if not (d / "id_ed25519").exists():
        raise QoslabError(f"the testbed {topo.name} has no SSH servers (run `qoslab testbed up --sshd`)")
    src = host_namespace(topo.name, head or topo.hosts[0].name)
    return {h.name: SshTarget(host=h.ip, port=SSH_PORT, username="root", known_hosts=d / "known_hosts",
                              client_keys=(d / "id_ed25519",), source_netns=src, qoslab_root=str(repo_root()))
            for h in topo.hosts}
