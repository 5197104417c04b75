"""labkit's facts about PyTorch, checked against the installed torch (not against what a page once said)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from labkit import allocator

HEADER = Path(torch.__file__).parent / "include" / "c10" / "core" / "AllocatorConfig.h"


@pytest.mark.skipif(not HEADER.exists(), reason=f"{HEADER} is not in this torch wheel")
def test_the_allocator_simulator_uses_the_constants_the_wheel_ships():
    """The caching allocator's size classes live in c10/core/AllocatorConfig.h, which ships in the CPU
    wheel too: the simulator's constants must be the same numbers."""
    declared = {name: int(value) for name, value in
                re.findall(r"constexpr size_t (k\w+) = (\d+);", HEADER.read_text())}
    for name in ("kSmallBuffer", "kMinBlockSize", "kSmallSize", "kMinLargeAlloc", "kRoundLarge"):
        assert name in declared, f"{HEADER.name} no longer declares {name}: update labkit/allocator.py"
        assert getattr(allocator, name) == declared[name], \
            f"labkit.allocator.{name} = {getattr(allocator, name)}, but {HEADER.name} says {declared[name]}"
    # kLargeBuffer is not declared in the header (it is in c10/cuda/CUDACachingAllocator.cpp); the header
    # only names it for the 1 to 10 MiB range, which is what the simulator gives a 20 MiB segment.
    assert "kLargeBuffer" not in declared and "kLargeBuffer" in HEADER.read_text()
    assert allocator.kSmallSize < allocator.kMinLargeAlloc == 10 * allocator.MiB
