"""``make publish`` keeps its aliases and leaves nothing behind (build_support/publishing/
aliases.py, site_swap.py): re-publishing an older version leaves ``latest`` on the newest, by
version order, with ``versions.json`` consistent; a killed publish leaves no ``mike-mkdocs*.yml``
after the next publish, and ``make clean`` removes any.

The Makefile's own deploy line (``make -n publish VERSION=...``) runs in a throw-away git
repository of a one-page site that loads the project's execution hook (a second a deploy),
never the course: what is tested is the recipe, the driver and mike.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from build_support.publishing.aliases import deploy_arguments, order
from testkit.author import author_env, run_in
from testkit.project import ROOT
from tests.test_block_guard import CONFIG

NEWER, OLDER = "v2026.08.01", "v2026.07.20"


def deploy_line(version: str) -> str:
    """The Makefile's deploy command for ``version``, as ``make -n`` prints it, on one line."""
    env = author_env()
    printed = subprocess.run(
        ["make", "-n", "-s", "publish", f"VERSION={version}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = re.sub(r"\\\n\s*", " ", printed).splitlines()
    return next(line for line in lines if "mike_builder" in line and " deploy " in line)


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "mkdocs.yml").write_text(CONFIG)
    (repo / "docs" / "index.md").write_text("# A page\n\nNo block: no worker to start.\n")
    (repo / ".venv").symlink_to(ROOT / ".venv")
    shutil.copy2(ROOT / "Makefile", repo / "Makefile")
    run_in(repo, "git", "init", "-q", "-b", "main")
    run_in(repo, "git", "add", "-A")
    run_in(repo, "git", "commit", "-q", "-m", "a one-page site")
    return repo


def publish(repo: Path, version: str) -> subprocess.Popen:
    env = author_env() | {"COURSE_CACHE_DIR": str(repo.parent / "cache")}
    return subprocess.Popen(
        ["sh", "-c", deploy_line(version)],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def published(repo: Path) -> dict[str, list[str]]:
    shown = run_in(repo, "git", "show", "gh-pages:versions.json").stdout
    return {entry["version"]: entry["aliases"] for entry in json.loads(shown)}


def test_version_order():
    assert order("v2026.10.01") > order("v2026.9.30") > order("v2026.08.01") > order("draft")
    assert deploy_arguments(OLDER, [NEWER]) == [OLDER]
    assert deploy_arguments(NEWER, [OLDER]) == ["--update-aliases", NEWER, "latest"]
    assert deploy_arguments(NEWER, []) == ["--update-aliases", NEWER, "latest"]


def test_republishing_an_older_version_leaves_latest_on_the_newest(repo):
    for version in (OLDER, NEWER, OLDER):
        deploy = publish(repo, version)
        said = deploy.communicate()[0]
        assert deploy.returncode == 0, said
    assert published(repo) == {NEWER: ["latest"], OLDER: []}
    assert run_in(repo, "git", "show", "gh-pages:latest").stdout == NEWER  # mike's link
    assert not list(repo.glob("mike-mkdocs*.yml"))


def test_a_killed_publish_leaves_nothing_behind_after_the_next_or_make_clean(repo):
    deploy = publish(repo, NEWER)
    until = time.monotonic() + 120
    while not list(repo.glob("mike-mkdocs*.yml")):
        assert deploy.poll() is None and time.monotonic() < until, deploy.communicate()[0]
        time.sleep(0.02)
    os.killpg(deploy.pid, signal.SIGKILL)  # the whole publish, as a closed terminal or CI ends it
    deploy.communicate()
    time.sleep(1)
    stray = repo / "mike-mkdocs-left.yml"  # whatever the kill left, one is there
    stray.write_text("site_name: left by a killed mike\n")
    deploy = publish(repo, NEWER)
    assert deploy.communicate() and deploy.returncode == 0
    assert not list(repo.glob("mike-mkdocs*.yml"))
    assert published(repo) == {NEWER: ["latest"]}

    stray.write_text("site_name: left by a killed mike\n")
    env = author_env() | {"COURSE_CACHE_DIR": str(repo.parent / "cache")}
    cleaned = subprocess.run(
        ["make", "-s", "clean"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert cleaned.returncode == 0, cleaned.stderr
    assert not list(repo.glob("mike-mkdocs*.yml"))
    assert not (repo / "site").exists() and not (repo / "site.builds").exists()
