// ResNet18's tail from the Python model (Inputs/pool_flatten_mm.py), imported by the
// project's TorchScript importer; `harness check` runs the reference evaluator on the imported IR
// (object graph and all), so the expected values owe nothing to any pipeline.
//
// Now: with aten.adaptive_avg_pool2d kept backend-legal (upstream's TorchScript e2e config) the
// RefBackend's numbers are wrong (pool-flatten-mm-miscompile.mlir says where); with the pool
// decomposed by torchscript-to-torch (the default) they are right.

// RUN: %PYTHON %S/Inputs/pool_flatten_mm.py > %t.mlir
// RUN: not %PYTHON -m harness check %t.mlir --out %t.d \
// RUN:   --pipeline 'builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops=aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)' \
// RUN:   | FileCheck %s --check-prefix=LEGAL
// RUN: %PYTHON -m harness check %t.mlir --pipeline torchscript-to-torch,torch-to-linalg --out %t.d \
// RUN:   | FileCheck %s --check-prefix=DECOMPOSED

// Where it goes wrong, in the model's terms: the traced locations name torch's own line for the
// pool (F.adaptive_avg_pool2d is Python), called from the model's line, and the model's line for
// flatten and mm (builtins).
// RUN: not %PYTHON -m harness bisect %t.mlir --numerics --out %t.d 2>/dev/null \
// RUN:   --pipeline 'builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops=aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)' \
// RUN:   | FileCheck %s --check-prefix=BISECT

// BISECT:      first wrong value: aten.mm at {{.*}}Inputs/pool_flatten_mm.py:15:0 (max abs diff 0.0893)
// BISECT:      > 15 |         return torch.mm(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1), w)  # the tail
// BISECT:      goes wrong together: aten.adaptive_avg_pool2d -> aten.view -> aten.mm
// BISECT-NEXT: {{ *[0-9]+ +}}aten.adaptive_avg_pool2d {{.*}}torch/nn/functional.py:{{[0-9]+}}:0 (library)
// BISECT-NEXT: {{ +}}called from {{.*}}Inputs/pool_flatten_mm.py:15:0
// BISECT-NEXT: {{ *[0-9]+ +}}aten.view {{.*}}Inputs/pool_flatten_mm.py:15:0
// BISECT-NEXT: {{ *[0-9]+ +}}aten.mm {{.*}}Inputs/pool_flatten_mm.py:15:0
// BISECT:      at fault: RefBackend lowering

// LEGAL:      numerics-mismatch: @__torch__.PoolFlattenMm.forward of {{.*}} through builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops=aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline) and the RefBackend differs from the reference evaluator
// LEGAL:        output 0: float32[1,3]  max abs diff 0.0893  {{.*}}  MISMATCH (2 of 3 elements)

// DECOMPOSED:      verified: @__torch__.PoolFlattenMm.forward of {{.*}} through torchscript-to-torch,torch-to-linalg and the RefBackend matches the reference evaluator
// DECOMPOSED:        output 0: float32[1,3]  max abs diff {{.*}}  ok
