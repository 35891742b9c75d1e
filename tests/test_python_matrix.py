"""The Pythons the build runs on, and what the checks across Pythons and locks report:
``build_support/pythons.py`` (the support matrix found on the machine; the Makefile builds with
the newest and makes .venv again when that changes), ``make check-pythons`` and ``make
check-upstream`` (their comparison, on planted build outputs: the real builds take minutes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from build_support import pythons
from build_support.caching.compare import differences, without_versions
from build_support.check_pythons import check
from build_support.check_upstream import moved, report, requirements
from testkit.author import make_dry_run
from testkit.project import ROOT

THIS = f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_the_matrix_is_requires_python(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nrequires-python = ">=3.11,<3.16"\n')
    assert pythons.matrix(pyproject) == ["3.11", "3.12", "3.13", "3.14", "3.15"]
    pyproject.write_text('[project]\nrequires-python = ">=3.11"\n')
    with pytest.raises(ValueError, match=r"expected a >=3\.N and a <3\.M bound"):
        pythons.matrix(pyproject)
    assert THIS in pythons.matrix()  # the build's own Python is one of the project's


def _shim(folder: Path, name: str) -> None:
    """A command that fails as pyenv's shim does for a version pyenv has not selected."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\necho 'pyenv: not selected' >&2\nexit 127\n")
    (folder / name).chmod(0o755)


def test_a_python_is_found_only_where_it_runs(tmp_path, monkeypatch):
    shims, pyenv = tmp_path / "shims", tmp_path / "pyenv"
    _shim(shims, f"python{THIS}")
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    assert pythons.found([THIS]) == {}  # on PATH, but it does not run
    installed = pyenv / "versions" / f"{THIS}.0" / "bin" / f"python{THIS}"
    installed.parent.mkdir(parents=True)
    installed.symlink_to(sys.executable)
    assert pythons.found([THIS]) == {THIS: str(installed)}
    wrong = pyenv / "versions" / "3.99.0" / "bin" / "python3.99"  # answers with another version
    wrong.parent.mkdir(parents=True)
    wrong.symlink_to(sys.executable)
    assert pythons.found(["3.99", THIS]) == {THIS: str(installed)}
    assert pythons.first(["3.99", THIS]) == str(installed)


def test_a_pyenv_shim_on_path_is_run_only_where_pyenv_has_no_copy(tmp_path, monkeypatch):
    """Each run through a shim starts a shell and pyenv (0.3 s of every make): pyenv's own copy
    of a version is probed first."""
    pyenv = tmp_path / "pyenv"
    ran = tmp_path / "shim-ran"
    shim = pyenv / "shims" / f"python{THIS}"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\ntouch {ran}\nexec {sys.executable} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    assert pythons.found([THIS]) == {THIS: sys.executable}  # only the shim: it is run
    assert ran.exists()
    ran.unlink()
    installed = pyenv / "versions" / f"{THIS}.0" / "bin" / f"python{THIS}"
    installed.parent.mkdir(parents=True)
    installed.symlink_to(sys.executable)
    assert pythons.found([THIS]) == {THIS: str(installed)}
    assert not ran.exists()


def test_the_makefiles_start_up_values_are_each_modules_own():
    """build_support/make_vars.py: what make evaluates is each module's own value."""
    from build_support import section
    from build_support.build_command import BUILD_ENV, BUILDER

    names = ("PYTHON_MINOR", "BUILDER", "SECTIONS_NOW", "UNWRITABLE")
    printed = "; ".join(f"echo '{name}=$({name})'" for name in names)
    shown = subprocess.run(
        ["make", "-s", "--eval", f"start-up-values: ; @{printed}; env", "start-up-values"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in BUILD_ENV},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    assert values["PYTHON_MINOR"] == THIS or "PYTHON" in os.environ
    assert values["BUILDER"] == BUILDER
    assert {name: values.get(name) for name in BUILD_ENV} == BUILD_ENV  # exported
    sections = " ".join(f"{s.id} {s.version} docs/{s.page}" for s in section.sections(ROOT))
    assert values["SECTIONS_NOW"] == sections
    assert values["UNWRITABLE"] == ""


def test_venv_is_made_again_when_the_python_chosen_changes():
    assert "rm -rf .venv" not in make_dry_run("setup")  # made with the Python chosen now
    others = {v: path for v, path in pythons.found().items() if v != THIS}
    if not others:
        pytest.skip(f"only Python {THIS} of the matrix is on this machine")
    other = next(iter(others.values()))
    assert f"rm -rf .venv\n{other} -m venv .venv" in make_dry_run("setup", f"PYTHON={other}")


def test_check_pythons_fails_where_it_finds_fewer_than_two(tmp_path):
    (found,) = check(ROOT, tmp_path / "out", {THIS: sys.executable})
    assert found.startswith(f"check-pythons: found {THIS} of 3.11, ") and found.endswith("need two")
    assert not (tmp_path / "out").exists()  # nothing built


def _site(root: Path, caption: str, output: str) -> Path:
    """A built site of one page with one executed block."""
    page = root / "page" / "index.html"
    page.parent.mkdir(parents=True)
    block = f'<div class="exec-block" data-exec-id="b1"><pre>{output}</pre><p>{caption}</p></div>'
    page.write_text(f"<html><body><h1>Page</h1>\n{block}\n</body></html>\n")
    return root


OLD = "computed on cpu · jax 0.10.2 · numpy 2.4.6 · Python 3.11.7"
NEW = "computed on cpu · jax 0.12.0.1 · numpy 2.5.5 · Python 3.13.0"


def test_versions_named_in_captions_are_no_difference(tmp_path):
    same = [_site(tmp_path / side, caption, "0.25") for side, caption in (("a", OLD), ("b", NEW))]
    assert differences(*same) != []  # compared exactly, as check-cache does
    assert differences(*same, ("Python 3.11", "Python 3.13"), without_versions) == []
    assert report(*same) == []  # check-upstream: "same"


def test_the_wheels_digest_in_a_highlighted_install_line_is_no_difference(tmp_path):
    """Each Python builds its own wheel (its metadata names the versions): the install box's
    ``#sha256=`` differs, as highlighting shows it, with the ``=`` in a span of its own."""
    line = 'pip install https://x/a.whl#sha256<span class="o">=</span>{}'
    same = [
        _site(tmp_path / side, OLD, line.format(digit * 64))
        for side, digit in (("a", "3"), ("b", "9"))
    ]
    assert differences(*same, ("Python 3.11", "Python 3.13"), without_versions) == []
    other = _site(tmp_path / "c", OLD, line.format("9" * 64).replace("a.whl", "b.whl"))
    assert differences(same[0], other, ("Python 3.11", "Python 3.13"), without_versions) != []


def test_an_output_that_changes_is_named_by_page_and_block(tmp_path):
    a, b = _site(tmp_path / "a", OLD, "0.25"), _site(tmp_path / "b", NEW, "0.250001")
    (found,) = report(a, b)
    assert found.startswith("page/index.html, block b1: first difference at line 1")
    assert "\n  locked:   <div" in found and "\n  upstream: <div" in found
    assert "0.250001" in found
    (across,) = differences(a, b, ("Python 3.11", "Python 3.13"), without_versions)
    assert across.startswith("page/index.html, block b1") and "Python 3.13: <div" in across


def test_upstream_lifts_exact_pins_keeps_ranges_and_leaves_the_project_to_itself():
    pyproject = {
        "project": {"name": "course", "dependencies": ["jax==0.10.2", "numpy>=2"]},
        "dependency-groups": {
            "docs": ["course[charts]", "mkdocs>=1.6,<2"],
            "dev": ["uv==0.13.8"],
            "other": ["never"],
        },
        "tool": {"uv": {"default-groups": ["docs", "dev"]}},
    }
    wanted, lifted = requirements(pyproject)
    assert wanted == ["jax==0.10.2", "numpy>=2", "mkdocs>=1.6,<2", "uv==0.13.8"]
    assert lifted == ["jax", "uv"]
    assert moved({"jax": "0.10.2", "a": "1"}, {"jax": "0.12.0.1", "a": "1", "b": "2"}) == [
        "b none -> 2",
        "jax 0.10.2 -> 0.12.0.1",
    ]
