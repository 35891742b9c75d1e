"""Numbers quoted in the prose are computed: the hook fills them in and refuses unknown names."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from examples import BATCH, WEIGHTS, prose_numbers
from testkit.hooks import load_hook
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page


@pytest.fixture(autouse=True)
def a_build(tmp_path, monkeypatch):
    """The hook reads the numbers through the build's execution cache (a throw-away one)."""
    from build_support.execution import state

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return state.start(ROOT)


FAKE_PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="some-page.md"))


def test_prose_numbers_follow_the_data():
    assert prose_numbers() == {
        "lines": len(BATCH),
        "features": len(BATCH[0]),
        "weights": len(WEIGHTS),
        "multiply_count": len(BATCH) * len(BATCH[0]),
    }


def test_hook_fills_in_the_numbers():
    hook = load_hook("live_numbers")
    text = "{{ live.lines }} lines, {{live.multiply_count}} multiplications"
    numbers = prose_numbers()
    expected = f"{numbers['lines']} lines, {numbers['multiply_count']} multiplications"
    assert hook.on_page_markdown(text, FAKE_PAGE, None, None) == expected


def test_hook_refuses_an_unknown_name():
    hook = load_hook("live_numbers")
    with pytest.raises(
        ValueError, match=r"some-page.md: unknown live number '\{\{ live.rows \}\}'"
    ):
        hook.on_page_markdown("{{ live.rows }}", FAKE_PAGE, None, None)


def test_built_page_quotes_the_computed_numbers(built_site):
    text = page(built_site, SECTION_PAGE).get_text()
    numbers = prose_numbers()
    assert "{{" not in text
    assert (
        f"In the current example with {numbers['lines']} lines and {numbers['features']} "
        f"features, {numbers['multiply_count']} multiplications are needed"
    ) in text
    assert f"the same multiplication is repeated {numbers['multiply_count']} times" in text


def test_a_value_is_computed_in_a_worker_not_in_the_build_and_fails_by_name(a_build):
    """The build never runs the package's code itself (no JAX imported for a number): the
    value is what the code prints as JSON in a worker; cached by its code; a failure and a
    print that is not JSON name the value."""
    import os

    code = "import os\nimport json\nprint(json.dumps({'pid': os.getpid()}))\n"
    value = a_build.cached_value("where", code)
    assert value["pid"] != os.getpid()
    assert a_build.cached_value("where", code) == value  # from the cache: no second worker
    with pytest.raises(ValueError, match=r"the value 'broken' could not be computed: .*Error"):
        a_build.cached_value("broken", "raise RuntimeError('no number')\n")
    with pytest.raises(ValueError, match=r"the value 'words': its code printed no JSON"):
        a_build.cached_value("words", "print('seven')\n")
