"""The machine's ARP cache (neighbour table) capacity for a testbed's full mesh: raised by
``testbed up`` when too small, put back by the last ``testbed down``."""

from __future__ import annotations

import json
from pathlib import Path

#: The kernel's ARP cache limits. The table is one for the whole machine, all network namespaces
#: together (``ip ntable show name arp_cache``): past ``gc_thresh3`` (1024 by default) new entries
#: are refused ("neighbour: arp_cache: neighbor table overflow!") and those hosts cannot reach each
#: other. A full mesh of n hosts needs n(n-1) entries: 2256 at 48 hosts, 9120 at 96.
NEIGH_SYSCTL = Path("/proc/sys/net/ipv4/neigh/default")
#: Entries kept free beside the testbed's own (other testbeds, the machine itself).
NEIGH_HEADROOM = 512


#: Where the machine's ARP cache limits are kept while a testbed has raised them (restored by the
#: last testbed's ``down``).
NEIGH_SAVED = "neigh-saved.json"


def ensure_neighbour_capacity(entries: int, sysctl_dir: Path = NEIGH_SYSCTL,
                              saved: Path | None = None) -> str | None:
    """Raise the machine's ARP cache limits (``gc_thresh2`` and ``gc_thresh3``) to ``entries`` +
    NEIGH_HEADROOM when they are lower; never lowers them (other testbeds share the table). The
    values found before the first raise are kept in ``saved`` (JSON; a later raise keeps them and
    records its own value) for :func:`restore_neighbour_capacity`. Returns a
    note of what changed, or None."""
    need = entries + NEIGH_HEADROOM
    try:
        t2, t3 = (int((sysctl_dir / f"gc_thresh{i}").read_text()) for i in (2, 3))
    except (OSError, ValueError):
        return None
    if t3 >= need:
        return None
    if saved is not None:
        try:
            keep = json.loads(saved.read_text())
        except (OSError, ValueError):
            keep = {"gc_thresh2": t2, "gc_thresh3": t3}
        saved.write_text(json.dumps({**keep, "raised_to": need}))
    (sysctl_dir / "gc_thresh3").write_text(str(need))
    if t2 < need:
        (sysctl_dir / "gc_thresh2").write_text(str(need))
    return (f"raised the machine's ARP cache limit (net.ipv4.neigh.default.gc_thresh3) from {t3} to {need}: "
            f"a full mesh of this topology needs {entries} entries (restored by the last `testbed down`)")


def restore_neighbour_capacity(saved: Path, sysctl_dir: Path = NEIGH_SYSCTL) -> str | None:
    """Put back the ARP cache limits kept in ``saved`` by :func:`ensure_neighbour_capacity` and
    remove it; call it when no testbed is left up. A limit someone else changed since (it is not
    the value a testbed set) is left alone. Returns a note of what was restored, or None."""
    try:
        keep = json.loads(saved.read_text())
    except (OSError, ValueError):
        return None
    done = []
    for key in ("gc_thresh2", "gc_thresh3"):
        f = sysctl_dir / key
        try:
            if int(f.read_text()) == int(keep["raised_to"]) and int(keep[key]) < int(keep["raised_to"]):
                f.write_text(str(keep[key]))
                done.append(f"{key} {keep[key]}")
        except (OSError, ValueError, KeyError):
            continue
    saved.unlink(missing_ok=True)
    return f"restored the machine's ARP cache limits: {', '.join(done)}" if done else None
