"""Every install path of the course, read the way its own tool reads it: conda's environment file, pip's
requirements files, repo2docker's (Binder's) configuration, Docker's FROM, nbgrader's extension switches, and
the package that makes `import labkit` work without the course venv's .pth file."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from autograder import settings
from coursetools import envfiles, image
from coursetools.student_dist import build

ROOT = settings.ROOT
CONDA_KEYS = {"name", "channels", "dependencies", "variables", "prefix"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    return build(tmp_path_factory.mktemp("env-dist") / "student")


def lock_pins(path: Path) -> dict[str, str]:
    """name -> version of every entry of a lock."""
    _, entries = envfiles.parse_lock(path.read_text())
    return {e.name: re.search(r"==\s*([^\s;\\]+)", e.line).group(1) for e in entries}


def pip_file(path: Path, seen: list[Path] | None = None) -> dict:
    """What pip reads from a requirements file (pip's "Requirements File Format"): `-r` files are relative to
    the file that names them, lines continue after a backslash, ` #` starts a comment. Returns the pins
    (name -> version), the other requirements, options, local folders and whether any line has a hash."""
    out = {"pins": {}, "other": [], "options": [], "local": [], "hashes": False}
    seen = seen if seen is not None else []
    seen.append(path)
    text = re.sub(r"\\\n", " ", path.read_text())
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        if "--hash" in line:
            out["hashes"] = True
        line = re.sub(r"\s--hash[= ]\S+", "", line).strip()
        opt = re.match(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$", line)
        if opt:
            sub = pip_file((path.parent / opt.group(2)).resolve(), seen)
            for key in ("other", "options", "local"):
                out[key] += sub[key]
            out["pins"].update(sub["pins"])
            out["hashes"] |= sub["hashes"]
            continue
        edit = re.match(r"^(?:-e|--editable)\s+(\S+)$", line)
        if edit or line.startswith((".", "/")):
            out["local"].append(edit.group(1) if edit else line)
            continue
        if line.startswith("-"):
            out["options"].append(line)
            continue
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;]+)", line)
        if pin:
            out["pins"][envfiles.canonical(pin.group(1))] = pin.group(2)
        else:
            out["other"].append(line)
    return out


def conda_pip_section(env_file: Path) -> dict:
    """environment.yml as conda reads it (conda's "Creating an environment file manually"; conda's
    env/installers/pip.py): a YAML mapping whose `dependencies` may hold one `pip:` list, which conda writes
    to a requirements file beside environment.yml and hands to one `pip install -U -r` run in that folder
    (micromamba, which Binder uses, also runs pip in the environment file's folder)."""
    data = yaml.safe_load(env_file.read_text())
    assert isinstance(data, dict) and set(data) <= CONDA_KEYS, f"{env_file}: keys {sorted(data)}"
    deps = data["dependencies"]
    conda_specs = [d for d in deps if isinstance(d, str)]
    pip_lists = [d["pip"] for d in deps if isinstance(d, dict)]
    assert all(isinstance(d, (str, dict)) for d in deps) and len(pip_lists) == 1, env_file
    assert "pip" in conda_specs, f"{env_file}: a pip section needs pip among the conda dependencies"
    assert any(re.fullmatch(r"python\s*=+\s*3\.11(\.\*)?", d) for d in conda_specs), f"{env_file}: python 3.11"
    assert not [d for d in conda_specs if d.split("=")[0] not in ("python", "pip")], (
        f"{env_file}: versions come from the lock, not from conda specs: {conda_specs}")
    written = env_file.parent / "condaenv.test.requirements.txt"  # where conda writes it
    written.write_text("\n".join(pip_lists[0]))
    try:
        read = pip_file(written)
    finally:
        written.unlink()
    read["folder"] = env_file.parent
    return read


def assert_installs_lock(read: dict, lock: Path, requirements: Path, where: str) -> None:
    want = lock_pins(lock)
    want["torch"] = re.search(r"^torch==(\S+)", requirements.read_text(), re.M).group(1)
    missing = {n: v for n, v in want.items() if read["pins"].get(n) != v}
    assert not missing, f"{where} does not install these pins of {lock.name}: {missing}"
    extra = set(read["pins"]) - set(want)
    assert not extra and not read["other"], f"{where} installs what {lock.name} does not pin: {extra, read['other']}"
    # pip's hash-checking mode refuses folders and unhashed requirements: a hash here would break the install
    assert not read["hashes"], f"{where}: hashes in conda's single pip call (see coursetools/envfiles.py)"
    folders = [(read["folder"] / p).resolve() for p in read["local"]]
    assert folders and all((f / "pyproject.toml").is_file() for f in folders), (
        f"{where} must install the course package itself (a folder with pyproject.toml): {read['local']}")
    assert f"--extra-index-url {envfiles.TORCH_CPU_INDEX}" in read["options"], f"{where}: torch's CPU index"


def test_conda_environment_file_installs_every_locked_pin_and_the_course():
    """conda's environment file spec: environment.yml's pip section, with its `-r` paths relative to the file,
    reaches every pin of requirements.lock and torch's, and installs the course package (labkit)."""
    read = conda_pip_section(ROOT / "environment.yml")
    assert_installs_lock(read, ROOT / "requirements.lock", ROOT / "requirements.txt", "environment.yml")


def test_requirements_conda_is_made_from_the_current_lock():
    """requirements-conda.txt is the lock's pins (pip's requirements file format), regenerated after `make lock`
    by `python -m coursetools.envfiles`."""
    got = subprocess.run([sys.executable, "-m", "coursetools.envfiles", "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr


def test_learners_environment_files_install_the_learners_lock(dist):
    """conda's environment file spec and repo2docker's (micromamba) reading of binder/environment.yml: both
    reach every pin of the learners' lock, with paths relative to each file, and install the course package."""
    for env_file in (dist / "environment.yml", dist / "binder" / "environment.yml"):
        read = conda_pip_section(env_file)
        assert_installs_lock(read, dist / "requirements.lock", dist / "requirements.txt",
                             str(env_file.relative_to(dist)))


def test_learners_lock_is_the_courses_lock_without_the_instructors_tools(dist):
    """The learners' requirements.lock: entries copied unchanged (versions, hashes) from the course's lock,
    closed under the installed packages' own requirements (their METADATA, PEP 508 markers evaluated here),
    usable by tools/venv.py (its header names the learners' requirements.txt), and holding every distribution
    the learners' notebooks and labkit import."""
    from coursetools.venv import lock_is_current

    _, course = envfiles.parse_lock((ROOT / "requirements.lock").read_text())
    _, learners = envfiles.parse_lock((dist / "requirements.lock").read_text())
    by_name = {e.name: e.lines for e in course}
    assert all(by_name.get(e.name) == e.lines for e in learners), "a learners' entry differs from the course's"
    names = {e.name for e in learners}
    assert not names & envfiles.INSTRUCTOR_ONLY
    assert {"nbgrader", "jupyterlab", "ipykernel", "triton", "jax", "matplotlib"} <= names
    assert lock_is_current(dist / "requirements.txt"), "tools/venv.py would not use the learners' lock"
    # closed: every requirement of a kept package (for its locked extras) is kept too
    from packaging.requirements import Requirement

    have = names | {"torch"}
    open_ends = []
    for e in learners:
        extras = set(filter(None, (re.match(r"^[^\[=]+\[([^\]]*)\]", e.line) or [None, ""])[1].split(",")))
        for text in md.requires(e.name) or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": x}) for x in extras | {""}):
                if envfiles.canonical(req.name) not in have:
                    open_ends.append(f"{e.name} -> {text}")
    assert not open_ends, f"--no-deps from the learners' lock would leave out: {open_ends}"
    # what learners' code imports comes with the lock (or torch)
    dists = md.packages_distributions()
    sources = [c["source"] for p in [*(dist / "course").glob("*.ipynb"), *(dist / "labs").glob("*/*.ipynb")]
               for c in json.loads(p.read_text())["cells"] if c["cell_type"] == "code"]
    sources += [p.read_text() for p in (dist / "labkit").rglob("*.py")]
    modules = set()
    for src in sources:
        src = "".join(src) if isinstance(src, list) else src
        for m in re.finditer(r"^\s*(?:from\s+([\w]+)[\w.]*\s+import|import\s+([\w]+))", src, re.M):
            modules.add(m.group(1) or m.group(2))
    unlocked = {mod: dists[mod] for mod in modules - set(sys.stdlib_module_names) - {"labkit"}
                if mod in dists and not {envfiles.canonical(d) for d in dists[mod]} & have}
    assert not unlocked, f"learners' code imports packages the learners' lock leaves out: {unlocked}"


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs as Docker's Dockerfile reference parses them: comments dropped, lines
    joined at a trailing backslash."""
    text = re.sub(r"\\\n(\s*#.*\n)*", " ", re.sub(r"^\s*#.*\n", "", image.DOCKERFILE.read_text(), flags=re.M))
    return [(m.group(1).upper(), m.group(2).strip()) for m in re.finditer(r"^\s*(\w+)\s+(.*)$", text, re.M)]


def test_dockerfile_base_image_is_pinned_by_digest():
    """Docker's Dockerfile reference, FROM: `FROM [--platform=<p>] <image>[:<tag>][@<digest>] [AS <name>]`;
    with a digest the build always starts from the same image, a tag alone follows whatever is pushed to it."""
    froms = [args for ins, args in dockerfile() if ins == "FROM"]
    assert froms, "no FROM"
    for args in froms:
        ref = [w for w in args.split() if not w.startswith("--")][0]
        assert re.fullmatch(r"[\w./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}", ref), f"FROM {ref}: pin it by digest"


def test_dockerfile_installs_the_learners_lock_with_hashes_and_the_course(dist):
    """Docker's COPY/RUN reference and pip's `--require-hashes`: the image copies the learners' lock from the
    build context (the learners' tree) and installs it in hash-checking mode, then installs the course package,
    so `import labkit` needs no PYTHONPATH."""
    steps = dockerfile()
    copied = {}
    for ins, args in steps:
        if ins == "COPY":
            words = [w for w in args.split() if not w.startswith("--")]
            for src in words[:-1]:
                copied[src] = words[-1]
                assert (dist / src).exists(), f"COPY {src}: not in the learners' tree (the build context)"
    runs = " && ".join(args for ins, args in steps if ins == "RUN")
    installs = [shlex.split(cmd.strip()) for cmd in re.split(r"&&|;", runs) if "pip install" in cmd]
    hashed = [cmd for cmd in installs if "--require-hashes" in cmd and "-r" in cmd]
    assert hashed, "no `pip install --require-hashes -r <lock>`"
    lock_arg = hashed[0][hashed[0].index("-r") + 1]
    assert "requirements.lock" in copied and lock_arg.startswith(copied["requirements.lock"].rstrip("/") + "/") \
        and lock_arg.endswith("requirements.lock"), f"the hashed install reads {lock_arg}, not the copied lock"
    assert any("--no-deps" in cmd and ("." in cmd or "-e" in cmd) for cmd in installs), "the course package"
    assert not [a for i, a in steps if i == "ENV" and "PYTHONPATH" in a], "labkit comes from the installed package"


def nbgrader_disable_commands() -> list[str]:
    """nbgrader's own documentation (docs/source/user_guide/installation.rst, shipped in its package): the
    commands that switch off its instructor parts for everyone in an environment (--sys-prefix)."""
    import nbgrader

    doc = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide" / "installation.rst"
    documented = set(re.findall(r"jupyter (?:server extension|labextension) disable \S+ \S+", doc.read_text())) \
        if doc.is_file() else set()
    wanted = [f"jupyter server extension disable --sys-prefix nbgrader.server_extensions.{name}"
              for name in ("formgrader", "course_list")]
    wanted += [f"jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:{name}"
               for name in ("formgrader", "create-assignment", "course-list")]
    if documented:
        assert set(wanted) <= documented, f"nbgrader's docs do not name: {set(wanted) - documented}"
    return wanted


def test_nbgrader_names_exist_in_the_pinned_nbgrader():
    """nbgrader 0.9.6's installed package: the server extension modules and the JupyterLab plugin ids that the
    image and Binder switch off exist under those names."""
    import nbgrader

    for name in ("formgrader", "course_list", "assignment_list", "validate_assignment"):
        assert (Path(nbgrader.__file__).parent / "server_extensions" / name).is_dir(), name
    static = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader" / "static"
    ids = set()
    for js in static.glob("*.js"):
        ids |= set(re.findall(r'"(@jupyter/nbgrader:[a-z-]+)"', js.read_text(errors="replace")))
    for plugin in image.INSTRUCTOR_PLUGINS:
        assert plugin in ids, f"{plugin} is not a plugin of the installed nbgrader labextension ({sorted(ids)})"


def test_learners_image_and_binder_switch_off_the_instructors_extensions(dist):
    """nbgrader's docs ("Installation", disabling extensions): the learners' image and Binder run the
    documented disable commands for formgrader, create-assignment and the course list."""
    wanted = nbgrader_disable_commands()
    runs = " && ".join(args for ins, args in dockerfile() if ins == "RUN")
    docker_cmds = {" ".join(cmd.split()) for cmd in re.split(r"&&|;", runs)}
    post_build = (dist / "binder" / "postBuild").read_text()
    binder_cmds = {" ".join(line.split()) for line in post_build.splitlines()}
    for command in wanted:
        assert command in docker_cmds, f"docker/Dockerfile does not run: {command}"
        assert command in binder_cmds, f"binder/postBuild does not run: {command}"
    assert "set -e" in post_build, "a failing command must fail Binder's build"
    # JupyterLab >= 4.1 (its `labextension lock` command): a disabled plugin a user may not switch back on
    lock = "jupyter labextension lock --level=sys_prefix " + " ".join(image.INSTRUCTOR_PLUGINS)
    assert lock in docker_cmds and lock in binder_cmds, f"both must run: {lock}"


def test_learners_tree_has_binder_configuration(dist):
    """repo2docker's configuration files: with a binder/ folder only it is read (the root's files are then
    ignored); environment.yml selects the conda build pack; postBuild runs after it (an executable script); a
    Dockerfile would take precedence over everything, so there is none."""
    binder = dist / "binder"
    assert (binder / "environment.yml").is_file() and (binder / "postBuild").is_file()
    assert os.access(binder / "postBuild", os.X_OK) and (binder / "postBuild").read_text().startswith("#!")
    for folder in (dist, binder):
        assert not (folder / "Dockerfile").exists(), f"{folder}: a Dockerfile would replace environment.yml"
    # repo2docker stages the whole repository before the environment when the pip section names local files
    pip_lines = next(d["pip"] for d in yaml.safe_load((binder / "environment.yml").read_text())["dependencies"]
                     if isinstance(d, dict))
    assert any(line.startswith(("-r", "-e")) for line in pip_lines)


def test_course_and_learners_pyproject_install_labkit_only(dist):
    """PEP 621's [project] table and setuptools' pyproject configuration: both trees declare the same package,
    labkit alone (not the grader or the instructors' tools), built by setuptools' PEP 517 backend."""
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())
    learners = tomllib.loads((dist / "pyproject.toml").read_text())
    for data in (course, learners):
        assert data["build-system"]["build-backend"] == "setuptools.build_meta"
        assert data["project"]["name"] and data["project"]["version"]
        assert data["project"]["requires-python"] == ">=3.11"
        assert data["tool"]["setuptools"]["packages"] == ["labkit"]
    assert learners["project"] == course["project"] and learners["build-system"] == course["build-system"]
    assert "ruff" in course["tool"] and "pytest" in course["tool"], "the tool settings stay in the course's file"


def test_pip_install_of_the_learners_tree_makes_labkit_importable(dist, tmp_path):
    """pip's `install --no-deps .` and `-e .` (PEP 517/660 builds) of a copy of the learners' tree into a fresh
    venv: `import labkit` then works from another folder, with no .pth file pointing at the tree."""
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(dist, tree, ignore=shutil.ignore_patterns("course", "labs"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch, and setuptools for the build, from this venv's site-packages as a plain path (its course-root.pth
    # is not read): no build isolation, so the check needs no index and builds with the lock's setuptools
    env = {**os.environ, "PYTHONPATH": str(Path(md.distribution("torch").locate_file("")))}
    for editable in ([], ["-e"]):
        got = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-build-isolation", "--no-index", "--disable-pip-version-check", *editable,
                              str(tree)], capture_output=True, text=True, env=env)
        assert got.returncode == 0, got.stdout + got.stderr
        # the real import once (it imports torch: seconds); the editable install's finder by find_spec
        probe = ("import importlib.util; print(importlib.util.find_spec('labkit').origin)" if editable else
                 "import labkit; print(labkit.__file__)")
        where = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env)
        assert where.returncode == 0, where.stderr
        expected = tree if editable else Path(site)
        assert Path(where.stdout.strip()).is_relative_to(expected), (editable, where.stdout)
        assert not list(Path(site).glob("course-root*.pth"))
