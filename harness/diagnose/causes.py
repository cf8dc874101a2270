"""Failures that are one bug: different ops, one root cause, one upstream issue.

A maintainer fixes "torch-mlir's library has no shape or dtype function for these ops" once, in
one PR that adds the functions; five issues with the same cause and the same "Blocks" text are
four duplicates. Most signatures that differ only in the op they name are different bugs (each
op its own missing lowering, each folder its own crash), so only the causes listed here merge:
``report --each`` and the sweep's ``--reports`` make one bundle per cause, listing every op.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class SharedCause:
    """A root cause several ops' failures share."""

    key: str           # a stable name, for records and folder names
    title: str         # the title; {count} and {ops} are the ops it covers
    explanation: str   # one paragraph for the "Same root cause" section


#: signature text (a regular expression searched in it) -> the cause. A result the backend
#: contract finds without a rank or without a dtype is one bug: the op has no shape or no dtype
#: function in torch-mlir's library (the abstract interpretation library), so refinement leaves
#: the result unknown.
SHARED_CAUSES: tuple[tuple[re.Pattern[str], SharedCause], ...] = (
    (re.compile(r"unsupported by backend contract: tensor with unknown (rank|dtype)"),
     SharedCause(
         "missing-shape-dtype-functions",
         "no shape or dtype function in the library for {count} ops ({ops}): their results "
         "stay unrefined and the backend contract rejects them",
         "Each op below has no shape function or no dtype function in torch-mlir's abstract "
         "interpretation library (`projects/pt1/python/torch_mlir/jit_ir_importer/build_tools/"
         "abstract_interp_lib_gen.py`, generated into `lib/Dialect/Torch/Transforms/"
         "AbstractInterpLibrary.cpp`), so shape and dtype refinement leave its result unranked "
         "or without dtype and `torch-lower-to-backend-contract` rejects it. The backend "
         "contract stops at the first such op; each one after it was found with the ones "
         "before it knocked out. One change to the library covers all of them.")),
    # A TorchToLinalg helper reads its input's sizes with tensor.dim, which folds through the
    # tensor.cast an earlier lowering put on an unrefined result type, so the init it builds is
    # more static than the input it pairs it with in one linalg op (flipTensor's linalg.generic,
    # permuteTensor's linalg.transpose): the verifier rejects the op whatever the helper.
    (re.compile(r"verifier-error: 'linalg\.(?:generic' op expected type of operand #\d+ \('tensor<[^']*'\) "
                r"to match type of corresponding result|transpose' op dim\(result, \d+\) = \d+ doesn't "
                r"match dim\(input, permutation\[\d+\]\) = -9223372036854775808)"),
     SharedCause(
         "linalg-init-more-static-than-input",
         "TorchToLinalg builds {count} linalg ops ({ops}) whose init is more static than their input "
         "(`tensor.dim` folded through the cast to an unrefined result type): verifier error",
         "Each op below is lowered by a TorchToLinalg helper that sizes its init tensor with "
         "`getTensorSizes` of the converted input (`lib/Conversion/Utils/Utils.cpp`): its "
         "`tensor.dim`s fold through the `tensor.cast` the producer's lowering added to reach an "
         "unrefined result type (`aten.view`'s `tensor<1x?x4x16xf32>` cast to "
         "`tensor<?x?x?x?xf32>`), so `createZeroInitTensor` makes a partly static init while the "
         "linalg op takes the cast, dynamic input; the verifier rejects the pair. One fix covers "
         "all of them (size the init from the input's own type, or cast it to it).")),
)


def shared_cause(signature: str) -> SharedCause | None:
    """The root cause a failure with this signature shares with others, or None (its own bug)."""
    return next((cause for pattern, cause in SHARED_CAUSES if pattern.search(signature)), None)


def group_by_cause(items: Iterable[T], signature_of: Callable[[T], str]) -> list[list[T]]:
    """``items`` in groups, in the order their first member comes: those with one shared cause
    together, every other item alone."""
    groups: list[list[T]] = []
    by_key: dict[str, list[T]] = {}
    for item in items:
        cause = shared_cause(signature_of(item))
        if cause is not None and cause.key in by_key:
            by_key[cause.key].append(item)
            continue
        groups.append([item])
        if cause is not None:
            by_key[cause.key] = groups[-1]
    return groups
