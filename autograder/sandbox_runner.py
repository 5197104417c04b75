"""Runs INSIDE the sandbox: execute one hand-in's cells and report a verdict per cell.

    python sandbox_runner.py < job.json

This is not a Jupyter kernel. It is a plain interpreter that runs cells one after
another in a fresh `__main__`, so there are no IPython hooks, input or AST
transformers, custom exception handlers or history for a hand-in to abuse. The
job comes on stdin (the notebook is never on disk, so the hidden tests cannot be
read back from a file) as JSON:

    {"nonce": str, "cell_timeout": int, "output_limit": int,
     "cells": [{"kind": "trusted" | "answer" | "test", "label": str, "source": str, "hidden": bool}]}

For every cell it writes one JSON line to the result channel (the original stdout,
duplicated before any hand-in code runs; fd 1 itself then points at stderr):

    {"nonce", "i", "outputs": [...nbformat outputs], "error": {...} | null, "flags": [...], "seconds"}

A test cell passes when it raises nothing AND nothing was flagged while it ran.
Flags come from two tripwires set before any hand-in code runs:
- an audit hook (PEP 578; it cannot be removed) that blocks and reports frame and
  garbage-collector introspection, ctypes, exec/compile, code and function
  construction, monkeypatching of classes that the hand-in did not define, new
  audit hooks, processes started by a shell, and reads of /proc, when the code
  that asked for it is the hand-in's (the first frame outside the standard library
  belongs to an answer cell);
- a fingerprint of every trusted module's attributes, `sys.modules`, builtins and
  the interpreter's hooks, taken after the trusted set-up cells and compared after
  every cell: a replaced `torch.allclose`, `labkit.testing.check_int` or `len`
  shows up as a changed entry.
The parent (outside the sandbox) checks the nonce, the cell count and the order,
and zeroes the whole hand-in when anything was flagged.

Standalone on purpose (imports nothing from the course): the sandbox sees this
one file, not the autograder package.
"""

import ast
import base64
import builtins
import io
import json
import os
import signal
import sys
import time
import traceback
import types

_STDLIB = tuple({os.path.dirname(p(os.__file__)) + os.sep for p in (os.path.abspath, os.path.realpath)})
# Modules whose attributes a hand-in has no business replacing.
_WATCHED = ("builtins", "sys", "os", "math", "operator", "functools", "itertools", "collections", "inspect",
            "types", "warnings", "contextlib", "traceback", "copy", "random", "json", "io", "re", "unittest",
            "numpy", "torch", "labkit", "triton", "jax", "jaxlib", "nbgrader")
# Events that only the code calling them directly is blamed for (the standard
# library calls exec and compile for dataclasses and namedtuples).
_DIRECT = {
    "exec": "runs code built at run time (exec/eval)",
    "compile": "compiles code at run time",
    "code.__new__": "builds a code object",
    "function.__new__": "builds a function from a code object",
    "marshal.loads": "loads marshalled code",
}
# Events blamed on the first frame outside the standard library that asked for them.
_BLOCKED = {
    "sys._getframe": "reads the interpreter's frames",
    "sys._current_frames": "reads the interpreter's frames",
    "object.__getattr__": "reads frame, code or traceback internals",
    "gc.get_objects": "searches the garbage collector's objects",
    "gc.get_referrers": "searches the garbage collector's objects",
    "gc.get_referents": "searches the garbage collector's objects",
    "sys.addaudithook": "installs an audit hook",
    "sys.settrace": "installs a trace function",
    "sys.setprofile": "installs a profile function",
    "os.system": "runs a shell command",
    "os.posix_spawn": "starts a process",
    "subprocess.Popen": "starts a process",
    "pty.spawn": "starts a process",
}
# Classes whose methods the tests rely on; the hand-in's own classes are free.
_WATCHED_CLASSES = ("torch.Tensor", "torch.nn.Parameter", "torch.nn.Module", "torch.autograd.Function",
                    "torch.fx.GraphModule", "torch.fx.Graph", "torch.fx.Node", "torch.utils.data.DataLoader",
                    "torch.testing._comparison.TensorLikePair")
# Code from these folders is trusted (the venv's packages, labkit, this runner); code
# from anywhere else (the hand-in's folder, /tmp) is the hand-in's.
# (sys.path as the runner starts: the hand-in's folder is only added later, in main(). The venv may
# well live under /tmp, as in a CI checkout.)
_TRUSTED_ROOTS = tuple(sorted({q + os.sep for p in sys.path[1:] if p and os.path.isdir(p)
                               for q in (os.path.abspath(p), os.path.realpath(p))
                               if not q.startswith("/work/handin")}
                              | {os.path.dirname(os.path.abspath(__file__)) + os.sep}))


class CellTimeout(BaseException):
    pass


class _Capture(io.TextIOBase):
    """A cell's stdout or stderr, capped so a flood of output cannot fill memory."""

    def __init__(self, name, limit):
        self.name, self.limit, self.parts, self.size, self.cut = name, limit, [], 0, False

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        if self.size < self.limit:
            self.parts.append(s[: self.limit - self.size])
        else:
            self.cut = True
        self.size += len(s)
        return len(s)

    def text(self):
        out = "".join(self.parts)
        if self.cut or self.size > self.limit:
            out += f"\n[... output cut by the grader: {self.size} characters in all]\n"
        return out


class Runner:
    def __init__(self, job, channel):
        self.job, self.channel = job, channel
        self.nonce = job["nonce"]
        self.cells = job["cells"]
        self.untrusted = set()  # code filenames of the hand-in's cells
        self.trusted = set()  # code filenames of the set-up and test cells
        self.flags = []
        self.in_hook = False
        self.snapshot = None
        self.protected = {}
        self.main = types.ModuleType("__main__")
        self.main.__dict__["__builtins__"] = builtins

    # ---- the tripwires ----
    def _origin(self, event, direct):
        """The hand-in file or cell that triggered the current event, or None when it is trusted code."""
        frame = sys._getframe(2)
        via_import = False
        while frame is not None:
            name = frame.f_code.co_filename
            if name in self.untrusted:
                return name
            if direct or name in self.trusted:
                return None
            if name.startswith("<frozen importlib"):
                via_import = True  # the import system opening and running modules
            if (name.startswith(_STDLIB) and "-packages/" not in name) or name.startswith("<"):
                frame = frame.f_back  # the standard library or generated code acting for its caller
                continue
            if name.startswith(_TRUSTED_ROOTS):
                return None  # the first frame outside the standard library is the venv, labkit or this runner
            return None if via_import else name  # a module the hand-in wrote to disk
        return None

    def audit(self, event, args):
        if self.in_hook:
            return
        direct = event in _DIRECT
        reason = _DIRECT.get(event) or _BLOCKED.get(event)
        if reason is None:
            if event.startswith("ctypes."):
                reason = "uses ctypes"
            elif event.startswith(("os.exec", "os.spawn")):
                reason = "starts a process"
            elif event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes)) \
                    and os.fsdecode(args[0]).startswith(("/proc", "/dev/mem")):
                reason = f"reads {os.fsdecode(args[0])}"
            else:
                return
        self.in_hook = True
        try:
            origin = self._origin(event, direct)
        finally:
            self.in_hook = False
        if origin is None:
            return
        self.flags.append(f"{origin}: {reason} ({event})")
        if os.environ.get("RUNNER_DEBUG"):
            self.in_hook = True
            traceback.print_stack(file=sys.__stderr__)
            print(event, args, file=sys.__stderr__)
            self.in_hook = False
        raise RuntimeError(f"blocked by the grader: {reason}")

    def fingerprint(self):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated module attributes warn when looked at
            return self._fingerprint()

    def _fingerprint(self):
        watched = {}
        for name, mod in list(sys.modules.items()):
            if mod is None or name.split(".", 1)[0] not in _WATCHED:
                continue
            try:
                attrs = dict(vars(mod))
            except TypeError:
                continue
            watched[name] = (mod, {k: v for k, v in attrs.items()
                                   if callable(v) or isinstance(v, types.ModuleType)})
        for dotted in _WATCHED_CLASSES:
            modname, _, attr = dotted.rpartition(".")
            obj = getattr(sys.modules.get(modname), attr, None) if modname in sys.modules else None
            if obj is None and dotted in sys.modules:
                obj = sys.modules[dotted]
            if isinstance(obj, type):
                watched[f"class {dotted}"] = (obj, dict(vars(obj)))
        hooks = {"sys.excepthook": sys.excepthook, "sys.displayhook": sys.displayhook,
                 "sys.gettrace()": sys.gettrace(), "sys.getprofile()": sys.getprofile(),
                 "sys.modules": sys.modules, "__main__.__builtins__": self.main.__dict__.get("__builtins__")}
        for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):
            hooks[f"signal {sig.name}"] = signal.getsignal(sig)
        return watched, hooks

    def changes(self):
        watched, hooks = self.snapshot
        found = []
        for key, value in hooks.items():
            now = self.fingerprint_hook(key)
            if now is not value:
                found.append(f"{key} was replaced")
        for name, (mod, attrs) in watched.items():
            if name.startswith("class "):
                current = vars(mod)
                for k, v in attrs.items():
                    if current.get(k, _MISSING) is not v:
                        found.append(f"{name[6:]}.{k} was replaced or removed")
                found += [f"{name[6:]}.{k} was added" for k in current.keys() - attrs.keys() if k not in _CACHES]
                continue
            if sys.modules.get(name) is not mod:
                found.append(f"sys.modules[{name!r}] was replaced or removed")
                continue
            current = vars(mod)
            for k, v in attrs.items():
                now = current.get(k, _MISSING)
                if now is not v:
                    if _wraps(now, v):  # torch wraps some functions in place when a lazy module loads
                        attrs[k] = now
                        continue
                    found.append(f"{name}.{k} was replaced or removed")
                    if len(found) > 20:
                        return found
        return found

    def fingerprint_hook(self, key):
        return {"sys.excepthook": lambda: sys.excepthook, "sys.displayhook": lambda: sys.displayhook,
                "sys.gettrace()": sys.gettrace, "sys.getprofile()": sys.getprofile,
                "sys.modules": lambda: sys.modules,
                "__main__.__builtins__": lambda: self.main.__dict__.get("__builtins__"),
                "signal SIGALRM": lambda: signal.getsignal(signal.SIGALRM),
                "signal SIGTERM": lambda: signal.getsignal(signal.SIGTERM),
                "signal SIGINT": lambda: signal.getsignal(signal.SIGINT)}[key]()

    # ---- running cells ----
    def send(self, record):
        record["nonce"] = self.nonce
        self.channel.write(json.dumps(record) + "\n")
        self.channel.flush()

    def run(self):
        limit = int(self.job.get("output_limit", 200_000))
        timeout = int(self.job.get("cell_timeout", 120))
        sys.modules["__main__"] = self.main
        sys.addaudithook(self.audit)
        self.send({"event": "start", "cells": len(self.cells)})
        first_untrusted = next((i for i, c in enumerate(self.cells) if c["kind"] == "answer"), len(self.cells))
        for i, cell in enumerate(self.cells):
            if i <= first_untrusted:  # names the set-up cells define: answers may not rebind them
                self.protected = {k: v for k, v in self.main.__dict__.items() if not k.startswith("__")}
            if i == first_untrusted:
                if "torch" in sys.modules:  # loading dynamo patches torch in place: do it before the snapshot
                    import torch._dynamo.mutation_guard as guard
                    guard.install_generation_tagging_init()  # torch.compile patches nn.Module once
                self.snapshot = self.fingerprint()
            record = self.run_cell(i, cell, limit, timeout)
            self.send(record)
            if record.get("stop"):
                break
        self.send({"event": "end"})

    def run_cell(self, i, cell, limit, timeout):
        filename = f"<cell {i}: {cell['label']}>"
        (self.untrusted if cell["kind"] == "answer" else self.trusted).add(filename)
        if not cell.get("hidden"):
            import linecache  # tracebacks and inspect.getsource see visible cells' lines; hidden ones never
            linecache.cache[filename] = (len(cell["source"]), None, cell["source"].splitlines(True), filename)
        out, err = _Capture("stdout", limit), _Capture("stderr", limit)
        flags_before = len(self.flags)
        outputs, error, stop = [], None, False
        t0 = time.perf_counter()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result = self.execute(cell["source"], filename)
            if result is not None:
                outputs.append({"output_type": "execute_result", "metadata": {}, "execution_count": i + 1,
                                "data": {"text/plain": _safe_repr(result)}})
        except CellTimeout:
            error, stop = {"ename": "CellTimeout", "evalue": f"the cell ran past {timeout} s", "traceback": []}, True
        except BaseException as e:  # noqa: BLE001 - SystemExit and KeyboardInterrupt fail the cell too
            error = self.describe(e)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = old
        seconds = time.perf_counter() - t0
        if error is None and seconds > timeout + 1:
            error, stop = {"ename": "CellTimeout", "evalue": f"the cell ran past {timeout} s", "traceback": []}, True
        outputs = self.figures() + outputs
        for stream in (out, err):
            if stream.size:
                outputs.insert(0 if stream is out else len(outputs), {"output_type": "stream", "name": stream.name,
                                                                      "text": stream.text()})
        flags = self.flags[flags_before:]
        if self.snapshot is not None:
            flags += [f"{filename}: {c}" for c in self.changes()]
            ns = self.main.__dict__
            for k, v in list(self.protected.items()):
                now = ns.get(k, _MISSING)
                if now is v or (type(now) is type(v) and isinstance(v, (str, int, float, bool, bytes)) and now == v):
                    continue
                if cell["kind"] == "answer":
                    flags.append(f"{filename}: rebinds {k!r}, which the set-up cells defined")
                else:
                    self.protected[k] = now  # the instructor's cells may change their own names
        if error is not None:
            outputs.append({"output_type": "error", **error})
        return {"i": i, "outputs": outputs, "error": error, "flags": flags, "seconds": round(seconds, 3),
                "stop": stop}

    def execute(self, source, filename):
        tree = ast.parse(_transform(source), filename=filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        code = compile(tree, filename, "exec", dont_inherit=True)
        exec(code, self.main.__dict__)  # noqa: S102 - running the notebook is the point
        if last is not None:
            return eval(compile(last, filename, "eval", dont_inherit=True), self.main.__dict__)  # noqa: S307
        return None

    def describe(self, e):
        try:
            evalue = str(e)
        except BaseException:  # noqa: BLE001 - a hand-in's exception whose __str__ fails
            evalue = "<unprintable>"
        try:
            tb = traceback.format_exception(type(e), e, e.__traceback__)
        except BaseException:  # noqa: BLE001
            tb = []
        return {"ename": type(e).__name__, "evalue": evalue[:5000], "traceback": [line[:5000] for line in tb[-30:]]}

    @staticmethod
    def figures():
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return []
        outputs = []
        try:
            for num in plt.get_fignums():
                buf = io.BytesIO()
                plt.figure(num).savefig(buf, format="png", dpi=72, bbox_inches="tight")
                outputs.append({"output_type": "display_data", "metadata": {},
                                "data": {"image/png": base64.b64encode(buf.getvalue()).decode("ascii"),
                                         "text/plain": f"<Figure {num}>"}})
            plt.close("all")
        except Exception:  # noqa: BLE001 - a broken figure must not stop the run
            pass
        return outputs


_MISSING = object()
_CACHES = {"__slotnames__"}  # copyreg caches this on a class the first time one of its objects is pickled


def _wraps(new, old):
    """Is `new` a trusted library's wrapper around `old` (functools.wraps keeps the original)?"""
    try:
        inner = new.__dict__.get("__wrapped__")
        code = new.__code__.co_filename
    except (AttributeError, TypeError):
        return False
    return inner is old and code.startswith(_TRUSTED_ROOTS)


def _safe_repr(value):
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001
        text = "<unprintable value>"
    return text[:20000]


def _transform(source):
    """IPython syntax (`%time ...`, `!ls`) becomes calls on a minimal stand-in shell."""
    if "%" not in source and "!" not in source:
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - leave it to the parser to report
        return source


class _Shell:
    """What `get_ipython()` returns here: line and cell magics that only run their code."""

    def __init__(self, namespace):
        self.ns = namespace

    def run_line_magic(self, name, line, _stack_depth=1):
        if name in ("time", "timeit", "prun") and line.strip():
            code = line.split(None, 0)[0]
            if name == "timeit":
                code = " ".join(w for w in code.split() if not w.startswith("-") and not w.isdigit())
            return eval(compile(code, "<magic>", "eval"), self.ns)  # noqa: S307
        print(f"%{name}: not available in the grader (ignored)")
        return None

    def run_cell_magic(self, name, line, cell):
        if name in ("time", "timeit", "capture"):
            exec(compile(cell, "<magic>", "exec"), self.ns)  # noqa: S102
            return None
        print(f"%%{name}: not available in the grader (ignored)")
        return None

    def system(self, cmd):
        print(f"!{cmd}: shell commands do not run in the grader")

    getoutput = system


def main():
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    fd = channel.fileno()
    os.register_at_fork(after_in_child=lambda: _close(fd))  # forked workers cannot write to the channel
    os.dup2(2, 1)  # C-level writes to fd 1 (and prints to sys.__stdout__) go to stderr, not the channel
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.path.insert(0, os.getcwd())  # as in Jupyter, files beside the notebook import (they stay untrusted)
    signal.signal(signal.SIGALRM, _alarm)
    runner = Runner(job, channel)
    runner.main.__dict__["get_ipython"] = lambda: _Shell(runner.main.__dict__)
    runner.run()
    channel.close()
    return 0


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _alarm(signum, frame):
    raise CellTimeout()


if __name__ == "__main__":
    sys.exit(main())
