"""hooks/version_selector.py: Material's version selector only in a build that mike deploys."""

from __future__ import annotations

import importlib.util

from mkdocs.config.defaults import MkDocsConfig

from .helpers import ROOT

_spec = importlib.util.spec_from_file_location(
    "version_selector", ROOT / "hooks/version_selector.py"
)
version_selector = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(version_selector)


def config_with_selector() -> MkDocsConfig:
    config = MkDocsConfig()
    config.load_dict({"site_name": "t", "extra": {"version": {"provider": "mike"}}})
    return config


def test_a_plain_build_has_no_selector_and_asks_for_no_versions_json(monkeypatch):
    monkeypatch.delenv("MIKE_DOCS_VERSION", raising=False)
    assert "version" not in version_selector.on_config(config_with_selector()).extra


def test_a_mike_build_keeps_the_selector(monkeypatch):
    monkeypatch.setenv("MIKE_DOCS_VERSION", "v2026.07.20")  # what mike sets when it builds
    config = version_selector.on_config(config_with_selector())
    assert config.extra["version"] == {"provider": "mike"}
