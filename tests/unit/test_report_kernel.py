"""The report kernel's manager sends no SIGINT when it shuts the kernel down (the race behind
"[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on a report's stderr, CI of
2026-11-29: ipykernel ignores SIGINT between messages but turns it into KeyboardInterrupt inside a
message handler). jupyter_client's own AsyncKernelManager, the peer in the same test, does send it,
so the test fails if the override stops taking effect. An interrupt outside shutdown still reaches
a running cell."""

from __future__ import annotations

import asyncio
import signal

from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config

from qoslab.report.kernel import ReportKernelManager
from qoslab.report.notebook import KERNEL_CONFIG


async def _signals_at_shutdown(manager_class: type) -> list[int]:
    """Start a real python3 kernel, shut it down, return the signals the manager sent it."""
    km = manager_class(kernel_name="python3", config=Config(KERNEL_CONFIG))
    await km.start_kernel()
    sent: list[int] = []
    send = km.provisioner.send_signal

    async def record(signum: int) -> None:
        sent.append(signum)
        await send(signum)

    km.provisioner.send_signal = record
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()
    assert not await km.is_alive()
    return sent


def test_shutdown_sends_no_sigint_but_jupyter_clients_manager_does():
    assert signal.SIGINT in asyncio.run(_signals_at_shutdown(AsyncKernelManager))
    assert signal.SIGINT not in asyncio.run(_signals_at_shutdown(ReportKernelManager))


async def _interrupt_a_running_cell() -> dict:
    km = ReportKernelManager(kernel_name="python3", config=Config(KERNEL_CONFIG))
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        msg_id = kc.execute("import time; time.sleep(60)")
        while True:  # wait until the cell runs
            msg = await kc.get_iopub_msg(timeout=30)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "execute_input":
                break
        await asyncio.sleep(0.5)
        await km.interrupt_kernel()
        while True:
            reply = await kc.get_shell_msg(timeout=20)  # not 60 s: the interrupt ended the sleep
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)


def test_an_interrupt_outside_shutdown_still_reaches_a_running_cell():
    content = asyncio.run(_interrupt_a_running_cell())
    assert content["status"] == "error" and content["ename"] == "KeyboardInterrupt"
