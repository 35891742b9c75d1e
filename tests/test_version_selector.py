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


def config_with_selector(**build_settings: str) -> MkDocsConfig:
    config = MkDocsConfig()
    extra = {"version": {"provider": "mike"}, "build": build_settings}
    config.load_dict({"site_name": "t", "extra": extra})
    return config


def test_a_plain_build_has_no_selector_and_asks_for_no_versions_json():
    assert "version" not in version_selector.on_config(config_with_selector()).extra


def test_a_mike_build_keeps_the_selector():
    # mike sets MIKE_DOCS_VERSION when it builds; mkdocs.yml reads it into deployed_version
    config = version_selector.on_config(config_with_selector(deployed_version="v2026.07.20"))
    assert config.extra["version"] == {"provider": "mike"}
