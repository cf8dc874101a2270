"""harness.frontends.torchscript.annotations: the ClassAnnotator's state and its repr.

The repr is what a user sees in an error message or a debugger: the annotation tree of every
class touched, in upstream's layout (classes by name; attributes, then methods, in declaration
order). Eager validation of each call is in test_importer_errors.py.
"""

from __future__ import annotations

import textwrap

import torch
from torch import nn

from harness.frontends.torchscript import ClassAnnotator


class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self.shown = 1
        self.hidden = 2

    def forward(self) -> int:
        return self.helper()

    @torch.jit.export
    def helper(self) -> int:
        return self.hidden


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> int:
        return self.child.forward()


def test_repr_is_the_annotation_tree():
    script = torch.jit.script(Parent())
    root = script._c._type()
    annotator = ClassAnnotator()
    annotator.exportNone(root)
    annotator.exportPath(root, ["child", "shown"])
    annotator.exportPath(root, ["child", "forward"])
    annotator.annotateArgs(root, ["forward"],
                           [None, ((4, 2), torch.float32, False), ((-1,), torch.int8, True)])
    child, parent = script.child._c._type().qualified_name(), root.qualified_name()
    assert child < parent  # classes are listed by name
    assert repr(annotator) == textwrap.dedent(f"""\
        ClassAnnotator {{
          ClassAnnotation('{child}') {{
            AttributeAnnotation('training') {{
              isExported = false
            }}
            AttributeAnnotation('_is_full_backward_hook') {{
              isExported = false
            }}
            AttributeAnnotation('shown') {{
              isExported = true
            }}
            AttributeAnnotation('hidden') {{
              isExported = false
            }}
            MethodAnnotation('forward') {{
              isExported = true
              argAnnotations = <none>
            }}
            MethodAnnotation('helper') {{
              isExported = false
              argAnnotations = <none>
            }}
          }}
          ClassAnnotation('{parent}') {{
            AttributeAnnotation('training') {{
              isExported = false
            }}
            AttributeAnnotation('_is_full_backward_hook') {{
              isExported = false
            }}
            AttributeAnnotation('child') {{
              isExported = false
            }}
            MethodAnnotation('forward') {{
              isExported = false
              argAnnotations =
                ArgAnnotation(0) {{
                  dtype = <none>
                  shape = <none>
                  hasValueSemantics = false
                }}
                ArgAnnotation(1) {{
                  dtype = Float
                  shape = [4, 2]
                  hasValueSemantics = false
                }}
                ArgAnnotation(2) {{
                  dtype = Char
                  shape = [-1]
                  hasValueSemantics = true
                }}
            }}
          }}
        }}""")


def test_a_class_nobody_annotated_exports_everything():
    script = torch.jit.script(Parent())
    annotator = ClassAnnotator()
    assert repr(annotator) == "ClassAnnotator {\n}"
    qualname = script._c._type().qualified_name()
    assert annotator.is_exported(qualname, "forward") and annotator.is_exported(qualname, "child")
    assert annotator.arg_annotations(qualname, "forward") is None


def test_class_type_with_tensor_attributes_is_readable_from_the_type_alone():
    # The binding gives a class type's attribute types but not their names; the annotator reads
    # them from an empty object of the type, whose tensor slots it fills.
    class WithWeights(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(2))
            self.register_buffer("mask", torch.ones(2))
            self.inner = Child()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.weight * self.mask

    script = torch.jit.script(WithWeights())
    annotator = ClassAnnotator()
    annotator.exportNone(script._c._type())
    annotator.exportPath(script._c._type(), ["mask"])
    qualname = script._c._type().qualified_name()
    assert not annotator.is_exported(qualname, "weight")
    assert annotator.is_exported(qualname, "mask")
    assert "AttributeAnnotation('weight')" in repr(annotator)
