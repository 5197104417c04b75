"""Pictures and comparison helpers for week 4 (memory formats and DLPack).

`plot_memory_order` draws the storage of a small 4-D tensor as a strip of cells
colored by channel, so NCHW and channels_last (NHWC) can be told apart at a
glance. `plot_copy_vs_zero_copy` draws the rows that the lab's
`copy_vs_zero_copy` returns. `as_float64` turns a torch tensor, NumPy array or
JAX array into a NumPy float64 (complex128 for complex data) copy, so tests can
compare values across libraries without going through the code under test.

JAX is imported lazily: the notebooks set JAX_PLATFORMS before importing it.
Depends on torch, numpy and matplotlib (and jax for JAX arrays).
"""

from __future__ import annotations

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.patches import Rectangle

__all__ = ["as_float64", "plot_copy_vs_zero_copy", "plot_memory_order"]


def as_float64(obj) -> np.ndarray:
    """A NumPy copy of `obj`'s values as float64 (complex128 if complex).

    Accepts a torch tensor (any dtype, requires_grad, conjugate/negative bits,
    sparse), a NumPy array or a JAX array. The copy is made with ordinary
    conversions, never with DLPack, so it is safe to use on any input.
    """
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        t = t.resolve_conj().resolve_neg().cpu()
        wide = torch.complex128 if t.is_complex() else torch.float64
        return t.to(wide).numpy().copy()
    arr = np.asarray(obj)  # NumPy, or a JAX array (read-only view or copy; we copy below)
    wide = np.complex128 if np.iscomplexobj(arr) else np.float64
    return arr.astype(wide, copy=True)


def plot_memory_order(t: torch.Tensor, ax=None, title: str | None = None):
    """Draw the storage of the 4-D tensor `t` (small: N*C*H*W up to ~64) as a strip.

    Each storage cell is colored by the channel of the element stored there and
    labeled with that element's (h, w). For NCHW, each channel is one block of
    H*W cells; for channels_last, the C channels of one pixel sit side by side.
    """
    if t.dim() != 4:
        raise ValueError(f"plot_memory_order draws 4-D tensors, got shape {tuple(t.shape)}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(10, 1.6))
    n, c, h, w = t.shape
    size = t.untyped_storage().nbytes() // t.element_size()
    owner: dict[int, tuple[int, int, int, int]] = {}
    s = t.stride()
    for i0 in range(n):
        for i1 in range(c):
            for i2 in range(h):
                for i3 in range(w):
                    pos = t.storage_offset() + i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3]
                    owner[pos] = (i0, i1, i2, i3)
    cmap = colormaps["tab10"]
    for pos in range(size):
        if pos in owner:
            _, ci, hi, wi = owner[pos]
            fill = cmap(ci % 10)
            label = f"{hi},{wi}"
        else:
            fill, label = "#e6e6e6", ""
        ax.add_patch(Rectangle((pos, 0), 1, 1, facecolor=fill, edgecolor="white", lw=1.5))
        ax.text(pos + 0.5, 0.5, label, ha="center", va="center", fontsize=7, color="white")
    for ci in range(c):
        ax.add_patch(Rectangle((size + 0.6 + 2.2 * ci, 0.25), 0.5, 0.5, facecolor=cmap(ci % 10)))
        ax.text(size + 1.2 + 2.2 * ci, 0.5, f"c={ci}", va="center", fontsize=8)
    ax.set_xlim(-0.2, size + 0.8 + 2.2 * c)
    ax.set_ylim(-0.15, 1.15)
    ax.set_aspect("equal")
    ax.axis("off")
    meta = f"shape {tuple(t.shape)}  stride {t.stride()}   (cell label: h,w; color: channel)"
    ax.set_title(f"{title}\n{meta}" if title else meta, fontsize=10, loc="left")
    return ax


def plot_copy_vs_zero_copy(rows: list[dict], ax=None, title: str | None = None):
    """Log-log plot of the rows of `copy_vs_zero_copy`: seconds per conversion against bytes."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    nbytes = [r["nbytes"] for r in rows]
    ax.loglog(nbytes, [r["copy_s"] * 1e6 for r in rows], "o-", label="copy (bytes move)")
    ax.loglog(nbytes, [r["zero_copy_s"] * 1e6 for r in rows], "s-", label="zero-copy (DLPack)")
    ax.set_xlabel("tensor size (bytes)")
    ax.set_ylabel("time per conversion (µs, best of runs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(title or "torch -> JAX: copy vs zero-copy")
    return ax
