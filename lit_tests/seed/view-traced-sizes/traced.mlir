// Seed idiom 5, view-traced-sizes, traced through our TorchScript importer (2022 and now:
// README.md here). The import keeps the idiom: the view's sizes come from aten.Int.Tensor, at
// the Python line of the idiom; the torchscript pipeline folds them and the view lowers to linalg.

// RUN: %PYTHON -m harness emit seed-view-traced-sizes --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:view-traced-sizes}
// IMPORT:      %[[BSZ:.*]] = torch.aten.Int.Tensor %{{.*}} : !torch.tensor<[],si64> -> !torch.int
// IMPORT:      %[[SEQ:.*]] = torch.aten.Int.Tensor %{{.*}} : !torch.tensor<[],si64> -> !torch.int
// IMPORT:      %[[SIZES:.*]] = torch.prim.ListConstruct %[[BSZ]], %[[SEQ]], %{{.*}}, %{{.*}} :
// IMPORT:      torch.aten.view %{{.*}}, %[[SIZES]] : {{.*}} -> !torch.tensor<[2,5,2,4],f32> loc({{.*}}"aten::view"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
