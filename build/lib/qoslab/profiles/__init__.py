"""QoS profiles (``qos-profiles/*.yaml``) and their rendering to Catalyst 3750 IOS lines.

A profile is written in the switch's own terms (mls qos, trust, ACL -> class-map -> policy-map
``set dscp``, ingress queues, egress SRR weights, queue-sets, ``priority-queue out``, DSCP maps,
SPAN). Hosts are named through groups resolved against a topology (``workload: {first: 4}``),
so one profile fits any cluster size; a campaign may pass its own group members.

- :mod:`.model`: the profile model, validated against IOS syntax when loaded; :func:`load_profile`;
- :mod:`.render`: :func:`render` (pure): (profile, topology, groups) -> IOS config lines.
"""

from __future__ import annotations

from .model import (
    PROFILE_DIR,
    Egress,
    Group,
    Ingress,
    Police,
    Profile,
    QueueSet,
    Rule,
    Span,
    load_profile,
    profile_path,
)
from .render import TEMPLATES, render, resolve_groups

__all__ = ["PROFILE_DIR", "TEMPLATES", "Egress", "Group", "Ingress", "Police", "Profile", "QueueSet", "Rule", "Span",
           "load_profile", "profile_path", "render", "resolve_groups"]
