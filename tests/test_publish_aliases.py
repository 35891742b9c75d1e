"""``make publish`` keeps its aliases, says what it publishes, and leaves nothing behind
(build_support/publishing/aliases.py, uncommitted.py, gh_pages.py, site_swap.py): re-publishing
an older version leaves ``latest`` on the newest, by version order, with ``versions.json``
consistent; a killed publish leaves no ``mike-mkdocs*.yml`` after the next publish, and ``make
clean`` removes any. A tree with uncommitted changes to what the site is built from is refused,
naming them, unless ``ALLOW_DIRTY=1``, and then gh-pages' commit says so; an author's ``mike
set-default`` survives the next publish; ``make unpublish`` moves ``latest`` to the newest
version left and keeps the root's redirect on a folder that exists.

The Makefile's own recipes (its deploy line as ``make -n publish VERSION=...`` prints it, or
``make publish`` and ``make unpublish`` themselves, in a copy of the Makefile) run in a
throw-away git repository of a one-page site that loads the project's execution hook (a second
a deploy), never the course: what is tested is the recipe, the driver and mike.
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
from build_support.publishing.uncommitted import uncommitted
from testkit.author import author_env, run_in
from testkit.project import ROOT
from testkit.small_site import ONE_PAGE_CONFIG

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
    (repo / "mkdocs.yml").write_text(ONE_PAGE_CONFIG, encoding="utf-8")
    (repo / "docs" / "index.md").write_text(
        "# A page\n\nNo block: no worker to start.\n", encoding="utf-8"
    )
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


def make(repo: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``make ARGUMENTS`` in ``repo``, as an author runs it there (its set-up, the checkout's
    .venv, taken as done)."""
    env = author_env() | {"COURSE_CACHE_DIR": str(repo.parent / "cache")}
    set_up = ("-o", ".venv/.synced", "-o", "node_modules/.installed")
    command = ["make", "-s", *set_up, *arguments]
    return subprocess.run(
        command, cwd=repo, env=env, capture_output=True, text=True, encoding="utf-8"
    )


def made(repo: Path, *arguments: str) -> str:
    """``make ARGUMENTS`` in ``repo``, which must pass: what it printed."""
    result = make(repo, *arguments)
    assert result.returncode == 0, f"make {arguments}:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def root_redirect(repo: Path) -> str | None:
    """Where gh-pages' root page sends a reader (mike's redirect), None where there is none."""
    shown = subprocess.run(
        ["git", "show", "gh-pages:index.html"],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    return re.search(r'<a href="([^"]*)">', shown.stdout)[1] if shown.returncode == 0 else None


def mike(repo: Path, *arguments: str) -> None:
    """mike itself, as an author runs it in ``repo``."""
    env = author_env() | {"PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    command = [str(ROOT / ".venv" / "bin" / "mike"), *arguments]
    result = subprocess.run(
        command, cwd=repo, env=env, capture_output=True, text=True, encoding="utf-8"
    )
    assert result.returncode == 0, result.stderr


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
    stray.write_text("site_name: left by a killed mike\n", encoding="utf-8")
    deploy = publish(repo, NEWER)
    assert deploy.communicate() and deploy.returncode == 0
    assert not list(repo.glob("mike-mkdocs*.yml"))
    assert published(repo) == {NEWER: ["latest"]}

    stray.write_text("site_name: left by a killed mike\n", encoding="utf-8")
    env = author_env() | {"COURSE_CACHE_DIR": str(repo.parent / "cache")}
    cleaned = subprocess.run(
        ["make", "-s", "clean"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert cleaned.returncode == 0, cleaned.stderr
    assert not list(repo.glob("mike-mkdocs*.yml"))
    assert not (repo / "site").exists() and not (repo / "site.builds").exists()


def test_uncommitted_names_each_changed_path_of_what_the_site_is_built_from(repo):
    assert uncommitted(repo) == []  # .venv, a link git does not track, is no part of it
    run_in(repo, "git", "mv", "docs/index.md", "docs/home.md")  # staged: both paths
    (repo / "mkdocs.yml").write_text(ONE_PAGE_CONFIG + "\n", encoding="utf-8")
    (repo / "docs" / "a page with spaces.md").write_text("# Spaces\n", encoding="utf-8")
    (repo / "scratch.txt").write_text("not built from\n", encoding="utf-8")
    assert uncommitted(repo) == [
        "docs/a page with spaces.md",
        "docs/home.md",
        "docs/index.md",
        "mkdocs.yml",
    ]


def test_publish_refuses_uncommitted_changes_to_what_the_site_is_built_from(repo):
    (repo / "docs" / "index.md").write_text(
        "# A page\n\nAn edit not committed.\n", encoding="utf-8"
    )
    (repo / "docs" / "new.md").write_text("# A page not added\n", encoding="utf-8")
    (repo / "notes.txt").write_text("not what the site is built from\n", encoding="utf-8")
    refused = make(repo, "publish", f"VERSION={NEWER}")
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "docs/index.md" in said and "docs/new.md" in said, said
    assert "notes.txt" not in said
    assert "make publish ALLOW_DIRTY=1" in said
    assert run_in(repo, "git", "branch", "--list", "gh-pages").stdout == ""  # nothing deployed

    run_in(repo, "git", "add", "docs")
    run_in(repo, "git", "commit", "-q", "-m", "the edit, committed")
    made(repo, "publish", f"VERSION={NEWER}")  # notes.txt is no part of the site
    assert published(repo) == {NEWER: ["latest"]}


def test_allow_dirty_publishes_the_edit_and_the_deploy_message_says_so(repo):
    (repo / "docs" / "index.md").write_text(
        "# A page\n\nAn edit not committed.\n", encoding="utf-8"
    )
    head = run_in(repo, "git", "rev-parse", "--short", "HEAD").stdout.strip()
    made(repo, "publish", f"VERSION={NEWER}", "ALLOW_DIRTY=1")
    log = run_in(repo, "git", "log", "--format=%s", "gh-pages").stdout.splitlines()
    [deployed] = [line for line in log if line.startswith("Deployed ")]
    assert deployed.startswith(f"Deployed {head} to {NEWER} with ")
    assert deployed.endswith(", with uncommitted changes: docs/index.md"), deployed
    page = run_in(repo, "git", "show", f"gh-pages:{NEWER}/index.html").stdout
    assert "An edit not committed." in page  # what it says it deployed


def test_an_authors_default_version_survives_the_next_publish(repo):
    made(repo, "publish", f"VERSION={OLDER}")
    assert root_redirect(repo) == "latest/"  # none was set: the first publish sets it
    mike(repo, "set-default", OLDER)
    said = made(repo, "publish", f"VERSION={NEWER}")
    assert root_redirect(repo) == f"{OLDER}/"
    assert f"keeps its default, {OLDER}" in said
    assert published(repo) == {NEWER: ["latest"], OLDER: []}


def test_unpublishing_the_newest_moves_latest_and_the_root_still_redirects_to_it(repo):
    for version in (OLDER, NEWER):
        made(repo, "publish", f"VERSION={version}")
    said = made(repo, "unpublish", f"VERSION={NEWER}")
    assert published(repo) == {OLDER: ["latest"]}
    assert run_in(repo, "git", "show", "gh-pages:latest").stdout == OLDER  # mike's link
    assert run_in(repo, "git", "ls-tree", "gh-pages", NEWER).stdout == ""
    assert root_redirect(repo) == "latest/"
    assert f"latest is now {OLDER}" in said


def test_unpublishing_the_authors_default_sends_the_root_to_latest(repo):
    for version in (OLDER, NEWER):
        made(repo, "publish", f"VERSION={version}")
    mike(repo, "set-default", OLDER)
    made(repo, "unpublish", f"VERSION={OLDER}")
    assert published(repo) == {NEWER: ["latest"]}
    assert root_redirect(repo) == "latest/"
    made(repo, "unpublish", f"VERSION={NEWER}")  # the last one: nothing is left to redirect to
    assert run_in(repo, "git", "ls-tree", "gh-pages").stdout == ""


def test_unpublish_removes_only_a_version_it_is_named(repo):
    made(repo, "publish", f"VERSION={OLDER}")
    unnamed = make(repo, "unpublish")
    assert unnamed.returncode != 0 and "make unpublish VERSION=" in unnamed.stderr
    alias = make(repo, "unpublish", "VERSION=latest")
    assert alias.returncode != 0 and f"latest is an alias of {OLDER}" in alias.stderr
    unknown = make(repo, "unpublish", f"VERSION={NEWER}")
    assert unknown.returncode != 0 and f"the versions: {OLDER}" in unknown.stderr
    assert published(repo) == {OLDER: ["latest"]}
