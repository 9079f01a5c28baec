"""docs/syntax.md's table, row by row: each row's example (tests/syntax_rows.py) shows what
the row says, so a row that stops being true fails here, and a new row needs an example."""

import importlib
import re
import sys
import textwrap
from pathlib import Path

import pytest

from syntax_rows import EXACT, HEADER, ROWS

TABLE = (Path(__file__).resolve().parent.parent / "docs" / "syntax.md").read_text()


def _rows():
    """``(first cell, status cell)`` of every row of the tables under "The table"."""
    part = TABLE[TABLE.index("## The table"):TABLE.index("### Known limitations")]
    found = []
    for line in part.splitlines():
        if line.startswith("|") and not line.startswith(("|---", "| construct")):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            found.append((cells[0], cells[1]))
    return found


ROW_CELLS = [cell for cell, _ in _rows()]


def _example(cell):
    """The one example whose text this row's first cell holds (or is)."""
    if cell in EXACT:
        return EXACT[cell]
    matches = [source for text, source in ROWS if text in cell]
    assert len(matches) == 1, f"{len(matches)} examples for the row {cell[:80]!r}"
    return matches[0]


def test_every_row_has_one_example_and_every_example_a_row():
    assert len(ROW_CELLS) > 100
    for cell in ROW_CELLS:
        _example(cell)
    for text, _ in ROWS:
        assert sum(text in cell for cell in ROW_CELLS) == 1, text
    assert set(EXACT) <= set(ROW_CELLS)


@pytest.mark.parametrize("index", range(len(ROW_CELLS)),
                         ids=[re.sub(r"\W+", "_", c)[:40] for c in ROW_CELLS])
def test_the_row_holds(index, tmp_path, monkeypatch):
    cell = ROW_CELLS[index]
    name = f"syntax_row_{index}"
    (tmp_path / f"{name}.py").write_text(HEADER + textwrap.dedent(_example(cell)))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        module.check()
    finally:
        sys.modules.pop(name, None)
