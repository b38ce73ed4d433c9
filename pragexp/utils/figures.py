"""What every report figure needs: pyplot without a display, and a PNG written whole or not at all."""

from __future__ import annotations

from pathlib import Path

from pragexp.utils.io import atomic_output


def pyplot():
    """matplotlib.pyplot on the Agg backend (reports run on machines without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


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
