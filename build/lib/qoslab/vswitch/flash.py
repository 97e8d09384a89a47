"""The virtual Catalyst's ``flash:`` file system: files in its state folder
(``/run/qoslab/vswitch-NAME/flash``), ``dir`` / ``more`` / ``verify /md5`` / ``delete`` and the
SCP server side (``scp -t flash:/NAME``, refused until ``ip scp server enable``), as NAPALM's
``ios`` driver and netmiko's file transfer use them; the ``dir`` listing of IOS 12.2
(:func:`render_dir`)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .facts import DeviceFacts

#: ``dir flash:`` of a WS-C3750G-24T (32 MB flash): "32514048 bytes total"
FLASH_BYTES = 32514048
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,63}$")
#: The IOS image a 3750 boots from flash: (``show version``: System image file), listed by
#: ``dir`` as on hardware. Its size is a stand-in of the order of the 12.2(55)SE ipservicesk9
#: image's (no image is stored: the virtual switch has none).
IMAGE = DeviceFacts.image
IMAGE_BYTES = 16_000_000
#: The file a 3750 keeps its startup-config in (``boot config-file``, default flash:config.text).
CONFIG_TEXT = "config.text"


@dataclass(frozen=True)
class FileEntry:
    """A file on flash: name, size in bytes, modification time (epoch seconds)."""

    name: str
    size: int
    mtime: float


def render_dir(fs: str, files: list[FileEntry], total: int, path: str = "", used: int | None = None) -> str:
    """``dir FS[/PATH]``: IOS 12.2 listing (index, permissions, size, date, name) and the
    ``bytes total (... bytes free)`` line NAPALM and netmiko read; ``used``: bytes used on the
    whole file system (default: the listed files)."""
    out = [f"Directory of {fs}/{path}", ""]
    for i, e in enumerate(files, 2):
        stamp = time.strftime("%b %d %Y %H:%M:%S +00:00", time.gmtime(e.mtime))
        out.append(f"{i:5d}  -rwx  {e.size:10d}  {stamp}  {e.name}")
    used = sum(e.size for e in files) if used is None else used
    out += ["", f"{total} bytes total ({total - used} bytes free)"]
    return "\n".join(out) + "\n"


class Flash:
    """``flash:`` in directory ``root``: flat file names (letters, digits, ``_.-``), and the files
    every 3750 has: the IOS image (:data:`IMAGE`, listed only) and ``config.text`` (the
    startup-config ``startup`` when it exists, as ``write memory`` leaves it)."""

    def __init__(self, root: Path, startup: Path | None = None, booted: float = 0.0):
        self.root = root
        self.startup = startup
        self.booted = booted

    def path(self, url: str) -> Path | None:
        """The file of ``flash:NAME`` / ``flash:/NAME``; None for another file system or a bad name."""
        m = re.match(r"^flash:/?(.*)$", url)
        if not m or not _NAME.match(m.group(1)) or m.group(1) in (".", ".."):
            return None
        return self.root / m.group(1)

    def written(self, stock: set[str]) -> list[FileEntry]:
        """The files written to flash (the state folder's regular files but hidden ones,
        config.text and the names in ``stock``, which the platform lists itself)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return [FileEntry(p.name, p.stat().st_size, p.stat().st_mtime) for p in sorted(self.root.iterdir())
                if p.is_file() and not p.name.startswith(".") and p.name not in stock | {CONFIG_TEXT}]

    def entries(self) -> list[FileEntry]:
        """The files on flash: (name, size, modification time), sorted by name."""
        out = self.written({IMAGE})
        out.append(FileEntry(IMAGE, IMAGE_BYTES, self.booted))
        if self.startup is not None and self.startup.is_file():
            out.append(FileEntry(CONFIG_TEXT, self.startup.stat().st_size, self.startup.stat().st_mtime))
        return sorted(out, key=lambda e: e.name)

    def used(self) -> int:
        """Bytes used on flash (the listed files)."""
        return sum(e.size for e in self.entries())

    def listing(self, files: list[FileEntry], name: str, used: int) -> str:
        """The ``dir`` text of ``files`` (``name``: the one file asked for, or ""), ``used``
        bytes of the whole file system: IOS 12.2's layout (:func:`render_dir`)."""
        return render_dir("flash:", files, FLASH_BYTES, name, used)

    def dir(self, url: str | None) -> str:
        """``dir [flash:[/NAME]]`` output (:meth:`listing`), or the IOS error for a missing file /
        other file system."""
        entries = self.entries()
        used = sum(e.size for e in entries)
        if url in (None, "flash:", "flash:/"):
            return self.listing(entries, "", used)
        p = self.path(url)
        if p is None:
            return f"%Error opening {url} (Invalid argument)\n" if url.startswith("flash:") else \
                f"%Error opening {url} (No such device)\n"
        hit = [e for e in entries if e.name == p.name]
        if not hit:
            return f"%Error opening flash:/{p.name} (No such file or directory)\n"
        return self.listing(hit, p.name, used)

    def read(self, url: str) -> str | None:
        """Text of ``flash:NAME``, None if there is no such file."""
        p = self.path(url)
        if p is not None and p.name == CONFIG_TEXT:
            return self.startup.read_text() if self.startup is not None and self.startup.is_file() else None
        return p.read_text() if p is not None and p.is_file() else None

    def write(self, url: str, text: str) -> bool:
        """Write a file atomically; False if ``url`` is not a flash: file name."""
        p = self.path(url)
        if p is None:
            return False
        if p.name == CONFIG_TEXT and self.startup is not None:  # flash:config.text is the startup-config
            p = self.startup
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, p)
        return True

    def delete(self, url: str) -> str:
        """``delete flash:NAME``: "" or the IOS error."""
        p = self.path(url)
        if p is not None and p.name == CONFIG_TEXT and self.startup is not None:
            p = self.startup
        if p is None or not p.is_file():
            return f"%Error deleting {url} (No such file or directory)\n"
        p.unlink()
        return ""

    def md5(self, url: str) -> str:
        """``verify /md5 URL`` output (``verify /md5 (URL) = HEX`` as netmiko's process_md5 reads it)."""
        p = self.path(url)
        if p is None or not p.is_file():
            return f"%Error opening {url} (No such file or directory)\n"
        digest = hashlib.md5(p.read_bytes()).hexdigest()
        return f"{'.' * 20}Done!\nverify /md5 ({url}) = {digest}\n\n"


def sftp_factory(flash_root: Path, enabled: Callable[[], bool]) -> type:
    """An asyncssh SFTP server class confined to ``flash_root`` that maps ``flash:/NAME`` and
    refuses everything while ``enabled()`` is false (IOS: ``ip scp server enable``). asyncssh's
    SCP server (``allow_scp=True``) uses it for ``scp -t flash:/NAME``."""
    import asyncssh

    class FlashSFTP(asyncssh.SFTPServer):
        def __init__(self, chan):
            flash_root.mkdir(parents=True, exist_ok=True)
            super().__init__(chan, chroot=str(flash_root).encode())

        def map_path(self, path: bytes) -> bytes:
            if not enabled():
                raise asyncssh.SFTPPermissionDenied("SCP server not enabled (ip scp server enable)")
            p = path.decode(errors="replace")
            if p.startswith("flash:"):
                p = p[len("flash:"):]
            return super().map_path(p.encode())

    return FlashSFTP
