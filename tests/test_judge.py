"""The judge: the trusted comparison of a hand-in's observations with the reference's. Plain data in,
a verdict out; no sandbox, no learner code."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from autograder import judge

sys.path.insert(0, str(judge.__file__).rsplit("/", 1)[0])
import sandbox_runner as runner  # noqa: E402 - the encoder that runs inside the sandbox


def obs(value, *args):
    return json.loads(json.dumps(runner.encode(value, list(args))))


def verdict(ref_values, got_values, hidden=False, error=None):
    ref = [{"fn": "f", "out": obs(v)} for v in ref_values]
    got = [{"fn": "f", "out": obs(v)} for v in got_values]
    return judge.judge_cell("hidden_f" if hidden else "test_f", hidden,
                            {"obs": ref, "cut": 0, "stable": [True] * len(ref)},
                            {"error": error, "obs": got, "obs_cut": 0})


def test_equal_observations_pass_and_different_values_fail():
    assert verdict([(12, 4, 1), 3, True, "x"], [(12, 4, 1), 3, True, "x"]).passed
    assert verdict([(12, 4, 1)], [[12, 4, 1]]).passed, "list or tuple: the lab's own test decides"
    assert not verdict([(12, 4, 1)], [(0, 4, 1)]).passed
    assert not verdict([True], [1]).passed, "a bool is not a number"
    assert not verdict([3], [None]).passed


def test_tensors_compare_dtype_shape_values_and_views():
    base = torch.arange(12.0).reshape(3, 4)
    view, copy = base.t(), base.t().contiguous()
    ref = [{"fn": "f", "out": obs(view, base)}]
    for got, ok in [(view, True), (copy, False), (base.t().double(), False), (base.t() + 1e-7, False)]:
        v = judge.judge_cell("t", False, {"obs": ref, "cut": 0, "stable": [True]},
                             {"error": None, "obs": [{"fn": "f", "out": obs(got, base)}], "obs_cut": 0})
        assert v.passed is ok, (got.stride(), v)
    assert verdict([torch.tensor([1.0, float("nan")])], [torch.tensor([1.0 + 1e-7, float("nan")])]).passed
    assert not verdict([torch.tensor([1.0, float("nan")])], [torch.tensor([1.0, 0.0])]).passed
    big = torch.randn(100_000, generator=torch.Generator().manual_seed(0))
    assert verdict([big], [big.clone()]).passed and not verdict([big], [big * 1.01]).passed


def test_exceptions_compare_by_type():
    ref = [{"fn": "f", "out": {"t": "raised", "types": ["IndexError", "LookupError", "Exception"]}}]
    for types, ok in [(["IndexError", "LookupError", "Exception"], True), (["MyIndexError", "IndexError"], True),
                      (["ValueError", "Exception"], False)]:
        v = judge.judge_cell("t", False, {"obs": ref, "cut": 0, "stable": [True]},
                             {"error": None, "obs": [{"fn": "f", "out": {"t": "raised", "types": types}}],
                              "obs_cut": 0})
        assert v.passed is ok


def test_a_test_that_failed_in_the_process_or_took_another_path_fails():
    assert not verdict([1], [1], error={"ename": "LabCheckFailure"}).passed
    v = verdict([1, 2, 3], [1, 2])
    assert not v.passed and "different number of times" in v.reason
    assert not any(ch.isdigit() for ch in v.reason), f"feedback quotes a count: {v.reason}"


def test_unstable_observations_compare_in_kind_only():
    ref = {"obs": [{"fn": "f", "out": obs(0.125)}], "cut": 0, "stable": [False]}
    got = {"error": None, "obs": [{"fn": "f", "out": obs(9.5)}], "obs_cut": 0}
    assert judge.judge_cell("t", False, ref, got).passed
    got["obs"][0]["out"] = obs("text")
    assert not judge.judge_cell("t", False, ref, got).passed


@pytest.mark.parametrize("bad", [None, 3, "x", [1], {"t": 5}, {"t": "tensor"}, {"t": "int", "v": "zz"},
                                 {"t": "tensor", "dtype": "torch.float32", "shape": [2], "data": "!!", "how": "all",
                                  "kind": "f"}, {"t": "tuple", "n": 1, "v": None}])
def test_malformed_observations_fail_the_test_and_never_raise(bad):
    ref = [{"fn": "f", "out": obs(torch.ones(2))}]
    run = {"error": None, "obs": [{"fn": "f", "out": bad}], "obs_cut": 0}
    v = judge.judge_cell("t", False, {"obs": ref, "cut": 0, "stable": [True]}, run)
    assert not v.passed


def test_messages_never_quote_what_the_hand_in_produced():
    secret = "SECRET_HIDDEN_SOURCE"
    ref = [{"fn": "f", "out": obs(torch.ones(2))}]
    for got in [obs(torch.ones(3)), obs(secret), {"t": "raised", "types": [secret]},
                {"t": "tensor", "dtype": secret, "shape": [2]}, obs({secret: 1})]:
        v = judge.judge_cell("hidden_f", True, {"obs": ref, "cut": 0, "stable": [True]},
                             {"error": None, "obs": [{"fn": "f", "out": got}], "obs_cut": 0})
        assert not v.passed and secret not in v.reason, v.reason


def test_autograd_calls_of_backward_are_judged_as_a_subsequence():
    """A custom Function's backward is called by autograd, as often as the answer's graph asks: a right answer
    that saves its output calls it again in double backward. The reference's calls must all be there, in order,
    with the same results; extra ones are allowed. Which functions are autograd's is the reference's word."""
    def rec(fn, value, autograd=False):
        return {"fn": fn, "out": obs(value), **({"autograd": True} if autograd else {})}

    ref = [rec("F.forward", 1.0), rec("F.backward", 2.0, True), rec("F.backward", 3.0, True), rec("g", 4.0)]

    def judged(got):
        return judge.judge_cell("t", False, {"obs": ref, "cut": 0, "stable": [True] * len(ref)},
                                {"error": None, "obs": got, "obs_cut": 0})

    right = [rec("F.forward", 1.0), rec("F.backward", 2.0), rec("F.backward", 9.0), rec("F.backward", 3.0),
             rec("g", 4.0)]
    assert judged(right).passed, "an extra backward call in between is a right answer's choice"
    assert not judged([rec("F.forward", 1.0), rec("F.backward", 2.0), rec("g", 4.0)]).passed, "one missing"
    assert not judged([rec("F.forward", 1.0), rec("F.backward", 3.0), rec("F.backward", 2.0),
                       rec("g", 4.0)]).passed, "out of order"
    assert not judged([rec("F.forward", 1.0), rec("F.backward", 2.0), rec("F.backward", 3.5),
                       rec("g", 4.0)]).passed, "a wrong gradient"
    assert not judged([rec("F.forward", 1.0)] + [rec("F.backward", 2.0)] * 30 + [rec("F.backward", 3.0),
                      rec("g", 4.0)]).passed, "a flood of calls is not a right answer's choice"
    # the hand-in cannot make a strict function loose by marking its own records
    forged = [rec("F.forward", 1.0), rec("F.backward", 2.0), rec("F.backward", 3.0), rec("g", 4.0, True),
              rec("g", 5.0, True)]
    assert not judged(forged).passed


def test_float_results_of_any_size_are_compared_within_a_tolerance():
    """A float observation must stay small enough not to become a digest (compared bit for bit): a right
    answer that computes in a wider dtype, or multiplies by a reciprocal, differs in the last bits."""
    gen = torch.Generator().manual_seed(0)
    for n in (300, 800, 1024, 100_000):
        x = torch.randn(n, generator=gen)
        results = (x, x.double(), torch.complex(x, x), x.half())
        assert len(json.dumps(obs(results))) <= runner.OBS_BYTES, n
        assert verdict([x], [x * (1 + 1e-6)]).passed and not verdict([x], [x * 1.01]).passed, n


def test_device_and_requires_grad_are_part_of_a_tensor():
    x = torch.ones(3)
    assert not verdict([x], [x.requires_grad_(False).clone().requires_grad_()]).passed
    assert not verdict([torch.empty(2, device="meta")], [torch.empty(2)]).passed


def test_a_tolerance_a_hidden_check_stated_comes_from_the_reference_record():
    """The probe hands a check's rtol/atol/ulps to __observe__; the judge takes them from the reference's record
    (doubled), never from the hand-in's, which could claim any."""
    ref_value, close, far = torch.tensor([1.0, 2.0]), torch.tensor([1.0 + 3e-7, 2.0]), torch.tensor([1.001, 2.0])

    def judged(got, ref_tol, got_tol=None):
        ref = [{"fn": judge.OBSERVED, "out": obs(ref_value), **({"tol": ref_tol} if ref_tol else {})}]
        got_rec = [{"fn": judge.OBSERVED, "out": obs(got), **({"tol": got_tol} if got_tol else {})}]
        return judge.judge_cell("hidden_f", True, {"obs": ref, "cut": 0, "stable": [True]},
                                {"error": None, "obs": got_rec, "obs_cut": 0}).passed

    assert judged(far, None) is False and judged(close, None) is True  # the float32 default: rtol 1e-4
    assert judged(close, {"ulps": 1.0}) is False  # 3e-7 is more than 2 ulps of float32 at 1.0
    assert judged(far, {"rtol": 1e-2, "atol": 0.0}) is True
    assert judged(far, None, got_tol={"rtol": 1.0}) is False  # the hand-in's own tolerance counts for nothing


def test_a_call_is_compared_at_the_tolerance_the_cell_states_for_its_dtype():
    """A right answer 2e-4 off the reference (an exp2 softmax in lab 7's attention) whose hidden check allows rtol
    2e-3 keeps the test: the call's own result is compared at what the cell's checks stated for float32, never
    at the coarse default. A float64 result in the same cell keeps the default."""
    ref_value = torch.tensor([1.0, 2.0])
    near, far = ref_value * (1 + 2e-4), ref_value * 1.01

    def judged(got, dtype=torch.float32):
        ref = [{"fn": "attention", "out": obs(ref_value.to(dtype))},
               {"fn": judge.OBSERVED, "out": obs(ref_value), "tol": {"rtol": 2e-3, "atol": 2e-3}}]
        got_rec = [{"fn": "attention", "out": obs(got.to(dtype))}, {"fn": judge.OBSERVED, "out": obs(ref_value)}]
        return judge.judge_cell("hidden_attention", True, {"obs": ref, "cut": 0, "stable": [True, True]},
                                {"error": None, "obs": got_rec, "obs_cut": 0}).passed

    assert judged(near) and not judged(far)
    assert not judged(near, torch.float64), "a dtype no check stated a tolerance for keeps the default"


def test_a_numpy_copy_is_not_a_jax_array_and_integers_compare_exactly():
    jnp = pytest.importorskip("jax.numpy")
    import numpy as np

    assert verdict([jnp.arange(3.0)], [jnp.arange(3.0)]).passed
    v = verdict([jnp.arange(3.0)], [np.arange(3.0, dtype=np.float32)])
    assert not v.passed and "NumPy array" in v.reason
    address = 140_000_000_000_000
    assert not verdict([address], [float(address + 4096)]).passed, "an integer reference gets no relative slack"
    assert verdict([address], [float(address)]).passed and verdict([3], [3.0]).passed


def test_no_reason_quotes_a_number_a_length_or_a_dtype():
    """Feedback carries the judge's own words only: no count, length, index, dtype or device of either run."""
    cases = [verdict([list(range(7))], [list(range(5))]), verdict([(1, 2, 3)], [(1, 2, 4)]),
             verdict([{"a": 1, "b": 2}], [{"a": 1}]), verdict([torch.ones(3, dtype=torch.float16)], [torch.ones(3)]),
             verdict([torch.float16], [torch.bfloat16]), verdict([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [1]),
             verdict([torch.empty(2, device="meta")], [torch.empty(2)])]
    for v in cases:
        assert not v.passed
        assert not any(ch.isdigit() for ch in v.reason) and "float" not in v.reason and "meta" not in v.reason, \
            v.reason


# ---- tests judged against facts (verify.py): lab 14's traces

ADD_TRACE = [
    ("torch.Tensor.__add__", "torch/csrc/autograd/generated/python_variable_methods.cpp", "-"),
    ("at::_ops::add_Tensor::call(at::Tensor const&, at::Tensor const&, c10::Scalar const&)", "ATen/ops/add_ops.h", "-"),
    ("torch::autograd::VariableType::(anonymous namespace)::add_Tensor", "VariableType_2.cpp", "AutogradCPU"),
    ("wrapper_CPU_add_Tensor", "/__w/pytorch/pytorch/build/aten/src/ATen/RegisterCPU_0.cpp", "CPU"),
    ("at::native::add_stub", "aten/src/ATen/native/BinaryOps.cpp", "-"),
    ("at::native::AVX2::cpu_kernel_vec", "aten/src/ATen/UfuncCPUKernel_add.cpp.AVX2.cpp", "-"),
]


def trace_verdict(steps, error=None, label="hidden_trace_add", fn="trace_add"):
    # the reference's record is deliberately something else: a verified test never compares with it
    ref = {"obs": [{"fn": fn, "out": obs([("x", "y", "-")])}], "cut": 0, "stable": [True]}
    return judge.judge_cell(label, True, ref, {"error": error, "obs": [{"fn": fn, "out": obs(steps)}], "obs_cut": 0})


def test_a_trace_in_other_words_passes_and_a_made_up_step_fails():
    assert trace_verdict(ADD_TRACE).passed
    made_up = ADD_TRACE[:5] + [("at::native::add_avx512_kernel", "aten/src/ATen/native/cpu/BinaryOpsKernel.cpp", "-")]
    v = trace_verdict(made_up)
    assert not v.passed and "does not hold" in v.reason
    assert "add_avx512_kernel" not in v.reason, "the judge does not echo the hand-in's text"


def test_a_trace_whose_process_said_pass_is_still_checked():
    """A hand-in that switches check_trace off in its own process finishes the test without an error: the
    trusted side's check of the returned steps decides."""
    skipped_autograd = [s for s in ADD_TRACE if s[2] != "AutogradCPU"]
    assert not trace_verdict(skipped_autograd).passed
    assert not trace_verdict(ADD_TRACE[:5]).passed  # add_stub picks the loop; the loop is not listed
    assert not trace_verdict("not a list").passed
    assert not trace_verdict([("a" * 300, "b", "-")] * 5).passed  # past the field size: hashed, unreadable
    assert not trace_verdict(ADD_TRACE, error={"evalue": "x"}).passed  # rule 1 still holds


def test_a_key_step_must_name_the_file_that_registered_that_kernel_for_its_operator():
    from labkit import cpp

    mm = [("torch.Tensor.__matmul__", "torch/csrc/autograd/generated/python_variable_methods.cpp", "-"),
          ("at::_ops::matmul::call", "ATen/ops/matmul_ops.h", "-"),
          ("torch::autograd::VariableType::matmul", "torch/csrc/autograd/generated/VariableType.cpp", "AutogradCPU"),
          ("at::_ops::mm::call", "ATen/ops/mm_ops.h", "-"),
          ("wrapper_CPU_mm", "aten/src/ATen/RegisterCPU.cpp", "CPU"),
          ("mkldnn_bf16_gemm", "aten/src/ATen/native/mkldnn/Matmul.cpp", "-") if cpp.bf16_matmul_uses_onednn()
          else ("gemm_stub", "aten/src/ATen/native/CPUBlas.cpp", "-")]
    problems = cpp.verify_trace("matmul", mm)
    assert problems and "RegisterCompositeImplicitAutograd" in problems[0], problems
    mm[2] = ("at::native::matmul", "aten/src/ATen/RegisterCompositeImplicitAutograd_0.cpp", "AutogradCPU")
    assert cpp.verify_trace("matmul", mm) == []


def test_the_compile_stage_quotes_the_compiler_for_cpp_that_does_not_build():
    """Feedback never quotes the learner's process; the compile stage compiles the hand-in's C++ text
    alone, in a fresh sandbox, and gives the failed tests the compiler's own words."""
    import nbformat

    from autograder import compile as compile_stage
    from autograder import sandbox

    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def load_rowdot(): ...")])
    source.cells[0].metadata = {"grader": {"compiles": ["test_load_rowdot"]},
                                "nbgrader": {"solution": True, "grade_id": "load_rowdot"}}
    cpp = '\n// TORCH_LIBRARY comes later\nint f() { return undefined_name; }\n'
    cell = f'def load_rowdot():\n    source = r"""{cpp}"""\n'
    handin = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    handin.cells[0].metadata = {"nbgrader": {"solution": True, "grade_id": "load_rowdot"}}

    class Run:
        verdicts = {"test_load_rowdot": {"passed": False, "reason": "the test failed in your notebook"}}
        notes: list = []

    run = Run()
    compile_stage.explain(source, handin, run, sandboxed=sandbox.available())
    reason = run.verdicts["test_load_rowdot"]["reason"]
    assert "does not compile" in reason and "undefined_name" in reason, reason
    assert compile_stage.cpp_sources("x = 1\ny = 'TORCH_LIBRARY(a, m) {}'") == ["TORCH_LIBRARY(a, m) {}"]


def test_operators_graphs_and_objects_are_compared_as_data_not_by_kind():
    """An op handle by its qualified name and schema, an FX graph by what its nodes do: object() no longer matches
    a GraphModule, nor one operator another. (Other objects are compared in kind: a context manager or a
    recording backend may be a function or a class instance in two right answers.)"""
    import torch.fx

    def f(x):
        return torch.sigmoid(x) * x

    def g(x):
        return torch.nn.functional.silu(x)

    gm, gm_again, other = torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(f), torch.fx.symbolic_trace(g)
    assert verdict([gm], [gm_again]).passed
    for wrong in (object(), other, None):
        assert not verdict([gm], [wrong]).passed, wrong
    add, mul = torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor
    assert verdict([add], [torch.ops.aten.add.Tensor]).passed
    assert not verdict([add], [mul]).passed and not verdict([add], [object()]).passed
    assert not verdict([torch.ops.aten.add], [torch.ops.aten.add.Tensor]).passed, "a packet is not an overload"

    # a pass that edits the graph and forgets recompile() returns a module that still runs its old code
    stale = torch.fx.symbolic_trace(g)
    stale.graph.erase_node(next(n for n in stale.graph.nodes if n.op == "output"))
    stale.graph.output(next(iter(stale.graph.nodes)))
    fresh = torch.fx.symbolic_trace(g)
    fresh.graph.erase_node(next(n for n in fresh.graph.nodes if n.op == "output"))
    fresh.graph.output(next(iter(fresh.graph.nodes)))
    fresh.recompile()
    v = verdict([fresh], [stale])
    assert not v.passed and "recompile()" in v.reason, v

    # a build's namespace carries a digest of its own source (labkit.cpp.build_extension): the lab's name counts
    mine = {"t": "op", "v": "lab14_0123456789ab.rowdot", "schema": "lab14_0123456789ab::rowdot(Tensor x) -> Tensor"}
    theirs = {"t": "op", "v": "lab14_ba9876543210.rowdot", "schema": "lab14_ba9876543210::rowdot(Tensor x) -> Tensor"}
    judge.same(mine, theirs)
    with pytest.raises(judge.Mismatch):
        judge.same(mine, {**theirs, "v": "lab13_ba9876543210.rowdot"})

    # which overloads decompose (a CompositeImplicitAutograd kernel) is read from the dispatcher by the runner
    assert obs(torch.ops.aten.matmul.default)["decomposes"] == ["default"]
    assert obs(torch.ops.aten.add.Tensor)["decomposes"] == []
    with pytest.raises(judge.Mismatch, match="dispatch keys"):
        judge.same({**mine, "decomposes": []}, {**theirs, "decomposes": ["default"]})


def test_records_and_classes_are_compared_by_their_fields_not_by_kind():
    """A dataclass from outside the notebook (labkit's Launch, Op), a SimpleNamespace and a Triton Config are records:
    compared field by field, a Launch by the fields that decide its equality (kernel, grid; not its traffic). A
    class by its qualified name. A dataclass the notebook defines stays an object: a right answer names its own."""
    import dataclasses
    import types

    from labkit.fusion import Launch
    from labkit.streams import Op

    one = Launch("fused", (4, 1, 1), True, {"BLOCK": 256}, {"loaded": 10})
    assert verdict([one], [Launch("fused", (4, 1, 1), True, {"BLOCK": 128}, {"loaded": 99})]).passed
    assert not verdict([one], [Launch("fused", (8, 1, 1), True)]).passed
    assert not verdict([one], [object()]).passed
    assert not verdict([Op("launch", stream=1, name="k")], [Op("launch", stream=2, name="k")]).passed
    row = types.SimpleNamespace(key="aten::mm", count=3)
    assert verdict([row], [types.SimpleNamespace(key="aten::mm", count=3)]).passed
    assert not verdict([row], [types.SimpleNamespace(key="aten::mm", count=4)]).passed
    assert not verdict([row], [{"key": "aten::mm", "count": 3}]).passed, "a dict is not a namespace"
    assert verdict([torch.nn.Linear], [torch.nn.Linear]).passed
    assert not verdict([torch.nn.Linear], [torch.nn.Conv1d]).passed

    Mine = dataclasses.make_dataclass("Mine", ["a"], namespace={"__module__": "__main__"})
    Theirs = dataclasses.make_dataclass("Theirs", ["b"], namespace={"__module__": "__main__"})
    assert obs(Mine(1))["t"] == "object" and verdict([Mine(1)], [Theirs(2)]).passed
    try:
        import triton
    except ImportError:
        return
    config = triton.Config({"BLOCK_M": 32}, num_warps=4, num_stages=2)
    assert verdict([config], [triton.Config({"BLOCK_M": 32}, num_warps=4, num_stages=2)]).passed
    assert not verdict([config], [triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=2)]).passed
    assert not verdict([config], [triton.Config({"BLOCK_M": 32}, num_warps=8, num_stages=2)]).passed


def test_a_librarys_enum_member_is_compared_by_its_name():
    """The profiler's event kinds (lab 8) are a pybind11 enum, `torch.autograd.DeviceType`: a member is compared by
    its class and name, so CUDA for CPU fails and `object()` fails; Python enums of a library likewise. An enum
    the notebook defines is an object, like its other classes."""
    import enum
    import http

    cpu, cuda = torch.autograd.DeviceType.CPU, torch.autograd.DeviceType.CUDA
    assert obs(cpu) == {"t": "token", "v": "torch._C._autograd.DeviceType.CPU"}
    assert verdict([cpu], [torch.autograd.DeviceType.CPU]).passed
    assert not verdict([cpu], [cuda]).passed
    assert not verdict([cpu], [object()]).passed
    assert not verdict([cpu], ["torch._C._autograd.DeviceType.CPU"]).passed, "a string is not the member"
    assert not verdict([http.HTTPStatus.OK], [http.HTTPStatus.CREATED]).passed
    Mine = enum.Enum("Mine", ["A"], module="__main__")
    assert obs(Mine.A)["t"] == "object"


def test_what_the_reference_runs_agree_on_is_compared_exactly_inside_an_unstable_value():
    """A row of timings {"n": 1024, "nbytes": 4096, "copy_s": ...}: the two reference runs differ in the times,
    so the times are compared in kind only, but n and nbytes still have to be right (lab 4's timing task)."""
    def rows(n, t):
        return obs([{"n": n, "nbytes": 4 * n, "copy_s": t}])

    cell = judge.reference_cell([{"fn": "f", "out": rows(1024, 0.002)}], [{"fn": "f", "out": rows(1024, 0.003)}], 0, 0)
    assert judge.judged(cell)

    def judged(out):
        return judge.judge_cell("test_f", False, cell, {"error": None, "obs": [{"fn": "f", "out": out}],
                                                         "obs_cut": 0}).passed

    assert judged(rows(1024, 0.5)), "a time is compared in kind only"
    assert not judged(rows(1000, 0.002)) and not judged(obs([{"n": 1024, "nbytes": 4096, "copy_s": "fast"}]))
    # a list of anything else the runs disagree on (which ops passed a timing threshold) is compared in kind
    ops = judge.reference_cell([{"fn": "f", "out": obs([("mm", 0.9), ("add", 0.06)])}],
                               [{"fn": "f", "out": obs([("mm", 0.91), ("relu", 0.05)])}], 0, 0)
    assert judge.judge_cell("test_f", False, ops, {"error": None, "obs": [{"fn": "f", "out": obs([("mm", 0.99)])}],
                                                   "obs_cut": 0}).passed
    only_times = judge.reference_cell([{"fn": "f", "out": obs(0.1)}], [{"fn": "f", "out": obs(0.2)}], 0, 0)
    assert not judge.judged(only_times), "a cell whose every observation is a time gives the judge nothing"


def test_triton_launches_travel_with_a_call_and_are_compared_with_the_reference():
    """Lab 7's "one launch of the kernel the task names" is observed by the runner under Triton's launch path
    (`Observer.watch_launches`), not by the test's recorder a hand-in can rebind: a call that launched nothing
    (torch ops), more, or a kernel under another name differs from the reference; launches the reference's
    two runs do not repeat (an autotuner timing its configs) are not compared."""
    def cell(launches_a, launches_b=None):
        a = [{"fn": "f", "out": obs(3.0), "launches": launches_a}]
        b = [{"fn": "f", "out": obs(3.0), "launches": launches_a if launches_b is None else launches_b}]
        return judge.reference_cell(a, b, 0, 0)

    def judged(ref, launches):
        got = {"fn": "f", "out": obs(3.0), **({"launches": launches} if launches is not None else {})}
        return judge.judge_cell("hidden_f", True, ref, {"error": None, "obs": [got], "obs_cut": 0})

    ref = cell(["add_mul_kernel"])
    assert judged(ref, ["add_mul_kernel"]).passed
    for wrong in ([], None, ["add_mul_kernel", "add_mul_kernel"], ["my_kernel"]):
        v = judged(ref, wrong)
        assert not v.passed and "Triton kernels" in v.reason and not any(c.isdigit() for c in v.reason), (wrong, v)
    assert judged(cell(["k"] * 3, ["k"] * 5), []).passed, "runs that disagree on launches compare none"
    no_watch = judge.reference_cell([{"fn": "f", "out": obs(3.0)}], [{"fn": "f", "out": obs(3.0)}], 0, 0)
    assert judged(no_watch, ["anything"]).passed, "a lab without launch rules compares no launches"


def test_worker_draws_are_compared_by_their_pattern_not_their_numbers():
    """Lab 11's DataLoader draws (`labkit.modules.loader_draws`, settings.BY_PATTERN) depend on how a right answer
    derives its workers' seeds, so their numbers cannot match the reference's; what every right answer shares is
    where they repeat (the same loader seed twice) and where they differ (two workers, two seeds, two epochs).
    Other numbers nobody can be held to are compared alike: the test observes them in any order it likes."""
    def run(draws):  # draws[call][item] = (worker, np_global); the index is the item's position
        return [{"fn": "loader_draws", "out": obs([[{"index": i, "worker": w, "np_global": d}
                                                    for i, (w, d) in enumerate(epoch)]])} for epoch in draws]

    def cell(ref, got):
        return judge.judge_cell("test_seeded_worker_init", False,
                                {"obs": ref, "cut": 0, "stable": [True] * len(ref)},
                                {"error": None, "obs": got, "obs_cut": 0})

    reference = run([[(0, 11), (1, 22), (0, 33)], [(0, 11), (1, 22), (0, 33)], [(0, 44), (1, 55), (0, 66)]])
    other_seeding = run([[(0, 7), (1, 8), (0, 9)], [(0, 7), (1, 8), (0, 9)], [(0, 1), (1, 2), (0, 3)]])
    assert cell(reference, other_seeding).passed, "a right answer drawing other numbers keeps its points"
    same_in_both_workers = run([[(0, 7), (1, 7), (0, 9)], [(0, 7), (1, 7), (0, 9)], [(0, 1), (1, 1), (0, 3)]])
    from_worker_id_only = run([[(0, 7), (1, 8), (0, 9)], [(0, 7), (1, 8), (0, 9)], [(0, 7), (1, 8), (0, 9)]])
    fresh_entropy = run([[(0, 7), (1, 8), (0, 9)], [(0, 4), (1, 5), (0, 6)], [(0, 1), (1, 2), (0, 3)]])
    wrong_worker = run([[(1, 7), (1, 8), (0, 9)], [(1, 7), (1, 8), (0, 9)], [(1, 1), (1, 2), (0, 3)]])
    for wrong in (same_in_both_workers, from_worker_id_only, fresh_entropy):
        v = cell(reference, wrong)
        assert not v.passed and "drew" in v.reason and not any(c.isdigit() for c in v.reason), v
    assert not cell(reference, wrong_worker).passed, "the worker and index fields are compared as they are"


_LAUNCH_SHAPES = r'''
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, sys.argv[1])
import torch, triton, triton.language as tl
import labkit.fusion  # noqa: F401 - the runner watches launches only in labs that import it
import sandbox_runner as runner

@triton.jit
def copy_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def online_softmax(x):  # a grid function of meta, then a fixed grid with BLOCK passed by position
    copy_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel(), BLOCK=16)
    copy_kernel[(3,)](x, x.numel(), 32)
    return x

def fused(x):
    copy_kernel[(1,)](x, x.numel(), BLOCK=64)
    return x

observer = runner.Observer(100)
observer.configure({"launch_rules": {"online_softmax": ["BLOCK"]}})
observer.watch_launches()
observer.active = True
ns = {"online_softmax": online_softmax, "fused": fused}
observer.wrap(ns, "online_softmax")
observer.wrap(ns, "fused")
ns["online_softmax"](torch.zeros(40))
ns["fused"](torch.zeros(40))
print([r.get("launches") for r in observer.records])
'''


def test_a_launch_records_the_grid_and_blocks_its_task_fixes():
    """settings.LAUNCH_RULES: for lab 7's functions whose task fixes the grid (one program per row) or a block
    (BLOCK = min(SOFTMAX_BLOCK, ...)), each launch records them under Triton's launch path, a grid function of
    meta evaluated as Triton does; other functions record the kernel's name only (their grid is the answer's)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _LAUNCH_SHAPES, str(judge.__file__).rsplit("/", 1)[0]],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str(
        [["copy_kernel grid=(3, 1, 1) BLOCK=16", "copy_kernel grid=(3, 1, 1) BLOCK=32"], ["copy_kernel"]]), out.stdout
    from autograder import settings

    assert set(settings.LAUNCH_RULES) <= {"softmax_rows", "online_softmax", "matmul"}, "lab 7's interface only"


def test_integer_only_is_recorded_under_the_runners_own_mode_and_compared():
    """settings.INTEGER_ONLY (lab 5: "integer ops only"): the runner enters labkit.amp's dtype recorder, taken
    before any answer cell ran, around each call and records whether every ATen op kept to the rule; a hand-in
    that rebinds the test's check still shows its float ops to the judge."""
    import labkit.amp  # noqa: F401 - the runner takes its recorder only in labs whose set-up imported it

    observer = runner.Observer(100)
    observer.configure({"integer_only": ["bits", "float_bits"]})
    observer.watch_op_dtypes()
    observer.active = True
    ns = {"bits": lambda x: x.view(torch.int32) >> 23, "float_bits": lambda x: (x.abs() * 2).view(torch.int32) >> 23,
          "other": lambda x: x * 2}
    for name in ns:
        observer.wrap(ns, name)
    x = torch.randn(4)
    for name in ("bits", "float_bits", "other"):
        ns[name](x)
    assert [r.get("integer_only") for r in observer.records] == [True, False, None]

    ref = judge.reference_cell([observer.records[0]], [observer.records[0]], 0, 0)
    wrong = {**observer.records[0], "integer_only": False}
    v = judge.judge_cell("hidden_bits", True, ref, {"error": None, "obs": [wrong], "obs_cut": 0})
    assert not v.passed and "integer ops only" in v.reason, v
    right = {"error": None, "obs": [observer.records[0]], "obs_cut": 0}
    assert judge.judge_cell("hidden_bits", True, ref, right).passed
