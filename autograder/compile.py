"""Stage "compile": the compiler's own words, for a hand-in whose C++ did not build.

Lab 14's `load_rowdot` is C++ the hand-in's run compiles (`labkit.cpp.build_extension`). When it does
not compile, its tests fail, and feedback would say no more: the compiler's message is printed in the
learner's process, and feedback never quotes that process (THREATS.md: it could carry anything out,
hidden inputs included). So this stage, run by the trusted parent after the judge, takes the C++ as the
hand-in wrote it (the string literals of the answer cell that hold `TORCH_LIBRARY`, read with `ast`:
nothing of the hand-in runs), compiles that text alone in a fresh sandbox (no test and no input of any
test is there), and, when it does not compile, puts the compiler's message into the failed tests'
reasons, where the feedback shows it.

An answer cell opts in with its metadata, read from the instructor's source, never from a hand-in:
`{"grader": {"compiles": ["test_load_rowdot", "hidden_load_rowdot"]}}`.
"""

from __future__ import annotations

import ast
import json
import sys

from autograder import notebooks as nbs

MAX_MESSAGE = 3000  # characters of the compiler's message kept in a reason
_SCRIPT = r"""
import json, sys
from labkit.cpp import CompileError, build_extension
try:
    build_extension("handin", sys.stdin.read(), timeout=float(sys.argv[1]))
    print(json.dumps({"ok": True}))
except CompileError as e:
    print(json.dumps({"ok": False, "message": str(e)}))
"""
TIMEOUT_S = 150


def prepare_headers() -> None:
    """Precompile the headers every hand-in's build includes (labkit.cpp.PRELUDE) into settings.CPP_PCH,
    once per torch version: the sandboxes mount it read-only, and each build skips ~10 s of parsing them.
    A failure only costs time: the builds then read the headers from source."""
    from autograder import settings

    try:
        from labkit.cpp import build_prelude

        build_prelude(settings.CPP_PCH)
        # Read the headers once here, so their page cache is charged to this trusted process, not to the memory
        # cgroup of the first sandboxed build that maps them (hundreds of MB of one hand-in's limit).
        for path in settings.CPP_PCH.rglob("*"):
            if path.is_file():
                with path.open("rb") as f:
                    while f.read(1 << 24):
                        pass
    except Exception as e:  # noqa: BLE001 - an optimisation
        print(f"note: precompiled headers not built ({type(e).__name__}); C++ builds read them from source",
              file=sys.stderr)


def compiled_cells(source) -> dict[str, list[str]]:
    """{answer grade_id: [the tests its C++ decides]} from the instructor's source."""
    out = {}
    for cell in source.cells:
        meta = cell.get("metadata", {}).get("grader", {})
        if nbs.is_solution(cell) and isinstance(meta, dict) and isinstance(meta.get("compiles"), list):
            out[nbs.grade_id(cell)] = [str(t) for t in meta["compiles"]]
    return out


def cpp_sources(cell_source: str) -> list[str]:
    """The C++ in an answer cell: its string literals that register operators (read, never run)."""
    try:
        tree = nbs.parse_python(cell_source)
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and "TORCH_LIBRARY" in n.value]


def compiler_message(cpp: str, slot: int = 0, sandboxed: bool = True) -> str:
    """"" when `cpp` compiles, else the compiler's message (compiled alone, in a fresh sandbox)."""
    import subprocess

    from autograder import sandbox, settings

    argv = [sys.executable, "-c", _SCRIPT, str(TIMEOUT_S - 10)]
    if sandboxed:
        limits = sandbox.Limits(wall_seconds=TIMEOUT_S, cpu_seconds=TIMEOUT_S * 2)
        result = sandbox.run(argv, limits=limits, slot=slot, stdin=cpp.encode())
        out = result.stdout.decode("utf-8", "replace")
    else:  # tests without bubblewrap
        out = subprocess.run(argv, input=cpp, capture_output=True, text=True, timeout=TIMEOUT_S,
                             cwd=str(settings.ROOT), env=None).stdout
    for line in reversed(out.splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict):
            return "" if answer.get("ok") else str(answer.get("message", ""))[:MAX_MESSAGE]
    return "the C++ could not be compiled on its own (the compile stage reported nothing)"


def explain(source, handin, run, slot: int = 0, sandboxed: bool = True) -> None:
    """For each C++ answer whose tests failed, compile the hand-in's C++ alone; if it does not compile, the
    failed tests' reasons become the compiler's message."""
    for gid, tests in compiled_cells(source).items():
        failed = [t for t in tests if t in run.verdicts and not run.verdicts[t].get("passed")]
        if not failed:
            continue
        cell = next((c for c in handin.cells if nbs.is_solution(c) and nbs.grade_id(c) == gid), None)
        sources = cpp_sources(cell.source) if cell is not None else []
        if not sources:
            continue
        try:
            message = next((m for m in (compiler_message(s, slot, sandboxed) for s in sources) if m), "")
        except Exception as e:  # noqa: BLE001 - an explanation that fails must not fail the hand-in
            message = ""
            run.notes.append(f"compile stage: {type(e).__name__}")
        if message:
            for t in failed:
                run.verdicts[t]["reason"] = f"your C++ for `{gid}` does not compile. {message}"
