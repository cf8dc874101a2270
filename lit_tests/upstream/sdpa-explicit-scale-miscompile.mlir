// Upstream gap (found by `harness fix` on stock OPT): torch.aten.scaled_dot_product_attention
// with an explicit scale lowers through torch-to-linalg (tm_tensor.attention {scale = 1.0}), but
// the RefBackend's result is that of the default scale 1/sqrt(head_dim): checked against eager
// PyTorch on these inputs, `F.scaled_dot_product_attention(q, k, v, attn_mask=m)` (no scale)
// matches it to 4e-8, with scale=1.0 it differs by 0.155. OPT passes scale=1.0 (it scales q
// itself), so stock OPT lowers once `bitwise-and-or` is applied, but its numbers are wrong.
// Where: tm_tensor.attention's lowering to loops (TMTensor's AttentionOp scalar implementation)
// divides by sqrt(E) and never reads the op's scale. Upstream bundle: reports/upstream/sdpa-explicit-scale-miscompile/.
//
// This test states today's wrong result. When upstream honours the scale, the check passes and
// `not` fails here: then delete this file.
// REQUIRES: sdpa-scale-to-linalg

// RUN: not %PYTHON -m harness check %s --pipeline torch-to-linalg --out %t.d | FileCheck %s

// CHECK:      numerics-mismatch: @sdpa_scale_one of {{.*}}sdpa-explicit-scale-miscompile.mlir through torch-to-linalg and the RefBackend differs from the reference evaluator
// CHECK-NEXT:   inputs: random (seed 0; integers in [0, 2))
// CHECK-NEXT:   output 0: float32[1,1,3,4]  max abs diff 0.155 {{.*}} MISMATCH (8 of 12 elements)

func.func @sdpa_scale_one(%q: !torch.vtensor<[1,1,3,4],f32>, %k: !torch.vtensor<[1,1,3,4],f32>, %v: !torch.vtensor<[1,1,3,4],f32>, %mask: !torch.vtensor<[1,1,3,3],i1>) -> !torch.vtensor<[1,1,3,4],f32> {
  %float0 = torch.constant.float 0.000000e+00
  %float1 = torch.constant.float 1.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %mask, %float0, %false, %float1, %false : !torch.vtensor<[1,1,3,4],f32>, !torch.vtensor<[1,1,3,4],f32>, !torch.vtensor<[1,1,3,4],f32>, !torch.vtensor<[1,1,3,3],i1>, !torch.float, !torch.bool, !torch.float, !torch.bool -> !torch.vtensor<[1,1,3,4],f32>
  return %0 : !torch.vtensor<[1,1,3,4],f32>
}
