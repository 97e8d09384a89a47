"""What the Catalyst dialects (IOS 12.2 and IOS-XE) share on the virtual switch: the IOS family's
EXEC table (:mod:`.commands`), the show commands both answer alike (:mod:`.show`) and their pure
renderers (:mod:`.render`, :mod:`.show_l2`, :mod:`.show_ports`)."""
