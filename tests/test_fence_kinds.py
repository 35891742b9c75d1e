"""Every fence kind markdown-exec documents works here as there (issue 48), or fails the build
naming the block: ``pycon`` and the shells run in the session's worker, ``md`` and ``tree``
render in the build, ``width`` and ``workdir`` reach the block, ``pyodide`` and an unknown
option fail (``build_support/execution/fences.py``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from testkit.build import mkdocs_build
from testkit.small_site import ONE_PAGE_CONFIG

PAGE = """\
# Kinds

```python exec="on" id="width" width="10"
import os, shutil
print(os.environ.get("COLUMNS"), shutil.get_terminal_size().columns)
```

```python exec="on" id="workdir" workdir="docs"
import os
print(os.path.basename(os.getcwd()))
```

```pycon exec="on" id="pycon" source="console" session="s"
>>> x = 40 + 2
>>> print(x)
```

```python exec="on" id="after-pycon" session="s"
print("the session holds", x)
```

```bash exec="on" id="bash" result="text"
echo "bash says $((1 + 2)) from $(basename "$PWD")"
echo "group $(ps -o pgid= -p $$ | tr -d ' ')"
```

```console exec="on" id="console" width="12"
$ echo "columns $COLUMNS"
```

````md exec="on"
## A heading from md

```python exec="on" id="nested"
print("nested ran")
```
````

```tree
root/
    a.txt
```
"""


def _build(site: Path, page: str, **options) -> tuple[int, str]:
    (site / "docs" / "index.md").write_text(page)
    result = mkdocs_build(site / "mkdocs.yml", site / "site", timeout=300, **options)
    return result.returncode, result.stdout + result.stderr


def _blocks(site: Path) -> dict[str, str]:
    soup = BeautifulSoup((site / "site" / "index.html").read_text(), "html.parser")
    return {
        div["data-exec-id"]: div.get_text(" ", strip=True) for div in soup.select("div.exec-block")
    }


@pytest.fixture(scope="module")
def kinds(tmp_path_factory) -> tuple[Path, str]:
    site = tmp_path_factory.mktemp("kinds")
    (site / "docs").mkdir()
    (site / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    code, log = _build(site, PAGE, fresh=False)
    assert code == 0, log
    return site, log


def test_width_and_workdir_reach_the_block_in_its_worker(kinds):
    site, _ = kinds
    blocks = _blocks(site)
    assert blocks["width"] == "10 10"  # markdown-exec's own: `None 80` before
    assert blocks["workdir"] == "docs"
    assert blocks["console"].endswith("columns 12")


def test_pycon_runs_as_python_in_its_session_and_shows_its_prompts(kinds):
    blocks = _blocks(kinds[0])
    assert blocks["pycon"].startswith(">>> x = 40 + 2") and blocks["pycon"].endswith("42")
    assert blocks["after-pycon"] == "the session holds 42"


def test_a_shell_block_runs_in_the_worker_not_in_the_build(kinds):
    site, log = kinds
    text = _blocks(site)["bash"]
    assert "bash says 3 from" in text
    group = int(re.search(r"group (\d+)", text)[1])
    assert group != os.getpgid(0)  # a process group of its own: the worker's, killed whole
    assert "ran in bash on the build machine" in log


def test_md_and_tree_render_and_a_block_inside_md_runs(kinds):
    site, _ = kinds
    soup = BeautifulSoup((site / "site" / "index.html").read_text(), "html.parser")
    assert _blocks(site)["nested"] == "nested ran"
    toc = [a.get_text(strip=True) for a in soup.select("nav.md-nav--secondary a")]
    assert "A heading from md" in toc
    assert "a.txt" in soup.select_one("article").get_text()


def test_a_rebuild_reuses_python_blocks_and_runs_shell_blocks_again_saying_why(kinds):
    site, _ = kinds
    code, log = _build(site, PAGE, fresh=False)
    assert code == 0, log
    ran = re.findall(r"Executed index.md (\S+): ran \(([^)]*)\)", log)
    assert sorted(block for block, _ in ran) == ["bash", "console"], log
    assert all("a shell block runs every build" in why for _, why in ran)
    assert _blocks(site)["pycon"].endswith("42")


@pytest.mark.parametrize(
    ("fence", "said"),
    [
        ('```sh exec="on" id="exits"\necho partial; exit 3\n```', "exited with code 3, not 0"),
        ("```pyodide\nprint(1)\n```", "pyodide fence: a pyodide block loads Pyodide"),
        ('```python exec="on" id="typo" timout="300"\nprint(1)\n```', "unknown fence option"),
        ('```sh exec="on" id="slow" timeout="2"\nsleep 60\n```', "time limit of 2 s"),
        # Read as it comes: stopped at the limit, long before its time limit.
        ('```sh exec="on" id="flood" timeout="600"\nyes\n```', "passed the limit of 1,048,576"),
    ],
    ids=["returncode", "pyodide", "unknown-option", "shell-timeout", "shell-flood"],
)
def test_what_the_site_cannot_honour_fails_the_build_naming_the_block(tmp_path, fence, said):
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    code, log = _build(tmp_path, f"# Page\n\n{fence}\n")
    assert code != 0
    assert said in log and "index.md" in log, log


def test_a_name_from_another_pages_session_fails_naming_both_pages(tmp_path):
    """markdown-exec shares a session across pages; here a session is its page's own (state
    never leaks between pages), and the failure says so rather than a bare NameError."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    (tmp_path / "docs" / "second.md").write_text(
        '# Second\n\n```python exec="on" session="s" id="uses"\nprint(x)\n```\n'
    )
    code, log = _build(tmp_path, '# First\n\n```python exec="on" session="s"\nx = 1\n```\n')
    assert code != 0
    assert "NameError: name 'x' is not defined (session 's' is also on index.md" in log, log
    assert "a session is its page's own" in log and "second.md" in log


HEADERS = """\
~~~python exec='on' session='s'
print("tildes, single quotes")
~~~

~~~~python exec="1" session="s" title='Quoted'
print("four tildes")
~~~~

```python exec=true session="s"
print("unquoted: superfences reads no fence here")
```

```{.python exec="on"}
print("an attribute list")
```

```python exec="on" session=s
print("unquoted again")
```

  ```python exec="yes"
  print("indented")
  ```
"""


NESTED = """\
1. A step

    ```python exec="on"
    print("in a list")
    ```

!!! note

    ```pycon exec="on"
    >>> print("in an admonition")
    ```

  ```python exec="on"
  print("abandoned: a line below is indented less")
print("here")
  ```

```python exec="on"
print("after it")
```
"""


@pytest.mark.parametrize("page", [HEADERS, NESTED], ids=["headers", "nested"])
def test_the_build_reads_the_fences_superfences_hands_markdown_exec(page):
    """The build's reader (a session's key, its run ahead) and superfences agree on which
    fences markdown-exec executes and on their code, however their headers are written: a
    fence one reads and the other does not leaves its session never cached."""
    import markdown
    from markdown_exec import validator

    from build_support.execution import fences

    handed: list[str] = []

    def formatter(source, language, css_class, options, md, **kwargs):
        handed.append(source)
        return ""

    kinds = [
        {"class": kind, "validator": validator, "format": formatter, "name": kind}
        for kind in ("python", "pycon")
    ]
    md = markdown.Markdown(
        extensions=["pymdownx.superfences", "admonition"],
        extension_configs={"pymdownx.superfences": {"custom_fences": kinds}},
    )
    md.convert(page)
    read = [fence.options["code"] for fence in fences.read(page, ("python", "pycon"))]
    assert [code.rstrip("\n") for code in read] == [code.rstrip("\n") for code in handed]
    assert len(handed) == 2, handed  # the rest, as superfences reads them, are no fences
