"""Device picking for the notebooks' `DEVICE` parameter."""

import torch

SKIP_PREFIX = "SKIPPED (needs CUDA):"


def resolve_device(device: str = "auto") -> str:
    """Turn the `DEVICE` parameter into a concrete device string.

    "auto" becomes "cuda" when a GPU is visible, else "cpu". Asking for "cuda"
    on a machine without one is an error, not a silent fallback: a GPU run that
    quietly ran on the CPU would report checks it never made.
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(
            f"DEVICE={device!r} was requested but torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}). "
            "Run on a GPU machine, or use DEVICE='auto'/'cpu'."
        )
    if device not in ("cpu",) and not device.startswith("cuda"):
        raise ValueError(f"DEVICE must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")
    return device


def skip_unless_cuda(device: str, what: str) -> bool:
    """Return True when `device` is a CUDA device; otherwise print one SKIPPED line.

    Use it to guard GPU-only checks, which carry no points:

        if skip_unless_cuda(DEVICE, "pinned-memory copy overlaps compute"):
            ...  # the check itself
    """
    if str(device).startswith("cuda"):
        return True
    print(f"{SKIP_PREFIX} {what}")
    return False
