"""Week 14 (the C++ side): facts read from the installed PyTorch, traces checked against them, C++ builds.

Three tools for `lab14-cpp` and its walkthrough:

- **Traces.** A trace is the path of one Python expression down to the machine code that does the work, one
  step per line: `symbol | file | dispatch key | what happens` (the last column is yours, in your own words).
  `read_trace(text)` reads a TRACE.md table into steps; `verify_trace(name, steps)` checks every step against
  what this installed PyTorch actually contains, and returns the problems it found (none: the trace holds):
  * a **symbol** exists: a Python name that resolves (`torch.Tensor.__add__`), a function the shared libraries
    export (`nm -D`, demangled: `at::_ops::add_Tensor::call`), or an identifier the libraries carry
    (`wrapper_CPU_add_Tensor`, an internal function whose name survives in the binary);
  * a **file** is one the build compiled or ships: paths recorded in the libraries (`aten/src/ATen/native/...`,
    the generated `build/aten/src/ATen/RegisterCPU_0.cpp`), the packaged headers and YAML, torch's Python files.
    Generated files are split in numbered shards (`VariableType_8.cpp`): `VariableType.cpp` names them all;
  * the symbol is **found in the file** the step names: a shipped header or Python file that spells or defines it,
    the generated file torchgen writes it into (`wrapper_CPU_*` into RegisterCPU.cpp, `at::_ops::*` into
    Operators.cpp, Tensor's method bindings into python_variable_methods.cpp), or a hand-written source that is
    not where the generator puts it (`symbol_files_match`);
  * a **dispatch key** is a runtime key, exactly as `torch._C._dispatch_dump_table` prints it (an alias key such
    as `Autograd` is not one), at which the dispatcher holds a kernel for one of the operators the profiler records
    for the expression, and the step's file is the file that registered that kernel.
    Steps outside the dispatcher (Python, the entry point, what a kernel calls) have the key `-`;
  * the steps come in the order the call goes, through the waypoints every correct trace passes (`TRACES`); for
    bfloat16 matmul the last one follows what this machine does (`bf16_matmul_uses_onednn`).
- **Schemas.** `schema_record(text)` is the record `parse_schema` must return, computed with torchgen's parser
  (tests only: the lab forbids it in answers).
- **Builds.** `build_extension(name, source)` compiles C++ with `torch.utils.cpp_extension.load_inline` in a
  child process with a time limit, so a compile error comes back as `CompileError` carrying the compiler's own
  message, and a compiler that never finishes is stopped. Builds are cached by source (a re-run is instant).

The facts take a few seconds to read the first time (`nm`, `strings` over ~450 MB of libraries) and are cached
in the process. The grader runs the same `verify_trace` in its trusted process, over the steps your hand-in
returned, so a trace is judged by the facts, never by the reference solution's wording.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

NO_KEY = "-"
_SOURCE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp", ".cuh", ".cu", ".py", ".yaml", ".pyi")
MAX_STEPS = 20
MAX_FIELD = 200  # characters per field (the grader reads up to 256)
BUILD_TIMEOUT_S = 100  # one C++ build; stopped past it (before the grader's 120 s cell limit, so its message shows)
_BUILD_PREFIXES = ("/__w/pytorch/pytorch/", "/pytorch/", "pytorch/")
_SHARD = re.compile(r"_\d+(?=\.(?:cpp|h)$)")  # VariableType_8.cpp -> VariableType.cpp
_PATH = re.compile(rb"/__w/pytorch/pytorch/([A-Za-z0-9_./+-]+\.(?:cpp|cc|c|h|hpp|cuh|cu|yaml|py))")


@dataclass(frozen=True)
class Waypoint:
    """A step every correct trace of an expression passes, in this order: `what` says it in words."""

    what: str
    key: str = ""  # the step's dispatch key is exactly one of these ('|'-separated)
    symbol: str = ""  # a regex the step's symbol matches
    python: bool = False  # a step in the Python layer: a torch.* name or a function of libtorch_python
    file: str = ""  # a regex the step's file (normalised) matches
    onednn: bool | None = None  # only where bfloat16 matmul goes to oneDNN on this machine (True) or not (False)


@dataclass(frozen=True)
class Trace:
    expression: str
    ops: tuple[str, ...]  # the operators the profiler records, as dispatcher names with overloads
    waypoints: tuple[Waypoint, ...]


# PyTorch's own loops behind gemm_stub (aten/src/ATen/native/cpu/BlasKernel.cpp), which bfloat16 takes when
# oneDNN declines it
_GEMM_STUB = r"gemm_stub|cpublas_gemm_impl|gemm_core_|gemm_notrans_|gemm_transa_|gemm_transb_|gemm_transab_"
_BINDINGS = r"python_variable_methods\.cpp$"  # the generated methods of Tensor (template: python_variable_methods.cpp)

TRACES = {
    "add": Trace(
        "a + b, two float32 CPU tensors of 1000 elements",
        ("aten::add.Tensor",),
        (Waypoint("the Python binding of Tensor.__add__ (THPVariable_add in python_variable_methods.cpp)",
                  python=True, symbol=r"__add__$|(^|[.:])(THPVariable_)?add$", file=_BINDINGS),
         Waypoint("the dispatcher's entry point for add.Tensor", symbol=r"(^|::)_ops::add_Tensor::call$"),
         Waypoint("the autograd kernel", key="AutogradCPU"),
         Waypoint("the CPU kernel the dispatcher picks", key="CPU"),
         Waypoint("the vectorized loop that adds the elements",
                  symbol=r"cpu_kernel_vec|vectorized_loop|Vectorized|(^|::)add_kernel$|ufunc::add$")),
    ),
    "matmul": Trace(
        "a @ b, two 64x64 bfloat16 CPU tensors",
        ("aten::matmul", "aten::mm"),
        (Waypoint("the Python binding of Tensor.__matmul__ (THPVariable_matmul in python_variable_methods.cpp)",
                  python=True, symbol=r"__matmul__$|(^|[.:])(THPVariable_)?matmul$", file=_BINDINGS),
         Waypoint("the dispatcher's entry point for matmul", symbol=r"(^|::)_ops::matmul::call$"),
         Waypoint("matmul's kernel: a composite that calls other operators, run at the first key of a CPU tensor",
                  key="AutogradCPU"),
         Waypoint("the dispatcher's entry point for mm", symbol=r"(^|::)_ops::mm::call$"),
         Waypoint("mm's CPU kernel", key="CPU"),
         Waypoint("the oneDNN call that multiplies bfloat16 on this CPU (torch.ops.mkldnn._is_mkldnn_bf16_supported() "
                  "is True here)", symbol=r"dnnl|mkldnn|onednn|ideep|brgemm", onednn=True),
         Waypoint("PyTorch's own gemm_stub loop, which multiplies bfloat16 on this CPU (oneDNN declines it: "
                  "torch.ops.mkldnn._is_mkldnn_bf16_supported() is False here)", symbol=_GEMM_STUB, onednn=False)),
    ),
}


def bf16_matmul_uses_onednn() -> bool:
    """Whether a 64x64 bfloat16 matmul on this machine is done by oneDNN: PyTorch's own test
    (use_mkldnn_bf16_matmul in aten/src/ATen/native/mkldnn/Matmul.cpp: mkldnn enabled by the user and
    mkldnn_bf16_device_check(), which torch.ops.mkldnn._is_mkldnn_bf16_supported() returns; 64^3 is past its
    16^3 size floor). Where it is False, cpublas::gemm falls through to gemm_stub (CPUBlas.cpp)."""
    import torch

    try:
        return bool(torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
                    and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


# ----------------------------------------------------------------------------------------------- facts


@dataclass
class Facts:
    """What the installed PyTorch contains, read from its files (no learner code involved)."""

    exported: set[str] = field(default_factory=set)  # demangled names, and every `::` suffix of each
    python_exported: set[str] = field(default_factory=set)  # the same, for libtorch_python only
    names: set[str] = field(default_factory=set)  # every identifier in an exported symbol
    scopes: set[str] = field(default_factory=set)  # every namespace or class an exported symbol lives in
    blob: bytes = b""  # the libraries' printable strings (`strings -n 6`), one per line
    python_blob: bytes = b""  # those of libtorch_python
    files: set[str] = field(default_factory=set)  # normalised paths, and every '/' suffix of each
    tables: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # op -> key -> (file, kind)
    profiled: dict[str, list[str]] = field(default_factory=dict)  # trace -> the profiler's op names
    sources: set[str] = field(default_factory=set)  # the normalised full paths behind `files`
    generated: set[str] = field(default_factory=set)  # those the build generated (under build/, or from a template)
    bf16_onednn: bool = False  # bf16_matmul_uses_onednn() on the machine that read the facts


def _suffixes(name: str, sep: str) -> list[str]:
    parts = name.split(sep)
    return [sep.join(parts[i:]) for i in range(len(parts))]


def normalise_file(path: str) -> str:
    p = path.strip().strip("`").replace("\\", "/")
    for prefix in _BUILD_PREFIXES:
        if p.startswith(prefix):
            p = p[len(prefix):]
    p = re.sub(r"^.*?/site-packages/", "", p)
    p = re.sub(r"^(build/|torch/include/)", "", p)
    p = re.sub(r"\.(DEFAULT|AVX2|AVX512|ZVECTOR|VSX|SVE\d*)\.cpp$", "", p)  # a kernel file, per capability
    return _SHARD.sub("", p.split(":")[0])


def normalise_symbol(symbol: str) -> str:
    s = symbol.strip().strip("`").strip()
    s = re.sub(r"\(.*\)\s*(const)?\s*$", "", s)  # a demangled signature's arguments
    s = s.replace("(anonymous namespace)::", "").replace("{anonymous}::", "")
    while re.search(r"<[^<>]*>", s):  # template arguments: at::vec::Vectorized<float> -> at::vec::Vectorized
        s = re.sub(r"<[^<>]*>", "", s)
    return s.strip()


def _torch_lib() -> Path:
    import torch

    return Path(torch.__file__).parent / "lib"


def _libraries() -> list[Path]:
    lib = _torch_lib()
    return [p for p in (lib / "libc10.so", lib / "libtorch_cpu.so", lib / "libtorch_python.so", lib / "libtorch.so")
            if p.exists()]


def _exported(paths: list[Path]) -> set[str]:
    nm = subprocess.run(["nm", "-D", "--defined-only", *map(str, paths)], capture_output=True, text=True,
                        check=True).stdout
    names = subprocess.run(["c++filt"], input=nm, capture_output=True, text=True, check=True).stdout
    out: set[str] = set()
    for line in names.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out.update(_suffixes(normalise_symbol(parts[2]), "::"))
    return out


def _strings(path: Path) -> bytes:
    return subprocess.run(["strings", "-n", "6", str(path)], capture_output=True, check=True).stdout


def _word_char(b: bytes) -> bool:
    return bool(b) and (b.isalnum() or b == b"_")


_CAPABILITIES = {"DEFAULT", "AVX2", "AVX512", "CPU_CAPABILITY"}  # the namespaces kernels are compiled into, per ISA


def carried(token: str, blob: bytes, mangled_only: bool = False) -> bool:
    """Whether an identifier appears in the libraries' strings: as a whole word (a message, a name table), or
    length-prefixed inside a mangled name (`22wrapper_CPU_add_Tensor` in a template's RTTI name), which is
    how the names of internal functions survive in a release binary."""
    t = token.encode()
    forms = [(str(len(t)).encode() + t, False)] + ([] if mangled_only else [(t, True)])
    for needle, whole in forms:
        i = blob.find(needle)
        while i >= 0:
            before, after = blob[i - 1:i] if i else b"", blob[i + len(needle):i + len(needle) + 1]
            if not whole or (not _word_char(before) and not _word_char(after)):
                return True
            i = blob.find(needle, i + 1)
    return False


def _tables(ops) -> dict[str, dict[str, tuple[str, str]]]:
    """Per operator, the kernels a dense CPU tensor's call runs through: key -> (the registering file, kind).
    Only keys in the tensor's key set, not excluded by the thread (AutocastCPU is, unless autocast is on), with
    a kernel that is not a fallthrough (ADInplaceOrView for add); an alias key (CompositeImplicitAutograd,
    Autograd) counts where its kernel is the one such a key runs (same registering file)."""
    import torch

    from labkit.dispatcher import keyset_names, tls_keys

    excluded = set(tls_keys()[1])
    running = [k for k in keyset_names(torch._C._dispatch_keys(torch.randn(2, 2))) if k not in excluded]
    tables = {}
    for op in ops:
        table: dict[str, tuple[str, str]] = {}
        for line in torch._C._dispatch_dump_table(op).splitlines():
            key, _, rest = line.partition(": ")
            m = re.search(r"registered at (\S+?):\d+ \[(.*)\]", rest)
            if m and key in running and not rest.startswith("fallthrough"):
                table[key] = (normalise_file(m.group(1)), m.group(2))
        files = {v[0] for v in table.values()}
        for line in torch._C._dispatch_dump(op).splitlines():  # alias keys: CompositeImplicitAutograd, Autograd
            m = re.match(r"(\w+)\[alias\]: registered at (\S+?):\d+", line)
            if m and normalise_file(m.group(2)) in files:
                table[m.group(1)] = (normalise_file(m.group(2)), "alias")
        tables[op] = table
    return tables


def _profiled() -> dict[str, list[str]]:
    import torch

    a, b = torch.randn(1000), torch.randn(1000)
    x, y = torch.randn(64, 64, dtype=torch.bfloat16), torch.randn(64, 64, dtype=torch.bfloat16)
    out = {}
    saved = os.dup(2)  # the profiler's C++ side writes start/stop lines to fd 2: a test cell's stderr
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            for name, fn in (("add", lambda: a + b), ("matmul", lambda: x @ y)):
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    fn()
                out[name] = [e.name for e in prof.events()]
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return out


def _facts_key() -> str:
    import torch

    libs = [(p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in _libraries()]
    return hashlib.sha256(repr((torch.__version__, libs, TRACES, _FACTS_VERSION, bf16_matmul_uses_onednn()))
                          .encode()).hexdigest()[:16]


_FACTS_VERSION = 5  # bump when what `facts` reads changes


@functools.lru_cache(maxsize=1)
def facts() -> Facts:
    """Read once per process, and kept on disk per installed torch: exported symbols, identifiers, source
    paths, dispatch tables, profiler names. A copy in COURSE_CPP_PCH's folder (the grader's, read-only) or in
    the temporary folder is used when it was made from the same libraries."""
    import pickle

    name = f"course_cpp_facts_{_facts_key()}.pkl"
    places = [Path(os.environ["COURSE_CPP_PCH"]) / name] if os.environ.get("COURSE_CPP_PCH") else []
    places.append(Path(tempfile.gettempdir()) / name)
    def keep(f, where) -> None:
        for place in where:  # the temporary folder first: the grader's folder is read-only in sandboxes
            try:
                tmp = place.with_suffix(f".{os.getpid()}.tmp")
                with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb") as fh:
                    pickle.dump(f, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, place)
            except OSError:
                pass

    for k, place in enumerate(places):
        try:
            st = place.stat()
            shared = bool(os.environ.get("COURSE_CPP_PCH")) and place == places[0]  # the grader's, read-only
            if (st.st_uid != os.getuid() and not shared) or st.st_mode & 0o022:
                continue  # a pickle runs code when read: only this user's own, unwritable by others
            with open(place, "rb") as fh:
                f = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            continue
        # found in the temporary folder only: the grader's folder gets a copy too, so every sandbox (each with a
        # private temporary folder) reads it instead of the libraries (some 20 s each)
        keep(f, places[:k])
        return f
    f = _read_facts()
    keep(f, list(reversed(places)))
    return f


def _read_facts() -> Facts:
    import torch
    import torchgen

    f = Facts()
    libs = _libraries()
    f.exported = _exported(libs)
    f.python_exported = _exported([p for p in libs if p.name == "libtorch_python.so"])
    blobs = {lib.name: _strings(lib) for lib in libs}
    f.blob = b"\n".join(blobs.values())
    f.python_blob = blobs.get("libtorch_python.so", b"")
    paths = {m.decode() for m in set(_PATH.findall(f.blob))}
    f.generated.update(normalise_file(p) for p in paths if p.startswith("build/"))
    f.generated.update(normalise_file(p) for p in paths if p.startswith("torch/csrc/autograd/generated/"))
    for name in f.exported:
        f.names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", name))
        parts = name.split("::")
        f.scopes.update("::".join(parts[:i]) for i in range(1, len(parts)))
    root = Path(torch.__file__).parent
    shipped = [("torch/" + str(p.relative_to(root))) for p in root.rglob("*") if p.suffix in (".py", ".h", ".yaml")]
    groot = Path(torchgen.__file__).parent
    shipped += [("torchgen/" + str(p.relative_to(groot))) for p in groot.rglob("*") if p.is_file()]
    def add(path: str, generated: bool = False) -> None:
        path = normalise_file(path)
        f.sources.add(path)
        f.files.update(_suffixes(path, "/"))
        if generated:
            f.generated.add(path)

    for p in list(paths) + shipped:
        add(p)
    for p in shipped:  # a shipped header's place in the source tree: torch/include/ATen/X is aten/src/ATen/X
        if p.startswith(("torch/include/ATen/", "torch/include/c10/", "torch/include/torch/")):
            rel = p.removeprefix("torch/include/")
            add(("aten/src/" + rel) if rel.startswith("ATen/") else rel)
    add("aten/src/ATen/native/native_functions.yaml")
    for p in (groot / "packaged" / "ATen" / "templates").glob("*.*"):  # generated from these templates
        add("aten/src/ATen/" + p.name, generated=True)
    for p in (groot / "packaged" / "autograd" / "templates").glob("*.*"):
        add("torch/csrc/autograd/generated/" + p.name, generated=True)
    for e in native_functions():  # ufunc operators get generated files of their own
        if "ufunc_inner_loop" in e:
            base = e["func"].split("(")[0].split(".")[0]
            for stem in ("UfuncCPU", "UfuncCPUKernel", "UfuncCUDA"):
                add(f"aten/src/ATen/{stem}_{base}.cpp", generated=True)
            add(f"aten/src/ATen/native/ufunc/{base}.h")  # the loop body they include
    ops = sorted({op for t in TRACES.values() for op in t.ops})
    f.tables = _tables(ops)
    f.profiled = _profiled()
    f.bf16_onednn = bf16_matmul_uses_onednn()
    return f


# ------------------------------------------------------------------------------------------------ traces


def read_trace(text: str) -> list[tuple[str, ...]]:
    """The steps of a TRACE.md table: one row per line, cells split on `|` (a header row, a `---` separator
    row and blank lines are skipped). Each step is (symbol, file, key) or (symbol, file, key, note)."""
    steps = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or all(set(c) <= set("-: ") for c in cells):
            continue
        if cells[0].lower() in ("symbol", "step") and cells[1].lower() in ("file", "where", "symbol"):
            continue
        steps.append(tuple(c.strip("`") for c in cells[:4]))
    return steps


def trace_table(steps) -> str:
    """Steps as a TRACE.md table (the text `read_trace` reads back)."""
    rows = ["| symbol | file | key | what happens |", "|---|---|---|---|"]
    for s in steps:
        cells = list(s) + [""] * (4 - len(s))
        rows.append("| " + " | ".join(f"`{c}`" if i < 2 and c else c for i, c in enumerate(cells[:4])) + " |")
    return "\n".join(rows) + "\n"


def write_trace(steps, path) -> Path:
    """Write steps as a TRACE.md table (what you would keep next to your notes)."""
    path = Path(path)
    path.write_text(trace_table(steps))
    return path


def _python_name(symbol: str) -> bool:
    import torch

    if not symbol.startswith("torch."):
        return False
    obj = torch
    for part in symbol.split(".")[1:]:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) or not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def symbol_exists(symbol: str, f: Facts) -> bool:
    s = normalise_symbol(symbol)
    if not s or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:.<>, ]*", s):
        return False
    if s.startswith("torch.") and "::" not in s:
        return _python_name(s)
    if s in f.exported:
        return True
    parts = s.split("::")
    if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) for p in parts):
        return False
    scope = [p for p in parts[:-1] if p not in _CAPABILITIES]
    if scope and "::".join(scope) not in f.scopes:
        # a scope no exported function lives in (inline code, a class template): the whole qualified name
        # must then be compiled in, as a mangled name's <length><name> sequence (2at3vec10Vectorized)
        return carried("".join(f"{len(p)}{p}" for p in scope[1:] + parts[-1:]), f.blob, mangled_only=True) and \
            carried(scope[0], f.blob, mangled_only=True)
    # the function itself: exported, or compiled in (its name inside a mangled name: <length><name>)
    return parts[-1] in f.names or carried(parts[-1], f.blob, mangled_only=True)


def in_python_layer(symbol: str, f: Facts) -> bool:
    s = normalise_symbol(symbol)
    if s.startswith("torch.") and "::" not in s:
        return _python_name(s)
    return s in f.python_exported or (s.startswith("THP") and "::" not in s and carried(s, f.python_blob, True))


def file_exists(path: str, f: Facts) -> bool:
    p = normalise_file(path)
    return bool(p) and p.endswith(_SOURCE_SUFFIXES) and p in f.files


# --------------------------------------------------------------------------- which file a symbol is found in
# A step's symbol must be found in the file the step names. What the installed PyTorch shows of that:
# * a Python name: where the object is defined (a Python function's source file; for a C function, the binding
#   file torchgen generates it into: Tensor's methods in python_variable_methods.cpp, torch.* functions in
#   python_torch_functions.cpp, torch._C._nn.* in python_nn_functions.cpp, ...);
# * a shipped file (a header under torch/include, a .py, the YAML, a template): its text names the symbol;
# * a generated file: the generator writes the symbol there, by torchgen's naming (`wrapper_CPU_*` into
#   RegisterCPU.cpp, `at::_ops::*` into Operators.cpp, `VariableType::*` into VariableType.cpp,
#   `structured_ufunc_add_CPU` into UfuncCPU_add.cpp, `THPVariable_<method>` into python_variable_methods.cpp)
#   or its template and generator source spell it;
# * a hand-written source the wheel does not ship (aten/src/ATen/native/BinaryOps.cpp): it cannot hold code the
#   generator writes (a binding, an entry point, a wrapper, an autograd kernel); other symbols are taken as found.

_GENERATED_SYMBOL = re.compile(r"(^|::)_ops::|(^|::)wrapper_\w+|(^|::)VariableType::|(^|::)ADInplaceOrView::|"
                               r"(^|::)TraceType::|(^|::)structured_ufunc_")
_PY_MODULES = {"_nn": "nn", "_fft": "fft", "_linalg": "linalg", "_special": "special", "_sparse": "sparse",
               "_nested": "nested"}
_PY_GENERATED = "torch/csrc/autograd/generated/"


def _site() -> tuple[Path, Path]:
    import torch
    import torchgen

    return Path(torch.__file__).parent, Path(torchgen.__file__).parent


def _shipped(source: str) -> Path | None:
    """The installed file that is the source file `source` (normalised), when the wheel ships it."""
    troot, groot = _site()
    rel = source
    if rel.startswith("aten/src/"):
        rel = rel.removeprefix("aten/src/")
    candidates = []
    if rel.startswith(("ATen/", "c10/", "torch/csrc/")) or (rel.startswith("torch/") and rel.endswith(".h")):
        candidates.append(troot / "include" / rel)
    if rel == "ATen/native/native_functions.yaml":
        candidates.append(groot / "packaged" / "ATen" / "native" / "native_functions.yaml")
    if rel.startswith("tools/autograd/"):
        candidates.append(groot / "packaged" / "autograd" / rel.removeprefix("tools/autograd/"))
    if rel.startswith("ATen/templates/"):
        candidates.append(groot / "packaged" / "ATen" / "templates" / rel.removeprefix("ATen/templates/"))
    if rel.startswith("torch/") and rel.endswith((".py", ".pyi", ".yaml")):
        candidates.append(troot / rel.removeprefix("torch/"))
    if rel.startswith("torchgen/"):
        candidates.append(groot / rel.removeprefix("torchgen/"))
    return next((c for c in candidates if c.is_file()), None)


@functools.lru_cache(maxsize=256)
def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _has_word(text: str, word: str) -> bool:
    return bool(word) and re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None


@functools.lru_cache(maxsize=1)
def _yaml_names() -> tuple[frozenset, frozenset]:
    """The base names of native_functions.yaml's operators with a Tensor method, and with a torch.* function."""
    methods, functions = set(), set()
    for e in native_functions():
        base = e["func"].split("(")[0].split(".")[0]
        variants = [v.strip() for v in str(e.get("variants", "function")).split(",")]
        (methods if "method" in variants else set()).add(base)
        (functions if "function" in variants else set()).add(base)
    return frozenset(methods), frozenset(functions)


@functools.lru_cache(maxsize=64)
def _dispatch_kernels(key: str) -> frozenset:
    """The native kernels native_functions.yaml names for a dispatch key (`dispatch: CPU: add_out`); an entry that
    names none is CompositeImplicitAutograd, its kernel the operator's own name."""
    kernels = set()
    for e in native_functions():
        dispatch = e.get("dispatch")
        if isinstance(dispatch, dict):
            for keys, kernel in dispatch.items():
                if key in [k.strip() for k in str(keys).split(",")]:
                    kernels.add(str(kernel))
        elif key == "CompositeImplicitAutograd" and "structured_delegate" not in e:
            kernels.add(e["func"].split("(")[0].split(".")[0])
    return frozenset(kernels)


def _binding_template(name: str) -> Path:
    return _site()[1] / "packaged" / "autograd" / "templates" / name


def _tensor_method_binding_files(name: str) -> set[str]:
    """Where the C function behind Tensor.<name> is: the generated python_variable_methods.cpp for a method the
    template's table lists or the YAML generates, else the hand-written python_variable*.cpp."""
    table = _text(_binding_template("python_variable_methods.cpp"))
    if re.search(rf'\{{"{re.escape(name)}",', table) or name in _yaml_names()[0]:
        return {_PY_GENERATED + "python_variable_methods.cpp"}
    return {"torch/csrc/autograd/python_variable.cpp", "torch/csrc/autograd/python_variable_indexing.cpp"}


def _python_files(symbol: str) -> set[str] | None:
    """The files a torch.* Python name is defined in (None: a C object whose file the wheel does not tell)."""
    import inspect

    import torch

    obj = torch
    for part in symbol.split(".")[1:]:
        obj = getattr(obj, part)
    try:
        target = inspect.unwrap(obj)
    except ValueError:
        target = obj
    if inspect.isfunction(target) or inspect.ismethod(target) or inspect.isclass(target) or inspect.ismodule(target):
        try:
            source = inspect.getsourcefile(target)
        except TypeError:
            source = None
        if source and "/torch/" in source.replace("\\", "/"):
            return {"torch/" + source.replace("\\", "/").rsplit("/torch/", 1)[1]}
    owner = getattr(obj, "__objclass__", None)
    name = getattr(obj, "__name__", "")
    if owner is torch._C.TensorBase:
        return _tensor_method_binding_files(name)
    if getattr(torch._C._VariableFunctions, name, None) is obj:
        return {_PY_GENERATED + "python_torch_functions.cpp", "torch/csrc/autograd/python_torch_functions_manual.cpp"}
    module = getattr(obj, "__self__", None)
    short = getattr(module, "__name__", "").rsplit(".", 1)[-1]
    if short in _PY_MODULES:
        return {_PY_GENERATED + f"python_{_PY_MODULES[short]}_functions.cpp"}
    return None


def _thp_binding_files(name: str) -> set[str]:
    """Where a binding named THPVariable_<name> is defined (torchgen names every binding THPVariable_<op>)."""
    import torch

    files = set()
    methods_template = _text(_binding_template("python_variable_methods.cpp"))
    if name in _yaml_names()[0] or _has_word(methods_template, f"THPVariable_{name}"):
        files.add(_PY_GENERATED + "python_variable_methods.cpp")
    if hasattr(torch._C._VariableFunctions, name):
        files |= {_PY_GENERATED + "python_torch_functions.cpp", "torch/csrc/autograd/python_torch_functions_manual.cpp"}
    for module, short in _PY_MODULES.items():
        if hasattr(getattr(torch._C, module, None), name):
            files.add(_PY_GENERATED + f"python_{short}_functions.cpp")
    return files or {"torch/csrc/autograd/python_variable.cpp", "torch/csrc/autograd/python_variable_indexing.cpp"}


def _generator_writes(source: str, parts: list[str]) -> bool:
    """Whether torchgen writes the symbol (its `::` parts) into the generated file `source`."""
    _, groot = _site()
    base = source.rsplit("/", 1)[-1]
    last = parts[-1]
    templates, generators = [], []
    m = re.fullmatch(r"Register(\w+)\.cpp", base)
    if m and source.startswith("aten/src/ATen/Register"):
        key = m.group(1)
        if last.startswith(f"wrapper_{key}_") or any(p.startswith("structured_") for p in parts):
            return True
        if parts[-2:-1] == ["native"] and last in _dispatch_kernels(key):  # the wrapper calls at::native::<kernel>
            return True
        templates = ["ATen/templates/RegisterDispatchKey.cpp", "ATen/templates/RegisterDispatchDefinitions.ini",
                     f"ATen/templates/{base}"]
        generators = ["dest/register_dispatch_key.py"]
    m = re.fullmatch(r"Ufunc(CPU|CPUKernel|CUDA)_(\w+)\.(cpp|cu)", base)
    if m:
        op = m.group(2)
        if any(p.startswith(f"structured_ufunc_{op}_") for p in parts) or last in (f"{op}_kernel", f"{op}_stub") \
                or parts[-2:] == ["ufunc", op]:
            return True
        templates = [f"ATen/templates/Ufunc{m.group(1)}.{'cu' if m.group(1) == 'CUDA' else 'cpp'}"]
        generators = ["dest/ufunc.py"]
    if base == "Operators.cpp":
        if "_ops" in parts:
            return True
        templates = ["ATen/templates/Operators.cpp"]
    for stem, scope in (("VariableType", "VariableType"), ("ADInplaceOrViewType", "ADInplaceOrView"),
                        ("TraceType", "TraceType")):
        if base == f"{stem}.cpp":
            if scope in parts[:-1]:
                return True
            templates = [f"autograd/templates/{base}"]
    m = re.fullmatch(r"python_(\w+)_functions\.cpp|python_variable_methods\.cpp", base)
    if m:
        if last.startswith("THPVariable_") and source in _thp_binding_files(last.removeprefix("THPVariable_")):
            return True
        templates = [f"autograd/templates/{base}"]
    if not templates:  # another generated file: what its template spells
        templates = [f"ATen/templates/{base}", f"autograd/templates/{base}"]
    packaged = groot / "packaged"
    texts = [_text(packaged / t) for t in templates if (packaged / t).is_file()]
    texts += [_text(groot / g) for g in generators if (groot / g).is_file()]
    return any(_has_word(t, last) for t in texts)


def symbol_files_match(symbol: str, path: str, f: Facts) -> bool:
    """Whether the step's symbol is found in the file it names, as far as the installed PyTorch shows (above)."""
    s = normalise_symbol(symbol)
    p = _SHARD.sub("", normalise_file(path))
    sources = [c for c in f.sources if c == p or c.endswith("/" + p)]
    if s.startswith("torch.") and "::" not in s:
        if not _python_name(s):
            return False
        files = _python_files(s)
        if files is None:  # a C object of torch._C the wheel does not place: a hand-written file of torch/csrc/
            return any(c.startswith("torch/csrc/") and c not in f.generated for c in sources)
        return any(c in files for c in sources)
    parts = [q for q in s.split("::") if q and q not in _CAPABILITIES]
    if not parts:
        return False
    thp = parts[-1].removeprefix("THPVariable_") if parts[-1].startswith("THPVariable_") else None
    for c in sources:
        shipped = _shipped(c)
        if shipped is not None:
            text = _text(shipped)
            if all(_has_word(text, q) for q in parts):
                return True
        elif c in f.generated:
            if _generator_writes(c, parts):
                return True
        elif thp is not None:
            if c in _thp_binding_files(thp):
                return True
        elif not _GENERATED_SYMBOL.search(s):
            return True
    return False


def verify_trace(name: str, steps, f: Facts | None = None) -> list[str]:
    """The problems of a trace of `TRACES[name]` (an empty list: every step holds, and the waypoints are there
    in order). Each problem names the step (1-based), what was checked and what the installed PyTorch says."""
    f = f or facts()
    spec = TRACES[name]
    if not isinstance(steps, (list, tuple)) or not steps:
        return ["the trace has no steps (return a list of (symbol, file, key[, note]) tuples)"]
    if len(steps) > MAX_STEPS:
        return [f"the trace has {len(steps)} steps; keep it to at most {MAX_STEPS}, one per hop"]
    problems = []
    rows = []
    current = ""  # the operator whose entry point the trace passed last
    for n, step in enumerate(steps, 1):
        if not isinstance(step, (list, tuple)) or not 3 <= len(step) <= 4 or \
                not all(isinstance(c, str) and len(c) <= MAX_FIELD for c in step):
            problems.append(f"step {n}: not a (symbol, file, key[, note]) tuple of strings of at most "
                            f"{MAX_FIELD} characters")
            rows.append(None)
            continue
        symbol, path, key = (c.strip().strip("`") for c in step[:3])
        rows.append((symbol, path, key))
        if not symbol_exists(symbol, f):
            problems.append(f"step {n}: symbol `{symbol}` is not in this PyTorch: not a torch.* name that resolves, "
                            "not exported by its libraries (nm -D), not an identifier their binaries carry")
        if not file_exists(path, f):
            problems.append(f"step {n}: file `{path}` is not one this PyTorch was built from or ships (write its "
                            "path in the source tree, e.g. aten/src/ATen/native/BinaryOps.cpp)")
        elif symbol_exists(symbol, f) and not symbol_files_match(symbol, path, f):
            problems.append(f"step {n}: `{symbol}` is not in `{path}`: " + _where_hint(symbol, f))
        entered = [op for op in spec.ops if re.search(_entry(op), normalise_symbol(symbol))]
        if entered:
            current = entered[0]  # the steps below an entry point are that operator's, until the next entry
        if key != NO_KEY and not re.search(rf"(^|[_:])({'|'.join(_base(op) for op in spec.ops)})(_|$|::)",
                                           normalise_symbol(symbol)):
            problems.append(f"step {n}: a step at a dispatch key is that operator's kernel; `{symbol}` does not "
                            f"name {' or '.join(_base(op) for op in spec.ops)}")
        if key != NO_KEY:
            ops = [current] if current else list(spec.ops)
            # a runtime key, exactly as _dispatch_dump_table prints it: an alias key (Autograd,
            # CompositeImplicitAutograd) is where a kernel was registered, not a key a tensor is dispatched at
            owners = [(op, f.tables[op][key]) for op in ops
                      if key in f.tables.get(op, {}) and f.tables[op][key][1] != "alias"]
            if not owners:
                runs = sorted({k for op in ops for k, v in f.tables.get(op, {}).items() if v[1] != "alias"})
                alias = [op for op in ops if f.tables.get(op, {}).get(key, ("", ""))[1] == "alias"]
                problems.append(f"step {n}: no kernel runs at dispatch key `{key}` for {', '.join(ops)} on a "
                                f"dense CPU tensor (the keys whose kernels run: {', '.join(runs)}; a fallthrough "
                                f"or a key the thread excludes does not count; write `{NO_KEY}` for a step outside "
                                "the dispatcher"
                                + ("; the Python key's kernel only runs for tensor subclasses and modes: the binding "
                                   "runs before any dispatch)" if key == "Python" else
                                   f"; `{key}` is an alias key: a kernel registered under it runs at a runtime key "
                                   "such as AutogradCPU or CPU, the name _dispatch_dump_table prints)" if alias
                                   else ")"))
            elif file_exists(path, f) and not any(_same_file(path, own[0]) for _, own in owners):
                where = "; ".join(f"{op}: {own[0]}" for op, own in owners)
                hint = " (the Python key's kernel is a fallback for tensor subclasses and modes; the binding runs " \
                       f"before any dispatch: key `{NO_KEY}`)" if key == "Python" else ""
                problems.append(f"step {n}: the kernel at `{key}` was registered in another file ({where}){hint}")
    if len({r for r in rows if r}) < len([r for r in rows if r]):
        problems.append("the same step appears twice")
    missing = [op.split(".")[0] for op in spec.ops if op.split(".")[0] not in f.profiled.get(name, [])]
    if missing:
        problems.append(f"(facts) the profiler did not record {missing} for {spec.expression}")
    at = 0  # waypoints are matched by what they say; a step's own problems are listed above
    for w in [w for w in spec.waypoints if w.onednn is None or w.onednn == f.bf16_onednn]:
        hit = next((i for i in range(at, len(rows)) if rows[i] and _passes(w, rows[i], f)), None)
        if hit is None:
            earlier = next((i for i in range(at) if rows[i] and _passes(w, rows[i], f)), None)
            where = f"step {earlier + 1} is it, but comes before step {at}, the waypoint before it" \
                if earlier is not None else f"no step after step {at} is it"
            problems.append(f"missing: {w.what}" + (f" (a step with key {w.key.replace('|', ' or ')})" if w.key else "")
                            + f"; {where}" + _binding_hint(w, rows))
        else:
            at = hit + 1
    return problems


def _base(op: str) -> str:
    return op.split("::", 1)[1].partition(".")[0]


def _entry(op: str) -> str:
    """The regex of an operator's dispatcher entry point: aten::add.Tensor -> at::_ops::add_Tensor::call."""
    name, _, overload = op.split("::", 1)[1].partition(".")
    return rf"(^|::)_ops::{name}{'_' + overload if overload else ''}::call$"


def _passes(w: Waypoint, row: tuple[str, str, str], f: Facts) -> bool:
    symbol, path, key = row
    if w.python and not in_python_layer(symbol, f):
        return False
    if w.key and key not in w.key.split("|"):
        return False
    if w.symbol and not re.search(w.symbol, normalise_symbol(symbol)):
        return False
    if w.file and not re.search(w.file, _SHARD.sub("", normalise_file(path))):
        return False
    return True


def _same_file(path: str, source: str) -> bool:
    """Whether the step's file is `source` (a normalised path), written whole or by its last folders."""
    p = _SHARD.sub("", normalise_file(path))
    return bool(p) and (source == p or source.endswith("/" + p))


def _binding_hint(w: Waypoint, rows) -> str:
    """For a missing binding waypoint: the function torch.<op> is not what the operator reaches."""
    if not w.file:
        return ""
    functions = [r[0] for r in rows if r and re.fullmatch(r"torch\.(add|matmul)", normalise_symbol(r[0]))]
    if not functions:
        return ""
    return (f" (`{functions[0]}` is the function torch.{functions[0].split('.')[-1]}(a, b), bound in "
            "python_torch_functions.cpp; the operator calls the method Tensor.__add__ / Tensor.__matmul__, bound "
            "in python_variable_methods.cpp)")


def _where_hint(symbol: str, f: Facts) -> str:
    """Where the installed PyTorch places a symbol, in words, for a step that names another file."""
    s = normalise_symbol(symbol)
    if s.startswith("torch.") and "::" not in s:
        files = _python_files(s) if _python_name(s) else None
        return f"that name is defined in {' or '.join(sorted(files))}" if files else \
            "that name is a C function of torch._C, bound in a file of torch/csrc/"
    if s.rsplit("::", 1)[-1].startswith("THPVariable_"):
        return "the generated bindings are in " + " or ".join(sorted(_thp_binding_files(
            s.rsplit("::", 1)[-1].removeprefix("THPVariable_"))))
    if _GENERATED_SYMBOL.search(s):
        return ("torchgen writes it: an entry point at::_ops::* into Operators.cpp (declared in ATen/ops/<op>_ops.h), "
                "a wrapper_<Key>_* into Register<Key>.cpp, an autograd kernel into VariableType.cpp, a ufunc's "
                "structured class into Ufunc<Key>_<op>.cpp")
    return "a header must spell it, a generated file must be written with it, and a Python file must define it"


def check_trace(name: str, steps) -> None:
    """Raise AssertionError listing every problem of the trace (a visible test's check)."""
    problems = verify_trace(name, steps)
    if problems:
        raise AssertionError(f"trace of {TRACES[name].expression}: {len(problems)} problem(s)\n  - "
                             + "\n  - ".join(problems))


def trace_steps_from_observation(enc) -> list | None:
    """The grader's side: a trace (list of tuples of strings) back from its recorded encoding, or None."""
    if not isinstance(enc, dict) or enc.get("t") not in ("list", "tuple") or not isinstance(enc.get("v"), list):
        return None
    steps = []
    for item in enc["v"]:
        if not isinstance(item, dict) or item.get("t") not in ("list", "tuple") or not isinstance(item.get("v"), list):
            return None
        cells = []
        for c in item["v"]:
            if not isinstance(c, dict) or c.get("t") != "str" or not isinstance(c.get("v"), str):
                return None
            cells.append(c["v"])
        steps.append(tuple(cells))
    return steps


def rowdot_inputs(shape, dtype, layout: str, seed: int = 0):
    """Two inputs of `shape` for rowdot: "contiguous", "transposed" (a .t() view) or "sliced" (every other
    column of a wider tensor), drawn from `seed`."""
    import torch

    g = torch.Generator().manual_seed(seed)
    n, d = shape
    if layout == "transposed":
        return (torch.randn(d, n, dtype=dtype, generator=g).t(), torch.randn(d, n, dtype=dtype, generator=g).t())
    if layout == "sliced":
        return (torch.randn(n, 2 * d, dtype=dtype, generator=g)[:, ::2],
                torch.randn(n, 2 * d, dtype=dtype, generator=g)[:, 1::2])
    return torch.randn(n, d, dtype=dtype, generator=g), torch.randn(n, d, dtype=dtype, generator=g)


# ----------------------------------------------------------------------------------------------- schemas


def schema_record(text: str) -> dict:
    """What `parse_schema(text)` returns, computed with torchgen's own parser (for tests)."""
    from torchgen.model import FunctionSchema

    s = FunctionSchema.parse(text)

    def arg(a, kind):
        return {"name": a.name, "type": str(a.type), "kind": kind, "default": a.default,
                "alias": None if a.annotation is None else str(a.annotation)}

    args = [arg(a, "positional") for a in s.arguments.flat_positional]
    args += [arg(a, "keyword") for a in s.arguments.flat_kwarg_only]
    args += [arg(a, "out") for a in s.arguments.out]
    rets = [{"name": r.name, "type": str(r.type), "alias": None if r.annotation is None else str(r.annotation)}
            for r in s.returns]
    return {"name": str(s.name.name), "overload": s.name.overload_name,
            "arguments": args, "returns": rets}


@functools.lru_cache(maxsize=1)
def native_functions() -> list[dict]:
    """The entries of the native_functions.yaml that ships inside torchgen."""
    import torchgen
    import yaml

    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


# ------------------------------------------------------------------------------------------------ builds


class CompileError(RuntimeError):
    """A C++ build that failed: the message is the compiler's, its error lines first."""


def build_dir() -> Path:
    base = os.environ.get("TORCH_EXTENSIONS_DIR") or str(Path(tempfile.gettempdir()) / f"torch_ext_{os.getuid()}")
    os.environ["TORCH_EXTENSIONS_DIR"] = base
    Path(base).mkdir(parents=True, exist_ok=True)
    return Path(base)


CFLAGS = ["-O1", "-fvisibility=hidden", "-fvisibility-inlines-hidden"]
# The headers an operator's C++ usually needs, compiled once into a precompiled header when a course folder
# for it is named in COURSE_CPP_PCH (the grader does: build/cpp-pch, read-only in its sandboxes). A build
# then starts from it (`-include`), about twice as fast; without it, or if it no longer matches, the same
# headers are read from source: a PCH changes the time, never the result.
PRELUDE = """#include <torch/library.h>
#include <torch/csrc/autograd/custom_function.h>
#include <ATen/core/Tensor.h>
#include <ATen/Dispatch.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
"""
_BUILDER = r"""
import os, sys
from torch.utils.cpp_extension import load_inline
name, path, where, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
load_inline(name, cpp_sources=[open(path).read()], is_python_module=False, verbose=False, with_cuda=False,
            extra_cflags=flags, extra_ldflags=["-Wl,-Bsymbolic"], build_directory=where)
"""


def _pch_signature() -> str:
    import torch

    return f"{torch.__version__} {' '.join(CFLAGS)} {sys.version_info[:2]} {PRELUDE}"


def _pch_flags() -> list[str]:
    """`-include prelude.h` when COURSE_CPP_PCH names a folder whose precompiled header matches this build."""
    folder = os.environ.get("COURSE_CPP_PCH")
    if not folder:
        return []
    sign = Path(folder) / "prelude.sign"
    try:
        ok = (Path(folder) / "prelude.h.gch").exists() and sign.read_text() == _pch_signature()
    except OSError:
        return []
    return ["-include", str(Path(folder) / "prelude.h")] if ok else []


def build_prelude(folder) -> float:
    """Compile PRELUDE into `folder`/prelude.h.gch with the flags every build uses (seconds taken, 0 when the
    folder already holds a matching one). Run by the grader before a class, never by a hand-in."""
    import sysconfig
    import time

    from filelock import FileLock  # (torch's own dependency) a lock that works on Linux, macOS and Windows
    from torch.utils.cpp_extension import include_paths

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["COURSE_CPP_PCH"] = str(folder)
    # Two grading jobs may ask at once (the quality table runs labs in parallel): one builds, the other waits
    # for it, and the header appears under its name only when it is whole (two compilers writing one .gch
    # left a corrupt header that broke every build that read it).
    with FileLock(folder / ".lock"):
        if _pch_flags():
            facts()
            return 0.0
        t0 = time.perf_counter()
        (folder / "prelude.h").write_text(PRELUDE)
        cxx = os.environ.get("CXX") or ("g++" if shutil.which("g++") else "c++")
        partial = folder / f"prelude.h.gch.{os.getpid()}"
        cmd = [cxx, "-DTORCH_API_INCLUDE_EXTENSION_H", *[f"-isystem{p}" for p in include_paths()],
               f"-isystem{sysconfig.get_paths()['include']}", "-fPIC", "-std=c++20", *CFLAGS,
               "-x", "c++-header", str(folder / "prelude.h"), "-o", str(partial)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
        os.replace(partial, folder / "prelude.h.gch")
        (folder / "prelude.sign").write_text(_pch_signature())
        facts()  # and the trace facts, read once here (the folder is read-only where hand-ins run)
        return time.perf_counter() - t0


def build_extension(name: str, source: str, namespace: str = "lab14", timeout: float = BUILD_TIMEOUT_S):
    """Compile `source` (C++ with TORCH_LIBRARY blocks) into a library, load it into this process and return
    the `torch.ops` namespace its operators were registered under.

    A process can define a namespace only once, so every whole word `namespace` in the source is renamed
    `<namespace>_<hash of the source>` first: a changed source is a new library in a new namespace (rebuild
    and reload without restarting the kernel), the same source a cache hit that only loads. The build runs
    in a child process of its own, in a fresh folder, stopped (with everything it started) after `timeout`
    s or when this call is interrupted; a compile error comes back as `CompileError` with the compiler's
    own message.

    Each library keeps its functions to itself (hidden visibility, `-Bsymbolic`): two versions of a source
    loaded into one process both define `rowdot_cpu`, and with the default visibility the second library's
    registrations would call the first one's (the dynamic linker binds a name to its first definition)."""
    import torch

    # the cache key: the source, how it is built, and the torch it is built against
    digest = hashlib.sha256((source + _BUILDER + " ".join(CFLAGS) + torch.__version__).encode()).hexdigest()[:12]
    unique = f"{namespace}_{digest}"
    source = re.sub(rf"\b{re.escape(namespace)}\b", unique, source)
    full = f"{name}_{digest}"
    base = build_dir()
    lib = base / f"{full}.so"  # the cache: a library appears here whole (renamed into place) or not at all
    if not lib.exists():
        where = Path(tempfile.mkdtemp(prefix=f"{full}-", dir=base))
        (where / "source.cpp").write_text(source)
        # g++ by its own name: torch expects it, and `c++` is a link through /etc/alternatives, which a
        # sandbox need not show
        cxx = os.environ.get("CXX") or ("g++" if shutil.which("g++") else "c++")
        flags = " ".join(CFLAGS + _pch_flags())
        proc = subprocess.Popen([sys.executable, "-c", _BUILDER, full, str(where / "source.cpp"), str(where), flags],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                env={**os.environ, "MAX_JOBS": "2", "CXX": cxx})
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CompileError(f"the C++ build of {name} ran past {timeout:.0f} s and was stopped") from None
        finally:
            if proc.poll() is None:  # a timeout, or an interrupt (a cell's time limit): stop the compiler too
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            raise CompileError(_compiler_message(output))
        os.replace(where / f"{full}.so", lib)
    torch.ops.load_library(str(lib))  # runs its TORCH_LIBRARY blocks (a second load of one path does nothing)
    return getattr(torch.ops, unique)


def _compiler_message(text: str, limit: int = 40) -> str:
    """The compiler's diagnostics (file:line: error: ...) with a line of context each; else the output's tail."""
    lines = [ln for ln in text.splitlines() if "!! WARNING !!" not in ln]
    errors = [i for i, ln in enumerate(lines) if re.search(r"\b(error|Error|FAILED|denied|not found)\b", ln)
              and "Error building extension" not in ln and not ln.startswith(("Traceback", "  File", "subprocess"))]
    if not errors:
        return "the C++ build failed:\n" + "\n".join(lines[-limit:])
    keep: list[str] = []
    for i in errors:
        for ln in lines[max(0, i - 1):i + 3]:
            if ln not in keep and not ln.startswith(("[", "ninja:", "Traceback", "  File")):
                keep.append(ln)
    return "the C++ build failed; the compiler said:\n" + "\n".join(keep[:limit])
