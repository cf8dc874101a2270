"""``get_registered_ops``: the TorchScript operator registry as plain data, as upstream's
``torch_mlir._mlir_libs._jit_ir_importer.get_registered_ops`` returned it (the input of its
ODS and abstract-interpretation generators).

Each record: ``name`` (qualified name, overload), ``is_c10_op`` (in the dispatcher, not a
JIT-only op), ``is_vararg``, ``is_varret``, ``is_mutable``, and ``arguments``/``returns``
(``name``, ``type``, ``pytype``, and when present ``N``, ``default_debug``, ``alias_info``).
"""

from __future__ import annotations

from typing import Any

import torch


def _argument(arg: Any) -> dict:  # a torch._C.Argument: its .pyi lacks ``N``
    record = {"name": arg.name, "type": str(arg.type), "pytype": arg.type.annotation_str}
    if arg.N is not None:
        record["N"] = arg.N
    if arg.has_default_value():
        record["default_debug"] = str(arg.default_value)
    if arg.alias_info is not None:
        info = arg.alias_info
        record["alias_info"] = {
            "is_write": info.is_write,
            "before": sorted(f"alias::{s}" for s in info.before_set),
            "after": sorted(f"alias::{s}" for s in info.after_set),
        }
    return record


def _varargs(schema: torch._C.FunctionSchema) -> tuple[bool, bool]:
    # The binding has no is_vararg/is_varret; the schema's text spells both as "...".
    text = str(schema)
    params, _, results = text.partition(") -> ")
    return params.endswith("...") or "(..." in params or ", ..." in params, results.strip() == "..."


def get_registered_ops() -> list[dict]:
    """One record per operator the JIT knows (dispatcher ops and the JIT's own)."""
    dispatcher = set(torch._C._dispatch_get_all_op_names())
    records = []
    for schema in torch._C._jit_get_all_schemas():
        full = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
        is_vararg, is_varret = _varargs(schema)
        records.append({
            "name": (schema.name, schema.overload_name),
            "is_c10_op": full in dispatcher,
            "is_vararg": is_vararg,
            "is_varret": is_varret,
            "is_mutable": schema.is_mutable,
            "arguments": [_argument(a) for a in schema.arguments],
            "returns": [_argument(r) for r in schema.returns],
        })
    return records
