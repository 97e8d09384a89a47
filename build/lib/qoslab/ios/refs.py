"""The references IOS checks when a QoS object is removed or named (pure): a policy-map attached
to an interface cannot be removed, nor a class-map a policy-map uses; a policy-map's ``class``
must name a configured class-map (or ``class-default``).

Sources for the behaviour: Catalyst 3750 Software Configuration Guide 12.2(55)SE, "Configuring
QoS" ("Classifying, Policing, and Marking Traffic by Using Policy Maps": a policy-map's classes
are class-maps created before with ``class-map``; "attach the policy map to the port" before
it is effective) and the Catalyst 9300 QoS Configuration Guide, IOS-XE 17.x ("Restrictions for
QoS"). Cisco's documents do not print the refusal messages; the texts here are the ones IOS
prints on the console for these three cases (:data:`POLICY_IN_USE`, :data:`CLASS_IN_USE`,
:data:`CLASS_NOT_CONFIGURED`); they are named as such in the fidelity table
(switch-configs/README.md).
"""

from __future__ import annotations

from .config import RunningConfig

POLICY_IN_USE = "Policy map {name} is being used"
CLASS_IN_USE = "Class-map {name} is being used"
CLASS_NOT_CONFIGURED = "% class-map {name} not configured"


def policy_in_use(rc: RunningConfig, name: str) -> str | None:
    """The refusal of ``no policy-map NAME`` while an interface has ``service-policy ... NAME``."""
    for sec in rc.interfaces.values():
        for line in sec.children:
            w = line.split()
            if w[:1] == ["service-policy"] and w[-1] == name:
                return POLICY_IN_USE.format(name=name)
    return None


def class_in_use(rc: RunningConfig, name: str) -> str | None:
    """The refusal of ``no class-map NAME`` while a policy-map has ``class NAME``."""
    for pm in rc.policy_maps.values():
        if any(sub.header == f"class {name}" for sub in pm.subsections):
            return CLASS_IN_USE.format(name=name)
    return None


def class_not_configured(rc: RunningConfig, name: str) -> str | None:
    """The refusal of ``class NAME`` in a policy-map when no class-map NAME exists."""
    if name == "class-default" or name in rc.class_maps:
        return None
    return CLASS_NOT_CONFIGURED.format(name=name)
