"""The entry function of a module and its signature, at the torch or the linalg level.

The LLVM-dialect module the ExecutionEngine runs has lost the element types of its arguments
(unranked memref descriptors are pointers) and the signedness of its results (integers are
signless), so the RefBackend takes the signature from the module it was lowered from.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from harness.errors import InputFileError, UnsupportedDTypeError

from .dtypes import TensorSignature, TensorSpec, builtin_tensor_spec, torch_tensor_spec

if TYPE_CHECKING:
    from torch_mlir import ir


def public_functions(module_op: ir.Operation) -> list[ir.Operation]:
    """The module's ``func.func`` ops with a body that are not private."""
    from torch_mlir import ir

    found = []
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name != "func.func" or not op.regions[0].blocks:
            continue
        # `in` and [] as every MLIR bindings version has them
        visibility = (op.attributes["sym_visibility"]  # noqa: SIM401
                      if "sym_visibility" in op.attributes else None)
        if visibility is not None and ir.StringAttr(visibility).value == "private":
            continue
        found.append(op.operation)
    return found


def function_name(func_op: ir.Operation) -> str:
    from torch_mlir import ir

    return ir.StringAttr(func_op.attributes["sym_name"]).value


def find_function(module_op: ir.Operation, name: str | None, source: str) -> ir.Operation:
    """The public function ``name``, or the only public function when ``name`` is None."""
    functions = public_functions(module_op)
    names = [function_name(f) for f in functions]
    if name is not None:
        if name in names:
            return functions[names.index(name)]
        raise InputFileError(
            f"{source} has no public function @{name}; it has "
            f"{', '.join('@' + n for n in names) or 'none'}. Pass one of them with --function."
        )
    if len(functions) == 1:
        return functions[0]
    if not functions:
        raise InputFileError(
            f"{source} has no public function with a body. Give the IR of a model at the torch "
            "backend contract (or lower it there with --pipeline)."
        )
    raise InputFileError(
        f"{source} has {len(functions)} public functions ({', '.join('@' + n for n in names)}); "
        "name the one to run with --function."
    )


def signature_of(func_op: ir.Operation, source: str = "") -> TensorSignature:
    """Tensor arguments and results of a torch-level (``!torch.vtensor``) or linalg-level
    (``tensor<...>``) function; any other type is named in an error."""
    from torch_mlir import ir

    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    name = function_name(func_op)

    def spec(t: ir.Type, what: str) -> TensorSpec:
        found = torch_tensor_spec(str(t)) or builtin_tensor_spec(t)
        if found is None:
            raise UnsupportedDTypeError(
                str(t), f"{what} of @{name}{' in ' + source if source else ''}",
                "tensors with a known shape rank and dtype (!torch.vtensor<[...],DTYPE> or "
                "tensor<...>)")
        return found

    return TensorSignature(name,
                     tuple(spec(t, f"argument {i}") for i, t in enumerate(ftype.inputs)),
                     tuple(spec(t, f"result {i}") for i, t in enumerate(ftype.results)))


def read_signature(path: str | os.PathLike, function: str | None = None) -> TensorSignature:
    """The signature of ``function`` (or the only public function) of the IR file at ``path``."""
    from torch_mlir import ir

    from .context import bindings_context

    with bindings_context():
        try:
            module = ir.Module.parseFile(os.fspath(path))
        except ir.MLIRError as e:
            raise InputFileError(
                f"cannot parse {path} with the MLIR Python bindings: "
                f"{str(e).splitlines()[0][:300]}. Check that it is MLIR of the torch or the "
                "linalg level (run it through 'harness run' to see)."
            ) from None
        return signature_of(find_function(module.operation, function, str(path)), str(path))
