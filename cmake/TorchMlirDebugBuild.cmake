# harness_add_torch_mlir_debug_build(<out-var>)
#
# Adds the target `torch-mlir-debug`: a Debug, LLVM_ENABLE_ASSERTIONS=ON build of torch-mlir-opt
# from the torch-mlir checkout TORCH_MLIR_SOURCE_DIR, configured the way torch-mlir documents its
# in-tree build (LLVM from externals/llvm-project as the main project, torch-mlir as an LLVM
# external project), building only the torch-mlir-opt target. Sets <out-var> to the binary the
# build produces, for lit. The build tree is <build>/torch-mlir-debug; it is configured on the
# first build of the target, and rebuilt (incrementally) on every one after that so that edits
# in the torch-mlir tree are picked up.
#
# Extra configure arguments for that build (a compiler, -DLLVM_USE_LINKER=lld,
# -DLLVM_CCACHE_BUILD=ON, ...) go in the list HARNESS_TORCH_MLIR_CMAKE_ARGS.
include(ExternalProject)

function(harness_add_torch_mlir_debug_build out_var)
  if(NOT TORCH_MLIR_SOURCE_DIR)
    message(FATAL_ERROR
      "HARNESS_BUILD_TORCH_MLIR_DEBUG=ON needs -DTORCH_MLIR_SOURCE_DIR=<torch-mlir checkout>.")
  endif()
  get_filename_component(_src "${TORCH_MLIR_SOURCE_DIR}" ABSOLUTE)
  set(_llvm "${_src}/externals/llvm-project/llvm")
  if(NOT EXISTS "${_src}/CMakeLists.txt" OR NOT EXISTS "${_llvm}/CMakeLists.txt")
    message(FATAL_ERROR
      "${_src} is not a torch-mlir checkout with its submodules: ${_llvm}/CMakeLists.txt is "
      "missing. Run `git submodule update --init` in it, or fix TORCH_MLIR_SOURCE_DIR.")
  endif()

  set(HARNESS_TORCH_MLIR_CMAKE_ARGS "" CACHE STRING
    "Extra CMake arguments for the torch-mlir debug build (a ;-list)")

  set(_bin_dir "${CMAKE_BINARY_DIR}/torch-mlir-debug")
  set(_opt "${_bin_dir}/bin/torch-mlir-opt${CMAKE_EXECUTABLE_SUFFIX}")
  # Ninja if there is one: LLVM's own advice, and far faster than Makefiles for LLVM.
  find_program(HARNESS_NINJA ninja)
  if(HARNESS_NINJA)
    set(_generator "Ninja")
  else()
    set(_generator "${CMAKE_GENERATOR}")
  endif()

  ExternalProject_Add(torch-mlir-debug
    SOURCE_DIR "${_llvm}"
    BINARY_DIR "${_bin_dir}"
    CMAKE_GENERATOR "${_generator}"
    CMAKE_ARGS
      -DCMAKE_BUILD_TYPE=Debug
      -DLLVM_ENABLE_ASSERTIONS=ON
      -DLLVM_ENABLE_PROJECTS=mlir
      -DLLVM_EXTERNAL_PROJECTS=torch-mlir
      -DLLVM_EXTERNAL_TORCH_MLIR_SOURCE_DIR=${_src}
      -DLLVM_TARGETS_TO_BUILD=host
      # Only the C++ tool is needed: no Python packages, no PyTorch-dependent parts.
      -DMLIR_ENABLE_BINDINGS_PYTHON=OFF
      -DTORCH_MLIR_ENABLE_PYTORCH_EXTENSIONS=OFF
      -DTORCH_MLIR_ENABLE_JIT_IR_IMPORTER=OFF
      -DTORCH_MLIR_ENABLE_LTC=OFF
      # A Debug tablegen makes a Debug LLVM build much slower; this builds a Release one.
      -DLLVM_OPTIMIZED_TABLEGEN=ON
      -DPython3_EXECUTABLE=${Python3_EXECUTABLE}
      ${HARNESS_TORCH_MLIR_CMAKE_ARGS}
    BUILD_COMMAND "${CMAKE_COMMAND}" --build "${_bin_dir}" --target torch-mlir-opt
    INSTALL_COMMAND ""
    TEST_COMMAND ""
    BUILD_ALWAYS ON
    BUILD_BYPRODUCTS "${_opt}"
    USES_TERMINAL_CONFIGURE ON
    USES_TERMINAL_BUILD ON)

  message(STATUS "torch-mlir-harness: Debug + assertions torch-mlir-opt from ${_src} -> ${_opt}")
  set(${out_var} "${_opt}" PARENT_SCOPE)
endfunction()
