"""The docs stay true to the code: the rule table is the registry's, the README's count of
covered functions is not more than the registry holds, the site builds strictly, and the
programs on its pages print what the pages show."""

import contextlib
import importlib.util
import io
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _rules_table():
    spec = importlib.util.spec_from_file_location("rules_table", ROOT / "docs" / "rules_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rule_table_is_current():
    """docs/rules.md holds what `python docs/rules_table.py --write` writes (the NumPy version
    in its first line aside)."""
    table = _rules_table()
    page = (ROOT / "docs" / "rules.md").read_text()
    written = page.split(table.BEGIN + "\n", 1)[1].split(table.END, 1)[0]
    recorded = re.search(r"with NumPy (\d+\.\d+)", written).group(1)
    if recorded != ".".join(np.__version__.split(".")[:2]):
        pytest.skip(f"the table was written with NumPy {recorded}, whose functions differ from "
                    f"{np.__version__}'s (np.row_stack is gone in 2.5)")
    assert written.splitlines()[1:] == table.tables().splitlines()[1:], \
        "run `python docs/rules_table.py --write`"


def test_the_readme_counts_no_more_functions_than_have_rules():
    count = int(_rules_table().coverage()[0].split()[0])
    claimed = re.search(r"(\d+) functions in all", (ROOT / "README.md").read_text())
    assert claimed is not None and int(claimed.group(1)) <= count


# -- the documentation site ---------------------------------------------------------------

PROGRAM = re.compile(r"<!-- run: (\w+) -->\n```python\n(.*?)\n```\n\nprints\n\n```text\n(.*?)\n```",
                     re.S)


def test_the_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: a broken link, a missing page or a docstring the API reference
    cannot read fails here."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    api = (site / "api" / "index.html").read_text()
    for name in ["srctrans.grad", "srctrans.export", "srctrans.stop_gradient", "CallError"]:
        assert name in api
    # public names have anchors of their own, as users write them
    for name in ["grad", "export", "stop_gradient", "stop_recording", "grad_of", "checkpointed"]:
        assert f'id="srctrans.{name}"' in api, name
    # the export entry is the function, not its module's docstring under a nested heading
    assert "Write a derivative as a standalone Python module" not in api
    _check_built_pages(site)


def _check_built_pages(site):
    """What the built HTML shows: docstrings in the site's syntax (no Sphinx roles, no
    literal double backticks), no fonts fetched from the network, a dark-mode toggle, the
    repository and the version on every page."""
    import srctrans
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        html = page.read_text()
        text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", html, flags=re.S)
        for raw in (":func:", ":class:", ":meth:", ":mod:", "``"):
            assert raw not in text, f"{page.relative_to(site)} shows {raw!r}"
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html, page
        if page.name == "404.html":
            continue
        assert 'data-md-color-scheme="slate"' in html and "Dark mode" in html, page
        assert "https://github.com/srctrans/srctrans" in html, page
        assert f"srctrans {srctrans.__version__}" in html, page


def test_the_landing_page_shows_the_generated_gradient_beside_the_function():
    """docs/index.md's listing of generated code is the README's (tested to be what
    st.source prints), beside the same function."""
    index = (ROOT / "docs" / "index.md").read_text()
    shown = re.findall(r"```python\n(.*?)```", index, re.S)
    fused = [b for b in _readme_blocks() if b.startswith("def loss_grad")]
    assert fused and fused[0] in shown
    function = re.search(r"def loss\(w, b, x, y\):\n(?:    .*\n)+", _readme_blocks()[0]).group(0)
    assert any(function in block for block in shown)


def test_the_readme_links_every_page():
    readme = (ROOT / "README.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "index.md":
            assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"


@pytest.mark.parametrize("page", ["coming_from.md", "export.md", "beyond_one_machine.md",
                                  "complex.md", "outputs.md", "batching.md"])
def test_every_program_on_the_page_prints_what_it_shows(page, tmp_path, monkeypatch):
    """Each program on the page runs (from a file, as a user's would) and prints the text the
    page shows under it."""
    programs = PROGRAM.findall((ROOT / "docs" / page).read_text())
    assert len(programs) >= 2
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))       # a module a program writes is importable
    for name, code, shown in programs:
        path = tmp_path / f"{name}.py"
        path.write_text(code + "\n")
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                runpy.run_path(str(path), run_name="__main__")
        finally:                                     # the modules the programs wrote are forgotten
            for key in [key for key, module in list(sys.modules.items())
                        if str(getattr(module, "__file__", "") or "").startswith(str(tmp_path))]:
                del sys.modules[key]
        assert printed.getvalue().rstrip("\n") == shown, f"{page}: program {name}"


def test_coming_from_covers_every_use_the_seeds_ask_about():
    text = (ROOT / "docs" / "coming_from.md").read_text()
    for use in ["output_gradients", "stop_recording", "stop_gradient", "custom_gradient",
                "batch_jacobian", "st.jacobian", "st.hessian", "st.hvp", "ForwardAccumulator",
                "gradient by parts", "measured outside"]:
        assert use in text, use


# -- the README's tour: its session and its listings of generated code ----------------------

def _readme_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def _tour_module(tmp_path, monkeypatch):
    """The tour's `model.py` (the README's first listing), importable, and the session's
    setup (its second) run; the session's namespace."""
    blocks = _readme_blocks()
    (tmp_path / "model.py").write_text(blocks[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("model", None)
    namespace = {}
    exec(blocks[1], namespace)
    return namespace


def test_the_readme_session_prints_what_it_shows(tmp_path, monkeypatch):
    import doctest
    namespace = _tour_module(tmp_path, monkeypatch)
    session = "\n".join(block for block in _readme_blocks() if ">>>" in block)
    test = doctest.DocTestParser().get_doctest(session, namespace, "README.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: None)
    assert runner.failures == 0 and runner.tries >= 10, runner.summarize()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 prints unpacked names in "
                    "parentheses, as the README says")
def test_the_readme_listings_of_generated_code_are_what_st_source_prints(tmp_path, monkeypatch):
    import srctrans as st
    namespace = _tour_module(tmp_path, monkeypatch)
    loss, args = namespace["loss"], tuple(namespace[k] for k in ("w", "b", "x", "y"))
    listings = [b.strip() for b in _readme_blocks() if b.startswith("def loss_")]
    generic = st.source(loss, wrt=("w", "b")).strip()
    specialised = st.source(loss, wrt=("w", "b"), args=args)
    fused = specialised[specialised.index("def loss_grad"):].strip()
    assert listings == [generic, fused]
