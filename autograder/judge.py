"""Stage "judge": the verdict, decided in the trusted process from plain data.

The sandboxed run of a hand-in reports, for every test cell, whether the cell
finished and what the lab's interface did when the test called it (its
observations: see `sandbox_runner.py`). The reference solution ran the same cells
on the same inputs, twice (`reference.py`). A test cell earns its points only when

1. it finished without an error in the hand-in's run (the test's own checks: they
   can only take points away, since they ran in the learner's process), and
2. the hand-in's observations match the reference's: the same calls, the same
   kinds of results, equal values (floats within a tolerance), and a view where
   the reference returned a view of the same argument with the same strides.

A test listed in `verify.py` (a trace through PyTorch's C++, which a right answer may word its own
way) is judged by rule 1 and a check of the hand-in's returned data against facts of the installed
PyTorch, not against the reference's results.

This module never imports or runs learner code: it reads JSON. An observation
that differed between the two reference runs (a timing, an address) is compared
by kind only; a test cell whose reference runs took different paths is judged by
rule 1 alone and reported as such.
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import json
import re
from dataclasses import dataclass

import numpy as np

from autograder import settings, verify

SCHEMA = 2
SEQUENCES = {"tuple", "list", "size"}
MAPPINGS = {"dict", "record"}  # a record (a dataclass, a namespace, a Triton Config) is a dict of its fields
OBSERVED = "(a value a hidden check looked at)"  # sandbox_runner.OBSERVED: what a hidden test's probe observed
# (rtol, atol) per dtype: a coarse guard; the lab's own tests hold the precise tolerances.
TOLERANCES = {"float64": (1e-5, 1e-8), "double": (1e-5, 1e-8), "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-3),
              "half": (1e-2, 1e-3)}
DEFAULT_TOLERANCE = (1e-4, 1e-5)


class Mismatch(Exception):
    """Why an observation differs from the reference's. The message is the trusted side's own words: it never
    quotes a value the hand-in produced (a hand-in could smuggle hidden-test text out through one) and
    names nothing of a hidden test's inputs."""


@dataclass
class CellVerdict:
    label: str
    passed: bool
    reason: str = ""  # why not, in words a learner can read (no hidden inputs)
    checked: int = 0  # observations compared with the reference
    judged: bool = True  # False: the reference gave nothing to compare (rule 1 only)


# The tolerance a hidden check stated for the value being compared (from the reference's record: a probe passes
# a check's rtol=, atol=, ulps= to __observe__), doubled: hand-in and reference may each sit at the check's bound.
_STATED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("stated_tolerance", default=None)
EPS = {"float64": 2.0 ** -52, "double": 2.0 ** -52, "float32": 2.0 ** -23, "float": 2.0 ** -23,
       "float16": 2.0 ** -10, "half": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _stated(name: str) -> dict | None:
    """The tolerance stated for a value of dtype `name`: its own check's, or (for a call's result, which no
    check observed by itself) the loosest a hidden check of the same cell stated for that dtype."""
    stated = _STATED.get()
    if stated and "by_dtype" in stated:
        return stated["by_dtype"].get(name)
    return stated


def tolerance(dtype: str) -> tuple[float, float]:
    name = dtype.rsplit(".", 1)[-1]
    stated = _stated(name)
    if stated:
        if "ulps" in stated:
            return 2 * stated["ulps"] * EPS.get(name, 2.0 ** -23), 0.0
        rtol, atol = TOLERANCES.get(name, DEFAULT_TOLERANCE)
        return 2 * stated.get("rtol", rtol), 2 * stated.get("atol", atol)
    if "float8" in name:
        return 0.25, 1e-2
    return TOLERANCES.get(name, DEFAULT_TOLERANCE)


def _decode(data: str, kind: str) -> np.ndarray:
    wide = {"f": np.float64, "c": np.complex128, "i": np.int64}[kind]
    return np.frombuffer(base64.b64decode(data), dtype=wide)


def _close(a: np.ndarray, b: np.ndarray, kind: str, dtype: str) -> bool:
    if a.shape != b.shape:
        return False
    if kind == "i":
        return bool(np.array_equal(a, b))
    rtol, atol = tolerance(dtype)
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)) and \
            bool(np.array_equal(np.isnan(a), np.isnan(b)))


def _same_values(ref: dict, got: dict, dtype: str) -> None:
    if ref.get("data") is None:
        return  # the reference has no values to compare (meta tensors, unreadable)
    if got.get("data") is None or got.get("kind") != ref.get("kind") or got.get("how") != ref.get("how"):
        raise Mismatch("its values could not be compared with the reference's")
    kind = ref["kind"]
    if ref["how"] == "all":
        if not _close(_decode(ref["data"], kind), _decode(got["data"], kind), kind, dtype):
            raise Mismatch("different values")
        return
    r, g = ref["data"], got["data"]
    if not isinstance(g, dict) or not _close(_decode(r["sample"], kind), _decode(g["sample"], kind), kind, dtype):
        raise Mismatch("different values")
    if kind == "i":
        if r.get("digest") != g.get("digest"):
            raise Mismatch("different values")
        return
    if kind == "f" and (r["nan"], r["inf"]) != (g.get("nan"), g.get("inf")):
        raise Mismatch("different NaN or infinity counts")
    rtol, atol = tolerance(dtype)
    n = max(1, int(np.prod(ref_shape(ref)))) if ref.get("shape") else 1
    for key in ("sum", "abs"):
        if key in r and not np.allclose(np.asarray(r[key]), np.asarray(g.get(key, np.nan)), rtol=rtol,
                                        atol=atol * n, equal_nan=True):
            raise Mismatch("different values")


def ref_shape(ref: dict) -> list[int]:
    return [int(s) for s in ref.get("shape", [])]


def _number(enc: dict) -> float | int:
    v = enc["v"]
    if enc["t"] == "float":
        return float(str(v))
    return int(v)


def digest(enc: dict) -> str:
    """The digest the runner sends in place of a big observation (see sandbox_runner.Observer.record)."""
    if "digest" in enc:
        return str(enc["digest"])
    text = json.dumps(enc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def same(ref: dict, got: dict, exact: bool = True) -> None:
    """Raise Mismatch when `got` (the hand-in's) does not match `ref` (the reference's). With exact=False
    (an observation the reference itself did not repeat) only the kind of result is compared."""
    if not isinstance(got, dict) or not isinstance(got.get("t"), str):
        raise Mismatch("the observation is malformed")
    rt, gt = ref["t"], got["t"]
    if ref.get("loose"):  # a part the two reference runs disagree on (a time, an address): its kind only
        exact = False
    if "digest" in ref or "digest" in got:  # a big value (or past the cell's budget): its encoding, bit for bit
        if rt != gt:
            raise Mismatch("returned another kind of value than the reference solution")
        if exact and digest(ref) != digest(got):
            raise Mismatch("a different value")
        return
    if rt == "raised" or gt == "raised":
        if rt != gt:
            raise Mismatch("raised an exception where the reference solution returned a value" if gt == "raised"
                           else "returned a value where the reference solution raised an exception")
        if ref["types"][0] not in [str(t) for t in got.get("types", [])]:
            raise Mismatch("raised another kind of exception than the reference solution")
        return
    numeric = {"int", "float"}
    # A list for a tuple, an int for a float: the lab's own checks decide (a visible test's run in the
    # process; a hidden test's are observed by their outcome where the probe can run them).
    if not (rt == gt or (rt in numeric and gt in numeric) or (rt in SEQUENCES and gt in SEQUENCES)):
        raise Mismatch("returned another kind of value than the reference solution")
    if not exact:
        return
    if rt in numeric:
        a, b = _number(ref), _number(got)
        if "int" in (rt, gt):  # an integer on either side is an exact count, index or address: no relative slack
            if not _same_integer(a, b):
                raise Mismatch("a different number")
        elif not np.isclose(float(a), float(b), *(tolerance("float64") if _stated("float64") else (1e-6, 1e-9)),
                            equal_nan=True):
            raise Mismatch("a different number")
    elif rt == "bool":
        if got.get("v") is not ref["v"]:
            raise Mismatch("a different truth value")
    elif rt in ("str", "bytes"):
        if (got.get("v"), got.get("h")) != (ref.get("v"), ref.get("h")):
            raise Mismatch("a different " + ("text" if rt == "str" else "byte string"))
    elif rt == "token":
        if got.get("v") != ref["v"]:
            raise Mismatch("a different dtype, device or layout")
    elif rt in SEQUENCES or rt == "set":
        _same_items(ref, got)
    elif rt in MAPPINGS:
        if rt == "record" and got.get("cls") != ref.get("cls"):
            raise Mismatch("a record of another class than the reference solution's")
        if got.get("n") != ref["n"]:
            raise Mismatch("a dict with another number of entries than the reference solution's")
        theirs = {json.dumps(k, sort_keys=True): v for k, v in got["v"]}
        for k, v in ref["v"]:
            key = json.dumps(k, sort_keys=True)
            if key not in theirs:
                raise Mismatch("a dict with different keys")
            same(v, theirs[key])
    elif rt in ("tensor", "ndarray"):
        _same_array(ref, got)
    elif rt == "type":
        if got.get("v") != ref["v"]:
            raise Mismatch("a different class")
    elif rt == "op":
        if tuple(_op_text(got.get(k)) for k in ("v", "schema")) != tuple(_op_text(ref.get(k)) for k in ("v", "schema")):
            raise Mismatch("a different operator (its qualified name or schema)")
        if got.get("decomposes") != ref.get("decomposes"):
            raise Mismatch("an operator whose kernels are registered at other dispatch keys than the reference "
                           "solution's (a CompositeImplicitAutograd kernel decomposes into other ops)")
    elif rt in ("graph", "exported"):
        if got.get("nodes") != ref.get("nodes"):
            raise Mismatch("a graph whose nodes do other work than the reference solution's")
        if got.get("recompiled") != ref.get("recompiled"):
            raise Mismatch("a GraphModule whose code is not its graph's (recompile() after editing the graph)")
        if rt == "exported" and (got.get("inputs"), got.get("outputs")) != (ref.get("inputs"), ref.get("outputs")):
            raise Mismatch("an exported program with another signature than the reference solution's")



# labkit.cpp.build_extension registers a build's operators under `<namespace>_<12 hex digits of its source>`:
# the namespace a lab names is what a right answer must match, the digest is its own source's
_BUILD_DIGEST = re.compile(r"\b([A-Za-z]\w*?)_[0-9a-f]{12}(?=::|\.)")


def _op_text(text) -> str | None:
    return _BUILD_DIGEST.sub(r"\1", text) if isinstance(text, str) else None


def _same_integer(a, b) -> bool:
    try:
        return float(a) == float(b) and int(a) == int(b)
    except (OverflowError, ValueError):  # inf or NaN on one side
        return False


def _same_items(ref: dict, got: dict) -> None:
    if got.get("n") != ref["n"] or len(got.get("v", [])) != len(ref["v"]):
        raise Mismatch("another number of items than the reference solution's")
    for r, g in zip(ref["v"], got["v"]):
        try:
            same(r, g)
        except Mismatch as e:
            raise Mismatch(f"an item: {e}") from None


def _same_array(ref: dict, got: dict) -> None:
    what = "tensor" if ref["t"] == "tensor" else "array"
    if ref["t"] == "ndarray" and bool(got.get("jax")) != bool(ref.get("jax")):
        raise Mismatch("a NumPy array where the reference solution returned a JAX array" if ref.get("jax")
                       else "a JAX array where the reference solution returned a NumPy array")
    if got.get("dtype") != ref["dtype"]:
        raise Mismatch(f"a {what} of another dtype than the reference solution's")
    if got.get("shape") != ref["shape"]:
        raise Mismatch(f"a {what} of another shape than the reference solution's")
    if ref["t"] == "tensor" and got.get("device") != ref.get("device"):
        raise Mismatch("a tensor on another device than the reference solution's")
    if ref["t"] == "tensor" and got.get("requires_grad") != ref.get("requires_grad"):
        raise Mismatch("a tensor that requires grad where the reference's does not" if got.get("requires_grad")
                       else "a tensor that does not require grad where the reference's does")
    if ref["t"] == "tensor" and ref.get("share", -1) >= 0:
        if got.get("share") != ref["share"]:
            raise Mismatch("a new tensor where the reference returned a view of its input (shared storage)")
        if (got.get("strides"), got.get("offset")) != (ref.get("strides"), ref.get("offset")):
            raise Mismatch("a view with different strides or storage offset")
    _same_values(ref, got, ref["dtype"])


def merge(a: dict, b: dict, depth: int = 0) -> dict:
    """One reference observation from two runs' encodings of it: what they agree on stays, to be compared
    exactly; each part they disagree on (a timing in a dict of results, a time in a table of rows) is marked
    `loose` and compared in kind only. So `{"n": 1024, "nbytes": 4096, "copy_s": 0.002}` still holds the
    hand-in to its n and nbytes."""
    if _agrees(a, b, True):
        return a
    if isinstance(a, dict) and isinstance(b, dict) and a.get("t") == b.get("t") and depth < MERGE_DEPTH and \
            "digest" not in a and "digest" not in b:
        t = a["t"]
        # rows of a table (dicts with the same keys): their count is the program's, their differing fields
        # the machine's; a sequence of anything else the runs disagree on (which ops passed a timing threshold)
        # may differ in length or order on the next run, and is compared in kind only
        if t in SEQUENCES and a.get("n") == b.get("n") and isinstance(a.get("v"), list) and \
                isinstance(b.get("v"), list) and len(a["v"]) == len(b["v"]) and \
                all(_row(x) and _row(y) and _keys(x) == _keys(y) for x, y in zip(a["v"], b["v"])):
            return {**a, "v": [merge(x, y, depth + 1) for x, y in zip(a["v"], b["v"])]}
        if t in MAPPINGS and a.get("cls") == b.get("cls") and a.get("n") == b.get("n") and \
                isinstance(a.get("v"), list) and isinstance(b.get("v"), list) and _keys(a) == _keys(b):
            return {**a, "v": [[k, merge(v, w, depth + 1)] for (k, v), (_, w) in zip(a["v"], b["v"])]}
    return {"t": a.get("t", "object") if isinstance(a, dict) else "object", "loose": True}


MERGE_DEPTH = 12


def _row(enc) -> bool:
    return isinstance(enc, dict) and enc.get("t") in MAPPINGS and isinstance(enc.get("v"), list)


def _keys(enc: dict) -> list[str]:
    return [json.dumps(item[0], sort_keys=True) if isinstance(item, list) and item else "" for item in enc["v"]]


def reference_cell(obs_a: list[dict], obs_b: list[dict], cut_a: int, cut_b: int) -> dict:
    """A test cell's reference from the solution's two runs: {"obs", "cut", "stable"}. Each observation the
    runs disagree on becomes their merge (the parts they agree on compared exactly); `stable` is None when the
    runs took different paths (the cell is then judged by whether it finished)."""
    mask = stable_mask(obs_a, obs_b) if cut_a == cut_b else None
    if mask is None:
        return {"obs": obs_a, "cut": cut_a, "stable": None}
    obs = [a if ok else {**a, "out": merge(a["out"], b["out"])} for a, b, ok in zip(obs_a, obs_b, mask)]
    # kernel launches the two runs do not repeat (an autotuner timing its configs) are not compared
    obs = [{k: v for k, v in o.items() if k != "launches"} if o.get("launches") != b.get("launches") else o
           for o, b in zip(obs, obs_b)]
    for key in ("integer_only", "math_ops"):
        obs = [{k: v for k, v in o.items() if k != key} if o.get(key) != b.get(key) else o for o, b in zip(obs, obs_b)]
    return {"obs": obs, "cut": cut_a, "stable": [True] * len(obs)}


def compared(enc, depth: int = 0) -> bool:
    """Whether a reference encoding holds anything the judge compares exactly (not only `loose` parts)."""
    if not isinstance(enc, dict) or depth > MERGE_DEPTH + 2:
        return False
    if enc.get("loose"):
        return False
    t = enc.get("t")
    if t in SEQUENCES:
        return not enc.get("v") or any(compared(x, depth + 1) for x in enc.get("v", []))
    if t in MAPPINGS:
        return not enc.get("v") or any(compared(v, depth + 1) for _, v in enc.get("v", []))
    return True


def judged(cell: dict) -> bool:
    """Whether a reference cell gives the judge anything to compare."""
    return cell.get("stable") is not None and any(compared(o.get("out")) for o in cell.get("obs", []))


def stable_mask(a: list[dict], b: list[dict]) -> list[bool] | None:
    """Which observations two reference runs agree on; None when the runs took different paths."""
    if len(a) != len(b) or any(x["fn"] != y["fn"] for x, y in zip(a, b)):
        return None
    mask = []
    for x, y in zip(a, b):
        try:
            same(x["out"], y["out"])
            mask.append(True)
        except Exception:  # noqa: BLE001 - anything the two runs do not agree on is compared in kind only
            mask.append(False)
    return mask


def judge_cell(label: str, hidden: bool, ref: dict | None, got: dict | None) -> CellVerdict:
    """`ref`: {"obs", "cut", "stable"} from the reference; `got`: the hand-in's cell record (or None)."""
    if got is None:
        return CellVerdict(label, False, "the test did not run (the hand-in's run ended before it)")
    if got.get("error") is not None:
        return CellVerdict(label, False, "the test failed in your notebook (see its message)")
    if label in verify.VERIFIED:  # right answers differ in wording: checked against facts (verify.py)
        obs = got.get("obs")
        passed, reason, checked = verify.judge(label, obs if isinstance(obs, list) else [])
        return CellVerdict(label, passed, reason, checked)
    if ref is None or ref.get("stable") is None:
        return CellVerdict(label, True, judged=False)
    obs, cut = got.get("obs"), got.get("obs_cut", 0)
    if not isinstance(obs, list) or not isinstance(cut, int) or not all(isinstance(g, dict) for g in obs):
        return CellVerdict(label, False, "the run's record of this test is malformed")
    ref_strict, ref_loose, got_strict, got_loose = _split(ref, obs)
    if len(got_strict) != len(ref_strict) or cut != ref.get("cut", 0) or \
            not len(ref_loose) <= len(got_loose) <= 4 * len(ref_loose) + 16:
        # No counts: the hand-in controls its own, and the reference's tell how many hidden cases there are.
        return CellVerdict(label, False, "the test called the lab's functions a different number of times than "
                           "with the reference solution (a check stopped the test early, or the test did not run "
                           "as written)")
    for n, _, problem in _compare(ref, ref_strict, got_strict):
        if problem:
            return CellVerdict(label, False, problem, n)
    # Every call autograd made with the reference must have a match, in order, among the hand-in's: a
    # greedy scan is exact for "is a subsequence", and reads each of the hand-in's records once.
    it = iter(got_loose)
    for r, stable in ref_loose:
        for g in it:
            if g.get("fn") == r["fn"] and _agrees(r["out"], g.get("out"), stable):
                break
        else:
            return CellVerdict(label, False, f"autograd's calls of `{r['fn']}` do not include every call the "
                               "reference solution's graph made, with the same results")
    return CellVerdict(label, True, checked=len(obs))


def _split(ref: dict, obs: list[dict]):
    """(reference's strict, reference's autograd, hand-in's strict, hand-in's autograd) observations. Calls
    autograd makes (a custom Function's backward) may legitimately be more in a right answer than in the
    reference's; which functions those are is the reference's word, never the hand-in's."""
    by_autograd = {r["fn"] for r in ref["obs"] if r.get("autograd") is True}
    return ([(r, s) for r, s in zip(ref["obs"], ref["stable"]) if r["fn"] not in by_autograd],
            [(r, s) for r, s in zip(ref["obs"], ref["stable"]) if r["fn"] in by_autograd],
            [g for g in obs if isinstance(g, dict) and g.get("fn") not in by_autograd],
            [g for g in obs if isinstance(g, dict) and g.get("fn") in by_autograd])


def _patterns(records: list[dict]) -> list[dict]:
    """`records` with the fields of `settings.BY_PATTERN` replaced by their equality pattern across them all:
    each value becomes {"t": "int", "v": k}, k the order in which that value first appeared in that field."""
    seen: dict[str, dict[str, int]] = {}

    def walk(enc, fields, depth):
        if not isinstance(enc, dict) or depth > MERGE_DEPTH + 2:
            return enc
        if enc.get("t") in SEQUENCES and isinstance(enc.get("v"), list):
            return {**enc, "v": [walk(x, fields, depth + 1) for x in enc["v"]]}
        if enc.get("t") in MAPPINGS and isinstance(enc.get("v"), list):
            items = []
            for item in enc["v"]:
                if not (isinstance(item, list) and len(item) == 2):
                    items.append(item)
                    continue
                key, value = item
                name = key.get("v") if isinstance(key, dict) and key.get("t") == "str" else None
                if name in fields:
                    ids = seen.setdefault(name, {})
                    value = {"t": "int", "v": ids.setdefault(json.dumps(value, sort_keys=True), len(ids))}
                else:
                    value = walk(value, fields, depth + 1)
                items.append([key, value])
            return {**enc, "v": items}
        return enc

    out = []
    for r in records:
        fields = settings.BY_PATTERN.get(r.get("fn")) if isinstance(r, dict) else None
        out.append({**r, "out": walk(r.get("out"), set(fields), 0)} if fields else r)
    return out


def _compare(ref: dict, ref_strict: list, got_strict: list):
    """Yield (position, function, what is wrong or "") for each of the reference's strict observations paired
    with the hand-in's, in order: the verdict stops at the first problem, the diagnosis reads them all."""
    by_dtype = _stated_by_dtype(ref["obs"])
    if any(r["fn"] in settings.BY_PATTERN for r, _ in ref_strict):
        ref_strict = list(zip(_patterns([r for r, _ in ref_strict]), [s for _, s in ref_strict]))
        got_strict = _patterns(got_strict)
    for n, ((r, stable), g) in enumerate(zip(ref_strict, got_strict)):
        fn = r["fn"]
        if g.get("fn") != fn:
            yield n, fn, f"a call went to another function than the reference solution's `{fn}`"
            continue
        own = r.get("tol") if isinstance(r.get("tol"), dict) else None
        stated = _STATED.set(own or ({"by_dtype": by_dtype} if by_dtype else None))
        try:
            same(r["out"], g.get("out"), exact=stable)
            if isinstance(r.get("integer_only"), bool) and g.get("integer_only") is not r["integer_only"]:
                yield n, fn, (f"a call of `{fn}` ran ATen ops that compute with or convert floating-point tensors "
                              "where the reference solution's call used integer ops only (and view(dtype) to "
                              "reinterpret the bits)")
                continue
            if isinstance(r.get("math_ops"), list) and g.get("math_ops") != r["math_ops"]:
                yield n, fn, (f"a call of `{fn}` ran ATen ops that compute (or convert dtypes) in torch where the "
                              "reference solution's call left that work to its Triton kernel")
                continue
            if isinstance(r.get("launches"), list) and g.get("launches") != r["launches"]:
                yield n, fn, (f"a call of `{fn}` launched other Triton kernels than the reference solution's "
                              "call: none where it launched one (the result came from torch ops), more "
                              "launches than it (one kernel should do the work), kernels under other "
                              "names than the task gives, or launches with another grid or block size than "
                              "the task fixes, or whose loads read more elements than it allows")
                continue
            yield n, fn, ""
        except Mismatch as e:
            if fn in settings.BY_PATTERN:
                yield n, fn, (f"a call of `{fn}` drew numbers that repeat where the reference solution's differ, "
                              "or differ where they repeat: two workers, two seeds or two epochs drew alike, or "
                              "the same seed drew differently")
                continue
            where = "a value the test looked at" if fn == OBSERVED else f"a call of `{fn}`"
            yield n, fn, f"{where} disagrees with the reference solution: {e}"
        except (KeyError, TypeError, ValueError, AttributeError):
            yield n, fn, f"the run's record of `{fn}` is malformed"
        finally:
            _STATED.reset(stated)


def fingerprint(ref: dict | None, got: dict | None) -> str:
    """How a test cell's record differs from the reference, as one comparable string ("" when the judge finds
    no difference): the kind of error the cell ended with, whether it made fewer or more calls, and every
    observation that disagrees (its position and the judge's words). Two answers with the same fingerprint
    went wrong the same way on the same cases; `diagnose.py` matches it against the mutant catalogue's. It
    holds positions of hidden checks, so it stays on the instructor's side and is never shown."""
    if got is None:
        return "not run"
    parts = []
    err = got.get("error")
    if err is not None:
        name = err.get("ename") if isinstance(err, dict) else None
        parts.append(f"raised {name if isinstance(name, str) and name.isidentifier() else '?'}")
    obs = got.get("obs")
    if ref is None or ref.get("stable") is None or not isinstance(obs, list):
        return "; ".join(parts)
    ref_strict, _, got_strict, _ = _split(ref, obs)
    if len(got_strict) != len(ref_strict) or got.get("obs_cut", 0) != ref.get("cut", 0):
        parts.append("fewer calls" if len(got_strict) < len(ref_strict) else "more calls")
    differ = [f"{n}: {problem}" for n, _, problem in _compare(ref, ref_strict, got_strict) if problem]
    if differ:  # which observations, and how: compared whole, so kept as a digest (a random test has hundreds)
        parts.append(f"{len(differ)} differ #" + hashlib.sha256("\n".join(differ).encode()).hexdigest()[:16])
    return "; ".join(parts)


def _stated_by_dtype(ref_obs: list[dict]) -> dict[str, dict]:
    """{dtype name: the loosest tolerance a hidden check of this cell stated for values of that dtype}, from the
    reference's records (the instructor's checks, never a hand-in's). A call's result is compared at it: the
    check that looked at the result stated it, and a right answer that sits within it must keep its points."""
    out: dict[str, dict] = {}
    for r in ref_obs:
        tol = r.get("tol")
        if not isinstance(tol, dict) or not tol:
            continue
        for name in _dtypes(r.get("out")):
            have = out.setdefault(name, {})
            for k, v in tol.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    have[k] = max(float(v), have.get(k, 0.0))
    return out


def _dtypes(enc, depth: int = 0) -> set[str]:
    if not isinstance(enc, dict) or depth > 8:
        return set()
    if enc.get("t") in ("tensor", "ndarray") and isinstance(enc.get("dtype"), str):
        return {enc["dtype"].rsplit(".", 1)[-1]}
    if enc.get("t") == "float":
        return {"float64"}
    items = enc.get("v") if enc.get("t") in SEQUENCES | {"set"} else \
        [v for _, v in enc.get("v", [])] if enc.get("t") in MAPPINGS and isinstance(enc.get("v"), list) else []
    found: set[str] = set()
    for item in items if isinstance(items, list) else []:
        found |= _dtypes(item, depth + 1)
    return found


def _agrees(ref_out, got_out, exact: bool) -> bool:
    try:
        same(ref_out, got_out, exact=exact)
        return True
    except Exception:  # noqa: BLE001 - a mismatch or a malformed record: not this one
        return False


def apply(run, reference) -> None:
    """Judge every test cell of a hand-in's run (`run.HandinRun`) against `reference`
    (`reference.Reference`): the verdicts go on the run, and a test the judge fails gets an error output in
    the run's notebook, so nbgrader scores it 0 whatever the learner's process said about it."""
    import nbformat

    for n, cell in enumerate(run.cells):
        if cell["kind"] != "test":
            continue
        label, rec = cell["label"], run.records.get(n)
        try:
            verdict = judge_cell(label, cell["hidden"], reference.cells.get(label), rec)
            if verdict.passed and label in run.constraints:
                verdict = CellVerdict(label, False, run.constraints[label], verdict.checked)
        except Exception as e:  # noqa: BLE001 - a record no rule foresaw fails this test, never the class
            verdict = CellVerdict(label, False, f"the run's record of this test could not be judged "
                                  f"({type(e).__name__})")
        run.verdicts[label] = {"passed": verdict.passed, "reason": verdict.reason, "checked": verdict.checked,
                               "judged": verdict.judged}
        if not verdict.passed:  # for the diagnosis (diagnose.py): instructors' side only, never shown
            try:
                run.verdicts[label]["fp"] = f"constraint: {run.constraints[label]}" if label in run.constraints \
                    else fingerprint(reference.cells.get(label), rec)
            except Exception:  # noqa: BLE001 - a record the fingerprint cannot read: no diagnosis
                run.verdicts[label]["fp"] = "unreadable"
        nb_cell = run.notebook.cells[cell["index"]]
        if not verdict.passed and not any(o.get("output_type") == "error" for o in nb_cell.outputs):
            nb_cell.outputs.append(nbformat.v4.new_output("error", ename="GradingError", evalue=verdict.reason,
                                                          traceback=[]))
