"""The questions IOS asks before a file operation, by ``file prompt`` mode (pure).

Cisco IOS Configuration Fundamentals Command Reference (12.2), ``file prompt``: ``alert`` (the
default) asks the destination of a ``copy`` ("Destination filename [NAME]? ", the running- and
startup-config included) and the file of a ``delete`` ("Delete filename [NAME]? ") before its
"Delete flash:/NAME? [confirm]"; ``noisy`` also asks the source ("Source filename [NAME]? ");
``quiet`` asks nothing for ``copy``, only the ``[confirm]`` of a ``delete``. ``delete /force``
never asks. These are the sequences scrapli-cfg (``cisco_iosxe``: merge commit, abort, save),
NAPALM and Netmiko wait for; a missing question hangs them until their timeout.
"""

from __future__ import annotations


def prompt_mode(kept: list[str]) -> str:
    """``alert``, ``noisy`` or ``quiet`` from the running-config's ``file prompt`` line."""
    for mode in ("quiet", "noisy"):
        if f"file prompt {mode}" in kept:
            return mode
    return "alert"


def default_name(url: str) -> str:
    """The name IOS offers in brackets: ``flash:/a/b.txt`` -> ``b.txt``, ``system:running-config``
    -> ``running-config``, ``nvram:startup-config`` -> ``startup-config``."""
    return url.split("/")[-1].split(":")[-1]


def copy_questions(mode: str, src: str, dst: str) -> list[str]:
    """The questions ``copy SRC DST`` asks, in order (each answered by a line)."""
    questions = []
    if mode == "noisy":
        questions.append(f"Source filename [{default_name(src)}]? ")
    if mode != "quiet":
        questions.append(f"Destination filename [{default_name(dst)}]? ")
    return questions


def delete_questions(mode: str, url: str) -> list[str]:
    """The questions ``delete URL`` asks: the file name (not in quiet mode), then the
    ``[confirm]`` (in every mode); the confirmation takes return or ``y``."""
    name = default_name(url)
    fs = url.split(":", 1)[0] if ":" in url else "flash"
    out = [] if mode == "quiet" else [f"Delete filename [{name}]? "]
    return out + [f"Delete {fs}:/{name}? [confirm]"]


def confirmed(answer: str) -> bool:
    """A ``[confirm]`` answer IOS takes as yes: return, or a word starting with y."""
    a = answer.strip().lower()
    return a == "" or a.startswith("y")
