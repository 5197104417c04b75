"""Pictures of how a tensor view maps onto its storage.

`plot_stride_map` draws a 2-D tensor as a grid of cells. Each cell is labeled
with, and colored by, the storage position of that element:

    position(i, j) = storage_offset + i * stride[0] + j * stride[1]

Underneath the grid it draws the whole 1-D storage as a strip of cells, with
the cells the view reads from colored the same way and the others left grey.
A storage cell that several elements share (stride 0, as after `expand`) is
marked with how many elements use it.

Depends only on torch and matplotlib.
"""

from __future__ import annotations

import torch
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

__all__ = ["plot_stride_map"]

_STRIP_WRAP = 16  # storage cells per row of the strip before it wraps
_GAP = 1.4  # vertical space between the grid and the strip, in cell units
_UNUSED = "#e6e6e6"
_OUT_OF_RANGE = "#d62728"  # a position past the end of the storage (should not happen)


def _text_color(rgba) -> str:
    """Black or white, whichever reads better on the given fill color."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def plot_stride_map(t: torch.Tensor, ax=None, title: str | None = None):
    """Draw where each element of the 2-D tensor `t` lives in its storage.

    Parameters
    ----------
    t : torch.Tensor
        A 2-D tensor (any dtype or device; only its metadata is read).
    ax : matplotlib Axes, optional
        Where to draw. A new figure and axes are made when omitted.
    title : str, optional
        Shown above the plot, followed by a line with the tensor's shape,
        strides and storage offset.

    Returns
    -------
    The matplotlib Axes drawn on.
    """
    if t.dim() != 2:
        raise ValueError(f"plot_stride_map draws 2-D tensors, got {t.dim()}-D shape {tuple(t.shape)}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))

    rows, cols = t.shape
    s0, s1 = t.stride()
    offset = t.storage_offset()
    n_storage = t.untyped_storage().nbytes() // t.element_size()

    # Storage position of every element, and how many elements use each position.
    positions = [[offset + i * s0 + j * s1 for j in range(cols)] for i in range(rows)]
    uses: dict[int, int] = {}
    for row in positions:
        for p in row:
            uses[p] = uses.get(p, 0) + 1

    cmap = colormaps["viridis"]
    norm = Normalize(vmin=0, vmax=max(n_storage - 1, 1))

    wrap = min(max(n_storage, 1), _STRIP_WRAP)
    strip_rows = max(1, -(-n_storage // wrap))
    width = max(cols, wrap)

    # The grid: row i is drawn at y = -i (top row first), centered horizontally.
    x0 = (width - cols) / 2
    for i in range(rows):
        for j in range(cols):
            p = positions[i][j]
            fill = cmap(norm(p)) if 0 <= p < n_storage else _OUT_OF_RANGE
            ax.add_patch(Rectangle((x0 + j, -i - 1), 1, 1, facecolor=fill, edgecolor="white", lw=2))
            color = "white" if fill == _OUT_OF_RANGE else _text_color(fill)
            ax.text(x0 + j + 0.5, -i - 0.5, str(p), ha="center", va="center",
                    fontsize=12, fontweight="bold", color=color)
    for i in range(rows):
        ax.text(x0 - 0.15, -i - 0.5, f"i={i}", ha="right", va="center", fontsize=8, color="0.35")
    for j in range(cols):
        ax.text(x0 + j + 0.5, 0.1, f"j={j}", ha="center", va="bottom", fontsize=8, color="0.35")

    # The storage strip, below the grid.
    top = -rows - _GAP
    ax.text(width / 2, top + 0.15, f"storage ({n_storage} elements of {t.dtype}, "
            f"{t.untyped_storage().nbytes()} bytes)", ha="center", va="bottom", fontsize=9, color="0.25")
    for p in range(n_storage):
        r, c = divmod(p, wrap)
        y = top - r - 1
        fill = cmap(norm(p)) if p in uses else _UNUSED
        ax.add_patch(Rectangle((c, y), 1, 1, facecolor=fill, edgecolor="white", lw=2))
        color = _text_color(fill) if p in uses else "0.55"
        ax.text(c + 0.5, y + 0.5, str(p), ha="center", va="center", fontsize=9, color=color)
        if uses.get(p, 0) > 1:
            ax.text(c + 0.95, y + 0.08, f"\u00d7{uses[p]}", ha="right", va="bottom", fontsize=7, color=color)

    ax.set_xlim(-0.9, width + 0.1)
    ax.set_ylim(top - strip_rows - 0.2, 0.7)
    ax.set_aspect("equal")
    ax.set_anchor("N")  # side-by-side panels line up at the top
    ax.axis("off")
    meta = f"shape {tuple(t.shape)}  stride {t.stride()}  offset {offset}"
    ax.set_title(f"{title}\n{meta}" if title else meta, fontsize=11)
    return ax
