"""The docs show generated code as it is: the fused gradient of a benchmark case
(docs/benchmarks.md), the RNN's passes (docs/architecture.md)."""

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


def test_the_rnn_gradients_in_the_architecture_page_are_the_generated_ones():
    """docs/architecture.md shows the generic passes and the fused gradient of
    tests/programs/control.py's rnn as st.source prints them."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from programs import control
    finally:
        sys.path.remove(str(ROOT / "tests"))
    page = (ROOT / "docs" / "architecture.md").read_text()
    st.clear_cache()
    generic = st.source(control.rnn, wrt=(1, 2))
    assert generic.strip() in page
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 4)),
            rng.standard_normal((4, 4)), np.zeros((2, 4)))
    fused = st.source(control.rnn, wrt=(1, 2), args=args)
    assert fused[fused.index("def rnn_grad"):].strip() in page
