"""The virtual Catalyst 9300's ``flash:`` (IOS-XE 17.9 in INSTALL mode): the files in the switch's
state folder as the 3750's (:class:`qoslab.vswitch.flash.Flash`), listed with what a 9300's flash
holds instead of a 3750 image: ``packages.conf`` (what ``show version`` and ``show boot`` name)
and its ``cat9k-*.17.09.05.SPA.pkg`` packages, ``nvram_config``; the size of a 9300's flash
(``show file systems``: 11,353,194,496 bytes, genieparser's recording of a 9300 stack); ``dir``
in IOS-XE's layout (inode, permissions, size in 17 columns, date with the UTC offset; genieparser
iosxe/tests/Dir/cli/equal/golden_output_c3850_output.txt). The package sizes are stand-ins of
the order of 17.9's (no image is stored: the virtual switch has none).
"""

from __future__ import annotations

import time

from ...flash import FileEntry, Flash

#: ``flash:`` of a C9300 (bytes total), as the recorded 9300 stack's ``show file systems`` reads.
XE_FLASH_BYTES = 11353194496
#: The INSTALL-mode files of IOS-XE 17.9.5 on a 9300 (name, bytes; stand-in sizes).
XE_FILES = (("cat9k-cc_srdriver.17.09.05.SPA.pkg", 84_534_272), ("cat9k-espbase.17.09.05.SPA.pkg", 711_046_144),
            ("cat9k-guestshell.17.09.05.SPA.pkg", 1_024), ("cat9k-lni.17.09.05.SPA.pkg", 28_472_320),
            ("cat9k-rpbase.17.09.05.SPA.pkg", 108_794_880), ("cat9k-rpboot.17.09.05.SPA.pkg", 58_983_219),
            ("cat9k-sipbase.17.09.05.SPA.pkg", 15_692_800), ("cat9k-sipspa.17.09.05.SPA.pkg", 40_436_736),
            ("cat9k-srdriver.17.09.05.SPA.pkg", 4_302_848), ("cat9k-webui.17.09.05.SPA.pkg", 24_327_168),
            ("cat9k-wlc.17.09.05.SPA.pkg", 1_024), ("nvram_config", 2_097_152), ("packages.conf", 7_608))


class XeFlash(Flash):
    """``flash:`` of the virtual 9300 (see the module doc)."""

    def entries(self) -> list[FileEntry]:
        """The files on flash: the INSTALL-mode files (:data:`XE_FILES`) and the files written there."""
        out = self.written(set())
        have = {e.name for e in out}
        out += [FileEntry(n, size, self.booted) for n, size in XE_FILES if n not in have]
        return sorted(out, key=lambda e: e.name)

    def listing(self, files: list[FileEntry], name: str, used: int) -> str:
        """``dir`` in IOS-XE's layout (see the module doc)."""
        head = f"flash:/{name}"  # NAPALM's _check_file_exists looks for "Directory of flash:/NAME"
        out = [f"Directory of {head}", ""]
        for i, e in enumerate(files):
            stamp = time.strftime("%b %d %Y %H:%M:%S +00:00", time.gmtime(e.mtime))
            out.append(f"{475137 + i}  -rw-{e.size:17d}  {stamp}  {e.name}")
        out += ["", f"{XE_FLASH_BYTES} bytes total ({XE_FLASH_BYTES - used} bytes free)"]
        return "\n".join(out) + "\n"
