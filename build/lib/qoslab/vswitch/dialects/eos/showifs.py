"""The virtual EOS switch's interface, layer-2 and layer-3 shows as JSON models (pure over
:class:`.state.Port`): what ANTA's interface tests and NAPALM's ``eos`` getters read, with EOS's
field names (ANTA's unit-test data, aristanetworks/anta tests/units/anta_tests/test_interfaces.py;
NAPALM's mocked outputs, napalm/test/eos/mocked_data: test_get_vlans, test_get_mac_address_table,
test_get_lldp_neighbors, test_get_interfaces_ip, test_get_network_instances, test_get_optics).

What the testbed's switch is: every front port a switched (``bridged``) access port of VLAN 1,
full duplex at the topology's link rate, up when a host is attached and it is not shut down; no
errors, no error-disabled port, no storm control, no port-channel, no LACP, no routed interface,
SVI or loopback (the switch has no address: ``show ip interface`` lists none), no LLDP neighbour
(the testbed's hosts run no LLDP agent), no learned MAC (the virtual switch reads no bridge
FDB), one VRF ``default`` routing nothing, no transceiver DOM (virtual links). Rates are 0: the
switch keeps counters since boot, not 5-minute rates (named in the fidelity table).
"""

from __future__ import annotations

from typing import Any

from .state import Port


def _status(p: Port) -> str:
    return "disabled" if p.shutdown else "connected" if p.up else "notconnect"


def interfaces_status(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces status``: link status, VLAN, duplex, bandwidth (bit/s), type."""
    return {"interfaceStatuses": {p.name: {
        "vlanInformation": {"interfaceMode": "bridged", "vlanId": 1, "interfaceForwardingModel": "bridged"},
        "bandwidth": p.bps, "interfaceType": "25GBASE-SR", "description": p.description,
        "autoNegotiateActive": False, "duplex": "duplexFull", "linkStatus": _status(p),
        "lineProtocolStatus": "up" if p.up else "down"} for p in ports}}


def errdisabled() -> dict[str, Any]:
    """``show interfaces status errdisabled``: none."""
    return {"interfaceStatuses": {}}


def counters_errors(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces counters errors``: every error counter 0 (a virtual link has none)."""
    zero = {"inErrors": 0, "frameTooLongs": 0, "outErrors": 0, "frameTooShorts": 0, "fcsErrors": 0,
            "alignmentErrors": 0, "symbolErrors": 0}
    return {"interfaceErrorCounters": {p.name: dict(zero) for p in ports}}


def counters_discards(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces counters discards``: output discards are the port's root qdisc drops."""
    return {"interfaces": {p.name: {"inDiscards": 0, "outDiscards": p.out_drops} for p in ports},
            "inDiscardsTotal": 0, "outDiscardsTotal": sum(p.out_drops for p in ports)}


def counters_rates(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces counters rates``: 5-minute rates (0: not measured, see the module doc)."""
    return {"interfaces": {p.name: {"description": p.description, "interval": 300, "inBpsRate": 0.0,
                                    "inPktsRate": 0.0, "inPpsRate": 0.0, "outBpsRate": 0.0, "outPktsRate": 0.0,
                                    "outPpsRate": 0.0, "lastUpdateTimestamp": 0.0} for p in ports}}


def descriptions(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces description``: status ``up`` / ``down`` / ``adminDown``, protocol, description."""
    return {"interfaceDescriptions": {p.name: {
        "interfaceStatus": "adminDown" if p.shutdown else "up" if p.up else "down", "description": p.description,
        "lineProtocolStatus": "up" if p.up else "down"} for p in ports}}


def storm_control() -> dict[str, Any]:
    """``show storm-control``: no port has storm control configured."""
    return {"aggregateTrafficClasses": {}, "interfaces": {}}


def port_channels() -> dict[str, Any]:
    """``show port-channel``: none."""
    return {"portChannels": {}}


def lacp_counters() -> dict[str, Any]:
    """``show lacp counters all-ports``: no port-channel, no orphan port running LACP."""
    return {"portChannels": {}, "orphanPorts": {}}


def ip_interfaces() -> dict[str, Any]:
    """``show ip interface [brief]``: no routed interface (the switch has no address)."""
    return {"interfaces": {}}


def queue_drops(ports: list[Port]) -> dict[str, Any]:
    """``show interfaces counters queue drops``: per port and traffic class the VOQ's drops (the
    tc queue's) and the egress queue's (0: the tc queue is the only drop point)."""
    def tc(q: Any) -> dict[str, Any]:
        return {"ingressVoqCounters": {"countersSum": {"droppedPackets": q.dropped_packets,
                                                      "droppedBytes": q.dropped_bytes}},
                "egressQueueCounters": {"countersSum": {"droppedPackets": 0, "droppedBytes": 0}}}
    return {"interfaces": {p.name: {"trafficClasses": {f"TC{i}": tc(q) for i, q in enumerate(p.queues)}}
                           for p in ports}}


def lldp_neighbors() -> dict[str, Any]:
    """``show lldp neighbors``: none (see the module doc)."""
    return {"tablesLastChangeTime": 0.0, "tablesAgeOuts": 0, "tablesDrops": 0, "tablesInserts": 0,
            "tablesDeletes": 0, "lldpNeighbors": []}


def lldp_detail(ports: list[Port]) -> dict[str, Any]:
    """``show lldp neighbors [PORT] detail``: each port with no neighbour information."""
    return {"lldpNeighbors": {p.name: {"lldpNeighborInfo": []} for p in ports}}


def mac_table() -> dict[str, Any]:
    """``show mac address-table``: no entry (see the module doc)."""
    return {"unicastTable": {"tableEntries": []}, "multicastTable": {"tableEntries": []}}


def vlans(ports: list[Port]) -> dict[str, Any]:
    """``show vlan``: VLAN 1 ``default`` with every port (the factory access VLAN)."""
    return {"vlans": {"1": {"name": "default", "status": "active", "dynamic": False,
                            "interfaces": {p.name: {"privatePromoted": False, "blocked": None} for p in ports}}},
            "sourceDetail": ""}


def vrfs() -> dict[str, Any]:
    """``show vrf``: the default VRF (no routed interface in it)."""
    return {"vrfs": {"default": {"routeDistinguisher": "", "protocols": {"ipv4": {"supported": True,
                                                                                  "protocolState": "down",
                                                                                  "routingState": "down"}},
                                 "vrfState": "up", "interfaces": [], "interfacesV4": [], "interfacesV6": []}}}


def routes(vrf: str) -> dict[str, Any]:
    """``show ip route vrf VRF [PREFIX] ... detail``: no route (the switch routes nothing)."""
    return {"vrfs": {vrf: {"routes": {}, "allRoutesProgrammedHardware": True, "allRoutesProgrammedKernel": True,
                           "defaultRouteState": "notSet", "routingDisabled": True}}}


def transceivers() -> dict[str, Any]:
    """``show interfaces transceiver``: no DOM reading (virtual links have no optics)."""
    return {"interfaces": {}}
