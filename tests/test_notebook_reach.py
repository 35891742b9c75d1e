"""A notebook's key holds what it reaches of ``examples``; what the build itself calls there
(the "computed on" label its kernel or worker prints) is one ingredient of its own, never added
to the notebook's reach (build_support/caching/environment.py, ``build_calls``; reach.py).

So a module-level line added to a module no notebook imports leaves a notebook that never
imports ``examples`` (an author's JAX tutorial) reused, and re-runs one that imports it.
"""

from __future__ import annotations

import shutil

import pytest

from build_support.caching import environment
from build_support.caching.environment import Environment, package_files
from testkit.project import ROOT

# An author's tutorial, as JAX's own: jax, no ``examples``.
TUTORIAL = "# %%\nimport jax.numpy as jnp\n\nx = jnp.arange(5.0)\nprint(x * 2)\n"
COURSE_NOTEBOOK = ROOT / "docs" / "notebooks" / "p5-9-1-practice-in-jax.py"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of ``examples``, the one the keys read."""
    copy = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(environment, "examples_package_dir", lambda: copy)
    return copy


def keys(package) -> dict[str, dict[str, str]]:
    """Each notebook's key ingredients, as a build reads them (nothing memoised across)."""
    read = Environment(
        package=package_files(package), lock="lock", python="py", backend="cpu", tools="t"
    )
    sources = {"tutorial": TUTORIAL, "course": COURSE_NOTEBOOK.read_text(encoding="utf-8")}
    return {name: read.ingredients(source, source=name) for name, source in sources.items()}


def edit(package, module: str, old: str, new: str) -> None:
    path = package / module
    text = path.read_text(encoding="utf-8")
    assert old in text, (module, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_module_no_notebook_imports_reruns_only_the_notebook_that_imports_it(package):
    assert "examples" in COURSE_NOTEBOOK.read_text(encoding="utf-8")
    before = keys(package)
    assert "examples/counting.py" not in before["tutorial"]  # not the build's label's reach
    assert "examples/counting.py" in before["course"]
    # A module-level line: importing ``examples`` (the label does, after the last cell) runs it.
    edit(package, "counting.py", "\n\ndef ", "\n\nEDITED_AT_MODULE_LEVEL = 1\n\n\ndef ")
    after = keys(package)
    assert after["tutorial"] == before["tutorial"]  # reused
    assert after["course"] != before["course"]  # re-run
    changed = {name for name in before["course"] if before["course"][name] != after["course"][name]}
    assert changed == {"examples/counting.py"}


def test_what_the_label_calls_is_in_every_key_that_uses_jax(package):
    """The label's own code is still in the key, as what it is: an edit to the function that
    words it re-runs both notebooks, through the one ingredient."""
    before = keys(package)
    edit(package, "backend.py", "def backend_report(", "def backend_report(  # edited\n")
    after = keys(package)
    for name in ("tutorial", "course"):
        ingredient = environment.BUILD_CALLS_INGREDIENT
        assert after[name][ingredient] != before[name][ingredient], name


def test_code_without_jax_or_the_package_holds_neither(package):
    read = Environment(
        package=package_files(package), lock="lock", python="py", backend="cpu", tools="t"
    )
    found = read.ingredients("print(sum(range(4)))")
    assert environment.BUILD_CALLS_INGREDIENT not in found
    assert not any(name.startswith("examples/") for name in found)


def myst_notebook(code: str) -> str:
    return (
        "---\nkernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        f"# A notebook\n\n```{{code-cell}} ipython3\n{code}\n```\n"
    )


def test_a_build_reuses_the_notebook_that_never_imports_the_edited_module(tmp_path):
    """The same, through builds of a small site: the Build report says which ran. Its
    notebooks are MyST, as JAX's tutorials are: their key's reach is of their code cells
    (``notebook_page.code_cells``), not of their Markdown, which does not parse as Python
    and held the whole package."""
    from testkit.build import copy_env, mkdocs_build
    from testkit.site import page
    from testkit.small_site import hook, site_config

    root = tmp_path / "project"
    shutil.copytree(
        ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    notebooks = {
        "notebooks/tutorial.md": myst_notebook(TUTORIAL.removeprefix("# %%\n")),
        "notebooks/course.md": myst_notebook(
            "from examples import scalar_multiply_count\n\nprint(scalar_multiply_count(2, 3))"
        ),
    }
    for name, text in {"index.md": "# Home\n", **notebooks}.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    config = site_config("reach", hooks=(hook("execution"),))
    nav = "".join(f"  - {name}\n" for name in ["index.md", *notebooks])
    (root / "mkdocs.yml").write_text(config.replace("hooks:\n", f"nav:\n{nav}hooks:\n", 1))

    def build() -> dict[str, str]:
        site = root / "site"
        result = mkdocs_build(root / "mkdocs.yml", site, fresh=False, env=copy_env(root))
        assert result.returncode == 0, result.stderr[-4000:]
        rows = page(site, "build-report").select("table.build-report tbody tr")
        return {row("td")[1].get_text(): row("td")[2].get_text() for row in rows}

    assert set(build().values()) == {"ran"}
    assert set(build().values()) == {"reused"}
    edit(root / "examples", "counting.py", "\n\ndef ", "\n\nEDITED_AT_MODULE_LEVEL = 1\n\n\ndef ")
    after = build()
    assert after == {"notebooks/tutorial.md": "reused", "notebooks/course.md": "ran"}, after


def test_a_notebooks_reach_is_read_from_its_code_cells_magics_and_all():
    """An ``.ipynb``'s or MyST notebook's key reaches what its code cells reach: its Markdown
    and JSON left out, a ``%timeit`` or ``!pip`` line read as a ``pass`` (else nothing parses,
    and the key holds the whole package)."""
    import ast
    import json

    from build_support.notebooks.page import code_cells

    cells = [
        {"cell_type": "markdown", "source": ["# {func}`jax.jit` and examples.counting\n"]},
        {"cell_type": "code", "source": ["!pip install jax\n", "import jax\n"]},
        {"cell_type": "code", "source": "for n in range(2):\n    %timeit jax.numpy.ones(n)\n"},
        {"cell_type": "code", "source": "from examples import scalar_multiply_count\n"},
    ]
    ipynb = code_cells("ipynb", json.dumps({"cells": cells}))
    myst = code_cells("myst", myst_notebook(":tags: [varying-output]\n%time import jax"))
    for code in (ipynb, myst):
        ast.parse(code)
    assert "examples.counting" not in ipynb and "scalar_multiply_count" in ipynb
    read = Environment(
        package=package_files(ROOT / "examples"), lock="l", python="p", backend="b", tools="t"
    )
    assert read.ingredients(ipynb)["examples"] == "what the code reaches"
    assert "examples/counting.py" in read.ingredients(ipynb)
    assert "examples/counting.py" not in read.ingredients(myst)
