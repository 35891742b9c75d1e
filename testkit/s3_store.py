"""An S3 server of the tests' own for the shared store (issue 51,
build_support/caching/shared_store.py): moto's ``ThreadedMotoServer`` on 127.0.0.1 (a free
port), a bucket on it, and the variables a build needs to use it as its shared store
(``build_env``: s3fs pointed at it by ``$COURSE_SHARED_STORE_OPTIONS``). Needs ``moto`` and
``s3fs`` (the build's locked environment has them).
"""

from __future__ import annotations

import contextlib
import json
import socket
import urllib.request
from collections.abc import Iterator
from typing import Any

from build_support.caching.shared_store import OPTIONS_ENV
from build_support.settings import SHARED_STORE_ENV, SHARED_STORE_MODE_ENV

BUCKET = "course-store"
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
}

SESSIONS_PAGE = """\
# A

```python exec="on" id="alone"
print("alone says", sum(range(10)))
```

```python exec="on" session="s" id="first"
shared = 6 * 7
print("first sets", shared)
```

```python exec="on" session="s" id="second"
print("second sees", shared)
```
"""
"""A page of a block alone and a session of two, which the store tests build on S3."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def endpoint_options(port: int) -> dict:
    return {"client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}"}}


def build_env(url: str, mode: str, port: int) -> dict[str, str]:
    """A build's variables for the shared store at ``url`` on the server at ``port``."""
    return AWS_ENV | {
        SHARED_STORE_ENV: url,
        SHARED_STORE_MODE_ENV: mode,
        OPTIONS_ENV: json.dumps(endpoint_options(port)),
    }


@contextlib.contextmanager
def s3_server(monkeypatch: Any) -> Iterator:
    """The server, its bucket ``BUCKET``, and an s3fs file system of this process on it (its
    ``port`` set); ``monkeypatch`` (pytest's) sets the AWS variables for this process."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        # moto keeps its buckets in this process, across servers: each server starts empty.
        reset = urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST")
        urllib.request.urlopen(reset, timeout=30).close()
        for name, value in AWS_ENV.items():
            monkeypatch.setenv(name, value)
        import s3fs

        fs = s3fs.S3FileSystem(skip_instance_cache=True, **endpoint_options(port))
        fs.mkdir(BUCKET)
        fs.port = port
        yield fs
    finally:
        server.stop()
