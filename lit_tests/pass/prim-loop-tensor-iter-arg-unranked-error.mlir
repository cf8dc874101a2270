// A tensor carried through a for-like torch.prim.Loop (`for i in range(50): x = x + i` in a
// scripted module). TorchScript types the loop-carried value `Tensor`, so both importers give the
// loop an unranked iter argument; here that is the first function, with the argument's
// [7,9] x f32 cast away as the pipeline's calling-convention pass does. torch-mlir's shape and
// dtype refinement works op by op on tensor results and never refines a loop's iter arguments or
// results from its init values, so the unranked value survives to the backend contract, which
// rejects it. With the iter argument typed (the second function) the same loop passes and lowers
// through scf.for to linalg.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// TorchPrimLoopForLikeTensorArgModule_basic. Upstream expects it to pass on its linalg
// (TorchScript) config: added in March 2024 (torch-mlir cb5cb506), it is not in LINALG_XFAIL_SET
// then or now; but that config has not run in CI since #3693, so no upstream run shows it today.
// Our importer's prim.Loop has the form of upstream's importer test node_import/loop.py; that
// this is upstream's regression is not shown (a likely cause, if so: #3812 restricted prim.Loop
// unrolling to shape-calculation regions; not bisected). The FX path passes because export
// unrolls the loop.
// Upstream fix: refine prim.Loop iter-argument and result types to the join of the init and
// yielded types (the loop is for-like, so the init type is the fixed point here).
//
// Now: the first function is rejected, the second lowers. When upstream fixes it, the ERR lines
// fail here.

// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: torch-mlir-opt %S/Inputs/prim-loop-tensor-iter-arg-typed.mlir %{pipeline:function-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG

// ERR:      error: unsupported by backend contract: tensor with unknown rank
// ERR:      note: see current operation: {{.*}}"torch.tensor_static_info_cast"(%arg0) : (!torch.vtensor<[7,9],f32>) -> !torch.vtensor
// ERR-NOT:  error:

// LINALG-LABEL: func.func @loop_carried_typed
// LINALG:         scf.for
// LINALG:           linalg.generic
// LINALG-NOT:     torch.prim.Loop

func.func @loop_carried_unranked(%arg0: !torch.vtensor<[7,9],f32>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %int50 = torch.constant.int 50
  %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[7,9],f32> to !torch.vtensor
  %1 = torch.prim.Loop %int50, %true, init(%0) {
  ^bb0(%arg1: !torch.int, %arg2: !torch.vtensor):
    %2 = torch.aten.add.Scalar %arg2, %arg1, %int1 : !torch.vtensor, !torch.int, !torch.int -> !torch.vtensor
    torch.prim.Loop.condition %true, iter(%2 : !torch.vtensor)
  } : (!torch.int, !torch.bool, !torch.vtensor) -> !torch.vtensor
  return %1 : !torch.vtensor
}

