"""The docs stay true to the code: the rule table is the registry's, and the README's count
of covered functions is not more than the registry holds."""

import importlib.util
import re
from pathlib import Path

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
    assert written.splitlines()[1:] == table.tables().splitlines()[1:], \
        "run `python docs/rules_table.py --write`"


def test_the_readme_counts_no_more_functions_than_have_rules():
    count = int(_rules_table().coverage()[0].split()[0])
    claimed = re.search(r"(\d+) functions in all", (ROOT / "README.md").read_text())
    assert claimed is not None and int(claimed.group(1)) <= count
