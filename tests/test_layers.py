"""The compiler's imports run one way: API -> cache -> pipeline -> passes -> rules -> base.

Read statically from the sources (every ``import``, at module level or inside a
function): a module never imports one of a higher layer, and no modules import
each other in a circle. Calls of srctrans's API inside user code reach the
compiler through ``srctrans.interface``, which the API fills in.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "srctrans"

# Highest first. A module belongs to the first layer one of whose prefixes it starts with.
LAYERS = [
    ("api", ["srctrans.api", "srctrans.selection", "srctrans.examples", "srctrans.export_specialised", "srctrans.forward_api", "srctrans.composed", "srctrans.second_order", "srctrans.checks",
             "srctrans.exporting", "srctrans.cli", "srctrans.__main__", "srctrans.gradient_control",
             "srctrans.repeat", "srctrans.repeat_stale", "srctrans.repeat_structures", "srctrans.scalar_gradients", "srctrans.lean_cotangents", "srctrans.shown_source", "srctrans.hints", "srctrans.pytrees",
             "srctrans.ownership", "srctrans.batch_api", "srctrans.batched_matrices",
             "srctrans.batch_derivatives", "srctrans.batch_nested",
             "srctrans.export_batched", "srctrans.batch_axes", "srctrans.batch_pullbacks", "srctrans.batch_plans"]),
    ("cache", ["srctrans.cache", "srctrans.instances", "srctrans.assumed", "srctrans.shape_keys", "srctrans.persist", "srctrans.reporting", "srctrans.outputs",
               "srctrans.measuring", "srctrans.build_guards"]),
    ("pipeline", ["srctrans.pipeline", "srctrans.front_end", "srctrans.batch_pipeline",
                  "srctrans.generated_functions",
                  "srctrans.shape_facts"]),
    ("passes", ["srctrans.parse", "srctrans.normalize", "srctrans.analyse",
                "srctrans.differentiate", "srctrans.optimise", "srctrans.emit",
                "srctrans.builds", "srctrans.nodes", "srctrans.naming", "srctrans.annotations",
                "srctrans.signatures"]),
    ("rules", ["srctrans.rules"]),
    ("base", ["srctrans.errors", "srctrans.interface", "srctrans.runtime", "srctrans.places", "srctrans.sha256",
              "srctrans.treewalk"]),
]


def _layer(module):
    if module == "srctrans":          # the package's face: it imports the API when asked
        return 0
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def _modules():
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(path, modules):
    """The srctrans modules ``path`` imports (``from srctrans import x`` counts as x when
    x is a module)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "srctrans":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full.startswith("srctrans.runtime"):     # runtime/, installed as srctrans.runtime
                    full = "srctrans.runtime"
                imported.add(full if full in modules or full == "srctrans.runtime" else node.module)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names if a.name.split(".")[0] == "srctrans")
    return imported


MODULES = _modules()
GRAPH = {name: {m for m in _imports(path, MODULES) if m != name} for name, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_nothing_above_its_layer(module):
    rank = _layer(module)
    above = sorted(m for m in GRAPH[module] if _layer(m) < rank)
    assert not above, f"{module} ({LAYERS[rank][0]}) imports {above} from higher layers"


def test_no_modules_import_each_other_in_a_circle():
    state, circle = {}, []

    for start in sorted(GRAPH):                  # depth-first, with an explicit stack
        if start in state:
            continue
        stack = [(start, iter(sorted(GRAPH[start])))]
        state[start] = "open"
        while stack and not circle:
            name, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[name] = "done"
                stack.pop()
            elif child not in MODULES or child == "srctrans":
                continue                     # importing the package runs srctrans/__init__, which
                                             # imports errors only (the API lazily, when asked)
            elif state.get(child) == "open":
                path = [n for n, _ in stack]
                circle = path[path.index(child):] + [child]
            elif child not in state:
                state[child] = "open"
                stack.append((child, iter(sorted(GRAPH[child]))))
    assert not circle, " -> ".join(circle)


def test_the_layers_catch_an_upward_import():
    """The check itself: a pass that imported the API would be reported."""
    graph = dict(GRAPH, **{"srctrans.normalize.anf": GRAPH["srctrans.normalize.anf"] | {"srctrans.api"}})
    rank = _layer("srctrans.normalize.anf")
    assert any(_layer(m) < rank for m in graph["srctrans.normalize.anf"])
