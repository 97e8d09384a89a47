"""The ``qoslab`` command line (typer + rich): one sub-app per area (:mod:`.topology`,
:mod:`.testbed`, :mod:`.workload`, :mod:`.flood`, :mod:`.switch`, :mod:`.capture`,
:mod:`.campaign`).

Every expected failure is a QoslabError and is printed as one clear message (exit code 2);
an interrupt (Ctrl-C or SIGTERM) cleans up what the command started and exits 130.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

import typer
from rich.markup import escape

from .. import __version__
from ..errors import QoslabError
from . import campaign, capture, cluster, flood, report, switch, testbed, topology, workload
from .common import console, err_console

app = typer.Typer(
    help="qoslab: network QoS experiments on cluster traffic (embedded testbed, virtual Catalyst 3750 and 9300 "
         "and Arista 7280R3).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
for _name, _module in (("topology", topology), ("testbed", testbed), ("workload", workload), ("flood", flood),
                       ("switch", switch), ("capture", capture), ("campaign", campaign)):
    app.add_typer(_module.app, name=_name)
app.command("report")(report.report_cmd)
app.command("inventory")(cluster.inventory_cmd)
app.command("preflight")(cluster.preflight_cmd)


def _version(value: bool) -> None:
    if value:
        console.print(f"qoslab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """qoslab command line."""


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT and SIGTERM: the same clean-up path (KeyboardInterrupt), remembered so that no
    trial timeout or clean-up error replaces it (:func:`qoslab.campaign.watchdog.request_interrupt`)."""
    from ..campaign.watchdog import request_interrupt

    request_interrupt()
    raise KeyboardInterrupt


def main() -> None:
    """Entry point of the ``qoslab`` command. Exit codes: 2 for an expected error (a QoslabError:
    its message, one line per problem, never a stack trace), 3 for an unexpected one (one line
    naming its type; ``QOSLAB_DEBUG=1`` shows the stack trace), 130 after an interrupt."""
    signal.signal(signal.SIGTERM, _on_interrupt)
    signal.signal(signal.SIGINT, _on_interrupt)
    try:
        app()
    except QoslabError as e:
        err_console.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted: cleaned up what this command started")
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - a bug: one clear line instead of a stack trace
        if os.environ.get("QOSLAB_DEBUG"):
            raise
        msg = " ".join(str(e).split())[:300]
        err_console.print(f"[red]internal error:[/] {type(e).__name__}: {escape(msg)} (a qoslab bug: please report it; "
                          "QOSLAB_DEBUG=1 shows where)", highlight=False, soft_wrap=True)
        sys.exit(3)
