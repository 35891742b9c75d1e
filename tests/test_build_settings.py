"""The build's settings (build_support/settings.py, mkdocs.yml's ``extra.build``): typed, read
from the variables that tools outside MkDocs set, and a wrong value fails naming the option."""

from __future__ import annotations

import pytest
from mkdocs.exceptions import ConfigurationError

from build_support import settings
from testkit.build import mkdocs_build
from testkit.project import ROOT


@pytest.fixture
def no_variables(monkeypatch):
    for name in settings.ENV_VARS.values():
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_with_no_variable_set_every_option_has_its_default(no_variables):
    read = settings.read(ROOT)
    assert read.fresh is False
    assert read.cache_dir == str(ROOT / ".cache")
    assert read.cell_timeout_s == 60


def test_mkdocs_yml_reads_each_option_from_the_variable_its_tool_sets(no_variables, tmp_path):
    values = {"fresh": "1", "cache_dir": str(tmp_path / "store")}
    for option, value in values.items():
        no_variables.setenv(settings.ENV_VARS[option], value)
    read = settings.read(ROOT)
    assert read.fresh is True
    assert read.cache_dir == values["cache_dir"]
    no_variables.setenv("COURSE_CACHE_DIR", "relative/store")  # relative to mkdocs.yml
    assert settings.read(ROOT).cache_dir == str(ROOT / "relative" / "store")


@pytest.mark.parametrize(("value", "fresh"), [("", False), ("0", False), ("1", True)])
def test_fresh_as_make_passes_it(no_variables, value, fresh):
    no_variables.setenv("FRESH", value)  # make build passes FRESH=$(FRESH): empty when not given
    assert settings.read(ROOT).fresh is fresh


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"fresh": "maybe"}, r"extra\.build\.fresh: expected true or false"),
        ({"cell_timeout_s": 0}, r"extra\.build\.cell_timeout_s: expected a number of seconds"),
        ({"cell_timeout_s": "60"}, r"extra\.build\.cell_timeout_s: expected a number of seconds"),
        ({"cache_dir": 1.0}, r"extra\.build\.cache_dir: Expected type"),
        ({"fersh": True}, r"extra\.build\.fersh: Unrecognised configuration name"),
    ],
)
def test_a_wrong_value_or_an_unknown_option_names_the_option(values, message):
    with pytest.raises(ConfigurationError, match=message):
        settings.validated(values, str(ROOT / "mkdocs.yml"))


def test_outside_a_build_the_settings_are_those_of_mkdocs_yml(no_variables, tmp_path):
    no_variables.setenv("COURSE_CACHE_DIR", str(tmp_path))
    assert settings.current(ROOT).cache_dir == str(tmp_path)  # no build runs in the tests


def test_a_build_with_a_wrong_value_fails_at_once_naming_the_option(tmp_path):
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site", env={"FRESH": "maybe"})
    assert result.returncode != 0
    assert (
        "extra.build.fresh: expected true or false (or 1 or 0), got 'maybe' "
        "(mkdocs.yml reads it from $FRESH)"
    ) in result.stderr
    assert "Executed" not in result.stderr  # stopped before any block ran
