"""Tests judged against facts, not against the reference solution's results.

Most tests compare what the hand-in returned with what the reference returned (`judge.py`). A few
tasks have many right answers that no comparison can accept: a trace of `a + b` through PyTorch's
C++ (lab 14) may name each step in its own words, skip a hop the reference lists or add one it
does not. For those tests the judge checks the hand-in's returned data against what the installed
PyTorch contains (its exported symbols, the identifiers and source paths its libraries carry, the
dispatcher's table, the profiler's op names), with `labkit.cpp.verify_trace`. That check runs here,
in the trusted process, over plain data (the steps as strings): no learner code runs, and what the
learner's process said about its own trace counts for nothing.
"""

from __future__ import annotations

import re

# test label -> (the lab function whose returned steps are checked, the trace they must hold for)
VERIFIED = {
    "test_trace_add": ("trace_add", "add"),
    "hidden_trace_add": ("trace_add", "add"),
    "test_trace_matmul": ("trace_matmul", "matmul"),
    "hidden_trace_matmul": ("trace_matmul", "matmul"),
}


def judge(label: str, obs: list) -> tuple[bool, str, int]:
    """(passed, reason, observations checked) for a test in VERIFIED, from the hand-in's observations."""
    from labkit import cpp

    fn, trace = VERIFIED[label]
    outs = [g.get("out") for g in obs if isinstance(g, dict) and g.get("fn") == fn]
    if not outs:
        return False, f"the test did not call `{fn}` (or its call was not recorded)", 0
    for out in outs:
        steps = cpp.trace_steps_from_observation(out)
        if steps is None:
            return False, f"`{fn}()` did not return a list of (symbol, file, key[, note]) tuples of short " \
                          "strings (each at most 200 characters)", len(outs)
        problems = cpp.verify_trace(trace, steps)
        if problems:
            # the trusted side's words only: a hand-in's text is not echoed back
            first = re.sub(r"`[^`]*`", "(your text)", problems[0])
            more = f" (and {len(problems) - 1} more problem(s): run the visible test to see them all)" \
                if len(problems) > 1 else ""
            return False, f"checked against this PyTorch, the trace does not hold: {first}{more}", len(outs)
    return True, "", len(outs)
