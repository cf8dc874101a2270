#!/usr/bin/env python3
"""Survey: how far each Hugging Face architecture gets at tiny size, through both frontends.

For every model, in its own process with a timeout:
  build        harness.models.generic.prepare (tiny config, eager attention, no KV cache)
  trace        torch.jit.trace(strict=False); then trace vs eager on both input sets
               (the second has other ids and a padded mask: a frozen value shows as a difference)
  TS           our importer (harness.frontends.base, the TorchScript frontend),
               torchscript-to-torch, torch-to-linalg
  FX           torch.export + the wheel's fx_importer (harness.frontends.fx), fx-to-torch,
               torch-to-linalg
and the first blocker of each path: the op and the Python line from the failing op's location
(innermost frame, and the model's own modeling_*.py frame when the chain has one).

    python tools/survey_hf.py                 # the 21 architectures of docs/fix.md
    python tools/survey_hf.py gpt2 llama      # some of them, or any other type / directory
    python tools/survey_hf.py --json out.json # the per-model records as well

IR files go to a fresh folder under --out (default: harness-out/). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: docs/fix.md's 21 architectures, as MODEL names (T5 as its encoder, as it was measured).
ARCHITECTURES = ("gpt2", "gpt_neo", "gpt_neox", "gptj", "llama", "mistral", "qwen2", "qwen3",
                 "phi", "phi3", "gemma", "falcon", "bloom", "opt", "mpt", "stablelm", "bert",
                 "roberta", "distilbert", "t5:encoder", "bart")

#: Columns of the table: (key in a record, heading).
STAGES = (("build", "build"), ("trace", "trace"), ("ts_import", "TS import"),
          ("ts_to_torch", "TS→torch"), ("ts_to_linalg", "TS→linalg"),
          ("fx_import", "FX export+import"), ("fx_to_torch", "FX→torch"),
          ("fx_to_linalg", "FX→linalg"))


# ---------------------------------------------------------------------------------------------
# One model (the child process)


class Survey:
    """The record of one model, written to disk after every stage so a timeout keeps what ran."""

    def __init__(self, model: str, result_path: Path):
        self.path = result_path
        self.data: dict = {"model": model, "stages": {}, "blockers": {}}

    def stage(self, key: str, status: str, seconds: float, detail: str = "") -> None:
        self.data["stages"][key] = {"status": status, "seconds": round(seconds, 2), "detail": detail}
        self.save()

    def save(self) -> None:
        from harness.compiler.irfile import write_atomically

        write_atomically(self.path, json.dumps(self.data, indent=1))


def _short_exception(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}"


def _python_line(error: BaseException) -> str:
    """The innermost traceback frame in transformers or a model file: where a Python stage broke."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if "transformers" in frame.filename:
            return f"{Path(frame.filename).name}:{frame.lineno}"
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""


def _record_blocker(record) -> dict:
    """The first error's op and Python lines, or a crash's signature."""
    from harness.compiler.records import op_label, op_of
    from harness.diagnose.explain import explain_record

    blocker = {"outcome": record.outcome.value, "signature": str(record.signature), "op": "",
               "where": "", "model_line": "", "message": ""}
    diag = record.first_error()
    if diag is not None:
        blocker["op"] = op_label(op_of(diag), diag)
        blocker["message"] = " ".join(diag.message.split())[:200]
        explained = explain_record(record).explanations
        frames = explained[0].frames if explained else []
        if frames:
            blocker["where"] = f"{Path(frames[0].file).name}:{frames[0].line}"
            own = next((f for f in frames if Path(f.file).name.startswith("modeling_")), None)
            if own is not None and own is not frames[0]:
                blocker["model_line"] = f"{Path(own.file).name}:{own.line}"
    return blocker


def _traced_model_line(module, where: str) -> str:
    """The first ``modeling_*.py`` frame of the traced nodes whose innermost frame is ``where``.

    TorchScript keeps a traced node's whole Python stack, but the importer's locations hold only
    the innermost frame (``function.py:625`` for Bloom's autograd.Function, ``masking_utils.py``
    for the mask helpers); the stack says which line of the model called it.
    """
    for node in module.inlined_graph.nodes():
        frames = []
        for line in str(node.sourceRange()).splitlines():
            path, _, rest = line.partition("(")
            number = rest.split(")", 1)[0]
            if number.isdigit():
                frames.append(f"{Path(path).name}:{number}")
        if frames and frames[0] == where:
            return next((f for f in frames[1:] if f.startswith("modeling_")), "")
    return ""


def _run_stages(survey: Survey, key_prefix: str, ir_path: Path, stages: tuple[str, ...],
                out_dir: Path, stem: str) -> None:
    from harness.compiler import pipelines
    from harness.compiler.runner import RunOptions, run_pipeline

    current = ir_path
    for name in stages:
        key = f"{key_prefix}_to_{name.split('-to-')[1]}"
        output = out_dir / f"{stem}.{name}.mlir"
        record = run_pipeline(current, pipelines.default().get(name).textual(), options=RunOptions(
            timeout_s=600, output_path=str(output), extra_args=("--mlir-print-debuginfo",)))
        survey.stage(key, "ok" if record.ok else record.outcome.value, record.elapsed_s,
                     "" if record.ok else str(record.signature))
        if not record.ok:
            survey.data["blockers"][key_prefix] = {"stage": key, **_record_blocker(record)}
            survey.save()
            return
        current = output


def survey_one(model: str, result_path: Path, out_dir: Path, batch: int, seq: int) -> None:
    from harness.models import drivers, generic

    survey = Survey(model, result_path)
    t = time.monotonic()
    try:
        prepared = drivers.prepare(model, generic.ModelOptions(batch=batch, seq=seq))
    except Exception as error:
        survey.stage("build", "fail", time.monotonic() - t, _short_exception(error))
        return
    survey.data["settings"] = prepared.settings.to_json()
    survey.stage("build", "ok", time.monotonic() - t)
    _torchscript(survey, prepared, out_dir)
    _fx(survey, prepared, model, out_dir)


def _torchscript(survey: Survey, prepared, out_dir: Path) -> None:
    """Trace, the trace against eager on both input sets, then our importer and the stages."""
    from harness.models import drivers

    stem = prepared.name
    t = time.monotonic()
    traced = None
    try:
        traced = drivers.trace(prepared)
        survey.stage("trace", "ok", time.monotonic() - t)
    except Exception as error:
        survey.stage("trace", "fail", time.monotonic() - t, _short_exception(error))
        survey.data["blockers"]["ts"] = {"stage": "trace", "op": "", "where": _python_line(error),
                                         "message": _short_exception(error)}
    if traced is not None:
        survey.data["tracer_warnings"] = sorted({w.where for w in traced.warnings
                                                 if w.category == "TracerWarning"})
        diffs = {}
        for label, inputs in (("first", prepared.inputs), ("second", prepared.second_inputs)):
            eager, script = prepared.run_eager(inputs), traced.run(inputs)
            diffs[label] = max((float((a - b).abs().max()) for a, b in zip(eager, script, strict=False)
                                if a.numel()), default=0.0) if len(eager) == len(script) else None
        survey.data["trace_vs_eager"] = diffs
        survey.save()
        t = time.monotonic()
        try:
            from harness.compiler.mlir import WriteOptions, write_module
            from harness.frontends.base import Program, frontend
            from harness.frontends.script import ScriptPayload

            imported = frontend("torchscript").import_program(
                Program(stem, prepared.module, prepared.inputs.tensors,
                        ScriptPayload(traced.module)))
            ir_path = write_module(imported.module, out_dir / f"{stem}.ts.torch.mlir", WriteOptions())
            survey.stage("ts_import", "ok", time.monotonic() - t)
            _run_stages(survey, "ts", ir_path,
                        ("torchscript-to-torch", "torch-to-linalg"), out_dir, f"{stem}.ts")
            blocker = survey.data["blockers"].get("ts")
            if blocker and blocker.get("where") and not blocker.get("model_line"):
                blocker["model_line"] = _traced_model_line(traced.module, blocker["where"])
                survey.save()
        except Exception as error:
            survey.stage("ts_import", "fail", time.monotonic() - t, _short_exception(error))
            survey.data["blockers"]["ts"] = {"stage": "ts_import", "op": "",
                                             "where": _python_line(error),
                                             "message": _short_exception(error)}
            survey.save()


def _fx(survey: Survey, prepared, model: str, out_dir: Path) -> None:
    """torch.export and the wheel's FX importer, then the stages."""
    import torch

    from harness.models import generic

    stem = prepared.name
    t = time.monotonic()
    try:
        from harness.compiler.mlir import WriteOptions, write_module
        from harness.frontends.fx import export_and_import

        module, args = prepared.export_args()
        with torch.no_grad():
            imported = export_and_import(module, args, name=model)
        ir_path = write_module(imported, out_dir / f"{stem}.fx.torch.mlir", WriteOptions())
        survey.stage("fx_import", "ok", time.monotonic() - t)
        _run_stages(survey, "fx", ir_path, ("fx-to-torch", "torch-to-linalg"), out_dir, f"{stem}.fx")
    except Exception as error:
        cause = error.__cause__ or error
        message = _short_exception(cause)
        if "state mapping for buffer" in message:
            message = ("fx_importer: Could not find state mapping for buffer; non-persistent "
                       f"buffers: {', '.join(generic.non_persistent_buffers(module))}")
        survey.stage("fx_import", "fail", time.monotonic() - t, message)
        survey.data["blockers"]["fx"] = {"stage": "fx_import", "op": "",
                                         "where": _python_line(cause), "message": message}
        survey.save()


# ---------------------------------------------------------------------------------------------
# The table (the parent process)


def run_child(model: str, out_dir: Path, timeout: float, batch: int, seq: int) -> dict:
    """One model in its own process group; killed (the group) at the timeout."""
    result = out_dir / f"{model.replace(':', '-').replace('/', '_')}.survey.json"
    cmd = [sys.executable, __file__, "--one", model, "--result", str(result), "--out", str(out_dir),
           "--batch", str(batch), "--seq", str(seq)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
        status = "" if proc.returncode == 0 else f"child exited {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        status = f"timeout after {timeout:.0f} s"
    data = json.loads(result.read_text()) if result.exists() else {"model": model, "stages": {},
                                                                      "blockers": {}}
    data["seconds"] = round(time.monotonic() - start, 1)
    if status:
        data["child"] = status
        data["child_stderr"] = stderr.strip().splitlines()[-3:]
    return data


def _cell(data: dict, key: str) -> str:
    stage = data["stages"].get(key)
    if stage is None:
        return "-"
    return "ok" if stage["status"] == "ok" else stage["status"].upper()


def _blocker_text(blocker: dict | None) -> str:
    if not blocker:
        return ""
    if blocker.get("op"):
        where = blocker.get("where", "")
        text = f"`{blocker['op']}` at {where}" if where else f"`{blocker['op']}`"
        if blocker.get("model_line"):
            text += f" (called from {blocker['model_line']})"
        elif not where:
            text += " (location lost: loc(unknown))"
        return f"{blocker['stage']}: {text}"
    message = blocker.get("signature") or blocker.get("message", "")
    where = f" ({blocker['where']})" if blocker.get("where") else ""
    return f"{blocker['stage']}: {message[:160]}{where}"


def _diff_text(data: dict) -> str:
    diffs = data.get("trace_vs_eager")
    if not diffs:
        return "-"
    return " / ".join("?" if d is None else f"{d:.1e}" if d else "0" for d in diffs.values())


def render(rows: list[dict]) -> list[str]:
    heads = ["model", *(h for _, h in STAGES), "trace\u2212eager (max abs, first / padded)",
             "TS first blocker", "FX first blocker", "s"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for data in rows:
        cells = [data["model"], *(_cell(data, k) for k, _ in STAGES), _diff_text(data),
                 _blocker_text(data["blockers"].get("ts")),
                 _blocker_text(data["blockers"].get("fx")) or data.get("child", ""),
                 str(data.get("seconds", ""))]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    n = len(rows)
    reach = {k: sum(_cell(r, k) == "ok" for r in rows) for k, _ in STAGES}
    lines += ["", f"{n} models: build {reach['build']}, trace {reach['trace']}, "
              f"TS import {reach['ts_import']}, TS→torch {reach['ts_to_torch']}, "
              f"TS→linalg {reach['ts_to_linalg']}; FX export+import {reach['fx_import']}, "
              f"FX→torch {reach['fx_to_torch']}, FX→linalg {reach['fx_to_linalg']}."]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", default=list(ARCHITECTURES))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model")
    parser.add_argument("--out", default="harness-out", help="parent of the fresh IR folder")
    parser.add_argument("--json", help="also write the per-model records to this file")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=8)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        survey_one(args.one, Path(args.result), Path(args.out), args.batch, args.seq)
        return 0
    from harness.compiler.irfile import unique_dir, write_atomically

    out_dir = unique_dir("survey-hf-", parent=args.out)
    print(f"IR files and records in {out_dir}", file=sys.stderr)
    rows = []
    for model in args.models:
        rows.append(run_child(model, out_dir, args.timeout, args.batch, args.seq))
        print(f"  {model}: {rows[-1]['seconds']} s", file=sys.stderr, flush=True)
    print("\n".join(render(rows)))
    if args.json:
        write_atomically(args.json, json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
