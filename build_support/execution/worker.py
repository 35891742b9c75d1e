"""The worker process a session's blocks run in (started by ``template.py``, limited by
``executor.py``), with ``PREIMPORT`` imported ahead of need. Requests and replies are framed
JSON (``send`` / ``receive``: the one codec, the build's and the template's too) on two pipes;
stdout and stderr are a third, which the build forwards and bounds. Each request is one block
of its session: its code runs in the session's globals, ``print`` writes to its output, and the
reply holds that output, or what it raised (described here, where the traceback is), with where
it ran, the environment ``verify`` compares, and the files it read (``reads.py``).

Where it ran, said without starting a backend: asking JAX for its devices starts one (~25 ms of
a worker's CPU) for a block that may not have used JAX. The workers of one template and package
version that their block left *untouched* (no backend started; the variables, JAX settings,
backend factories and package functions of their start: ``starting_state``) all give the same
answer: the build keeps the first (never stored) and hands it to the next, which reply with it
while untouched (13 forked one-block sessions, 9 rounds in turns: workers' CPU 0.66 s with it,
0.83 s without; 2026-12).
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
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from .. import process_tree
from ..caching import compile_cache
from . import reads

_HEADER = ">I"  # a frame's length, before its JSON
HEADER_SIZE = struct.calcsize(_HEADER)
# A block's code's file, as markdown-exec names it: by its ``id``, else by its place ("n2"; in
# its session here, so a block's tracebacks stay the same wherever its page puts it).
FILE_NAME = "<code block: {file}>"
BLOCK_FILE = re.compile(r"^<code block: (?P<file>.*)>$")
SHOWN_FRAMES = 6
START_TIMEOUT_S = 300.0  # a template or a worker that has not imported ahead by then is stuck
WHERE_SIGNAL = signal.SIGUSR1  # past its time limit: the worker says where the block is
# Imported ahead by every worker, never the course package (its reach is in each block's key):
# pyplot takes ~0.6 s, as long as jax; the rest, what JAX imports at its first lowering (~15 ms
# a worker) and what the package's import brings beyond itself; none of it starts a thread.
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


def frame(message: dict[str, Any]) -> bytes:
    """One framed message: its length, then its JSON (ASCII: lone surrogates escaped)."""
    data = json.dumps(message).encode("ascii")
    return struct.pack(_HEADER, len(data)) + data


def frame_length(header: bytes) -> int:
    return struct.unpack(_HEADER, header)[0]


def send(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(frame(message))
    stream.flush()


def receive(read: Callable[[int], bytes], received: bytes = b"") -> dict[str, Any] | None:
    """The next message, ``received`` its first bytes, the rest from ``read`` (a pipe's or a
    socket's: at most the bytes asked for, ``b""`` at the end); None at the end."""
    header = _exactly(read, HEADER_SIZE, received)
    data = header and _exactly(read, frame_length(header))
    return json.loads(data) if data else None


def _exactly(read: Callable[[int], bytes], size: int, data: bytes = b"") -> bytes:
    """``size`` bytes, or b"" at the end."""
    while len(data) < size:
        part = read(size - len(data))
        if not part:
            return b""
        data += part
    return data


def send_on_socket(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    """One framed message on the socket, with file descriptors beside it (``SCM_RIGHTS``)."""
    data = frame(message)
    sent = socket.send_fds(sock, [data], list(fds)) if fds else 0
    sock.sendall(data[sent:])


def receive_on_socket(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The next message and the descriptors that came with it; None at the end of the socket."""
    head, fds, _, _ = socket.recv_fds(sock, HEADER_SIZE, _MAX_FDS)
    message = receive(sock.recv, head) if head else None
    return None if message is None else (message, fds)


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
        self.replies, self.config, self.package = replies, config, config["package"]
        self.namespace: dict[str, Any] = {}
        self.code = self.block_id = self.file = ""
        self.names: dict[str, tuple[str, str]] = {}  # each block's file -> its name, its code
        self.in_block = False
        self.read_ahead = read_ahead  # read while importing ahead (``import_ahead``)
        self.uses_jax = re.compile(_USES_JAX.pattern.format(package=self.package), re.MULTILINE)
        self.starting_state = starting_state(self.package)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one block; the reply the build reads."""
        self.code, self.block_id = request["code"], request["id"]
        own_id = request.get("own_id")
        self.file = f"id {own_id}" if own_id else f"n{len(self.names) + 1}"
        self.names[self.file] = (self.block_id, self.code)
        filename = FILE_NAME.format(file=self.file)
        # Libraries expect a function's module to exist (dataclasses, pickle): as markdown-exec
        # does, the block is a module of its own, named after the block.
        module_name = re.sub(r"[^a-zA-Z\d]+", "_", filename)
        self.namespace["__name__"] = module_name
        sys.modules[module_name] = ModuleType(module_name)
        output = _Output(self.replies, int(self.config["max_output_bytes"]))
        self.namespace["print"] = output.print
        kind = request.get("kind", "python")
        with reads.recorded(self.config["package_dir"]) as opened, _placed(request):
            try:
                self.in_block = True
                if kind != "python":
                    return _run_shell(kind, self.code, int(request["returncode"]), output)
                # dont_inherit: compiled without this module's `from __future__` imports.
                exec(compile(self.code, filename, "exec", dont_inherit=True), self.namespace)
            except BaseException as error:  # SystemExit, KeyboardInterrupt, ... too
                return {"kind": "failed"} | self.describe(error)
            finally:
                self.in_block = False
        try:
            where = self.where_it_ran(bool(request.get("timed")))
        except BaseException as error:  # a block broke what the build calls: named
            failed = self.describe(error, "the build could not describe where it ran: ")
            return {"kind": "failed"} | failed
        cache = self.config.get("compile_cache")  # JAX's: in no block's reads
        read = compile_cache.outside(opened.read | self.read_ahead, cache)
        written = compile_cache.outside(opened.written, cache)
        files = {"read": sorted(read), "written": sorted(written)}
        return {"kind": "done", "output": "".join(output.parts)} | where | files

    def where_it_ran(self, timed: bool) -> dict[str, Any]:
        """Where the block ran and the environment ``verify`` compares; the answer of an
        untouched worker of its template, where the block left this worker untouched too."""
        uses_jax = bool(self.uses_jax.search(self.code))
        untouched = not timed and not backend_started()
        untouched = untouched and starting_state(self.package) == self.starting_state
        known = self.config.get("untouched_answer")
        if untouched and known is not None:
            ran_on = known["ran_on"] if uses_jax else self.ran_on(False)
            return {"ran_on": ran_on, "environment": known["environment"], "machine": None}
        where = {
            "ran_on": self.ran_on(uses_jax),
            "environment": self.environment(),
            "machine": __import__(self.package).machine_label() if timed else None,
        }
        if untouched and uses_jax:  # the build keeps it for the next
            where["untouched_answer"] = {k: where[k] for k in ("ran_on", "environment")}
        return where

    def ran_on(self, uses_jax: bool) -> str:
        """A block that imports jax or the course package (``uses_jax``) ran on JAX's default
        backend; any other ran in plain Python / NumPy on the build machine's CPU."""
        if uses_jax:
            return __import__(self.package).backend_report().label()
        import numpy

        return f"computed on cpu · numpy {numpy.__version__} · Python {platform.python_version()}"

    def environment(self) -> dict[str, str] | None:
        """What ``python -m examples verify`` compares with a reader's, once jax is imported."""
        if "jax" not in sys.modules:
            return None
        return __import__(f"{self.package}.verify", fromlist=["environment"]).environment()

    def describe(self, error: BaseException, before: str = "") -> dict[str, Any]:
        """What a block raised, for the build's ``guard.Failure``: its summary, after
        ``before``, and its frames in the block and in the course package, innermost last."""
        shown = self._shown(traceback.extract_tb(error.__traceback__))
        in_block = isinstance(error, SyntaxError) and BLOCK_FILE.match(str(error.filename))
        if in_block and error.lineno:  # a block that does not compile: its line
            shown.append(f"line {error.lineno} of the block: {(error.text or '').strip()}")
        shown = shown[-SHOWN_FRAMES:]
        where = shown[-1] if shown else ""
        return {"summary": before + summary(error), "where": where, "trace": shown}

    def say_where(self, signum: int, frame: Any) -> None:
        """On the build's ``WHERE_SIGNAL``: the block's frames, if it is still in its code.
        Written from the main thread, which is inside the block's code, not writing a reply."""
        if self.in_block:
            trace = self._shown(traceback.extract_stack(frame))
            where = trace[-1] if trace else ""
            send(self.replies, {"kind": "where", "where": where, "trace": trace})

    def _shown(self, frames: traceback.StackSummary) -> list[str]:
        shown = (self._frame(frame) for frame in frames)
        return [line for line in shown if line]

    def _frame(self, frame: traceback.FrameSummary) -> str:
        """A frame in the block or in the course package, as one line; "" for any other."""
        block = BLOCK_FILE.match(frame.filename)
        if block:
            name, code = self.names.get(block["file"], ("?", ""))
            lines = code.splitlines()
            known = 0 < (frame.lineno or 0) <= len(lines)
            line = lines[(frame.lineno or 0) - 1].strip() if known else ""
            name = "the block" if block["file"] == self.file else f"block {name}"
            return f"line {frame.lineno} of {name}: {line}".rstrip(": ")
        if self.config["package_dir"] is None:
            return ""
        root = Path(self.config["package_dir"]).resolve()
        path = Path(frame.filename).resolve()
        if not path.is_relative_to(root):
            return ""
        relative = Path(root.name, path.relative_to(root)).as_posix()
        return f"{relative}, line {frame.lineno}, in {frame.name}: {(frame.line or '').strip()}"


@contextlib.contextmanager
def _placed(request: dict[str, Any]) -> Iterator[None]:
    """The block runs in its ``workdir`` with its terminal ``width`` (``COLUMNS``), each put
    back after it, as markdown-exec runs it: here, in its worker, never in the build's process.
    Without them, what a block changes stays for its session's next blocks, as there."""
    folder, width, columns = request.get("workdir"), request.get("width"), os.getenv("COLUMNS")
    # A folder that is not there fails the block, named.
    with contextlib.chdir(folder) if folder else contextlib.nullcontext():
        if width:
            os.environ["COLUMNS"] = str(width)
        try:
            yield
        finally:
            if width and columns is None:
                os.environ.pop("COLUMNS", None)
            elif width:
                os.environ["COLUMNS"] = columns


def _run_shell(shell: str, code: str, returncode: int, output: _Output) -> dict[str, Any]:
    """A shell block, as markdown-exec runs it (``sh -c``, stderr with stdout), as a child of
    the worker: in its process group, under its limits; its output read as it comes, so one
    over the output limit fails the block then (``_Output.print``), not once it is in memory."""
    import codecs
    import subprocess

    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    with subprocess.Popen(
        [shell, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    ) as child:
        assert child.stdout is not None
        while chunk := child.stdout.read1(65536):
            output.print(decoder.decode(chunk), end="")
        output.print(decoder.decode(b"", final=True), end="")
    text = "".join(output.parts)
    if child.returncode != returncode:
        said = f"the {shell} block exited with code {child.returncode}, not {returncode}"
        lines = text.rstrip("\n").splitlines()[-SHOWN_FRAMES:]
        return {"kind": "failed", "summary": said, "where": "", "trace": lines}
    ran_on = f"ran in {shell} on the build machine"
    return {"kind": "done", "output": text, "ran_on": ran_on, "environment": None}


def summary(error: BaseException) -> str:
    """``Type: message``, with the module of a type that is not built in."""
    name = type(error).__qualname__
    module = type(error).__module__
    if module != "builtins" and not module.startswith("_code_block"):  # a block's own class
        name = f"{module}.{name}"
    try:
        message = str(error)
    except BaseException as unreadable:  # a block's __str__ may raise: its description must not
        message = f"<its message could not be read: {type(unreadable).__qualname__}>"
    text = f"{name}: {message}" if message else name
    if isinstance(error, SystemExit):
        text += " (a block may not end the build: any SystemExit is a failure)"
    return text


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
    process group). Entered once ``PREIMPORT`` is imported: in the worker, spawned, or in the
    template process it was forked from (``template.main``)."""
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
