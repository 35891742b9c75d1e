"""Files are read and written as UTF-8 whatever the locale: the pages and the code hold "·",
"ö" and "→", and a machine whose locale is ASCII (``LC_ALL=C``, ``PYTHONUTF8=0``) builds the
same site. Every read and write of text in the project's code names its encoding; Python's
default is the locale's."""

from __future__ import annotations

import ast

from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.project import ROOT, SECTION_PAGE

CODE = ["build_support", "hooks", "examples", "testkit", "benchmarks", "docs", "hatch_build.py"]
"""The code the build, the readers' package, the tests' kit and the benchmarks run."""
NOT_FILES = {"tarfile", "zipfile", "gzip", "bz2", "lzma", "os", "webbrowser"}
"""Modules whose ``open`` is not a text file's (a ``.open`` on these names is not checked)."""
MODE = set("rwxat+")


def without_encoding(tree: ast.AST):
    """The calls that read or write text in the locale's encoding: ``read_text()``,
    ``write_text(text)``, ``open(path)`` or ``path.open("w")`` in text mode, no ``encoding``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or any(k.arg == "encoding" for k in node.keywords):
            continue
        function, args = node.func, node.args
        keyword_mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
        if isinstance(function, ast.Name) and function.id == "open":
            mode = args[1] if len(args) > 1 else keyword_mode
            if len(args) <= 3 and not (isinstance(mode, ast.Constant) and "b" in mode.value):
                yield node
        elif not isinstance(function, ast.Attribute):
            continue
        elif len(args) < {"read_text": 1, "write_text": 2}.get(function.attr, 0):
            yield node  # the encoding is read_text's first argument, write_text's second
        elif function.attr == "open" and not (
            isinstance(function.value, ast.Name) and function.value.id in NOT_FILES
        ):
            mode = args[0] if args else keyword_mode
            if mode is None and not node.keywords:
                yield node  # path.open(): text, for reading
            elif isinstance(mode, ast.Constant) and set(str(mode.value)) <= MODE:
                yield node


def test_every_read_and_write_of_text_names_its_encoding():
    files = [ROOT / name for name in CODE if (ROOT / name).is_file()]
    files += [path for name in CODE for path in sorted((ROOT / name).rglob("*.py"))]
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in files
        for node in without_encoding(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "no encoding='utf-8' (the locale's is taken):\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_call():
    source = """
Path("a").read_text()
Path("a").write_text("é")
open("a", "w")
Path("a").open()
log.open("w")
Path("a").read_text(encoding="utf-8")
open("a", "rb")
archive.open("examples/expected-outputs.json")
tarfile.open(fileobj=data)
"""
    assert [node.lineno for node in without_encoding(ast.parse(source))] == [2, 3, 4, 5, 6]


def test_the_site_builds_on_a_machine_whose_locale_is_ascii(tmp_path):
    project = copy_project(tmp_path / "project")
    ascii_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    result = mkdocs_build(
        project / "mkdocs.yml", tmp_path / "site", env=copy_env(project) | ascii_locale
    )
    said = result.stdout + result.stderr
    assert result.returncode == 0, said[-4000:]
    assert "UnicodeDecodeError" not in said and "UnicodeEncodeError" not in said
    html = (tmp_path / "site" / SECTION_PAGE / "index.html").read_text(encoding="utf-8")
    assert "Deep Learning Course · Live Code" in html  # read from mkdocs.yml as UTF-8
