"""The benchmark's plot: gradient time over forward time, per case and per implementation.

``plot(results, path)`` takes the ``results`` list that ``bench_reverse.py`` reports
(and writes with ``--json``) and saves a grouped bar chart as PNG: for each case, the
time of one gradient divided by the time of one forward pass, for srctrans, the
hand-written gradient and every other framework that was measured. Needs matplotlib
(``pip install -e ".[plot]"``); without it, :func:`plot` raises ImportError.

    python benchmarks/plot.py results.json docs/benchmarks.png
"""

import json
import sys

# bars, left to right: the columns bench_reverse.py measures (frameworks.FRAMEWORKS' keys)
ORDER = ["hand", "srctrans", "autograd", "jax", "jax.jit", "torch", "tensorflow", "tf.function"]


def ratios(results):
    """``{column: [gradient time / forward time per case]}`` (None where not measured)."""
    columns = [c for c in ORDER if any(c in r["us_per_call"] for r in results)]
    table = {}
    for column in columns:
        row = []
        for r in results:
            timing, forward = r["us_per_call"].get(column), r["us_per_call"]["forward"]
            row.append(timing["best"] / forward["best"] if timing else None)
        table[column] = row
    return table


def plot(results, path, title="Gradient time / forward time (lower is better)"):
    """Save the chart of ``results`` as a PNG at ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = ratios(results)
    cases = [r["case"] for r in results]
    width = 0.8 / max(1, len(table))
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(cases)), 4.0))
    for k, (column, row) in enumerate(table.items()):
        xs = [i + (k - (len(table) - 1) / 2) * width for i in range(len(cases))]
        heights = [value if value is not None else 0.0 for value in row]
        axes.bar(xs, heights, width, label=column)
    axes.set_xticks(range(len(cases)))
    axes.set_xticklabels(cases, rotation=20, ha="right")
    axes.set_ylabel("gradient / forward")
    axes.set_yscale("log")
    axes.set_title(title)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv=None):
    source, target = (argv if argv is not None else sys.argv[1:])
    with open(source) as payload:
        plot(json.load(payload)["results"], target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
