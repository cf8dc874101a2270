// The suite runs the torch-mlir-opt that lit.cfg.py resolved through harness.compiler.binary, and the
// lit features say what that binary says about itself.

// RUN: torch-mlir-opt --version | FileCheck %s
// CHECK: LLVM version {{[0-9]+\.[0-9]+}}

// RUN: torch-mlir-opt --version | FileCheck %s --check-prefix=%if asserts %{ASSERTS%} %else %{NO-ASSERTS%}
// ASSERTS: with assertions
// NO-ASSERTS: LLVM version
// NO-ASSERTS-NOT: with assertions

// RUN: torch-mlir-opt --version | FileCheck %s --check-prefix=%if release-build %{RELEASE%} %else %{NOT-RELEASE%}
// RELEASE: Optimized build
// NOT-RELEASE: LLVM version
// NOT-RELEASE-NOT: Optimized build
