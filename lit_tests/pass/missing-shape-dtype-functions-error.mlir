// Ops with no shape or no dtype function in torch-mlir's abstract interpretation library: their
// results stay !torch.vtensor (unknown rank) or lose their dtype, and the backend contract
// rejects them. TorchScript leaves every op result for the pipeline to type, so these ops stop
// the TorchScript path; export types every result itself, so the FX path does not need them.
//
// Seen in upstream's e2e suite through the project's TorchScript importer, each
// imported as upstream's C++ importer imported it:
//   aten.xlogy.Tensor           ElementwiseXlogyTensor{,Broadcast,Int,ZeroAndNan}Module_basic
//   aten.__rshift__.Scalar      ElementwiseRshiftScalarSignedInt8Module_basic
//   aten.complex                ElementwiseCreateComplexModule_basic
//   aten.im2col                 UnfoldModule_basic (nn.Unfold)
//   aten.reflection_pad3d       ReflectionPad3dModule*_basic (7; a shape function, no dtype one)
// (native_group_norm_backward and aten.tensor of a bool list have their own tests:
// native-group-norm-backward-unsupported-error.mlir, tensor-bool-list-unranked-error.mlir.)
// Upstream fix: the missing functions in abstract_interp_lib_gen.py.
//
// Now: the contract errors below. When upstream adds a function, its case fails here.

// RUN: not torch-mlir-opt %s -split-input-file -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline)' 2>&1 | FileCheck %s

// CHECK:      error: unsupported by backend contract: tensor with unknown rank
// CHECK:      note: see current operation: {{.*}}"torch.aten.xlogy.Tensor"
// CHECK:      error: unsupported by backend contract: tensor with unknown rank
// CHECK:      note: see current operation: {{.*}}"torch.aten.__rshift__.Scalar"
// CHECK:      error: unsupported by backend contract: tensor with unknown rank
// CHECK:      note: see current operation: {{.*}}"torch.aten.complex"
// CHECK:      error: unsupported by backend contract: tensor with unknown rank
// CHECK:      note: see current operation: {{.*}}"torch.aten.im2col"
// CHECK:      error: unsupported by backend contract: tensor with unknown dtype
// CHECK:      note: see current operation: {{.*}}"torch.aten.reflection_pad3d"{{.*}} -> !torch.vtensor<[1,20,40,40,40],unk>

func.func @xlogy(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,?],f32>) -> !torch.vtensor {
  %0 = torch.aten.xlogy.Tensor %arg0, %arg1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}

// -----

func.func @rshift_scalar(%arg0: !torch.vtensor<[?,?],si8>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %0 = torch.aten.__rshift__.Scalar %arg0, %int1 : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor
  return %0 : !torch.vtensor
}

// -----

func.func @complex(%arg0: !torch.vtensor<[?],f32>, %arg1: !torch.vtensor<[?],f32>) -> !torch.vtensor {
  %0 = torch.aten.complex %arg0, %arg1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}

// -----

func.func @im2col(%arg0: !torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %k = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.im2col %arg0, %k, %d, %p, %d : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int> -> !torch.vtensor
  return %0 : !torch.vtensor
}

// -----

func.func @reflection_pad3d(%arg0: !torch.vtensor<[1,20,20,20,20],f32>) -> !torch.vtensor {
  %int10 = torch.constant.int 10
  %0 = torch.prim.ListConstruct %int10, %int10, %int10, %int10, %int10, %int10 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.reflection_pad3d %arg0, %0 : !torch.vtensor<[1,20,20,20,20],f32>, !torch.list<int> -> !torch.vtensor
  return %1 : !torch.vtensor
}
