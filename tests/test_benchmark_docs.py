"""docs/benchmarks.md shows the generated gradient of a benchmark case as it is."""

import re
import sys
from pathlib import Path

import srctrans as st

ROOT = Path(__file__).resolve().parent.parent


def test_the_fused_mlp_gradient_shown_is_the_generated_one():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import models
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = re.search(r"<!-- generated: mlp_small -->\n```python\n(.*?)```", page, re.S).group(1)
    case = models.CASES["mlp_small"]()
    st.clear_cache()
    source = st.source(case.fn, wrt=case.wrt, args=case.args)
    assert source[source.index("def mlp_loss_grad"):] == shown
