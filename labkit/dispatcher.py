"""Looking at PyTorch's dispatcher from Python (week 2).

These helpers read what the real dispatcher does; they model nothing and hold no
lab answers:

- `KEY_NAMES`: the dispatch keys the course talks about (alphabetical order).
- `keyset_names(ks)`: the keys of a `torch._C.DispatchKeySet`, highest priority first.
- `tls_keys()`: this thread's include/exclude sets, as key names.
- `dispatch_table(op)`: what each key of an operator's dispatch table holds.
- `probe_route(tensors, kernels, fallthrough)`: call a throw-away custom operator
  through the real dispatcher and report which keys' kernels ran.
- `fresh_library(ns)`: a `torch.library.Library` that replaces the one handed out
  before for the same namespace, so a registering function can run twice.
- `cuda_stand_in(*size)`: a tensor whose device is cuda on any machine (a FakeTensor),
  and `stand_in_keys(t)`: the dispatch keys a real tensor like it would carry.
- `plot_routes(rows, keys)`: a chart of the keys a call passes through.

Depends only on torch and matplotlib.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

import torch

__all__ = ["KEY_NAMES", "keyset_names", "tls_keys", "dispatch_table", "probe_route", "fresh_library",
           "cuda_stand_in", "stand_in_keys", "plot_routes"]

KEY_NAMES = (
    "ADInplaceOrView", "AutocastCPU", "AutocastCUDA", "AutogradCPU", "AutogradCUDA", "AutogradMeta",
    "BackendSelect", "CPU", "CUDA", "Conjugate", "Meta", "Negative", "Python", "PythonTLSSnapshot",
)

_DK = torch._C.DispatchKey
_KS = torch._C.DispatchKeySet


def keyset_names(ks) -> list[str]:
    """The keys in the DispatchKeySet `ks`, highest priority first.

    torch prints a key set lowest priority first ("DispatchKeySet(CPU, ..., AutocastCPU)");
    this reverses that order, which is the order the dispatcher tries them in.
    """
    text = torch._C._dispatch_keyset_to_string(ks)
    inner = text[text.index("(") + 1: text.rindex(")")]
    return [name.strip() for name in reversed(inner.split(",")) if name.strip()]


def tls_keys() -> tuple[list[str], list[str]]:
    """This thread's local (include, exclude) dispatch key sets, as names from KEY_NAMES,
    highest priority first.

    A key counts as excluded when subtracting the exclude set removes it. That is how the
    dispatcher uses the set, and it differs from `_dispatch_tls_is_dispatch_key_excluded`:
    inference mode excludes the whole Autograd functionality (no backend bits), so
    `AutogradCPU` is excluded although the set does not literally hold it.
    """
    inc = torch._C._dispatch_tls_local_include_set()
    exc = torch._C._dispatch_tls_local_exclude_set()
    include = [n for n in KEY_NAMES if inc.has(getattr(_DK, n))]
    exclude = [n for n in KEY_NAMES if not (_KS(getattr(_DK, n)) - exc).has(getattr(_DK, n))]
    return _by_priority(include), _by_priority(exclude)


def _by_priority(names: Iterable[str]) -> list[str]:
    names = list(names)
    if not names:
        return []
    ks = _KS(getattr(_DK, names[0]))
    for n in names[1:]:
        ks = ks | _KS(getattr(_DK, n))
    order = keyset_names(ks)
    return [n for n in order if n in names]


_TABLE_LINE = re.compile(r"^(\w+): (fallthrough )?registered at .*\[([^\]]+)\]\s*$")


def dispatch_table(op: str) -> dict[str, str]:
    """What the computed dispatch table of `op` (e.g. "aten::add.Tensor") holds per key.

    Values: "fallthrough" (the key is skipped), or the kind torch reports for a real
    kernel: "kernel", "autograd kernel", "math kernel", "default backend kernel",
    "backend fallback", ... Keys with no entry at all are left out.
    """
    table = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        m = _TABLE_LINE.match(line.strip())
        if m:
            key, fallthrough, kind = m.groups()
            table[key] = "fallthrough" if fallthrough else kind
    return table


_libraries: dict[str, torch.library.Library] = {}


def fresh_library(ns: str) -> torch.library.Library:
    """A new `torch.library.Library(ns, "FRAGMENT")`; the one this function returned
    before for `ns` (if any) is destroyed first, removing everything registered
    through it. So a function that registers operators through it can be called again
    (a re-run cell, a test) without "already registered" errors.

    The library is kept alive here: a Library object that is garbage collected takes
    its registrations with it.
    """
    old = _libraries.pop(ns, None)
    if old is not None:
        old._destroy()
    lib = torch.library.Library(ns, "FRAGMENT")
    _libraries[ns] = lib
    return lib


def cuda_stand_in(*size: int, dtype: torch.dtype = torch.float32, inference: bool = False) -> torch.Tensor:
    """A tensor whose device is cuda, on any machine, even one without a GPU or a CUDA build:
    a FakeTensor (`torch._subclasses.fake_tensor`), which has metadata and no data.

    `t.device`, `t.is_cuda`, `t.is_inference()`, `t.is_conj()` and `t.is_neg()` answer as for a
    real cuda tensor, so code that derives dispatch keys from them can be checked on a CPU.
    Do not compute with it: outside its FakeTensorMode it has nothing to compute on.
    inference=True makes it an inference tensor (created under `torch.inference_mode()`).
    """
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        if inference:
            with torch.inference_mode():
                return torch.empty(size, dtype=dtype, device="cuda")
        return torch.empty(size, dtype=dtype, device="cuda")


def stand_in_keys(t: torch.Tensor):
    """The dispatch keys (a DispatchKeySet) of `t`, less the two that a FakeTensor adds for its Python
    subclass (Python, PythonTLSSnapshot): for `cuda_stand_in(...)`, the keys a real cuda tensor
    carries; for a plain tensor, `torch._C._dispatch_keys(t)` unchanged."""
    from torch._subclasses.fake_tensor import FakeTensor

    keys = torch._C._dispatch_keys(t)
    if isinstance(t, FakeTensor):
        keys = keys - _KS(_DK.Python) - _KS(_DK.PythonTLSSnapshot)
    return keys


_probe_ids = itertools.count()


def probe_route(tensors: Sequence[torch.Tensor], kernels: dict[str, str],
                fallthrough: Iterable[str] = ()) -> tuple[list[str], BaseException | None]:
    """Call a throw-away custom operator `labkit_probe::pN(Tensor[] xs) -> Tensor` on
    `tensors` through the real dispatcher, under this thread's current TLS.

    kernels: key name -> "redispatch" (record the key, then redispatch to the keys
    below it, as `op.redispatch(keyset & _dispatch_keyset_full_after(key), ...)`)
    or "return" (record the key and return). Keys in `fallthrough` get
    `torch.library.fallthrough_kernel` for this operator; every other key keeps torch's
    global behaviour (its backend fallback, or no kernel at all).

    Returns (the keys whose kernels ran, in order; the exception the call raised or None).
    The operator is removed again before returning.
    """
    lib = torch.library.Library("labkit_probe", "FRAGMENT")
    name = f"p{next(_probe_ids)}"
    route: list[str] = []
    try:
        lib.define(f"{name}(Tensor[] xs) -> Tensor")
        op = getattr(torch.ops.labkit_probe, name).default

        def make(key: str, mode: str):
            after = torch._C._dispatch_keyset_full_after(getattr(_DK, key))

            def kernel(keyset, xs):
                route.append(key)
                if mode == "return":
                    return torch.empty(0)
                return op.redispatch(keyset & after, xs)
            return kernel

        for key, mode in kernels.items():
            if mode not in ("redispatch", "return"):
                raise ValueError(f"kernel mode must be 'redispatch' or 'return', got {mode!r}")
            lib.impl(name, make(key, mode), key, with_keyset=True)
        for key in fallthrough:
            lib.impl(name, torch.library.fallthrough_kernel, key)
        try:
            op(list(tensors))
        except Exception as exc:  # noqa: BLE001 - the caller compares errors too
            return route, exc
        return route, None
    finally:
        lib._destroy()


def plot_routes(rows: Sequence[tuple[str, dict[str, str]]], keys: Sequence[str], ax=None,
                title: str | None = None, legend: bool = True):
    """Draw, for each row (a call in some context), which keys it passes through.

    rows: (label, {key: state}) with state one of
      "run"      the key is in the call's key set and its kernel runs,
      "skip"     the key is in the key set but the operator's entry is a fallthrough,
      "excluded" the tensors carry the key but the TLS exclude set removes it.
    Keys not in a row's dict are not in its key set. `keys` gives the columns,
    highest priority first. The "run" keys of each row are joined by arrows, in order.
    With legend=False the legend is left out; its entries stay available through
    `ax.get_legend_handles_labels()` (for one legend under several panels).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 * len(keys) + 2.5, 0.6 * len(rows) + 1.6))
    col = {k: j for j, k in enumerate(keys)}
    styles = {
        "run": dict(marker="o", s=260, facecolor="#1f77b4", edgecolor="#1f77b4", zorder=3),
        "skip": dict(marker="o", s=260, facecolor="white", edgecolor="#1f77b4", linewidths=1.5, zorder=3),
        "excluded": dict(marker="X", s=170, facecolor="#d62728", edgecolor="#d62728", zorder=3),
    }
    for i, (_, states) in enumerate(rows):
        y = -i
        ax.axhline(y, color="0.92", lw=1, zorder=0)
        path = [col[k] for k in keys if states.get(k) == "run"]
        for a, b in zip(path, path[1:]):
            ax.annotate("", xy=(b - 0.18, y), xytext=(a + 0.18, y),
                        arrowprops=dict(arrowstyle="-|>", color="#1f77b4", lw=1.6), zorder=2)
        for k, state in states.items():
            if k in col:
                ax.scatter([col[k]], [y], **styles[state])
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=40, ha="right", fontsize=9)
    ax.set_yticks([-i for i in range(len(rows))])
    ax.set_yticklabels([label for label, _ in rows], fontsize=9)
    ax.set_xlim(-0.6, len(keys) - 0.4)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    for state, label in (("run", "kernel runs"), ("skip", "in the key set, fallthrough"),
                         ("excluded", "carried, but excluded by the TLS")):
        ax.scatter([], [], label=label, **{**styles[state], "s": 90})
    if legend:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.38), ncol=3, fontsize=8, frameon=False)
    ax.set_xlabel("dispatch keys, highest priority first  \u2192", fontsize=9)
    if title:
        ax.set_title(title, fontsize=11)
    return ax
