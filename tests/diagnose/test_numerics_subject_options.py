"""One constructor of the subject's and the probe's options serves every tool over a subject
(bisect --numerics, one_op, reduce --numerics, the runtime reducer): what a tool's options say
about inputs, function, binary, tolerances, timeout and folder reaches the subject unchanged."""

from __future__ import annotations

from dataclasses import fields

import pytest

from harness import defaults
from harness.diagnose.numerics import NumericsBisectOptions, SubjectOptions
from harness.diagnose.reduce.miscompile import NumericsReduceOptions
from harness.diagnose.reduce.runtime import RuntimeReduceOptions
from harness.execute.closeness import Tolerance, Tolerances
from harness.execute.dtypes import DType
from harness.execute.inputs import RandomInputs

GIVEN = dict(inputs_path="x.npz", random=RandomInputs(seed=7), function="main", opt="/bin/opt",
             tolerances=Tolerances({DType.FLOAT32: Tolerance(0.5, 0.25)}), timeout_s=12.0, out_dir="/tmp/w")


@pytest.mark.parametrize("kind", [NumericsBisectOptions, NumericsReduceOptions, RuntimeReduceOptions])
def test_every_tool_s_options_make_the_same_subject_options(kind):
    made = SubjectOptions.of("torch-to-linalg", kind(**GIVEN))
    assert made == SubjectOptions(pipeline="torch-to-linalg", **GIVEN)
    # Every field of the subject's options is read from the tool's (none left at its default).
    assert {f.name for f in fields(SubjectOptions)} == {"pipeline", *GIVEN}


def test_the_reducers_budgets_are_the_one_default():
    assert NumericsReduceOptions().budget_s == RuntimeReduceOptions().budget_s == defaults.REDUCE_BUDGET_S
