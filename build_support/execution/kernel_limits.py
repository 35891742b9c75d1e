"""A notebook kernel's limits, watched while its cells run (``notebooks.py`` runs them): its
outputs counted as they arrive, its memory (and whatever it started) read every
``executor.POLL_S``, its whole process tree ended past either and when the run ends.

The kernel is kept as a block's worker is (``process_tree.py``): it starts as a child subreaper,
so a process a cell detaches (``start_new_session``, a double fork) stays below it, counted for
memory and ended with it. Its tree is ended before the kernel stops, never after: once the kernel
is gone, what it detached would belong to init, out of reach.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from . import process_tree
from .executor import MAX_OUTPUT_BYTES, MEMORY_SETTING, OUTPUT_SETTING, POLL_S, memory_cap_said
from .process_tree import end_tree, resident_bytes

SOCKET_PATH_MAX = 107 - len("-65535")  # a kernel's socket is its ip, a hyphen and a port


class KernelLimits:
    """The output and memory limits on one notebook's kernel, watched while its cells run, and
    its process tree, ended when the run ends (``end``)."""

    def __init__(self, memory_bytes: float) -> None:
        self.memory_bytes = memory_bytes
        self.output_bytes = 0
        self.passed = ""  # the limit the kernel passed, said
        self.running: int | None = None  # the index of the cell running now
        self.passed_in: int | None = None  # the index of the cell that passed it
        self.process = None  # the kernel's psutil.Process: a pid reused since is not ended
        self.stop = threading.Event()

    def started(self, pid: int) -> None:
        """The kernel is up: watch its memory from now on."""
        import psutil

        self.process = psutil.Process(pid)
        if self.stop.is_set():  # ended while it started (a serve run its notebook's edit stopped)
            self.kill()
            return
        threading.Thread(target=self._watch, daemon=True, name="kernel-memory").start()

    def _watch(self) -> None:
        while not self.stop.wait(POLL_S):
            used = resident_bytes(self.process.pid)
            if used > self.memory_bytes:
                cap = memory_cap_said(self.memory_bytes, MEMORY_SETTING)
                self.exceeded(f"used {used / 2**30:.1f} GiB, past {cap}", self.running)

    def output(self, message: dict, cell_index: int) -> None:
        """Count one output the kernel sent for cell ``cell_index``; past the limit, stop the
        kernel. The cell is the output's own: the kernel may have finished it, and started the
        next, before its outputs are all read."""
        self.output_bytes += len(json.dumps(message.get("content", {})))
        if self.output_bytes > MAX_OUTPUT_BYTES:
            said = f"printed more than {MAX_OUTPUT_BYTES:,} bytes of output ({OUTPUT_SETTING})"
            self.exceeded(said, cell_index)

    def exceeded(self, said: str, cell_index: int | None) -> None:
        if not self.passed:
            self.passed, self.passed_in = said, cell_index
        self.kill()

    def kill(self) -> None:
        if self.process is not None and self.process.is_running():
            end_tree(self.process.pid)  # its group too: the kernel leads a session of its own

    def end(self) -> None:
        self.stop.set()
        self.kill()


def limited_client(notebook, limits: KernelLimits, sockets: str, **options):
    """nbclient's ``NotebookClient``, with every output counted against ``limits``, the kernel
    started as a child subreaper and watched from its start, and its tree ended before it is
    shut down. The kernel is reached over Unix sockets in ``sockets``, a folder only this user
    can enter, not over TCP ports any local user can connect to (ipykernel warned of those in
    every build's log)."""
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from traitlets.config import Config

    class LimitedClient(NotebookClient):
        def output(self, outs, msg, display_id, cell_index):
            limits.output(msg, cell_index)
            if limits.passed:  # the run fails: what comes after is not kept
                return None
            return super().output(outs, msg, display_id, cell_index)

    class KeptKernel(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            command = super().format_kernel_cmd(extra_arguments)
            return [sys.executable, "-I", process_tree.__file__, *command]

        async def shutdown_kernel(self, now=False, restart=False):
            # Its tree first (see the module's notes), at once: a kernel asked to shut down
            # while a cell runs (a cell past its time) logs a traceback for the reply it can no
            # longer send, before the build could say what happened.
            limits.end()
            await super().shutdown_kernel(now=True, restart=restart)

    def on_notebook_start(notebook):
        limits.started(client.km.provisioner.process.pid)

    def on_cell_start(cell, cell_index):
        limits.running = cell_index

    ip = os.path.join(sockets, "kernel")  # absolute: the kernel runs in the notebook's folder
    # A socket's path has 107 bytes at most (sun_path): past that (a long TMPDIR), TCP.
    transport = {"transport": "ipc", "ip": ip} if len(os.fsencode(ip)) <= SOCKET_PATH_MAX else {}
    config = Config({"KernelManager": transport})
    client = LimitedClient(
        notebook,
        config=config,
        kernel_manager_class=KeptKernel,
        on_notebook_start=on_notebook_start,
        on_cell_start=on_cell_start,
        **options,
    )
    return client
