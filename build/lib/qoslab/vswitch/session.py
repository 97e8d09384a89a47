"""One CLI session of the virtual switch as automation clients see it, dialect-neutral: user and
privileged EXEC, ``enable`` (three tries, ``% Bad secrets``), configuration mode (the dialect's
interpreter, :func:`qoslab.ios.interpret` for the Catalysts), every EXEC line parsed by
:mod:`qoslab.vswitch.execparse` against the dialect's command table (abbreviations, interface
names, output modifiers), show commands answered by the dialect
(:meth:`qoslab.vswitch.dialects.Dialect.show`), the flash: file system (:mod:`.flash`),
``copy``, ``show archive config ...`` and ``configure replace`` (:mod:`qoslab.vswitch.archive`),
``tclsh`` as far as NAPALM's and netmiko's inline transfer type it, and a line buffer of
:data:`LINE_MAX` characters (a longer line is rejected whole).

:class:`IosSession` is transport-free: :meth:`IosSession.line` takes one typed line and returns a
:class:`Reply` (text, whether to close, whether the next line is a secret or an answer to a
prompt); :mod:`.server` drives it over SSH (shell with ``--More--`` paging, exec channel). The
switch object provides ``running`` (RunningConfig), ``topo``, ``dir``, ``booted``, ``dialect``
(:class:`qoslab.vswitch.dialects.Dialect`), ``save()``, ``apply()``, ``factory()``, and what
:mod:`qoslab.vswitch.dialects.base` lists for the show commands (kernel readings, optional).
"""

from __future__ import annotations

import hashlib
import re
import resource
import secrets
import time
from collections.abc import Callable

from ..errors import QoslabError
from ..ios import IosError, Mode
from . import ping
from .archive import config_differences, copied, incremental_diffs, merge, replace
from .cli_help import context_help
from .dialects import Reply, ShowContext
from .execparse import ExecCommand, apply_modifier, parse_exec
from .facts import DeviceFacts
from .fileprompt import confirmed, copy_questions, delete_questions, prompt_mode
from .flash import Flash

#: The longest command line the session takes (characters). A longer line, typed or sent on the
#: exec channel, is rejected whole (nothing of it runs) with IOS's ``% Invalid input`` and the
#: caret at the first character past the buffer; the shell has echoed it in full, so the client
#: stays in step and the next line runs in the mode it expects.
LINE_MAX = 4096


def device_facts(sw) -> DeviceFacts:
    """Identity of the virtual switch: a virtual serial (``QSL`` + 8 hex digits of the topology
    name) and base MAC (locally administered ``02xx``), never a real device's."""
    h = hashlib.sha256(sw.topo.name.encode()).hexdigest()
    return DeviceFacts(hostname=sw.running.hostname, model=sw.topo.switch.model, serial=f"QSL{h[:8].upper()}",
                       base_mac=f"02{h[8:10]}.{h[10:14]}.0000", uptime_s=time.time() - sw.booted,
                       n_ports=len(sw.topo.switch.ports), link_bps=sw.topo.link.rate)


class IosSession:
    """The state of one session: privilege, config mode, terminal length/width, pending question."""

    def __init__(self, switch, secret: str, privileged: bool = False):
        self.sw = switch
        self.dialect = switch.dialect
        self.secret = secret
        self.privileged = privileged
        self.mode: Mode | None = None
        self.length = 24
        self.width = 80
        self._pending: Callable[[str], Reply] | None = None
        self._enable_tries = 0
        self.flash: Flash = switch.dialect.flash(switch)
        self.tcl = False  # in tclsh (prompt ``Switch(tcl)#``)
        self._tcl_lines: list[str] | None = None  # a Tcl command whose braces are still open

    @property
    def prompt(self) -> str:
        """The dialect's prompt for the session's mode and privilege."""
        return self.dialect.prompt(self.sw.running.hostname, self.mode, self.privileged, self.tcl)

    # -- dispatch --------------------------------------------------------------------------------
    def line(self, text: str) -> Reply:
        """Handle one typed line (without its newline)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            return pending(text)
        if self._tcl_lines is not None:
            return self._tcl(text)
        if not text.strip():
            return Reply()
        if len(text) > LINE_MAX:
            return Reply(IosError(text, LINE_MAX).render(len(self.prompt)) + "\n")
        if self.tcl and self.mode is None:
            return self._tcl(text)
        if self.mode is not None:
            return self._config(text)
        try:
            cmd = parse_exec(text, self.dialect.commands)
        except IosError as e:
            return Reply(e.render(len(self.prompt)) + ("\n" if e.kind == "invalid" else ""))
        if not self.privileged and cmd.name not in self.dialect.commands.user_exec:
            toks = text.split()
            col = text.index(toks[1], len(toks[0])) if cmd.name.startswith("show ") and len(toks) > 1 else \
                text.index(toks[0])
            return Reply(IosError(text, col).render(len(self.prompt)) + "\n")
        return self._exec(cmd, text)

    def _exec(self, cmd: ExecCommand, text: str) -> Reply:
        own = self.dialect.exec_command(self, cmd, text)
        if own is not None:
            return own
        n, a = cmd.name, cmd.args
        if n in ("exit", "logout", "quit"):
            return Reply(close=True)
        if n == "enable":
            if self.privileged:
                return Reply()
            self._enable_tries = 0
            return Reply("Password: ", secret=True, prompt="")
        if n == "disable":
            self.privileged = False
            return Reply()
        if n.startswith("terminal"):
            if n == "terminal length":
                self.length = a["n"]
            elif n == "terminal width":
                self.width = a["n"]
            return Reply()
        if n == "tclsh":
            self.tcl = True
            return Reply()
        if n in ("configure terminal", "configure"):
            self.mode = Mode()
            return Reply(self.dialect.config_banner)
        if n in ("write memory", "write"):
            self.sw.save()
            return Reply("Building configuration...\n[OK]\n")
        if n.startswith("show "):
            return self._show(cmd, text)
        if n.startswith(("ping", "traceroute")):
            return self._reach(cmd, text)
        return self._file_command(cmd)

    def _reach(self, cmd: ExecCommand, text: str) -> Reply:
        """``ping`` / ``traceroute`` from the switch's namespace (:mod:`.ping`)."""
        try:
            if cmd.name.startswith("ping"):
                return Reply(ping.ping(self.sw, text, cmd.args["word"]))
            return Reply(ping.traceroute(self.sw, text, cmd.args["word"], self.sw.running.dialect == "c9300"))
        except IosError as e:
            return Reply(e.render(len(self.prompt)) + ("\n" if e.kind == "invalid" else ""))

    def interrupt(self) -> None:
        """Ctrl-C: a question waiting for its answer is dropped (its file operation does not run),
        as is a Tcl command whose braces are still open."""
        self._pending = None
        self._tcl_lines = None

    def takes_help(self) -> bool:
        """Whether ``?`` asks for help now (not while a question or a Tcl line waits for its answer,
        where it is text, as in IOS's tclsh)."""
        return self._pending is None and self._tcl_lines is None and not self.tcl

    def help(self, line: str) -> str:
        """The context help for ``line?`` (:mod:`.cli_help`) in the session's mode and privilege."""
        if self.mode is None:
            table = self.dialect.commands
            specs = [(s, 1) for n, s in table.specs.items() if self.privileged or n in table.user_exec]
            return context_help(line, specs, modifiers=True)
        tpls = self.dialect.config_templates(self.mode)
        specs = [(t.specs, t.repeat) for t in tpls] + [(("no", *t.specs), t.repeat) for t in tpls if t.specs[0] != "no"]
        return context_help(line, specs + [(("exit",), 1), (("end",), 1), (("do", "{rest}"), 1)])

    def secret_line(self, text: str) -> Reply:
        """The answer to ``Password:`` after ``enable``: three tries, then ``% Bad secrets``."""
        if secrets.compare_digest(text.encode(), self.secret.encode()):
            self.privileged = True
            return Reply()
        self._enable_tries += 1
        if self._enable_tries >= 3:
            return Reply("% Bad secrets\n\n")
        return Reply("Password: ", secret=True, prompt="")

    # -- show ------------------------------------------------------------------------------------
    def _show(self, cmd: ExecCommand, text: str) -> Reply:
        if cmd.name.startswith(("show archive config differences", "show archive config incremental-diffs")):
            return Reply(apply_modifier(self.archive_diff(cmd), cmd.modifier))
        ctx = ShowContext(device_facts(self.sw), self.flash, _usage(), 15 if self.privileged else 1,
                          self.dialect.boot_seconds, self.width)
        try:
            out = self.dialect.show(self.sw, cmd, ctx)
        except IosError as e:
            return Reply(IosError(text, e.column).render(len(self.prompt)) + "\n")
        return Reply(apply_modifier(out, cmd.modifier))

    # -- files and archive -----------------------------------------------------------------------
    def _file_command(self, cmd: ExecCommand) -> Reply:
        n, a = cmd.name, cmd.args
        if n in ("dir", "dir url"):
            return Reply(self.flash.dir(a.get("url")))
        if n == "more url":
            t = self._read(a["url"])
            return Reply(t if t is not None else f"%Error opening {a['url']} (No such file or directory)\n")
        if n == "verify md5":
            return Reply(self.flash.md5(a["url"]))
        if n in ("delete url", "delete force url"):
            if n == "delete force url":
                return Reply(self.flash.delete(a["url"]))
            qs = delete_questions(prompt_mode(self.sw.running.kept), a["url"])
            return self._ask_all(qs, lambda ans: Reply(self.flash.delete(a["url"])) if confirmed(ans[-1]) else Reply())
        if n == "copy":
            qs = copy_questions(prompt_mode(self.sw.running.kept), a["url"], a["url2"])
            return self._ask_all(qs, lambda ans: self._copy(a["url"], a["url2"]))
        if n.startswith("configure replace"):
            return self._replace(a["url"], a.get("rest", ""))
        return Reply(IosError(n, 0).render(len(self.prompt)))

    def _ask_all(self, questions: list[str], then: Callable[[list[str]], Reply]) -> Reply:
        """Ask ``questions`` one at a time (each typed answer ends one), then ``then(answers)``."""
        answers: list[str] = []

        def step(answer: str | None) -> Reply:
            if answer is not None:
                answers.append(answer)
            if len(answers) == len(questions):
                return then(answers)
            self._pending = step
            return Reply(questions[len(answers)], prompt="")

        return step(None)

    def _read(self, url: str) -> str | None:
        url = canon_url(url)
        if url == "running-config":
            return self.sw.running.render()
        if url == "startup-config":
            p = self.sw.dir / "startup-config"
            return p.read_text() if p.exists() else None
        return self.flash.read(url)

    def _copy(self, src: str, dst: str) -> Reply:
        src, dst = canon_url(src), canon_url(dst)
        if src == "null:":
            ok = self.flash.write(dst, "")
            return Reply(copied(0) if ok else f"%Error opening {dst} (Invalid argument)\n")
        text = self._read(src)
        if text is None:
            return Reply(f"%Error opening {src} (No such file or directory)\n")
        if dst == "running-config":
            out = merge(self.sw.running, text, prompt=f"{self.sw.running.hostname}(config)#")
            return Reply(out + self._applied())
        if dst == "startup-config":
            if src == "running-config":
                self.sw.save()
            else:
                (self.sw.dir / "startup-config").write_text(text)
            return Reply("\n[OK]\n" + copied(len(text.encode())))
        if not self.flash.write(dst, text):
            return Reply(f"%Error opening {dst} (Invalid argument)\n")
        return Reply(copied(len(text.encode())))

    def _replace(self, url: str, options: str) -> Reply:
        text = self._read(url)
        if text is None:
            return Reply(f"%Error opening {url} (No such file or directory)\n")
        new, out = replace(self.sw.running, text, self.sw.factory(), options)
        self.sw.running = new
        return Reply(out + self._applied())

    def _applied(self) -> str:
        try:
            self.sw.apply()
        except QoslabError as e:
            return f"%QOSLAB-3-TC: {e}\n"
        return ""

    def archive_diff(self, cmd: ExecCommand) -> str:
        """``show archive config differences|incremental-diffs`` output."""
        if cmd.name == "show archive config differences":
            a, b = self._read(cmd.args["url"]), self._read(cmd.args["url2"])
            if a is None or b is None:
                missing = cmd.args["url"] if a is None else cmd.args["url2"]
                return f"%Error opening {missing} (No such file or directory)\n"
            return config_differences(a, b, self.sw.factory())
        text = self._read(cmd.args["url"])
        if text is None:
            return f"%Error opening {cmd.args['url']} (No such file or directory)\n"
        return incremental_diffs(self.sw.running, text)

    # -- tclsh -------------------------------------------------------------------------------------
    def _tcl(self, text: str) -> Reply:
        """One line in ``tclsh``: the Tcl that NAPALM's and netmiko's inline transfer type
        (``puts [open "flash:NAME" w+] {...}`` over as many lines as the braces stay open, prompt
        ``+>``; ``tclquit``), ``puts {TEXT}`` / ``puts "TEXT"``; any other line runs as an IOS
        EXEC command, as IOS's tclsh passes commands it does not know to the CLI."""
        if self._tcl_lines is not None:
            self._tcl_lines.append(text)
        else:
            self._tcl_lines = [text]
        whole = "\n".join(self._tcl_lines)
        if _brace_depth(whole) > 0:
            return Reply(prompt="+>")
        self._tcl_lines = None
        cmd = whole.strip()
        if cmd in ("tclquit", "exit"):
            self.tcl = False
            return Reply()
        m = _TCL_WRITE.match(cmd)
        if m:
            url = m.group(1)
            if not self.flash.write(url, m.group(3) + "\n"):
                return Reply(f'couldn\'t open "{url}": no such file or directory\n')
            return Reply()
        m = _TCL_PUTS.match(cmd)
        if m:
            return Reply((m.group(1) if m.group(1) is not None else m.group(2)) + "\n")
        if _brace_depth(cmd) < 0:
            return Reply('extra characters after close-brace\n')
        self.tcl = False  # the line runs as an EXEC command
        try:
            return self.line(cmd)
        finally:
            self.tcl = True

    # -- configuration mode ----------------------------------------------------------------------
    def _config(self, text: str) -> Reply:
        w = text.split()
        if w and w[0] == "do":
            saved, self.mode = self.mode, None
            try:
                reply = self.line(text.split(None, 1)[1] if len(w) > 1 else "")
            finally:
                self.mode = saved
            return reply
        try:
            new = self.dialect.interpret(self.sw.running, self.mode or Mode(), text)
        except IosError as e:
            return Reply(e.render(len(self.prompt)) + ("\n" if e.kind == "invalid" else ""))
        if new.name == "exec":
            self.mode = None
            return Reply(self._applied())
        self.mode = new
        return Reply()

    def close(self) -> None:
        """End of session: a configuration session still open is applied, as IOS would have it."""
        if self.mode is not None:
            self.mode = None
            self._applied()


#: ``puts [open "flash:NAME" w+|w] {BODY}`` (netmiko's InLineTransfer, NAPALM ``inline_transfer``).
_TCL_WRITE = re.compile(r'^puts\s+\[open\s+"?([^"\s\]]+)"?\s+(w\+?)\]\s+\{(.*)\}$', re.S)
_TCL_PUTS = re.compile(r'^puts\s+(?:\{(.*)\}|"(.*)")$', re.S)


def _brace_depth(text: str) -> int:
    """Open ``{`` minus ``}`` (backslash-escaped ones not counted)."""
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        depth += (ch == "{") - (ch == "}")
        i += 1
    return depth


def canon_url(url: str) -> str:
    """``system:/running-config``, ``system:running-config`` -> ``running-config``;
    ``nvram:/startup-config`` -> ``startup-config``; anything else unchanged."""
    for fs, name in (("system:", "running-config"), ("nvram:", "startup-config")):
        if url in (name, f"{fs}{name}", f"{fs}/{name}"):
            return name
    return url


def _usage() -> dict[str, float]:
    """This process's own resource use, for ``show memory statistics`` / ``show processes cpu``."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"rss": ru.ru_maxrss * 1024, "cpu_s": ru.ru_utime + ru.ru_stime}
