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

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder import settings

INSTALL_HINT = ("bubblewrap is not installed: `apt-get install bubblewrap` (Debian/Ubuntu; the PyPI package of that "
                "name is unrelated), or pass --insecure to grade without a sandbox (never for real hand-ins)")
SANDBOX_UID = 61000  # + job slot: each parallel job counts its processes under its own uid
HANDIN = "/work/handin"  # the writable folder, as the sandbox sees it
COURSE = "/opt/course"  # labkit, read-only


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 4 << 30
    cpu_seconds: int = 900
    processes: int = 512  # threads count too: torch and a kernel start dozens
    file_bytes: int = 256 << 20
    open_files: int = 4096
    wall_seconds: float = 900.0
    output_bytes: int = 64 << 20  # what the runner may send back


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


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _python_roots() -> list[Path]:
    """The interpreter's install and the venv: both must be visible (read-only)."""
    roots = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
             Path(os.path.realpath(sys.executable)).parent.parent}
    return sorted(r for r in roots if not str(r).startswith("/usr"))


def command(argv: list[str], workdir: Path, extra_ro: dict[str, str] | None = None,
            uid: int | None = None) -> list[str]:
    """The bwrap command line that runs `argv` with `workdir` as the only writable folder."""
    binds: list[tuple[str, str]] = [(str(r), str(r)) for r in _python_roots()]
    binds.append((str(settings.LABKIT), f"{COURSE}/labkit"))
    binds += list((extra_ro or {}).items())
    cmd = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{name}") if os.path.islink(f"/{name}") else None
        if target:
            cmd += ["--symlink", target, f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            cmd += ["--ro-bind", f"/{name}", f"/{name}"]
    for etc in ("/etc/alternatives", "/etc/fonts", "/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(etc):
            cmd += ["--ro-bind", etc, etc]
    cmd += ["--perms", "1777", "--tmpfs", "/tmp"]  # first: later binds may lie under /tmp
    made = set()
    for _src, dest in binds + [(str(workdir), HANDIN)]:
        for d in _ancestors(dest):
            if d not in made:
                cmd += ["--perms", "0755", "--dir", d]
                made.add(d)
    for src, dest in binds:
        cmd += ["--ro-bind", src, dest]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",  # multiprocessing locks
            "--bind", str(workdir), HANDIN,
            "--chdir", HANDIN, "--clearenv"]
    env = {"HOME": HANDIN, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": COURSE,
           "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": "/tmp/mpl", "IPYTHONDIR": "/tmp/ipython",
           "JUPYTER_RUNTIME_DIR": "/tmp/jupyter", "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor",
           "TRITON_CACHE_DIR": "/tmp/triton", "JAX_PLATFORMS": "cpu", "TQDM_DISABLE": "1",
           "LANG": "C.UTF-8", "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
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
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

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


def run(argv: list[str], workdir: Path, limits: Limits = Limits(), slot: int = 0,
        extra_ro: dict[str, str] | None = None, stdin: bytes | None = None, cpus: set[int] | None = None) -> Result:
    """Run `argv` in the sandbox; never raises for what the code inside does."""
    if not available():
        raise RuntimeError(INSTALL_HINT)
    workdir.chmod(0o777)
    uid = SANDBOX_UID + slot if os.geteuid() == 0 else None
    if uid is not None:
        for p in workdir.rglob("*"):
            p.chmod(0o777 if p.is_dir() else 0o666)
    cg = _MemoryCgroup(limits.memory_bytes)

    def preexec():
        cg.join()
        if cpus:  # parallel jobs each get their own cores, so their torch threads do not fight
            os.sched_setaffinity(0, cpus)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if cg.path is None:
            resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))

    t0 = time.perf_counter()
    proc = subprocess.Popen(command(argv, workdir, extra_ro, uid), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec,
                            start_new_session=True)
    killed = ""
    try:
        out, err = proc.communicate(stdin, timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        killed = "timeout"
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    result = Result(proc.returncode, out, err[-20000:], seconds, killed, cg.peak())
    if not killed and cg.ooms():
        result.killed = "memory"
    elif not killed and proc.returncode < 0:
        result.killed = f"signal {-proc.returncode}"
    if len(out) > limits.output_bytes:
        result.killed, result.stdout = "output", b""
    if cg.path is None:
        result.notes.append("no memory cgroup on this machine: memory capped with RLIMIT_DATA")
    cg.remove()
    return result
