// Seed idiom 6, tuple-of-views, traced through our TorchScript importer (2022 and now: README.md
// here). The import returns the cache as nested tuples; the torchscript pipeline stops at the
// backend contract on a non-value tensor, called from the line that calls the key projection
// (next to the idiom's view), and `harness explain` points at that line.

// RUN: %PYTHON -m harness emit seed-tuple-of-views --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=IMPORT --input-file %t.mlir
// IMPORT:      %[[PRESENT:.*]] = torch.prim.TupleConstruct %{{.*}}, %{{.*}} : !torch.tensor<[2,2,5,4],f32>, !torch.tensor<[2,2,5,4],f32> ->
// IMPORT:      torch.prim.TupleConstruct %[[PRESENT]], %{{.*}} : !torch.tuple<tensor<[2,2,5,4],f32>, tensor<[2,2,5,4],f32>>, !torch.tuple<

// RUN: not torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR:      {{.*}}torch/nn/modules/linear.py:{{[0-9]+}}:{{[0-9]+}}: error: unsupported by backend contract: non-value tensor type
// ERROR-NEXT: {{.*}}seed.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// ERROR-NEXT: {{.*}}seed.py:{{[0-9]+}}:{{[0-9]+}}: note: called from
// ERROR-NEXT: note: see current operation: %{{.*}} = "torch.copy.to_tensor"(%{{.*}}) : (!torch.vtensor<[2,5,8],f32>) -> !torch.tensor<[2,5,8],f32>
// ERROR-NEXT: note: this is likely due to a missing case in the MaximizeValueSemantics pass

// harness explain: the innermost frame is torch's linear.py; the idiom's line is the model's, shown,
// and labelled as the harness's own code (the seed idioms live in harness/models/seed.py).
// RUN: not %PYTHON -m harness explain %t.mlir --pipeline torchscript-to-torch | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN:      error 1: unsupported by backend contract: non-value tensor type
// EXPLAIN:        at {{.*}}torch/nn/modules/linear.py:{{[0-9]+}}:{{[0-9]+}} (library)
// EXPLAIN:        called from {{.*}}seed.py:[[LINE:[0-9]+]]:{{[0-9]+}} (harness)
// EXPLAIN-NEXT:     {{.*}}
// EXPLAIN-NEXT:     {{.*}}
// EXPLAIN-NEXT:     > {{ *}}[[LINE]] | {{.*}}self._shape(self.k(hidden), bsz, seq_len)
// EXPLAIN:        hint (seed idiom 'tuple-of-views'
