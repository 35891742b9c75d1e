"""A notebook kernel's limits, watched while its cells run (``notebooks.py`` runs them): its
outputs counted as they arrive, its memory (and whatever it started) read every
``workers.POLL_S``, its process group killed past either and when the run ends."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading

from .limits import MAX_OUTPUT_BYTES, MEMORY_SETTING, OUTPUT_SAID
from .process_tree import resident_bytes
from .workers import POLL_S, memory_cap_said

SOCKET_PATH_MAX = 107 - len("-65535")  # a kernel's socket is its ip, a hyphen and a port


class KernelLimits:
    """The output and memory limits on one notebook's kernel, watched while its cells run, and
    its process group, killed when the run ends (``end``)."""

    def __init__(self, memory_bytes: float) -> None:
        self.memory_bytes = memory_bytes
        self.output_bytes = 0
        self.passed = ""  # the limit the kernel passed, said
        self.pgid: int | None = None
        self.pid: int | None = None
        self.stop = threading.Event()

    def started(self, pid: int) -> None:
        """The kernel is up: watch its memory from now on."""
        self.pid, self.pgid = pid, os.getpgid(pid)
        threading.Thread(target=self._watch, daemon=True, name="kernel-memory").start()

    def _watch(self) -> None:
        while not self.stop.wait(POLL_S):
            used = resident_bytes(self.pid)
            if used > self.memory_bytes:
                cap = memory_cap_said(self.memory_bytes, MEMORY_SETTING)
                self.exceeded(f"used {used / 2**30:.1f} GiB, past {cap}")

    def output(self, message: dict) -> None:
        """Count one output the kernel sent; past the limit, stop the kernel."""
        self.output_bytes += len(json.dumps(message.get("content", {})))
        if self.output_bytes > MAX_OUTPUT_BYTES:
            self.exceeded(f"printed more than {MAX_OUTPUT_BYTES:,} bytes of output ({OUTPUT_SAID})")

    def exceeded(self, said: str) -> None:
        self.passed = self.passed or said
        self.kill()

    def kill(self) -> None:
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)

    def end(self) -> None:
        self.stop.set()
        self.kill()


def limited_client(notebook, limits: KernelLimits, sockets: str, **options):
    """nbclient's ``NotebookClient``, with every output counted against ``limits`` and the
    kernel's process watched from its start. The kernel is reached over Unix sockets in
    ``sockets``, a folder only this user can enter, not over TCP ports any local user can
    connect to (ipykernel warned of those in every build's log)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    class LimitedClient(NotebookClient):
        def output(self, outs, msg, display_id, cell_index):
            limits.output(msg)
            return super().output(outs, msg, display_id, cell_index)

    def on_notebook_start(notebook):
        limits.started(client.km.provisioner.process.pid)

    ip = os.path.join(sockets, "kernel")  # absolute: the kernel runs in the notebook's folder
    # A socket's path has 107 bytes at most (sun_path): past that (a long TMPDIR), TCP.
    transport = {"transport": "ipc", "ip": ip} if len(os.fsencode(ip)) <= SOCKET_PATH_MAX else {}
    config = Config({"KernelManager": transport})
    client = LimitedClient(notebook, config=config, on_notebook_start=on_notebook_start, **options)
    return client
