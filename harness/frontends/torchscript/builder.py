"""The importer's front door: TorchScript modules and functions into one MLIR module.

``ModuleBuilder`` keeps upstream torch-mlir's names (``import_module(script_module._c,
class_annotator)``, ``import_function(fn)``, ``.module``) so existing scripts run unchanged.
The object graph becomes ``torch.class_type`` declarations, ``torch.nn_module`` instances with
``torch.slot`` values (each object and each tensor imported once), and one private
``func.func`` per method, which ``torchscript-module-to-torch-backend-pipeline`` globalizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch_mlir import ir

from harness.compiler.mlir import new_context
from harness.errors import (
    AnnotationError,
    ImportError_,
    UnsupportedNodeError,
    UnsupportedTypeError,
)

from .annotations import ClassAnnotator, ResolvedAnnotations
from .literals import TensorLiterals
from .locations import LocationFactory
from .nodes import GraphImporter, ImportEnv, Signature, emit_constant
from .typemap import TypeMapper


@dataclass
class ImportOptions:
    """How tensors are typed; upstream's camelCase attribute names work too."""

    assume_tensors_have_value_semantics: bool = False
    ignore_existing_tensor_shapes_and_dtypes: bool = False

    @property
    def assumeTensorsHaveValueSemantics(self) -> bool:  # noqa: N802
        return self.assume_tensors_have_value_semantics

    @assumeTensorsHaveValueSemantics.setter
    def assumeTensorsHaveValueSemantics(self, v: bool) -> None:  # noqa: N802
        self.assume_tensors_have_value_semantics = v

    @property
    def ignoreExistingTensorShapesAndDtypes(self) -> bool:  # noqa: N802
        return self.ignore_existing_tensor_shapes_and_dtypes

    @ignoreExistingTensorShapesAndDtypes.setter
    def ignoreExistingTensorShapesAndDtypes(self, v: bool) -> None:  # noqa: N802
        self.ignore_existing_tensor_shapes_and_dtypes = v


@dataclass
class ImportStats:
    """What one import produced, for drivers and benchmarks."""

    node_kinds: dict[str, int] = field(default_factory=dict)
    functions: int = 0
    class_types: int = 0
    objects: int = 0
    tensor_bytes: int = 0

    @property
    def nodes(self) -> int:
        return sum(self.node_kinds.values())


@dataclass
class _ClassInfo:
    qualname: str
    attr_names: list[str]
    attr_types: list[torch._C.Type]
    methods: dict[str, object]  # name -> torch._C.ScriptMethod
    first_path: str
    signatures: dict[str, Signature] = field(default_factory=dict)

    def attr_type(self, name: str) -> torch._C.Type | None:
        try:
            return self.attr_types[self.attr_names.index(name)]
        except ValueError:
            return None


def _unwrap_module(script_module) -> torch._C.ScriptModule:
    if isinstance(script_module, torch.jit.ScriptModule):
        return script_module._c
    if isinstance(script_module, torch._C.ScriptModule):
        return script_module
    if isinstance(script_module, torch.nn.Module):
        raise ImportError_(
            f"import_module got an eager {type(script_module).__name__}, not a TorchScript "
            "module. Trace or script it first: torch.jit.trace(model, example_inputs) or "
            "torch.jit.script(model), then pass the result (or its ._c)."
        )
    raise ImportError_(
        f"import_module expects a torch.jit.ScriptModule or its ._c, got "
        f"{type(script_module).__name__}. Trace or script the model first."
    )


class ModuleBuilder:
    """Accumulates imported modules and functions into ``self.module``."""

    def __init__(self, context: ir.Context | None = None):
        self.context = context or new_context()
        self.module = ir.Module.create(ir.Location.unknown(self.context))
        self.last_import = ImportStats()
        self._symbols: set[str] = set()
        # Free functions already in the module, so a later import calling one reuses it.
        self._functions: dict[str, Signature] = {}

    # ----- public API -------------------------------------------------------------------

    def import_module(self, script_module, class_annotator: ClassAnnotator | None = None,
                      import_options: ImportOptions | None = None) -> ImportStats:
        module_c = _unwrap_module(script_module)
        session = _ImportSession(self, import_options or ImportOptions())
        with self.context, ir.Location.unknown(self.context):
            session.import_object_graph(module_c, class_annotator or ClassAnnotator())
        self.last_import = session.stats()
        return self.last_import

    def import_function(self, script_function, import_options: ImportOptions | None = None) -> ImportStats:
        if not isinstance(script_function, torch.jit.ScriptFunction):
            raise ImportError_(
                f"import_function expects a torch.jit.ScriptFunction (from @torch.jit.script), "
                f"got {type(script_function).__name__}."
            )
        session = _ImportSession(self, import_options or ImportOptions())
        with self.context, ir.Location.unknown(self.context):
            session.import_free_function(script_function, private=False)
        self.last_import = session.stats()
        return self.last_import

    def verify(self) -> None:
        """Runs the MLIR verifier, turning its diagnostics into an ImportError_."""
        diagnostics: list[str] = []

        def handler(d):
            diagnostics.append(f"{d.location}: {d.message}")
            return True

        h = self.context.attach_diagnostic_handler(handler)
        try:
            ok = self.module.operation.verify()
        except ir.MLIRError as e:
            ok = False
            diagnostics.append(str(e))
        finally:
            h.detach()
        if not ok:
            raise ImportError_(
                "the imported module does not verify; this is an importer bug. Diagnostics:\n"
                + "\n".join(diagnostics[:20])
            )


class _ImportSession:
    """State of one import_module/import_function call."""

    def __init__(self, builder: ModuleBuilder, options: ImportOptions):
        self.builder = builder
        self.context = builder.context
        self.types = TypeMapper(
            self.context,
            ignore_tensor_shapes=options.ignore_existing_tensor_shapes_and_dtypes,
            value_semantics=options.assume_tensors_have_value_semantics,
        )
        self.env = ImportEnv(
            context=self.context,
            types=self.types,
            locs=LocationFactory(self.context),
            literals=TensorLiterals(self.types),
            callees=self,
        )
        self.classes: dict[str, _ClassInfo] = {}
        self.functions: dict[str, Signature] = {}
        self._objects: dict[tuple, list[tuple[torch._C.ScriptModule, ir.Value]]] = {}
        self._tensors: dict[tuple, ir.Value] = {}
        self._object_count = 0
        self.annotations = ResolvedAnnotations()

    def stats(self) -> ImportStats:
        return ImportStats(
            node_kinds=dict(self.env.node_kinds),
            functions=len(self.functions) + sum(len(c.methods) for c in self.classes.values()),
            class_types=len(self.classes),
            objects=self._object_count,
            tensor_bytes=self.env.literals.total_bytes,
        )

    @property
    def module_ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.builder.module.body)

    # ----- callee resolution (used by GraphImporter) ------------------------------------

    def method_signature(self, class_qualname: str, method: str) -> Signature | None:
        info = self.classes.get(class_qualname)
        return info.signatures.get(method) if info else None

    def function_symbol(self, qualname: str, node: torch._C.Node, object_path: str) -> tuple[str, Signature]:
        if qualname in self.functions:
            return qualname, self.functions[qualname]
        if qualname in self.builder._functions:
            return qualname, self.builder._functions[qualname]
        fn = torch.jit._state._python_cu.find_function(qualname)
        if fn is None:
            raise UnsupportedNodeError(
                "prim::CallFunction", LocationFactory.describe(node), object_path,
                f"its callee '{qualname}' is not in the Python compilation unit, so its graph "
                "cannot be imported.",
            )
        return qualname, self.import_free_function(fn, private=True)

    # ----- functions --------------------------------------------------------------------

    def _signature(self, schema, context: str) -> Signature:
        inputs = tuple(self.types.from_jit(a.type, f"argument '{a.name}' of {context}", refine=False)
                       for a in schema.arguments)
        results = tuple(self.types.from_jit(r.type, f"result of {context}", refine=False)
                        for r in schema.returns)
        return Signature(inputs, results)

    def import_free_function(self, fn: torch.jit.ScriptFunction, *, private: bool) -> Signature:
        qualname = fn.qualified_name
        sig = self._signature(fn.schema, qualname)
        self.functions[qualname] = sig
        self._emit_function(qualname, fn.graph, sig, private=private, object_path=qualname)
        self.builder._functions[qualname] = sig
        return sig

    def _emit_function(self, symbol: str, graph: torch._C.Graph, sig: Signature, *, private: bool,
                       object_path: str, arg_attrs: list[dict] | None = None) -> None:
        if symbol in self.builder._symbols:
            raise ImportError_(
                f"symbol @{symbol} is imported twice into one module. Import each module or "
                "function into a fresh ModuleBuilder."
            )
        self.builder._symbols.add(symbol)
        attributes = {
            "sym_name": ir.StringAttr.get(symbol, self.context),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(list(sig.inputs), list(sig.results), self.context)),
        }
        if private:
            attributes["sym_visibility"] = ir.StringAttr.get("private", self.context)
        if arg_attrs and any(arg_attrs):
            attributes["arg_attrs"] = ir.ArrayAttr.get(
                [ir.DictAttr.get(a, self.context) for a in arg_attrs], self.context)
        importer = GraphImporter(self.env, object_path)
        locations = importer.plan_locations(graph)
        with self.context, self.module_ip:
            func = ir.Operation.create("func.func", attributes=attributes, regions=1,
                                       loc=locations.entry)
        entry = func.regions[0].blocks.append(*sig.inputs, arg_locs=[locations.entry] * len(sig.inputs))
        with self.context, ir.InsertionPoint(entry):
            for jit_arg, arg in zip(graph.inputs(), entry.arguments):
                importer.bind(jit_arg, importer.adjust(arg, importer.jit_type(jit_arg), locations.entry))
            importer.import_block_nodes(graph.nodes())
            outs = [importer.adjust(importer.lookup(v), t, locations.exit)
                    for v, t in zip(graph.outputs(), sig.results)]
            ir.Operation.create("func.return", operands=outs, loc=locations.exit)

    # ----- object graph -----------------------------------------------------------------

    def import_object_graph(self, root: torch._C.ScriptModule, annotator: ClassAnnotator) -> None:
        with self.context:
            self._collect_classes(root, "<root>")
            self.annotations = self._resolve(annotator, root._type().qualified_name())
            for info in self.classes.values():
                self._emit_class_type(info)
            self._import_object(root, "<root>")
            for info in self.classes.values():
                for name, method in info.methods.items():
                    bounds = self.annotations.arg_bounds.get((info.qualname, name))
                    arg_attrs = None
                    if bounds is not None:
                        arg_attrs = [
                            {"torch.type_bound": ir.TypeAttr.get(self.types.parse(b.type_asm()))} if b else {}
                            for b in bounds
                        ]
                    self._emit_function(f"{info.qualname}.{name}", method.graph, info.signatures[name],
                                        private=True, object_path=info.first_path, arg_attrs=arg_attrs)
            original = getattr(root, "_type")().qualified_name().rsplit(".", 1)[-1]
            self.builder.module.operation.attributes["torch.debug_module_name"] = ir.StringAttr.get(original)

    def _collect_classes(self, obj: torch._C.ScriptModule, path: str) -> None:
        class_type = obj._type()
        qualname = class_type.qualified_name()
        named = torch._C._jit_debug_module_iterators(obj)["named_attributes"]
        if qualname not in self.classes:
            methods = {name: obj._get_method(name) for name in obj._method_names()}
            info = _ClassInfo(
                qualname=qualname,
                attr_names=[n for n, _ in named],
                attr_types=list(class_type.containedTypes()),
                methods=methods,
                first_path=path,
            )
            if len(info.attr_names) != len(info.attr_types):
                raise ImportError_(
                    f"class {qualname} at {path} reports {len(info.attr_names)} attribute values "
                    f"but {len(info.attr_types)} attribute types; this TorchScript object cannot "
                    "be imported."
                )
            for name, method in methods.items():
                info.signatures[name] = self._signature(method.schema, f"method {qualname}.{name} of {path}")
            self.classes[qualname] = info
        for (name, value), jit_type in zip(named, class_type.containedTypes()):
            if isinstance(value, torch._C.ScriptModule):
                self._collect_classes(value, f"{path}.{name}")
            elif jit_type.kind() == "ClassType" or isinstance(value, torch._C.ScriptObject):
                raise UnsupportedTypeError(
                    str(jit_type), f"attribute {path}.{name} holds a TorchScript class object, "
                    "which torch-mlir's object graph cannot represent",
                    "nn.Module submodules as attributes; pass the object's fields instead",
                )

    def _resolve(self, annotator: ClassAnnotator, root_qualname: str) -> ResolvedAnnotations:
        resolved = ResolvedAnnotations()

        def walk(start: str, path: tuple[str, ...], what: str) -> tuple[_ClassInfo, str]:
            info = self.classes.get(start)
            if info is None:
                raise AnnotationError(
                    f"{what} names class {start}, which is not part of the imported module "
                    f"(its root is {root_qualname}). Annotate script_module._c._type()."
                )
            for name in path[:-1]:
                t = info.attr_type(name)
                if t is None or t.kind() != "ClassType":
                    raise AnnotationError(
                        f"{what}: '{name}' is not a submodule of {info.qualname} (its attributes: "
                        f"{', '.join(info.attr_names) or 'none'})."
                    )
                info = self.classes[t.qualified_name()]
            member = path[-1]
            if member not in info.methods and member not in info.attr_names:
                raise AnnotationError(
                    f"{what}: {info.qualname} has no method or attribute '{member}' (methods: "
                    f"{', '.join(info.methods) or 'none'})."
                )
            return info, member

        for start in annotator._export_none:
            seen: set[str] = set()
            stack = [start]
            while stack:
                q = stack.pop()
                if q in seen or q not in self.classes:
                    continue
                seen.add(q)
                info = self.classes[q]
                resolved.private.update((q, m) for m in [*info.attr_names, *info.methods])
                stack.extend(t.qualified_name() for t in info.attr_types if t.kind() == "ClassType")
        for start, path in annotator._export_paths:
            info, member = walk(start, path, f"exportPath {'.'.join(path)}")
            resolved.private.discard((info.qualname, member))
        for start, path, bounds in annotator._arg_annotations:
            info, member = walk(start, path, f"annotateArgs {'.'.join(path)}")
            if member not in info.methods:
                raise AnnotationError(f"annotateArgs: {info.qualname}.{member} is not a method.")
            n_args = len(info.signatures[member].inputs)
            if len(bounds) != n_args:
                raise AnnotationError(
                    f"annotateArgs for {info.qualname}.{member} gives {len(bounds)} annotations but "
                    f"the method takes {n_args} arguments (self included: use None for self)."
                )
            resolved.arg_bounds[(info.qualname, member)] = bounds
        return resolved

    def _emit_class_type(self, info: _ClassInfo) -> None:
        loc = ir.Location.unknown(self.context)
        with self.module_ip:
            op = ir.Operation.create("torch.class_type", attributes={"sym_name": ir.StringAttr.get(info.qualname)},
                                     regions=1, loc=loc)
        block = op.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            for name, jit_type in zip(info.attr_names, info.attr_types):
                attrs = {"name": ir.StringAttr.get(name),
                         "type": ir.TypeAttr.get(self.types.from_jit(
                             jit_type, f"attribute {info.first_path}.{name} of class {info.qualname}",
                             refine=False))}
                if self.annotations.is_private(info.qualname, name):
                    attrs["isPrivate"] = ir.UnitAttr.get()
                ir.Operation.create("torch.attr", attributes=attrs, loc=loc)
            for name in info.methods:
                attrs = {"name": ir.StringAttr.get(name),
                         "function": ir.FlatSymbolRefAttr.get(f"{info.qualname}.{name}")}
                if self.annotations.is_private(info.qualname, name):
                    attrs["isPrivate"] = ir.UnitAttr.get()
                ir.Operation.create("torch.method", attributes=attrs, loc=loc)
            ir.Operation.create("torch.class_type_terminator", loc=loc)

    def _identity(self, value) -> tuple:
        """What an object holds. Equal keys make two wrappers candidates for being one object;
        tensors are compared by storage identity, so tied weights stay one literal."""
        if isinstance(value, torch.Tensor):
            return ("tensor",) + self.env.literals.identity(value)
        if isinstance(value, torch._C.ScriptModule):
            named = torch._C._jit_debug_module_iterators(value)["named_attributes"]
            return ("module", value._type().qualified_name(),
                    tuple((n, self._identity(v)) for n, v in named))
        if isinstance(value, (list, tuple)):
            return (type(value).__name__,) + tuple(self._identity(v) for v in value)
        if isinstance(value, dict):
            return ("dict",) + tuple((k, self._identity(v)) for k, v in value.items())
        return ("value", type(value).__name__, repr(value))

    def _same_object(self, a: torch._C.ScriptModule, b: torch._C.ScriptModule) -> bool:
        """Whether two wrappers are one TorchScript object. The binding exposes no pointer, so
        this flips ``training`` through one wrapper, reads it through the other, and restores
        it; only called for wrappers that already hold identical values."""
        before = a.getattr("training")
        try:
            a.setattr("training", not before)
            return b.getattr("training") != before
        finally:
            a.setattr("training", before)

    def _import_object(self, obj: torch._C.ScriptModule, path: str) -> ir.Value:
        qualname = obj._type().qualified_name()
        key = self._identity(obj)
        for candidate, value in self._objects.get(key, ()):
            if self._same_object(candidate, obj):
                return value
        info = self.classes[qualname]
        named = torch._C._jit_debug_module_iterators(obj)["named_attributes"]
        slots = []
        for (name, value), jit_type in zip(named, info.attr_types):
            slots.append((name, self._import_slot_value(value, jit_type, f"{path}.{name}")))
        loc = ir.Location.name(path, ir.Location.unknown(self.context))
        with self.module_ip:
            op = ir.Operation.create("torch.nn_module", results=[self.types.from_jit(obj._type(), path)],
                                     regions=1, loc=loc)
        block = op.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            for name, v in slots:
                ir.Operation.create("torch.slot", operands=[v], attributes={"name": ir.StringAttr.get(name)}, loc=loc)
            ir.Operation.create("torch.nn_module_terminator", loc=loc)
        self._objects.setdefault(key, []).append((obj, op.result))
        self._object_count += 1
        return op.result

    def _import_slot_value(self, value, jit_type: torch._C.Type, path: str) -> ir.Value:
        if isinstance(value, torch._C.ScriptModule):
            return self._import_object(value, path)
        loc = ir.Location.name(path, ir.Location.unknown(self.context))
        if isinstance(value, torch.Tensor):
            key = self.env.literals.identity(value)
            cached = self._tensors.get(key)
            if cached is None:
                with self.module_ip:
                    cached = emit_constant(self.env, value, jit_type, loc, path.removeprefix("<root>."),
                                           f"attribute {path}")
                self._tensors[key] = cached
            return cached
        with self.module_ip:
            return emit_constant(self.env, value, jit_type, loc, path.removeprefix("<root>."), f"attribute {path}")
