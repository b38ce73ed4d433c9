"""What every report figure needs: pyplot without a display, clusters of bars, and a PNG written whole or not
at all."""

from __future__ import annotations

from pathlib import Path

from pragexp.utils.io import atomic_output


def pyplot():
    """matplotlib.pyplot on the Agg backend (reports run on machines without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bar_groups(
    ax, groups: list[str], series: list[tuple], ylabel: str, width=None, packed=False, **ticks
) -> list:
    """A cluster of bars per group, in each a bar per series `(label, heights, whiskers, bar style)` at a
    fixed place (a NaN height leaves its gap); `packed`: a None height draws no bar and the cluster closes up
    around the bars it has. Whiskers: half the 95% interval (NaN: none; None: no error bars). The y axis from
    0 to 1. Returns each series' bar positions."""
    width, places = width or 0.8 / len(series), []
    for i, (label, heights, errors, style) in enumerate(series):
        drawn = [j for j, h in enumerate(heights) if h is not None or not packed]
        here = [[k for k, s in enumerate(series) if s[1][j] is not None or not packed] for j in drawn]
        xs = [j + (at.index(i) - (len(at) - 1) / 2) * width for j, at in zip(drawn, here, strict=True)]
        errors = None if errors is None else [errors[j] for j in drawn]
        ax.bar(xs, [heights[j] for j in drawn], width, yerr=errors, label=label, **{"capsize": 1.5, **style})
        places.append(xs)
    ax.set_xticks(range(len(groups)), groups, **ticks)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    return places


def legend_below(fig, ax, width: float, height: float, fontsize: int = 7) -> None:
    """The legend in one column under the axes, the figure made taller by the legend's height so that the
    axes keep theirs: row names that carry settings are long and would cover the bars inside the axes."""
    entries = len(ax.get_legend_handles_labels()[0])
    fig.set_size_inches(width, height + 0.17 * entries)
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=1)


def save_png(fig, path: str | Path, dpi: int = 120) -> Path:
    """Lay the figure out, write it atomically as a PNG and close it."""
    try:
        fig.tight_layout()
        with atomic_output(path, binary=True) as f:
            fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        pyplot().close(fig)
    return Path(path)
