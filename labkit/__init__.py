"""Small helpers shared by the course notebooks and labs.

This package ships to learners and is importable (read-only) while grading.
It holds no answers: only device picking, test-message helpers and plots.
"""

from labkit.device import resolve_device, skip_unless_cuda

__all__ = ["resolve_device", "skip_unless_cuda"]
