"""The wheel the site serves (hooks/wheel.py): what it holds, its metadata, its cache, and the
build's failures when it cannot be served or a page names an unknown placeholder."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
import zipfile
from email.parser import Parser
from importlib.metadata import version as installed
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from build_support import section
from build_support.caching.cache import Cache, key_of
from build_support.caching.store import FileStore
from build_support.publishing import wheel_build
from build_support.scratch_builds import uv_executable
from examples import DISTRIBUTION
from testkit.author import section_version
from testkit.build import mkdocs_build
from testkit.hooks import load_hook
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page, served_wheel

wheel_hook = load_hook("wheel")


def metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(archive.read(name).decode())


def test_the_site_serves_the_wheel_of_its_version(built_site):
    wheel = served_wheel(built_site)
    meta = metadata(wheel)
    version = section_version()
    assert meta["Name"] == DISTRIBUTION
    assert meta["Version"] == str(Version(version))
    # Every section at its own version, and the release (build_support/section.py's model).
    sections = section.sections()
    for one in sections:
        assert f"{one.title} ({one.version})" in meta["Summary"]
    assert meta["Summary"].endswith(f"course release {version}.")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert SpecifierSet(meta["Requires-Python"]) == SpecifierSet(pyproject["requires-python"])
    urls = meta.get_all("Project-URL")
    assert urls == [
        "Homepage, https://course.example.org/",
        f"Documentation, https://course.example.org/{version}/",
        *(
            f"{one.id} {one.version}, https://course.example.org/{version}/{one.name}/"
            for one in sections
        ),
    ]
    # What it needs to run: jax and numpy, exactly as pyproject.toml pins them, one pair per
    # Python (markers); matplotlib only with the charts extra.
    requires = meta.get_all("Requires-Dist")
    plain = [Requirement(r) for r in requires if "extra ==" not in r]
    assert sorted(map(str, plain)) == sorted(str(Requirement(r)) for r in pyproject["dependencies"])
    assert all("extra == 'charts'" in r for r in requires if r.startswith("matplotlib"))
    # On the build's own Python, the pair is the one that printed the pages (uv.lock, .venv),
    # and uv.lock holds every pair.
    here = [r for r in plain if r.marker is None or r.marker.evaluate()]
    assert {r.name: pinned(r) for r in here} == {r.name: installed(r.name) for r in here}
    for name in {r.name for r in plain}:
        assert locked_versions(name) == {pinned(r) for r in plain if r.name == name}
    print(f"wheel: {wheel.name}, {wheel.stat().st_size:,} bytes")


def pinned(requirement: Requirement) -> str:
    [spec] = requirement.specifier
    assert spec.operator == "==", requirement
    return spec.version


def locked_versions(name: str) -> set[str]:
    """The versions of ``name`` that uv.lock resolved (one per branch of the markers)."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    return {package["version"] for package in lock["package"] if package["name"] == name}


def test_the_wheel_holds_the_package_and_its_recordings_only(built_site):
    with zipfile.ZipFile(served_wheel(built_site)) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"examples", f"dl_course-{Version(section_version())}.dist-info"}
    assert any(name.startswith("examples/recordings/gpu-") for name in names)
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)


def test_the_wheel_is_reproducible_and_cached_by_its_inputs(tmp_path, monkeypatch):
    key = key_of(wheel_build.wheel_digest(ROOT, "v1", "https://site.invalid/v1/"), "uv")
    stores = [FileStore(tmp_path / "a"), FileStore(tmp_path / "b")]
    first, second = (wheel_build.cached_wheel(ROOT, Cache("wheel", s), key) for s in stores)
    assert first == second and first.name.endswith(".whl")  # two builds, the same bytes

    def no_build(*args, **kwargs):
        raise AssertionError(f"rebuilt: {args}")

    monkeypatch.setattr(wheel_build, "built_wheel", no_build)
    assert wheel_build.cached_wheel(ROOT, Cache("wheel", stores[0]), key) == first  # read back
    files = [path for path in (tmp_path / "a").rglob("*") if path.is_file()]
    assert files == [stores[0].path("wheel", key)]  # one checksummed entry, no staging left
    monkeypatch.undo()
    entry = stores[0].path("wheel", key)
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated: never served, built again
    assert wheel_build.cached_wheel(ROOT, Cache("wheel", stores[0]), key) == first
    assert stores[0].get("wheel", key).payload == first.content  # and stored again, whole


def test_the_wheel_key_holds_the_versions_of_hatchling_and_what_it_runs_on():
    said = wheel_build.builder_version()
    assert said.startswith(f"hatchling {installed('hatchling')}; "), said
    for name in ("packaging", "pathspec", "pluggy", "trove-classifiers"):
        assert f"{name} {installed(name)}" in said, said
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))["package"]
    locked = {package["name"]: package.get("version") for package in lock}
    assert installed("hatchling") == locked["hatchling"]  # the lock's hatchling builds it


def test_the_build_writes_the_bytes_of_the_backends_own_wheel(tmp_path):
    """The wheel built in the build's process is byte for byte the one hatchling's PEP 517
    backend writes when a front end (uv build, pip) asks; the expected outputs named in the
    hook's settings go in as examples/expected-outputs.json, and only there."""
    out = tmp_path / "backend"
    command = [uv_executable(), "build", "--wheel", "--no-build-isolation"]
    command += [
        "--python",
        str(ROOT / ".venv" / "bin" / "python"),
        "--out-dir",
        str(out),
        str(ROOT),
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    (backend,) = out.glob("*.whl")
    ours = wheel_build.built_wheel(ROOT)
    assert (ours.name, ours.content) == (backend.name, backend.read_bytes())

    expected = tmp_path / "outputs.json"
    expected.write_text('{"blocks": []}\n', encoding="utf-8")
    carrying = wheel_build.built_wheel(ROOT, expected)
    with zipfile.ZipFile(__import__("io").BytesIO(carrying.content)) as archive:
        assert archive.read("examples/expected-outputs.json") == expected.read_bytes()
    with zipfile.ZipFile(backend) as archive:
        assert "examples/expected-outputs.json" not in archive.namelist()


def test_the_digest_changes_with_every_input(tmp_path):
    for name in wheel_build.WHEEL_SOURCES:
        source = ROOT / name
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")  # its site_url: the wheel's home page
    digest = wheel_build.wheel_digest
    before = digest(tmp_path, "v1", "https://site.invalid/v1/")
    assert digest(tmp_path, "v2", "https://site.invalid/v1/") != before
    assert digest(tmp_path, "v1", "https://other.invalid/v1/") != before
    recording = next((tmp_path / "examples" / "recordings").glob("*.json"))
    recording.write_text(recording.read_text(encoding="utf-8") + " ", encoding="utf-8")
    edited = digest(tmp_path, "v1", "https://site.invalid/v1/")
    assert edited != before
    reader = tmp_path / "build_support" / "section.py"  # hatch_build.py reads the version with it
    reader.write_text(reader.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert digest(tmp_path, "v1", "https://site.invalid/v1/") != edited
    edited = digest(tmp_path, "v1", "https://site.invalid/v1/")
    config = tmp_path / "mkdocs.yml"  # under mkdocs serve, folder_url is not its site_url
    moved = config.read_text(encoding="utf-8").replace(
        "site_url: https://", "site_url: https://new."
    )
    config.write_text(moved, encoding="utf-8")
    assert digest(tmp_path, "v1", "https://site.invalid/v1/") != edited


def test_a_wheel_that_cannot_be_built_fails_the_build_and_says_so(docs_copy):
    hatch_build = docs_copy / "hatch_build.py"  # loaded by hatchling for every wheel it builds
    broken = hatch_build.read_text(encoding="utf-8") + '\nraise RuntimeError("broken on purpose")\n'
    hatch_build.write_text(broken, encoding="utf-8")
    result = mkdocs_build(docs_copy / "mkdocs.yml", docs_copy / "site")
    assert result.returncode != 0
    assert "wheel: hatchling could not build" in result.stderr
    assert "RuntimeError: broken on purpose" in result.stderr


def test_a_wheel_missing_from_the_built_site_fails_the_build_and_names_it(tmp_path):
    name = "dl_course-1-py3-none-any.whl"
    site = tmp_path / "site"
    site.mkdir()
    with pytest.raises(PluginError, match=r"dl_course-1-py3-none-any\.whl is missing"):
        wheel_hook.check_served(site, name)
    (site / name).write_bytes(b"PK")
    wheel_hook.check_served(site, name)  # served: no error


def test_an_unknown_install_placeholder_fails_and_names_the_page():
    values = {"command": "python -m pip install x"}
    fill = wheel_hook.fill_placeholders
    assert fill("{{ install.command }}", "page.md", values) == "python -m pip install x"
    assert fill("{{install.command}}", "page.md", values, str.upper) == "PYTHON -M PIP INSTALL X"
    unknown = r"page\.md: unknown placeholder '\{\{ install\.cmd \}\}'"
    with pytest.raises(PluginError, match=unknown):
        fill("{{ install.cmd }}", "page.md", values)


def test_mike_must_deploy_the_pages_own_version():
    folder_url = wheel_hook.version_folder_url  # its third argument: the folder mike deploys
    assert folder_url("https://s.invalid/", "v1", None) == "https://s.invalid/v1/"
    # mike deploys the folder v1: its plugin has appended the folder to site_url already
    assert folder_url("https://s.invalid/v1", "v1", "v1") == "https://s.invalid/v1/"
    with pytest.raises(PluginError, match="mike deploys the folder 'v0'"):
        folder_url("https://s.invalid/v0", "v1", "v0")
    # mkdocs serve: the wheel is served from the dev server's root, whatever the version
    served = folder_url("http://127.0.0.1:8000/", "v1", None, serving=True)
    assert served == "http://127.0.0.1:8000/"


def test_no_page_tells_a_reader_to_install_by_name(built_site):
    by_name = []
    for html in built_site.rglob("*.html"):
        text = " ".join(
            BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser").get_text().split()
        )
        for bare in ("pip install examples", "pip install dl-course", "pip install dl_course"):
            if bare in text:
                by_name.append(f"{html.relative_to(built_site)}: {bare!r}")
    assert not by_name


def test_every_install_line_on_the_site_is_the_same(built_site):
    lines = []
    for name in ["", SECTION_PAGE, "notebooks/p5-9-1-practice-in-jax"]:
        codes = [code.get_text().strip() for code in page(built_site, name).select("code")]
        lines += [code for code in codes if code.startswith("python -m pip install ")]
    # The two boxes (CPU and GPU tabs) and the notebook's first text cell (both lines too).
    assert len(lines) == 6, lines
    assert len(set(lines)) == 2, lines
