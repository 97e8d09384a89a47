"""The report kernel's manager: jupyter_client's AsyncKernelManager, without the SIGINT it sends a
kernel it is shutting down.

jupyter_client 8 (``KernelManager._async_shutdown_kernel``) interrupts the kernel before every
shutdown request, "Ctrl-C" even after the last cell has run. When that signal lands while ipykernel
is inside a message handler (a late ``comm_info``/``kernel_info`` reply, the shutdown request
itself), ipykernel logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." to the report's
stderr (ipykernel/kernelbase.py ``dispatch_shell``): a race a user sees as an error after a report
that succeeded (CI of 2026-11-29). A report's kernel has nothing to interrupt when it is shut down:
papermill waits for every cell, and a cell that overruns raises nbclient's CellTimeoutError (its
``interrupt_on_timeout`` is off). An interrupt asked while the kernel is not shutting down is still
sent. The shutdown request, then SIGTERM and SIGKILL after ``shutdown_wait_time``, end the kernel as
before.
"""

from __future__ import annotations

from jupyter_client.manager import AsyncKernelManager


class ReportKernelManager(AsyncKernelManager):
    """AsyncKernelManager whose shutdown sends no SIGINT (see the module's docstring)."""

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()

    interrupt_kernel = _async_interrupt_kernel
