// Seed idiom 4, mask-to-bool, traced through our TorchScript importer (2022 and now: README.md
// here). The import keeps the idiom: an f32 -> i1 aten.to.dtype at the Python line of the
// idiom; both pipelines lower it to linalg, the cast as a compare with zero.

// RUN: %PYTHON -m harness emit seed-mask-to-bool --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:mask-to-bool}
// IMPORT:      %[[BOOL_DTYPE:.*]] = torch.constant.int 11
// IMPORT:      torch.aten.to.dtype %{{.*}}, %[[BOOL_DTYPE]], {{.*}} : !torch.tensor<[2,1,5,5],f32>, {{.*}} -> !torch.tensor<[2,1,5,5],i1> loc({{.*}}"aten::to"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
