"""The version selector only in the versions mike publishes, where its versions.json exists.

Material's selector (``extra.version.provider: mike``) fetches ``versions.json`` from the folder
above the site; mike writes that file when it deploys a version. Any other build (``make build``,
``make serve``) has no such file and no other version to offer: the request would 404 and log a
console error on every page. mike builds each version with ``MIKE_DOCS_VERSION`` set
(``build_support.settings.deployed_version``), so every other build leaves the selector out.
"""

from __future__ import annotations

from build_support import settings


def on_config(config):
    if not settings.deployed_version():
        config.extra.pop("version", None)
    return config
