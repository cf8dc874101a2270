"""Where a program may be cut for the numerics search: after a computing op whose frontier
(the values defined by then and used after) all have recorded values that fit their types. The
cuts are found in one sweep; this checks them against the definition, a frontier per cut."""

from __future__ import annotations

from pathlib import Path

from harness.diagnose.numerics import NumericsBisectOptions
from harness.diagnose.numerics.subject import SubjectOptions, prepare

T = "!torch.vtensor<[4,5],f32>"
B = "!torch.vtensor<[4,5],bf16>"
# %1 is bf16, which cannot cross into numpy as an argument: no cut while it is live (after
# %1); %0 stays live to the end, which is no reason not to cut.
MODULE = f"""\
func.func @forward(%x: {T}, %w: {T}) -> {T} {{
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %int15 = torch.constant.int 15
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.exp %x : {T} -> {T}
  %1 = torch.aten.to.dtype %0, %int15, %false, %false, %none : {T}, !torch.int, !torch.bool, !torch.bool, !torch.none -> {B}
  %2 = torch.aten.to.dtype %1, %int6, %false, %false, %none : {B}, !torch.int, !torch.bool, !torch.bool, !torch.none -> {T}
  %3 = torch.aten.mul.Tensor %2, %w : {T}, {T} -> {T}
  %4 = torch.aten.add.Tensor %3, %0, %int1 : {T}, {T}, !torch.int -> {T}
  return %4 : {T}
}}
"""  # noqa: E501


def test_the_cuts_are_the_ones_whose_frontier_fits(tmp_path: Path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    subject = prepare(path, SubjectOptions.of(
        "torch-to-linalg", NumericsBisectOptions(out_dir=str(tmp_path))), reference_of_file=False)
    cuts = subject.cuts
    by_definition = [j for j in range(len(cuts.ops)) if not cuts.movable[j] and all(
        cuts.values.fits(ref, cuts.ops[ref.op].results[ref.index].type) for ref in cuts.frontier(j))]
    assert cuts.valid == by_definition
    labels = [cuts.label(j) for j in cuts.valid]
    assert labels == ["aten.exp", "aten.to.dtype", "aten.mul.Tensor", "aten.add.Tensor"]
    assert cuts.label(cuts.valid[1]) == "aten.to.dtype" and cuts.valid[1] == cuts.computing()[2]

