"""The worker process a session's blocks run in: never the build's own interpreter.

The build forks it from the template process (``template.py``), or where forking is unsafe
starts it as ``python -c BOOT CONFIG`` (``executor.py``), in a process group of its own, with
``PREIMPORT`` imported ahead of need (not ``examples``: what a block reaches of the package is
in its key, so the package is imported by the block, from disk). It reads requests and writes
replies as framed JSON (``send`` / ``receive``, the one codec the build and the template use
too) on two pipes of its own; its stdout and stderr are a third pipe the build reads, forwards
and bounds.

Each request is one block of the worker's one session: its code runs in the session's globals,
``print`` writes to the block's output, and the reply holds that output, or a description of
what the block raised (made here, where the traceback is), with what the build records beside
it: where it ran, the environment ``verify`` compares, the files it read (``reads.py``).

The output limit is enforced here, as the code runs: ``print`` stops the worker the moment it
passes ``max_output_bytes``. The time and memory limits are the build's (``executor.py``): code
running here could undo any limit it set on itself. Standard library only, but for the
pre-import and what a block imports itself.

Where it ran, said without starting a backend: asking JAX for its devices starts the backend
(~25 ms of a worker's CPU, ~2,000 page faults) for a block that may never have computed with
JAX. Every worker forked from the same template, with the same package, that its block left
*untouched* (no backend started; the same variables, JAX settings, backend factories and
package functions as at its start: ``starting_state``) gives the same answer; so the build keeps
the first answer an untouched worker computed (per template and package version, never stored)
and hands it to the next workers, which reply with it while they too are untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import signal
import socket
import struct
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from . import compile_cache, process_tree, reads

_HEADER = ">I"  # a frame's length, before its JSON
HEADER_SIZE = struct.calcsize(_HEADER)
FILE_NAME = "<code block: id {id}>"
"""The file name a block's code is compiled under, as markdown-exec names a block with an id."""
BLOCK_FILE = re.compile(r"^<code block: (?:id )?(?P<name>.*)>$")
SHOWN_FRAMES = 6
WHERE_SIGNAL = signal.SIGUSR1
"""Sent by the build when a block passes its time limit: the worker says where it is, if the
block lets it, then its process group is killed either way."""
# Imported ahead of need by every worker: never the course package, whose reach is in each
# block's key; matplotlib's pyplot takes ~0.6 s to import here, as long as jax. The rest is
# what JAX imports only at a program's first lowering (its MLIR dialects: ~15 ms a worker) and
# what the package's import brings beyond itself; none of it starts a thread.
PREIMPORT = (
    "numpy",
    "jax",
    "jax.numpy",
    "matplotlib.pyplot",
    "jaxlib.mlir.dialects.mhlo",
    "jax.experimental.multihost_utils",
    "statistics",
    "importlib.resources.readers",
)
_MAX_FDS = 3  # a worker's three pipes, sent with the template's fork request
_USES_JAX = re.compile(r"^\s*(?:from|import)\s+(?:jax|{package})\b", re.MULTILINE)

BOOT = (
    "import json, sys; config = json.loads(sys.argv[1]); sys.path[:] = config['sys_path']; "
    "from build_support.execution.worker import main; main(config)"
)
"""The spawned worker's command line (``python -c BOOT CONFIG``): the build's own
``sys.path``, so a block imports what it would have imported in the build."""


def frame(message: dict[str, Any]) -> bytes:
    """One framed message: its length, then its JSON (ASCII: lone surrogates escaped). The one
    codec: between the build and a worker on their pipes, the build and a template on its socket."""
    data = json.dumps(message).encode("ascii")
    return struct.pack(_HEADER, len(data)) + data


def send(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(frame(message))
    stream.flush()


def receive(read: Callable[[int], bytes], received: bytes = b"") -> dict[str, Any] | None:
    """The next message, ``received`` its first bytes, the rest from ``read`` (a pipe's or a
    socket's: at most the bytes asked for, ``b""`` at the end); None at the end."""
    header = _exactly(read, HEADER_SIZE, received)
    if header is None:
        return None
    data = _exactly(read, frame_length(header))
    return None if data is None else json.loads(data)


def frame_length(header: bytes) -> int:
    return struct.unpack(_HEADER, header)[0]


def send_on_socket(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    """One framed message on the socket, with file descriptors beside it (``SCM_RIGHTS``)."""
    data = frame(message)
    sent = socket.send_fds(sock, [data], list(fds)) if fds else sock.send(data)
    if sent != len(data):
        sock.sendall(data[sent:])


def receive_on_socket(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The next message and the descriptors that came with it; None at the end of the socket."""
    head, fds, _, _ = socket.recv_fds(sock, HEADER_SIZE, _MAX_FDS)
    message = receive(sock.recv, head) if head else None
    return None if message is None else (message, fds)


def _exactly(read: Callable[[int], bytes], size: int, data: bytes = b"") -> bytes | None:
    while len(data) < size:
        part = read(size - len(data))
        if not part:
            return None
        data += part
    return data


def starting_state(package: str) -> str:
    """A digest of what the answer to where a block ran depends on besides the machine and
    the package's code (module docstring)."""
    parts: list[object] = [sorted(os.environ.items())]
    jax = sys.modules.get("jax")
    if jax is not None:
        from jax._src import xla_bridge

        parts += [sorted((k, repr(v)) for k, v in jax.config.values.items())]
        parts += [sorted(getattr(xla_bridge, "_backend_factories", {}))]
    for module, name in ((package, "backend_report"), (f"{package}.verify", "environment")):
        parts.append(id(getattr(sys.modules.get(module), name, None)))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def backend_started() -> bool:
    """JAX has started a backend in this process (True where that cannot be told)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge._backends)
    except (ImportError, AttributeError):
        return True


class _Output:
    """What a block prints, kept only up to the limit: past it, the worker says so and ends
    at once (``os._exit``, which no ``except`` in the block can catch)."""

    def __init__(self, replies: BinaryIO, limit: int) -> None:
        self.replies, self.limit = replies, limit
        self.parts: list[str] = []
        self.size = 0

    def print(self, *values: Any, end: str = "\n", **ignored: Any) -> None:
        """``print`` in a block, as markdown-exec's: every value to the output, space-separated."""
        text = " ".join(str(value) for value in values) + end
        self.size += len(text.encode("utf-8", "surrogatepass"))
        if self.size > self.limit:
            send(self.replies, {"kind": "output-limit", "size": self.size})
            os._exit(0)
        self.parts.append(text)


class WorkerSession:
    """The worker's side of one session: its globals and what each block reports."""

    def __init__(self, config: dict[str, Any], replies: BinaryIO, read_ahead: set[str]) -> None:
        self.replies = replies
        self.max_output_bytes = int(config["max_output_bytes"])
        self.package = config["package"]
        self.package_dir = config["package_dir"]
        self.namespace: dict[str, Any] = {}
        self.code = ""
        self.block_id = ""
        self.in_block = False
        self.read_ahead = read_ahead  # read while importing ahead (``import_ahead``)
        self.compile_cache = config.get("compile_cache")  # JAX's: in no block's reads
        self.uses_jax = re.compile(_USES_JAX.pattern.format(package=self.package), re.MULTILINE)
        # Where a block ran, as an untouched worker of its template answered, if the build
        # knows it yet, and the state it holds for: this worker's at its start.
        self.untouched_answer = config.get("untouched_answer")
        self.starting_state = starting_state(self.package)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one block; the reply the build reads."""
        self.code, self.block_id = request["code"], request["id"]
        filename = FILE_NAME.format(id=self.block_id)
        # Libraries expect a function's module to exist (dataclasses, pickle): as markdown-exec
        # does, the block is a module of its own, named after the block.
        module_name = re.sub(r"[^a-zA-Z\d]+", "_", filename)
        self.namespace["__name__"] = module_name
        sys.modules[module_name] = ModuleType(module_name)
        output = _Output(self.replies, self.max_output_bytes)
        self.namespace["print"] = output.print
        with reads.recorded(self.package_dir) as opened:
            try:
                self.in_block = True
                # dont_inherit: compiled without this module's `from __future__` imports.
                exec(compile(self.code, filename, "exec", dont_inherit=True), self.namespace)
            except BaseException as error:  # SystemExit, KeyboardInterrupt, ... too
                self.in_block = False  # described with no reply of where it is beside
                return {"kind": "failed"} | self.describe(error)
            finally:
                self.in_block = False
        try:
            where = self.where_it_ran(bool(request.get("timed")))
        except BaseException as error:  # a block broke what the build calls: named
            described = self.describe(error)
            described["summary"] = (
                f"the build could not describe where it ran: {described['summary']}"
            )
            return {"kind": "failed"} | described
        read = compile_cache.outside(opened.read | self.read_ahead, self.compile_cache)
        written = compile_cache.outside(opened.written, self.compile_cache)
        files = {"read": sorted(read), "written": sorted(written)}
        return {"kind": "done", "output": "".join(output.parts)} | where | files

    def where_it_ran(self, timed: bool) -> dict[str, Any]:
        """Where the block ran and the environment ``verify`` compares; the build's untouched
        answer where the block left this worker untouched (module docstring)."""
        untouched = not timed and not backend_started()
        untouched = untouched and starting_state(self.package) == self.starting_state
        if untouched and self.untouched_answer is not None:
            known = self.untouched_answer
            ran_on = known["ran_on"] if self.uses_jax.search(self.code) else self.ran_on()
            return {"ran_on": ran_on, "environment": known["environment"], "machine": None}
        where = {
            "ran_on": self.ran_on(),
            "environment": self.environment(),
            "machine": __import__(self.package).machine_label() if timed else None,
        }
        if untouched and self.uses_jax.search(self.code):  # the build keeps it for the next
            where["untouched_answer"] = {k: where[k] for k in ("ran_on", "environment")}
        return where

    def ran_on(self) -> str:
        """A block that imports jax or the course package ran on JAX's default backend; any
        other ran in plain Python / NumPy on the build machine's CPU."""
        if self.uses_jax.search(self.code):
            return __import__(self.package).backend_report().label()
        import numpy

        return f"computed on cpu · numpy {numpy.__version__} · Python {platform.python_version()}"

    def environment(self) -> dict[str, str] | None:
        """The environment ``python -m examples verify`` compares with a reader's, once a block
        has imported jax."""
        if "jax" not in sys.modules:
            return None
        return __import__(f"{self.package}.verify", fromlist=["environment"]).environment()

    def describe(self, error: BaseException) -> dict[str, Any]:
        return describe_failure(error, self.code, self.block_id, self.package_dir)

    def say_where(self, signum: int, frame: Any) -> None:
        """On the build's ``WHERE_SIGNAL`` (past the time limit): the block's frames, if it is
        still in its code. Written from the main thread, which is inside the block's code and so
        not writing a reply."""
        if not self.in_block:
            return
        frames = traceback.extract_stack(frame)
        trace = _shown(frames, self.code, self.block_id, self.package_dir)
        send(self.replies, {"kind": "where", "where": trace[-1] if trace else "", "trace": trace})


def describe_failure(
    error: BaseException, code: str, block_id: str, package_dir: str | None
) -> dict[str, Any]:
    """What a block raised, for the build's ``guard.Failure``: its summary and its frames in the
    block and in the course package (at ``package_dir``), innermost last."""
    frames = traceback.extract_tb(error.__traceback__)
    shown = _shown(frames, code, block_id, package_dir)
    if isinstance(error, SyntaxError) and error.lineno and BLOCK_FILE.match(error.filename or ""):
        shown.append(f"line {error.lineno} of the block: {(error.text or '').strip()}")
    shown = shown[-SHOWN_FRAMES:]
    return {"summary": summary(error), "where": shown[-1] if shown else "", "trace": shown}


def summary(error: BaseException) -> str:
    """``Type: message``, with the module of a type that is not built in."""
    name = type(error).__qualname__
    module = type(error).__module__
    if module != "builtins" and not module.startswith("_code_block"):  # a block's own class
        name = f"{module}.{name}"
    message = _message(error)
    text = f"{name}: {message}" if message else name
    if isinstance(error, SystemExit):
        text += " (a block may not end the build: any SystemExit is a failure)"
    return text


def _message(error: BaseException) -> str:
    """``str(error)``, or why it cannot be read: a block's exception may define ``__str__``
    that raises, and the description of a failure must not fail in turn."""
    try:
        return str(error)
    except BaseException as unreadable:  # whatever the block's __str__ raises
        return f"<its message could not be read: {type(unreadable).__qualname__}>"


def _shown(frames: Any, code: str, block_id: str, package_dir: str | None) -> list[str]:
    shown = (_frame(frame, code, block_id, package_dir) for frame in frames)
    return [line for line in shown if line]


def _frame(frame: traceback.FrameSummary, code: str, block_id: str, package: str | None) -> str:
    """A frame in the block or in the course package, as one line; "" for any other."""
    block = BLOCK_FILE.match(frame.filename)
    if block:
        lines = code.splitlines()
        this_block = block["name"] == block_id and frame.lineno and frame.lineno <= len(lines)
        line = lines[frame.lineno - 1].strip() if this_block else ""
        name = "the block" if this_block or block["name"] == block_id else f"block {block['name']}"
        return f"line {frame.lineno} of {name}: {line}".rstrip(": ")
    if package is None:
        return ""
    root = Path(package).resolve()
    path = Path(frame.filename).resolve()
    if not path.is_relative_to(root):
        return ""
    relative = Path(root.name, path.relative_to(root)).as_posix()
    return f"{relative}, line {frame.lineno}, in {frame.name}: {(frame.line or '').strip()}"


def import_ahead(package_dir: str | None) -> set[str]:
    """Import ``PREIMPORT``; what that read (matplotlib's rc files, say), which the build
    digests with every block's reads, as if the block had imported it. Python's own files are
    left out here, once, rather than by the build from every block's reply (``reads``)."""
    with reads.recorded(package_dir) as opened:
        for name in PREIMPORT:
            with contextlib.suppress(ImportError):  # an extra that is not installed: on use
                __import__(name)
        # JAX's search for backend plugins (every installed distribution's entry points read:
        # ~25 ms, two thirds of a worker's first ``jax.devices()``), done once here. It
        # registers what a plugin offers and creates no backend: no device, no thread.
        with contextlib.suppress(ImportError, AttributeError):
            from jax._src import xla_bridge

            xla_bridge._discover_and_register_pjrt_plugins()
    return opened.inputs()


def serve(config: dict[str, Any], requests_fd: int, replies_fd: int, read_ahead: set[str]) -> None:
    """Say ready, then run each block asked for until the build closes the pipe (or kills the
    process group). Entered once ``PREIMPORT`` is imported: here (``main``) or in the template
    process this worker was forked from (``template.py``)."""
    # Nothing below the worker outlives it, nor the worker its build (process_tree.py): a pipe
    # the build holds, not the parent, which is the template for a forked worker.
    subreaper = process_tree.keep_descendants()
    process_tree.end_with_build(requests_fd)
    requests = os.fdopen(requests_fd, "rb")
    replies = os.fdopen(replies_fd, "wb")
    compile_cache.enable(config.get("compile_cache"))
    session = WorkerSession(config, replies, read_ahead)
    signal.signal(WHERE_SIGNAL, session.say_where)
    send(replies, {"kind": "ready", "pid": os.getpid(), "subreaper": subreaper})
    while (request := receive(requests.read)) is not None:
        send(replies, session.run(request))
    os._exit(0)  # a block's non-daemon thread must not keep the worker alive


def main(config: dict[str, Any]) -> None:
    """A worker spawned on its own (``python -c BOOT``): import ahead, then serve."""
    read_ahead = import_ahead(config["package_dir"])
    serve(config, config["requests_fd"], config["replies_fd"], read_ahead)
