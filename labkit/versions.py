"""Facts about PyTorch that differ between the versions the course supports (torch 2.11 to 2.14).

A walkthrough cell that depends on one asks `has(fact)` and teaches either case; `OBSERVED` records what each
fact was on the versions the course has run on, and `make test` checks that the installed torch agrees with
its row (tests/test_labkit.py), so a new version that changes a fact fails there first, with the fact's name.

Observed on: torch 2.13.0 (CPU, every `make test`); torch 2.11.0+cu130 (the first GPU run, on an H200).
"""

from __future__ import annotations

import inspect

SUPPORTED = ("2.11", "2.14")  # the oldest and newest minor versions the README declares

# fact -> {minor version: its value there}
OBSERVED: dict[str, dict[str, bool]] = {
    # gloo's all_to_all and all_to_all_single (ProcessGroupGloo.alltoall_base): absent on 2.11
    "gloo_all_to_all": {"2.11": False, "2.13": True},
    # torch.distributed.all_gather_single / reduce_scatter_single, which all_gather_into_tensor's
    # deprecation warning names: absent on 2.11
    "all_gather_single": {"2.11": False, "2.13": True},
    # torch.nn.parallel.distributed._DEFAULT_BUCKET_CAP_MB (DDP's default bucket_cap_mb as a constant)
    "ddp_default_bucket_cap_name": {"2.11": False, "2.13": True},
}


def _probes():
    import torch.distributed as dist
    from torch.nn.parallel import distributed as ddp

    return {
        "gloo_all_to_all": lambda: hasattr(getattr(dist, "ProcessGroupGloo", object), "alltoall_base"),
        "all_gather_single": lambda: hasattr(dist, "all_gather_single") and hasattr(dist, "reduce_scatter_single"),
        "ddp_default_bucket_cap_name": lambda: hasattr(ddp, "_DEFAULT_BUCKET_CAP_MB"),
    }


def has(fact: str) -> bool:
    """The fact's value on the installed torch."""
    return bool(_probes()[fact]())


def minor(version: str | None = None) -> str:
    import torch

    return ".".join((version or torch.__version__).split("+")[0].split(".")[:2])


def expected(fact: str, version: str | None = None) -> bool | None:
    """What the table says for this torch (None: not observed on this minor version)."""
    return OBSERVED[fact].get(minor(version))


def ddp_default_bucket_cap_mb() -> float:
    """DDP's default bucket size in MiB, however this torch spells it (a constant, or the argument's default)."""
    from torch.nn.parallel import distributed as ddp

    if has("ddp_default_bucket_cap_name"):
        return ddp._DEFAULT_BUCKET_CAP_MB
    return inspect.signature(ddp.DistributedDataParallel.__init__).parameters["bucket_cap_mb"].default
