"""The JSON models of the virtual EOS switch's show commands (what eAPI returns with ``format:
json`` and the CLI prints after ``| json``), with EOS's field names: ``show version``, ``show
hostname``, ``show interfaces`` (the fields of NAPALM's recorded vEOS outputs,
napalm/test/eos/mocked_data/test_get_facts and test_get_interfaces: what ``get_facts``,
``get_interfaces`` and ``get_interfaces_counters`` read), ``show interfaces counters queue
[detail]`` (``ingressVoqCounters`` / ``egressQueueCounters``, as Arista's ANTA and go-passpersist
read them) and ``show configuration sessions [detail]`` (what NAPALM's lock check reads). Pure.
"""

from __future__ import annotations

import time
from typing import Any

from .state import INTERNAL, VERSION, EosFacts, Port


def version(f: EosFacts) -> dict[str, Any]:
    """``show version | json``."""
    return {"mfgName": "Arista", "modelName": f.model, "hardwareRevision": "11.00", "serialNumber": f.serial,
            "systemMacAddress": f.mac, "hwMacAddress": f.mac, "configMacAddress": "00:00:00:00:00:00",
            "version": VERSION, "architecture": "x86_64", "internalVersion": INTERNAL,
            "internalBuildId": f.build_id, "imageFormatVersion": "3.0", "imageOptimization": "Sand-4GB",
            "bootupTimestamp": round(f.booted, 3), "uptime": round(f.uptime_s, 2), "memTotal": 32617448,
            "memFree": 27011180, "isIntlVersion": False}


def hostname(name: str) -> dict[str, Any]:
    """``show hostname | json``."""
    return {"hostname": name, "fqdn": name}


def _interface(p: Port, booted: float) -> dict[str, Any]:
    up = p.up
    return {
        "name": p.name, "forwardingModel": "bridged", "lineProtocolStatus": "up" if up else "down",
        "interfaceStatus": "disabled" if p.shutdown else "connected" if up else "notconnect",
        "hardware": "ethernet", "interfaceAddress": [], "physicalAddress": p.mac, "burnedInAddress": p.mac,
        "description": p.description, "bandwidth": p.bps, "mtu": 9214, "l3MtuConfigured": False, "l2Mru": 0,
        "lastStatusChangeTimestamp": round(booted, 3), "duplex": "duplexFull", "autoNegotiate": "off",
        "loopbackMode": "loopbackNone",
        "interfaceStatistics": {"updateInterval": 300.0, "inBitsRate": 0.0, "inPktsRate": 0.0, "outBitsRate": 0.0,
                                "outPktsRate": 0.0},
        "interfaceCounters": {
            "inOctets": p.in_bytes, "inUcastPkts": p.in_packets, "inMulticastPkts": 0, "inBroadcastPkts": 0,
            "inDiscards": 0, "inTotalPkts": p.in_packets, "outOctets": p.out_bytes, "outUcastPkts": p.out_packets,
            "outMulticastPkts": 0, "outBroadcastPkts": 0, "outDiscards": p.out_drops, "totalInErrors": 0,
            "totalOutErrors": 0,
            "linkStatusChanges": 1 if up else 0, "counterRefreshTime": round(time.time(), 3),
            "inputErrorsDetail": {"runtFrames": 0, "giantFrames": 0, "fcsErrors": 0, "alignmentErrors": 0,
                                  "symbolErrors": 0, "rxPause": 0},
            "outputErrorsDetail": {"collisions": 0, "lateCollisions": 0, "deferredTransmissions": 0, "txPause": 0}},
    }


def interfaces(ports: list[Port], f: EosFacts) -> dict[str, Any]:
    """``show interfaces [PORT] | json``."""
    return {"interfaces": {p.name: _interface(p, f.booted) for p in ports}}


def _counters(enq_p: int, enq_b: int, drop_p: int, drop_b: int) -> dict[str, int]:
    return {"enqueuedPackets": enq_p, "enqueuedBytes": enq_b, "droppedPackets": drop_p, "droppedBytes": drop_b}


def counters_queue(ports: list[Port], detail: bool) -> dict[str, Any]:
    """``show interfaces [PORT] counters queue [detail] | json``: the VOQ counters per port and
    traffic class (enqueued = sent + dropped, dropped); with ``detail`` the egress queues too
    (unicast, drop precedence 0: sent, nothing dropped)."""
    voq = {p.name: {"trafficClasses": {f"TC{tc}": _counters(q.sent_packets + q.dropped_packets,
                                                             q.sent_bytes + q.dropped_bytes,
                                                             q.dropped_packets, q.dropped_bytes)
                                       for tc, q in enumerate(p.queues)}} for p in ports}
    out: dict[str, Any] = {"ingressVoqCounters": {"interfaces": voq}}
    if detail:
        zero = {f"TC{tc}": {"dropPrecedences": {"DP0": _counters(0, 0, 0, 0)}} for tc in range(8)}
        out["egressQueueCounters"] = {"interfaces": {p.name: {
            "ucastQueues": {"trafficClasses": {f"TC{tc}": {"dropPrecedences": {"DP0": _counters(
                q.sent_packets, q.sent_bytes, 0, 0)}} for tc, q in enumerate(p.queues)}},
            "mcastQueues": {"trafficClasses": zero}} for p in ports}}
    return out


def sessions(states: dict[str, str]) -> dict[str, Any]:
    """``show configuration sessions [detail] | json``: each session's state (``pending``,
    ``completed``), the limits. No commit timer is ever running (``commit timer`` is not emulated),
    so the 4.32 timer fields NAPALM looks for are absent."""
    return {"sessions": {n: {"state": s, "completedTime": 0, "commitUser": "", "description": "", "instances": {}}
                         for n, s in states.items()}, "maxSavedSessions": 1, "maxOpenSessions": 5}
