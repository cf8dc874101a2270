"""The importer's front door: TorchScript modules and functions into one MLIR module.

``ModuleBuilder`` keeps upstream torch-mlir's names (``import_module(script_module._c,
class_annotator)``, ``import_function(fn)``, ``.module``) so existing scripts run unchanged.
The module holds, in upstream's order, one private ``func.func`` per method of each class of
the object graph and per free function they call (functions not reachable from the module are
not imported, unlike upstream, which imported the whole Python compilation unit: every function
ever scripted in the process), then the object graph (objects.py), which
``torchscript-module-to-torch-backend-pipeline`` globalizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch_mlir import ir

from harness.compiler.mlir import new_context
from harness.errors import AnnotationError, TorchScriptImportError, UnsupportedNodeError

from .annotations import ClassAnnotator
from .as_strided import plan_gathers
from .literals import TensorLiterals
from .locations import LocationFactory
from .nodes import CalleeTypes, GraphImporter, ImportEnv
from .objects import ObjectGraph
from .typemap import TypeMapper


@dataclass
class ImportOptions:
    """How tensors are typed; upstream's camelCase attribute names work too."""

    assume_tensors_have_value_semantics: bool = False
    ignore_existing_tensor_shapes_and_dtypes: bool = False

    @property
    def assumeTensorsHaveValueSemantics(self) -> bool:  # upstream's camelCase name
        return self.assume_tensors_have_value_semantics

    @assumeTensorsHaveValueSemantics.setter
    def assumeTensorsHaveValueSemantics(self, v: bool) -> None:  # upstream's camelCase name
        self.assume_tensors_have_value_semantics = v

    @property
    def ignoreExistingTensorShapesAndDtypes(self) -> bool:  # upstream's camelCase name
        return self.ignore_existing_tensor_shapes_and_dtypes

    @ignoreExistingTensorShapesAndDtypes.setter
    def ignoreExistingTensorShapesAndDtypes(self, v: bool) -> None:  # upstream's camelCase name
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


def _unwrap_module(script_module: object) -> torch._C.ScriptModule:
    if isinstance(script_module, torch.jit.ScriptModule):
        return script_module._c
    if isinstance(script_module, torch._C.ScriptModule):
        return script_module
    if isinstance(script_module, torch.nn.Module):
        raise TorchScriptImportError(
            f"import_module got an eager {type(script_module).__name__}, not a TorchScript "
            "module. Trace or script it first: torch.jit.trace(model, example_inputs) or "
            "torch.jit.script(model), then pass the result (or its ._c)."
        )
    raise TorchScriptImportError(
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
        self._functions: dict[str, CalleeTypes] = {}

    # ----- public API -------------------------------------------------------------------

    def import_module(self, script_module: torch.jit.ScriptModule | torch._C.ScriptModule,
                      class_annotator: ClassAnnotator | None = None,
                      import_options: ImportOptions | None = None) -> ImportStats:
        module_c = _unwrap_module(script_module)
        session = _ImportSession(self, import_options or ImportOptions())
        with self.context, ir.Location.unknown(self.context):
            session.import_object_graph(module_c, class_annotator or ClassAnnotator())
        self.last_import = session.stats()
        return self.last_import

    def import_function(self, script_function: object, import_options: ImportOptions | None = None,
                        ) -> torch.jit.ScriptFunction:
        """Imports a public ``func.func``; returns ``script_function``, so that
        ``@mb.import_function`` works as a decorator (statistics are in ``last_import``)."""
        if not isinstance(script_function, torch.jit.ScriptFunction):
            raise TorchScriptImportError(
                f"import_function expects a torch.jit.ScriptFunction (from @torch.jit.script), "
                f"got {type(script_function).__name__}."
            )
        session = _ImportSession(self, import_options or ImportOptions())
        with self.context, ir.Location.unknown(self.context):
            session.import_free_function(script_function, private=False)
        self.last_import = session.stats()
        return script_function

    def verify(self) -> None:
        """Runs the MLIR verifier, turning its diagnostics into an TorchScriptImportError."""
        diagnostics: list[str] = []

        def handler(d: ir.Diagnostic) -> bool:
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
            raise TorchScriptImportError(
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
        self.functions: dict[str, CalleeTypes] = {}
        self._function_ops: list[ir.Operation] = []
        self.graph: ObjectGraph | None = None

    def stats(self) -> ImportStats:
        classes = self.graph.classes if self.graph else {}
        return ImportStats(
            node_kinds=dict(self.env.node_kinds),
            functions=len(self.functions) + sum(len(c.methods) for c in classes.values()),
            class_types=len(classes),
            objects=self.graph.object_count if self.graph else 0,
            tensor_bytes=self.env.literals.total_bytes,
        )

    @property
    def module_ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.builder.module.body)

    # ----- callee resolution (used by GraphImporter) ------------------------------------

    def method_signature(self, class_qualname: str, method: str) -> CalleeTypes | None:
        info = self.graph.classes.get(class_qualname) if self.graph else None
        return info.signatures.get(method) if info else None

    def function_symbol(self, qualname: str, node: torch._C.Node,
                        object_path: str) -> tuple[str, CalleeTypes]:
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

    # ``schema``: a torch._C.FunctionSchema; torch's .pyi makes ScriptFunction.schema a method, not
    # the property it is, so a ScriptFunction's would not pass as one.
    def _signature(self, schema: Any, context: str) -> CalleeTypes:
        inputs = tuple(self.types.from_jit(a.type, f"argument '{a.name}' of {context}", refine=False)
                       for a in schema.arguments)
        results = tuple(self.types.from_jit(r.type, f"result of {context}", refine=False)
                        for r in schema.returns)
        return CalleeTypes(inputs, results)

    def import_free_function(self, fn: torch.jit.ScriptFunction, *, private: bool) -> CalleeTypes:
        qualname = fn.qualified_name
        sig = self._signature(fn.schema, qualname)
        self.functions[qualname] = sig
        self._emit_function(qualname, fn.graph, sig, private=private, object_path=qualname)
        self.builder._functions[qualname] = sig
        return sig

    def _emit_function(self, symbol: str, graph: torch._C.Graph, sig: CalleeTypes, *, private: bool,
                       object_path: str, arg_attrs: list[dict] | None = None,
                       arg_shapes: list[tuple[int, ...] | None] | None = None) -> ir.Operation:
        if symbol in self.builder._symbols:
            raise TorchScriptImportError(
                f"symbol @{symbol} is imported twice into one module. Import each module or "
                "function into a fresh ModuleBuilder."
            )
        self.builder._symbols.add(symbol)
        attributes = {
            "sym_name": ir.StringAttr.get(symbol, self.context),
            "function_type": ir.TypeAttr.get(
                ir.FunctionType.get(list(sig.inputs), list(sig.results), self.context)),
        }
        if private:
            attributes["sym_visibility"] = ir.StringAttr.get("private", self.context)
        if arg_attrs and any(arg_attrs):
            attributes["arg_attrs"] = ir.ArrayAttr.get(
                [ir.DictAttr.get(a, self.context) for a in arg_attrs], self.context)
        importer = GraphImporter(self.env, object_path)
        locations = importer.plan_locations(graph)
        importer.gathers = plan_gathers(graph, arg_shapes or [None] * len(sig.inputs))
        with self.context, self.module_ip:
            func = ir.Operation.create("func.func", attributes=attributes, regions=1,
                                       loc=locations.entry)
        self._function_ops.append(func)
        entry = func.regions[0].blocks.append(*sig.inputs, arg_locs=[locations.entry] * len(sig.inputs))
        with self.context, ir.InsertionPoint(entry):
            for jit_arg, arg in zip(graph.inputs(), entry.arguments, strict=False):
                importer.bind(jit_arg, importer.adjust(arg, importer.jit_type(jit_arg), locations.entry))
            importer.import_block_nodes(graph.nodes())
            outs = [importer.adjust(importer.lookup(v), t, locations.exit)
                    for v, t in zip(graph.outputs(), sig.results, strict=False)]
            ir.Operation.create("func.return", operands=outs, loc=locations.exit)
        return func

    # ----- object graph -----------------------------------------------------------------

    def import_object_graph(self, root: torch._C.ScriptModule, annotator: ClassAnnotator) -> None:
        """Functions first (each class's methods, then the free functions they call), then
        the class types and objects: the order upstream's importer wrote."""
        graph = self.graph = ObjectGraph(self.env, self.builder.module, annotator)
        with self.context:
            graph.collect(root, "<root>")
            self._check_annotated_classes(annotator, graph, root)
            for info in graph.classes.values():
                for name, jit_type in zip(info.attr_names, info.attr_types, strict=False):
                    # Attribute types first: an error names the attribute, not a use of it.
                    self.types.from_jit(jit_type,
                                        f"attribute {info.first_path}.{name} of class {info.qualname}",
                                        refine=False)
                for name, method in info.methods.items():
                    info.signatures[name] = self._signature(
                        method.schema, f"method {info.qualname}.{name} of {info.first_path}")
            methods: list[ir.Operation] = []
            for info in graph.classes.values():
                for name, method in info.methods.items():
                    bounds = annotator.arg_annotations(info.qualname, name)
                    arg_attrs = arg_shapes = None
                    if bounds is not None:
                        arg_shapes = [b.shape for b in bounds]
                        arg_attrs = [
                            {"torch.type_bound": ir.TypeAttr.get(self.types.parse(b.type_asm()))}
                            if b.is_bound() else {} for b in bounds
                        ]
                    methods.append(self._emit_function(
                        f"{info.qualname}.{name}", method.graph, info.signatures[name],
                        private=True, object_path=info.first_path, arg_attrs=arg_attrs,
                        arg_shapes=arg_shapes))
            free = [op for op in self._function_ops if op not in methods]
            graph.import_object(root, "<root>")
            self._move_functions_first(methods + free)
            original = root._type().qualified_name().rsplit(".", 1)[-1]
            self.builder.module.operation.attributes["torch.debug_module_name"] = ir.StringAttr.get(original)

    @staticmethod
    def _check_annotated_classes(annotator: ClassAnnotator, graph: ObjectGraph,
                                 root: torch._C.ScriptModule) -> None:
        for qualname in annotator.annotated_classes():
            if qualname not in graph.classes:
                raise AnnotationError(
                    f"the annotator names class {qualname}, which is not part of the imported module "
                    f"(its root is {root._type().qualified_name()}). Annotate the imported module's "
                    "own class type: script_module._c._type()."
                )

    def _move_functions_first(self, functions: list[ir.Operation]) -> None:
        body = self.builder.module.body
        others = [op for op in body.operations if op.operation.name != "func.func"]
        if not others:
            return
        first = others[0]
        for op in functions:
            op.move_before(first)
