"""Run untrusted code (a student's notebook) in a bubblewrap sandbox with limits.

The sandbox sees: the system's /usr, the Python install and the venv (read-only),
the support package `labkit` (read-only, at /opt/course), and one private
writable folder holding only the hand-in and the lab's released files. It does
not see the course repository (`solutions/`, the gradebook, the autograder),
other hand-ins or the network.

Limits hold when the grader runs as root (as CI does): the code runs as an
unprivileged uid (RLIMIT_NPROC is not enforced for root), memory is capped by a
cgroup where the machine allows one (RLIMIT_AS would count torch's address-space
reservations, so it is not used; RLIMIT_DATA is the fallback), and CPU time,
processes, file size and open files by rlimits; a wall-clock timeout kills the
whole process group.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder import settings

INSTALL_HINT = ("bubblewrap is not installed: `apt-get install bubblewrap` (Debian/Ubuntu; the PyPI package of that "
                "name is unrelated), or pass --insecure to grade without a sandbox (never for real hand-ins)")
SANDBOX_UID = 61000  # + job slot: each parallel job counts its processes under its own uid
HANDIN = "/work/handin"  # the writable folder, as the sandbox sees it
COURSE = "/opt/course"  # labkit, read-only
FILES = "/opt/course/files"  # the lab's released data files, read-only; the runner copies them into HANDIN


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 6 << 30  # settings.SANDBOX_MEMORY_BYTES
    cpu_seconds: int = 900
    processes: int = 512  # threads count too: torch and a kernel start dozens
    file_bytes: int = 256 << 20
    open_files: int = 4096
    wall_seconds: float = 900.0
    output_bytes: int = 64 << 20  # what the runner may send back
    disk_bytes: int = 512 << 20  # each of the two tmpfs (the hand-in's folder, /tmp); counted in its memory too
    stderr_bytes: int = 20_000  # stderr kept (head and tail halves); the rest is counted, never held


@dataclass
class Result:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    killed: str = ""  # "", "timeout", "memory", "output", or "signal N"
    memory_peak: int = 0
    notes: list[str] = field(default_factory=list)


def available() -> bool:
    return shutil.which("bwrap") is not None


_STARTS: dict[str, str] = {}


def why_it_cannot_start() -> str:
    """"" when bubblewrap can make the namespaces a hand-in runs in here, else why not. Installed is not
    enough: a container whose seccomp profile or sysctl blocks user namespaces (Docker's default, some
    hosted graders) has `bwrap` on the PATH and every run in it fails."""
    if "answer" not in _STARTS:
        if not available():
            _STARTS["answer"] = "bubblewrap (bwrap) is not installed"
        else:
            try:
                probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                        "--unshare-all", "--die-with-parent", "true"],
                                       capture_output=True, text=True, timeout=30)
                _STARTS["answer"] = "" if probe.returncode == 0 else \
                    f"bubblewrap is installed but cannot start a sandbox here: {probe.stderr.strip()[:300]}"
            except (OSError, subprocess.TimeoutExpired) as e:
                _STARTS["answer"] = f"bubblewrap is installed but cannot start a sandbox here: {e}"
    return _STARTS["answer"]


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _python_roots() -> list[tuple[str, str]]:
    """(host folder, path inside) for the interpreter's install and the venv, both read-only. Each is bound at
    the path the grader uses AND at its real path: a venv reached through a symbolic link (VENV=a linked
    .venv) is started by its link's path, while its scripts and pyvenv.cfg name the real one."""
    seen = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(sys.executable))]
    binds = {}
    for p in seen:
        for q in (os.path.abspath(p), os.path.realpath(p)):
            if not q.startswith("/usr") and os.path.isdir(q):
                binds[q] = os.path.realpath(p)
    return sorted((src, dest) for dest, src in binds.items())


def command(argv: list[str], extra_ro: dict[str, str] | None = None, uid: int | None = None,
            disk_bytes: int = 512 << 20, files: Path | None = None, threads: int = 1,
            die_with_parent: bool = True) -> list[str]:
    """The bwrap command line that runs `argv`. Its only writable places are two size-limited tmpfs (the
    hand-in's folder and /tmp) that live and die with the sandbox: nothing it writes reaches the host."""
    binds: list[tuple[str, str]] = _python_roots()
    binds.append((str(settings.LABKIT), f"{COURSE}/labkit"))
    if files is not None and files.is_dir():
        binds.append((str(files), FILES))
    binds += list((extra_ro or {}).items())
    pch = settings.CPP_PCH  # labkit.cpp.build_prelude's headers, shared read-only by every build in any sandbox
    if (pch / "prelude.h.gch").exists():
        binds.append((str(pch), f"{COURSE}/cpp-pch"))
    cmd = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--new-session", "--ro-bind", "/usr", "/usr"] + (["--die-with-parent"] if die_with_parent else [])
    for name in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{name}") if os.path.islink(f"/{name}") else None
        if target:
            cmd += ["--symlink", target, f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            cmd += ["--ro-bind", f"/{name}", f"/{name}"]
    for etc in ("/etc/alternatives", "/etc/fonts", "/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(etc):
            cmd += ["--ro-bind", etc, etc]
    cmd += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", "/tmp"]  # first: later binds may lie under /tmp
    made = set()
    for _src, dest in binds + [("", HANDIN)]:
        for d in _ancestors(dest):
            if d not in made:
                cmd += ["--perms", "0755", "--dir", d]
                made.add(d)
    for src, dest in binds:
        cmd += ["--ro-bind", src, dest]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",  # multiprocessing locks
            "--perms", "0777", "--size", str(disk_bytes), "--tmpfs", HANDIN,
            "--chdir", HANDIN, "--clearenv"]
    env = {"HOME": HANDIN, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": COURSE,
           "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": "/tmp/mpl", "IPYTHONDIR": "/tmp/ipython",
           "JUPYTER_RUNTIME_DIR": "/tmp/jupyter", "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor",
           "TRITON_CACHE_DIR": "/tmp/triton", "JAX_PLATFORMS": "cpu", "TQDM_DISABLE": "1",
           "LANG": "C.UTF-8", "OMP_NUM_THREADS": str(threads), "COURSE_FILES": FILES if files else "",
           "COURSE_CPP_PCH": f"{COURSE}/cpp-pch" if (pch / "prelude.h.gch").exists() else ""}
    for k, v in env.items():
        cmd += ["--setenv", k, v]
    if uid is not None:  # root: bwrap mounts as root, then setpriv drops to an unprivileged uid for good
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "setpriv", f"--reuid={uid}",
                f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
    return cmd + argv


class _MemoryCgroup:
    """A child memory cgroup (v2 or v1) for one run, when this machine lets us create one."""

    def __init__(self, limit: int):
        self.path: Path | None = None
        self.v2 = False
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
            if Path("/sys/fs/cgroup/cgroup.controllers").exists():
                rel = next(ln.split(":", 2)[2] for ln in lines if ln.startswith("0::"))
                base, self.v2 = Path("/sys/fs/cgroup") / rel.lstrip("/"), True
            else:
                rel = next(ln.split(":", 2)[2] for ln in lines if ":memory:" in ln)
                base = Path("/sys/fs/cgroup/memory") / rel.lstrip("/")
            path = base / f"course-grader-{os.getpid()}-{time.monotonic_ns()}"
            path.mkdir()
            (path / ("memory.max" if self.v2 else "memory.limit_in_bytes")).write_text(str(limit))
            if not self.v2 and (path / "memory.memsw.limit_in_bytes").exists():
                try:
                    (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
                except OSError:
                    pass
            self.path = path
        except (OSError, StopIteration):
            self.path = None

    def join(self) -> None:  # called in the child before exec
        self.add(os.getpid())

    def add(self, pid: int) -> None:
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(pid))

    def ooms(self) -> int:
        if self.path is None:
            return 0
        try:
            if self.v2:
                events = dict(ln.split() for ln in (self.path / "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0))
            ctl = dict(ln.split() for ln in (self.path / "memory.oom_control").read_text().splitlines())
            return int(ctl.get("oom_kill", 0)) or int((self.path / "memory.failcnt").read_text())
        except (OSError, ValueError):
            return 0

    def peak(self) -> int:
        if self.path is None:
            return 0
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text())
        except (OSError, ValueError):
            return 0

    def remove(self) -> None:
        if self.path is not None:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def clean_up_stale() -> list[str]:
    """Remove what a grader that crashed left behind: memory cgroups of grader processes that no longer
    exist, and --insecure work folders. (A sandboxed run's writable space is tmpfs: it dies with the run.)"""
    removed = []
    cg = _MemoryCgroup.__new__(_MemoryCgroup)
    for base in _cgroup_bases():
        for path in base.glob("course-grader-*"):
            pid = path.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                cg.path = path
                cg.remove()
                removed.append(str(path))
    for path in Path(tempfile.gettempdir()).glob(f"{INSECURE_PREFIX}*"):
        owner = path.name.removeprefix(INSECURE_PREFIX).split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            remove_tree(path)
            removed.append(str(path))
    return removed


def _cgroup_bases() -> list[Path]:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    bases = []
    for ln in lines:
        parts = ln.split(":", 2)
        if len(parts) == 3 and parts[0] == "0":
            bases.append(Path("/sys/fs/cgroup") / parts[2].lstrip("/"))
        elif len(parts) == 3 and "memory" in parts[1].split(","):
            bases.append(Path("/sys/fs/cgroup/memory") / parts[2].lstrip("/"))
    return [b for b in bases if b.is_dir()]


INSECURE_PREFIX = "course-handin-"


def run(argv: list[str], limits: Limits = Limits(), slot: int = 0, extra_ro: dict[str, str] | None = None,
        stdin: bytes | None = None, cpus: set[int] | None = None, files: Path | None = None,
        threads: int = 1) -> Result:
    """Run `argv` in the sandbox; never raises for what the code inside does."""
    if not available():
        raise RuntimeError(INSTALL_HINT)
    uid = SANDBOX_UID + slot if os.geteuid() == 0 else None
    cg = _MemoryCgroup(limits.memory_bytes)

    def preexec():
        cg.join()
        _limit_this_process(limits, cpus)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        if cg.path is None:
            resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))

    cmd = command(argv, extra_ro, uid, limits.disk_bytes, files, threads)
    try:
        result = run_capped(cmd, stdin, limits.wall_seconds, preexec=preexec, output_bytes=limits.output_bytes,
                            stderr_bytes=limits.stderr_bytes)
    except BaseException:
        cg.remove()
        raise
    return _with_memory_verdict(result, cg)


def _limit_this_process(limits: Limits, cpus: set[int] | None) -> None:
    """The limits a sandbox's first process sets before exec (inherited by all it starts)."""
    if cpus:  # parallel jobs each get their own cores, so their torch threads do not fight
        os.sched_setaffinity(0, cpus)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _with_memory_verdict(result: Result, cg: _MemoryCgroup) -> Result:
    """The run's memory peak and whether the cgroup killed it; the cgroup is removed."""
    result.memory_peak, ooms = cg.peak(), cg.ooms()
    cg.remove()
    if ooms and (not result.killed or result.killed.startswith("signal")):  # the OOM killer's SIGKILL
        result.killed = "memory"
    if cg.path is None:
        result.notes.append("no memory cgroup on this machine: memory capped with RLIMIT_DATA")
    return result


def run_capped(cmd: list[str], stdin: bytes | None, timeout: float, *, env: dict | None = None,
               cwd: Path | None = None, preexec=None, output_bytes: int = 64 << 20,
               stderr_bytes: int = 20_000) -> Result:
    """Run `cmd` in its own process group and read its output with caps, so a run that prints gigabytes
    costs the grader at most `output_bytes` (stdout, the result channel: past it the run is killed) and
    `stderr_bytes` (stderr: its head and tail are kept, the rest only counted)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=preexec, start_new_session=True, env=env, cwd=cwd)
    out, err = _Head(output_bytes, proc), _HeadTail(stderr_bytes)
    readers = [threading.Thread(target=buf.drain, args=(pipe,), daemon=True)
               for buf, pipe in ((out, proc.stdout), (err, proc.stderr))]
    for r in readers:
        r.start()
    try:
        if stdin:
            proc.stdin.write(stdin)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # it exited before reading its job; the status says so
    killed = ""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = "timeout"
    _kill_group(proc)
    for r in readers:
        r.join(timeout=10)
    if out.overflow:
        killed = "output"
    result = Result(proc.returncode, b"" if out.overflow else out.data(), err.data(), time.perf_counter() - t0,
                    killed)
    if not killed and proc.returncode is not None and proc.returncode < 0:
        result.killed = f"signal {-proc.returncode}"
    return result


class WarmUnavailable(RuntimeError):
    pass


# Imported once by the warm parent (all trusted: the venv's packages and the course's labkit). torch imports
# torch._dynamo lazily, the first time a test enters a dispatch mode: a second of every hand-in's time. But
# torch._dynamo imports triton, which must come after a lab's TRITON_INTERPRET=1 (lab 7): see warm_modules.
WARM_MODULES = ("numpy", "torch", "torch._dynamo", "matplotlib", "matplotlib.pyplot",
                "IPython.core.inputtransformer2", "labkit", "labkit.testing")
LATE_IMPORTS = {"triton": ("torch._dynamo",)}  # a lab that uses the key imports these itself, after its set-up


def warm_modules(lab_source: str) -> tuple[str, ...]:
    """The modules a warm parent may import for a lab whose cells read `lab_source`: all of WARM_MODULES but
    those that would import, too early, a module the lab sets up itself (triton, after TRITON_INTERPRET)."""
    late = {m for key, mods in LATE_IMPORTS.items() if key in lab_source for m in mods}
    return tuple(m for m in WARM_MODULES if m not in late)


class WarmSandbox:
    """One sandbox that imports the heavy modules once and then runs hand-ins one at a time, each in a fresh
    child forked from it (`sandbox_runner.py --warm`): a hand-in pays neither interpreter start-up nor
    `import torch`. Each child gets new, empty writable mounts, its own IPC namespace, its own
    memory cgroup, stdin, result channel and stderr; every process a hand-in leaves is killed before the
    next hand-in starts. A sandbox whose last run timed out, overflowed its channel or lost its parent is
    thrown away, and the next run starts a new one. Use it as a context manager, one per parallel slot."""

    def __init__(self, runner: str, limits: Limits = Limits(), slot: int = 0,
                 extra_ro: dict[str, str] | None = None, cpus: set[int] | None = None,
                 files: Path | None = None, threads: int = 1, modules: tuple[str, ...] = WARM_MODULES):
        self.runner, self.limits, self.slot, self.extra_ro = runner, limits, slot, extra_ro
        self.cpus, self.files, self.threads, self.modules = cpus, files, threads, modules
        self.proc: subprocess.Popen | None = None
        self.sock = None
        self.starts = 0
        self.parent_dumpable = None
        self._starting: threading.Thread | None = None
        self._start_error: BaseException | None = None

    def start_soon(self) -> WarmSandbox:
        """Start the sandbox in the background (its imports overlap the grader's own set-up); the first
        `run` waits for it."""
        def start():
            try:
                self._start()
            except BaseException as e:  # noqa: BLE001 - reported by the first run
                self._start_error = e
        self._starting = threading.Thread(target=start, daemon=True)
        self._starting.start()
        return self

    def __enter__(self) -> WarmSandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._starting is not None and self._starting is not threading.current_thread():
            self._starting.join()
            self._starting = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            _kill_group(self.proc)
            self.proc = None

    def _start(self) -> None:
        import socket

        self.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        limits, uid = self.limits, SANDBOX_UID + self.slot if os.geteuid() == 0 else None

        def preexec():  # CPU time and the memory fallback are set per child (sandbox_runner.isolate)
            _limit_this_process(limits, self.cpus)

        argv = [sys.executable, self.runner, "--warm", ",".join(self.modules), str(theirs.fileno())]
        # Not --die-with-parent: that follows the thread that started it, and a pool thread may. The parent
        # watches the socket instead, and ends the sandbox when the grader goes (even killed).
        cmd = command(argv, self.extra_ro, uid, limits.disk_bytes, self.files, self.threads, die_with_parent=False)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=preexec, pass_fds=(theirs.fileno(),),
                                     start_new_session=True)
        theirs.close()
        self.sock = ours
        self.starts += 1
        ours.settimeout(120)
        warm = json.loads(ours.recv(1 << 16) or b"{}")  # raises on timeout: the caller's run fails cleanly
        self.parent_dumpable = warm.get("dumpable")  # 0: its memory and descriptors are closed to children
        if warm.get("event") != "warm" or not warm.get("isolation"):
            self.close()
            why = str(warm.get("why", "no answer"))[:300]
            raise WarmUnavailable("this machine cannot give a forked child private mounts (nested user "
                                  f"namespaces): each hand-in runs in a cold sandbox instead ({why})")

    def run(self, stdin: bytes) -> Result:
        """Run one job (the runner's stdin); never raises for what the code inside does."""
        import socket
        import struct

        t0 = time.perf_counter()
        if self._starting is not None:
            self._starting.join()
            self._starting = None
            if self._start_error is not None:
                error, self._start_error = self._start_error, None
                if isinstance(error, WarmUnavailable):
                    raise error
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        cg = _MemoryCgroup(self.limits.memory_bytes)
        pipes = [os.pipe() for _ in range(3)]  # stdin, the result channel, stderr
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        spec = {"disk": self.limits.disk_bytes, "cwd": HANDIN,
                "tmpfs": [[HANDIN, "0777"], ["/tmp", "1777"], ["/dev/shm", "1777"]],
                "cpu_seconds": self.limits.cpu_seconds, "memory": 0 if cg.path else self.limits.memory_bytes}
        killed, child_pid = "", 0
        try:
            try:
                socket.send_fds(self.sock, [json.dumps(spec).encode()], theirs)
            except OSError:  # the parent died between runs (not by a hand-in: it had ended): start another
                self._start()
                socket.send_fds(self.sock, [json.dumps(spec).encode()], theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        job_in = os.fdopen(pipes[0][1], "wb")
        out_r, err_r = os.fdopen(pipes[1][0], "rb"), os.fdopen(pipes[2][0], "rb")
        out, err = _Head(self.limits.output_bytes, self.proc), _HeadTail(self.limits.stderr_bytes)
        readers = [threading.Thread(target=buf.drain, args=(pipe,), daemon=True)
                   for buf, pipe in ((out, out_r), (err, err_r))]
        for r in readers:
            r.start()
        sock, status, free = self.sock, None, {}
        try:
            sock.settimeout(60)
            data, ancdata, _flags, _addr = sock.recvmsg(1 << 12, socket.CMSG_SPACE(12))
            for level, kind, value in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    child_pid = struct.unpack("3i", value[:12])[0]
            if json.loads(data or b"{}").get("event") != "ready" or not child_pid:
                raise RuntimeError("the warm sandbox did not fork")
            cg.add(child_pid)  # before it can read its job, so before any of the hand-in's code runs
            try:
                job_in.write(stdin)
                job_in.close()
            except (BrokenPipeError, OSError):
                pass
            sock.settimeout(max(1.0, self.limits.wall_seconds - (time.perf_counter() - t0)))
            free = json.loads(sock.recv(1 << 12) or b"{}")
        except TimeoutError:
            killed = "timeout"
        except (OSError, ValueError, RuntimeError):
            free = {}
        finally:
            if free.get("event") != "free" or not free.get("clean"):
                self.close()  # whatever is left in it goes with it; the next run starts a new sandbox
            for r in readers:
                r.join(timeout=10)
            for f in (job_in, out_r, err_r):
                try:
                    f.close()
                except OSError:
                    pass
            if out.overflow:
                self.close()
        if out.overflow:
            killed = "output"
        if free.get("event") == "free":
            status = int(free.get("status", 0))
        elif not killed:
            killed = "the warm sandbox's parent died"
        if not killed and status is not None and status < 0:
            killed = f"signal {-status}"
        result = Result(status if status is not None else -9, b"" if out.overflow else out.data(), err.data(),
                        time.perf_counter() - t0, killed)
        return _with_memory_verdict(result, cg)


def _kill_group(proc: subprocess.Popen) -> None:
    """Whatever the run left behind (its children, daemons) goes with it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


class _Head:
    """Keeps the first `limit` bytes; past that it kills the process (the result channel has a size cap)."""

    def __init__(self, limit: int, proc: subprocess.Popen):
        self.limit, self.proc, self.parts, self.size, self.overflow = limit, proc, [], 0, False

    def drain(self, pipe) -> None:
        while chunk := pipe.read(1 << 16):
            self.size += len(chunk)
            if self.size > self.limit:
                self.overflow = True
                self.parts = []
                _kill_group(self.proc)
                while pipe.read(1 << 16):
                    pass
                return
            self.parts.append(chunk)

    def data(self) -> bytes:
        return b"".join(self.parts)


class _HeadTail:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the rest."""

    def __init__(self, limit: int):
        self.half, self.head, self.tail, self.size = limit // 2, bytearray(), bytearray(), 0

    def drain(self, pipe) -> None:
        while chunk := pipe.read(1 << 16):
            self.size += len(chunk)
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def data(self) -> bytes:
        cut = self.size - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes of stderr not kept ...]\n".encode() if cut > 0 else b""
        return bytes(self.head) + middle + bytes(self.tail)


def remove_tree(path: Path) -> None:
    """Remove a folder whatever it holds (very deep trees make shutil.rmtree recurse past Python's limit)."""
    try:
        shutil.rmtree(path)
    except (OSError, RecursionError):
        subprocess.run(["rm", "-rf", "--", str(path)], check=False, capture_output=True)
