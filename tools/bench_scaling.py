#!/usr/bin/env python3
"""Benchmark: how the cost of a port grows with OPT's size, ours beside FX.

OPT at tiny, 125m, 350m and 1.3b (the `harness.models.opt` presets: published shapes, random
fp32 weights), batch 1 x 7 tokens. Each phase runs in its own process, so its peak RSS is its
own; a phase's process redoes what the phase needs (build, trace, import) untimed.

  ours  trace (torch.jit.trace of the wrapper `harness opt` traces), import (the project's
        TorchScript importer through frontends.base, verified), write (text, weights elided:
        the file `harness opt` writes), bytecode (weights kept), then torchscript-to-torch and
        torch-to-linalg on the elided file and on the bytecode file (torch-mlir-opt; its own
        time and peak RSS)
  fx    export+import (torch.export + the wheel's fx_importer), write, bytecode, then
        fx-to-torch and torch-to-linalg on both files

It prints time and peak RSS per phase and size, the growth exponent of each phase's time (the
least-squares slope of log time over log parameter count, fitted over the published sizes,
125m and up: tiny's times are fixed costs), and the targets as ratios from this run.
Timings on a loaded machine are noisy; the ratios compare phases of one run. Exit status 1
when a target is missed.

    python tools/bench_scaling.py                       # all four sizes (~25 min, ~11 GB peak)
    python tools/bench_scaling.py --sizes tiny,125m     # a quick look
    python tools/bench_scaling.py --no-fx --json scaling.json
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = ("tiny", "125m", "350m", "1.3b")
FIT_FROM = "125m"           # growth exponents are fitted over this size and the larger ones
PIPELINE_TIMEOUT_S = 3600.0
MIB = 2 ** 20


# ---------------------------------------------------------------------------------------------
# Phases (each runs in a child process of this script)


@dataclass(frozen=True)
class Phase:
    key: str                 # --phase KEY
    side: str                # "ours" or "fx"
    label: str
    run: Callable[[str, Path], dict]
    needs: str = ""          # the phase whose output file this one reads


def _build(size: str):
    from harness.models import opt as opt_driver

    model = opt_driver.build_opt(size)
    inputs = opt_driver.example_inputs(model.config)
    tensors = [*model.parameters(), *model.buffers()]
    facts = {"params": sum(t.numel() for t in tensors),
             "weight_bytes": sum(t.numel() * t.element_size() for t in tensors)}
    return model, inputs, facts


def _python_phase(side: str, upto: str) -> Callable[[str, Path], dict]:
    """Build, then trace/export, import, and write, timing only the step named ``upto``."""

    def run(size: str, workdir: Path) -> dict:
        from harness.compiler.mlir import WriteOptions, write_module
        from harness.frontends.base import FrontendName, Program, frontend
        from harness.frontends.script import ScriptPayload
        from harness.models import opt as opt_driver

        model, inputs, result = _build(size)
        if side == "ours":
            start = time.perf_counter()
            traced = opt_driver.trace_opt(model, inputs)
            result["trace_s"] = time.perf_counter() - start
            if upto == "trace":
                return {**result, "seconds": result["trace_s"]}
            program = Program("OPTModel", None, tuple(inputs), ScriptPayload(traced.module))
            imported = frontend(FrontendName.TORCHSCRIPT).import_program(program)
        else:
            program = Program("OPTModel", opt_driver.OPTLastHiddenState(model).eval(), tuple(inputs))
            imported = frontend(FrontendName.FX).import_program(program)
        result["import_s"] = imported.seconds
        if upto == "import":
            return {**result, "seconds": imported.seconds}
        bytecode = upto == "bytecode"
        path = workdir / f"{side}.torch.{'mlirbc' if bytecode else 'mlir'}"
        start = time.perf_counter()
        write_module(imported.module, path, WriteOptions(keep_weights=bytecode, bytecode=bytecode))
        return {**result, "seconds": time.perf_counter() - start, "bytes": path.stat().st_size}

    return run


def _pipeline_phase(name: str, source: str, output: str) -> Callable[[str, Path], dict]:
    """torch-mlir-opt running pipeline ``name`` on ``source``: its time and its peak RSS."""

    def run(size: str, workdir: Path) -> dict:
        from harness.compiler import pipelines
        from harness.compiler.runner import RunOptions, run_pipeline

        bytecode = output.endswith(".mlirbc")
        record = run_pipeline(workdir / source, pipelines.default().get(name).textual(), options=RunOptions(
            timeout_s=PIPELINE_TIMEOUT_S, output_path=str(workdir / output), emit_bytecode=bytecode,
            extra_args=() if bytecode else ("--mlir-print-debuginfo",), max_input_mb=0))
        child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        result = {"seconds": record.elapsed_s, "child_rss_mib": child_rss, "outcome": record.outcome.value}
        if not record.ok:
            first = record.first_error()
            result["error"] = (str(first.location) + ": " + first.message) if first else record.stderr[-300:]
        return result

    return run


def _phases() -> list[Phase]:
    phases = [Phase(f"ours-{step}", "ours", label, _python_phase("ours", step))
              for step, label in (("trace", "trace"), ("import", "import"),
                                  ("write", "write text, weights elided"),
                                  ("bytecode", "write bytecode, weights"))]
    phases.append(Phase("fx-import", "fx", "export+import", _python_phase("fx", "import")))
    phases += [Phase(f"fx-{step}", "fx", label, _python_phase("fx", step))
               for step, label in (("write", "write text, weights elided"),
                                   ("bytecode", "write bytecode, weights"))]
    for side, to_torch in (("ours", "torchscript-to-torch"), ("fx", "fx-to-torch")):
        for weights, ext in (("elided", "mlir"), ("weights", "mlirbc")):
            writer = f"{side}-{'write' if weights == 'elided' else 'bytecode'}"
            first = f"{side}-torch-{weights}"
            phases.append(Phase(first, side, f"{to_torch}, {weights}",
                                _pipeline_phase(to_torch, f"{side}.torch.{ext}", f"{side}.1.{ext}"), writer))
            phases.append(Phase(f"{side}-linalg-{weights}", side, f"torch-to-linalg, {weights}",
                                _pipeline_phase("torch-to-linalg", f"{side}.1.{ext}", f"{side}.2.{ext}"),
                                first))
    return phases


PHASES = {p.key: p for p in _phases()}
ORDER = [k for side in ("ours", "fx") for k, p in PHASES.items() if p.side == side]


def run_phase(key: str, size: str, workdir: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--phase", key, "--sizes", size,
                           "--workdir", str(workdir)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        error = proc.stderr.strip()
        return {"failed": error.splitlines()[-1] if error else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_main(key: str, size: str, workdir: Path) -> int:
    warnings.filterwarnings("ignore")
    result = PHASES[key].run(size, workdir)
    own_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["peak_rss_mib"] = result.pop("child_rss_mib", own_rss)
    print(json.dumps(result))
    return 0


# ---------------------------------------------------------------------------------------------
# Analysis


def growth_exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log y over log x: y ~ x^slope."""
    points = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None


def _ok(r: dict | None) -> bool:
    return bool(r) and "seconds" in r


def exponents(results: dict[str, dict[str, dict]], sizes: list[str]) -> dict[str, float | None]:
    fitted = [s for s in sizes if SIZES.index(s) >= SIZES.index(FIT_FROM)] or sizes
    out = {}
    for key in ORDER:
        points = [(results[s]["ours-trace"]["params"], results[s][key]["seconds"])
                  for s in fitted if _ok(results[s].get(key)) and _ok(results[s].get("ours-trace"))]
        out[key] = growth_exponent(points)
    return out


@dataclass
class Target:
    text: str
    value: str
    met: bool | None  # None: not measured in this run


def targets(results: dict[str, dict[str, dict]], sizes: list[str],
            slopes: dict[str, float | None]) -> list[Target]:
    found = []
    ratios = {s: results[s]["ours-write"]["seconds"] / results[s]["ours-import"]["seconds"]
              for s in sizes if _ok(results[s].get("ours-write")) and _ok(results[s].get("ours-import"))}
    found.append(Target("elided text write / import, at every size (<= 1x)",
                        "  ".join(f"{s} {r:.2f}x" for s, r in ratios.items()) or "not measured",
                        all(r <= 1.0 for r in ratios.values()) if ratios else None))
    r125 = results.get("125m", {})
    if all(_ok(r125.get(k)) for k in ("ours-trace", "ours-import", "ours-write", "fx-import", "fx-write")):
        ours = r125["ours-trace"]["seconds"] + r125["ours-import"]["seconds"] + r125["ours-write"]["seconds"]
        fx = r125["fx-import"]["seconds"] + r125["fx-write"]["seconds"]
        found.append(Target("ours/FX end to end on 125m, trace+import+write vs export+import+write (<= 0.1x)",
                            f"{ours / fx:.3f}x ({ours:.2f} s vs {fx:.2f} s)", ours / fx <= 0.1))
    else:
        found.append(Target("ours/FX end to end on 125m (<= 0.1x)", "not measured", None))
    memory = {}
    for s in ("350m", "1.3b"):
        r = results.get(s, {})
        if _ok(r.get("ours-import")) and _ok(r.get("ours-trace")):
            extra = (r["ours-import"]["peak_rss_mib"] - r["ours-trace"]["peak_rss_mib"]) * MIB
            memory[s] = extra / r["ours-trace"]["weight_bytes"]
    found.append(Target("peak RSS of import minus trace's, / weight bytes, at 350m and 1.3b (<= 1.25x)",
                        "  ".join(f"{s} {m:.2f}x" for s, m in memory.items()) or "not measured",
                        all(m <= 1.25 for m in memory.values()) if len(memory) == 2 else None))
    ours_slopes = {k: v for k, v in slopes.items() if PHASES[k].side == "ours" and v is not None}
    if ours_slopes:
        worst = max(ours_slopes, key=ours_slopes.get)
        found.append(Target("growth exponent of every phase of ours (<= 1.1)",
                            f"max {ours_slopes[worst]:.2f} ({PHASES[worst].label})",
                            ours_slopes[worst] <= 1.1))
    else:
        found.append(Target("growth exponent of every phase of ours (<= 1.1)", "not measured", None))
    return found


# ---------------------------------------------------------------------------------------------
# Rendering


def _cell(r: dict | None) -> str:
    if not r:
        return "skipped"
    if "failed" in r:
        return "phase failed"
    text = f"{r['seconds']:.2f} s, {r['peak_rss_mib']:,.0f} MiB"
    if r.get("outcome") not in (None, "success"):
        text += f" ({r['outcome']})"
    return text


def render(results: dict[str, dict[str, dict]], sizes: list[str],
           slopes: dict[str, float | None]) -> list[str]:
    head = "| phase | " + " | ".join(sizes) + f" | time ~ params^k ({FIT_FROM} and up) |"
    lines = [head, "|" + "---|" * (len(sizes) + 2)]
    trace = {s: results[s].get("ours-trace") or {} for s in sizes}
    lines.append("| parameters, fp32 weights | " + " | ".join(
        f"{t['params'] / 1e6:,.1f} M, {t['weight_bytes'] / MIB:,.0f} MiB" if "params" in t else "?"
        for t in trace.values()) + " | |")
    for key in ORDER:
        if not any(key in results[s] for s in sizes):
            continue
        phase = PHASES[key]
        slope = slopes.get(key)
        lines.append(f"| {phase.side}: {phase.label} | "
                     + " | ".join(_cell(results[s].get(key)) for s in sizes)
                     + f" | {'' if slope is None else f'{slope:.2f}'} |")
    for side, key in (("ours", "ours-write"), ("fx", "fx-write")):
        if any(_ok(results[s].get(key)) for s in sizes):
            lines.append(f"| {side}: elided text file size | " + " | ".join(
                f"{results[s][key]['bytes'] / MIB:.2f} MiB" if _ok(results[s].get(key)) else ""
                for s in sizes) + " | |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(SIZES),
                        help="comma-separated presets (default: all four)")
    parser.add_argument("--no-fx", action="store_true", help="skip the FX side")
    parser.add_argument("--json", help="also write every measurement to this file")
    parser.add_argument("--from-json", help="print the tables of an earlier run's --json file; run nothing")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        return child_main(args.phase, args.sizes, Path(args.workdir))
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown size {', '.join(unknown)}; choose from {', '.join(SIZES)}")
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        return report(saved["results"], saved["sizes"])
    keys = [k for k in ORDER if not (args.no_fx and PHASES[k].side == "fx")]
    results = measure(sizes, keys)
    if args.json:
        Path(args.json).write_text(json.dumps({"sizes": sizes, "results": results}, indent=1))
    return report(results, sizes)


def measure(sizes: list[str], keys: list[str]) -> dict[str, dict[str, dict]]:
    results: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="harness-bench-scaling-") as tmp:
        for size in sizes:
            workdir = Path(tmp) / size
            workdir.mkdir()
            results[size] = {}
            for key in keys:
                needs = PHASES[key].needs
                if needs and not (_ok(results[size].get(needs))
                                  and results[size][needs].get("outcome", "success") == "success"):
                    continue
                print(f"[{size}] {PHASES[key].side}: {PHASES[key].label} ...", file=sys.stderr, flush=True)
                results[size][key] = run_phase(key, size, workdir)
                print(f"[{size}]   {_cell(results[size][key])}", file=sys.stderr, flush=True)
            for path in workdir.iterdir():  # 1.3b's bytecode files are 5 GB each
                path.unlink()
    return results


def report(results: dict[str, dict[str, dict]], sizes: list[str]) -> int:
    """Prints the table and the targets; 1 when a target is missed."""
    slopes = exponents(results, sizes)
    print("OPT scaling, random fp32 weights, batch 1 x 7 tokens; each phase in its own process "
          "(time of the phase, peak RSS of its process)")
    for line in render(results, sizes, slopes):
        print(line)
    failures = [(s, k, r) for s in sizes for k, r in results[s].items() if "error" in r or "failed" in r]
    for size, key, r in failures:
        print(f"note: [{size}] {PHASES[key].side}: {PHASES[key].label}: {r.get('error') or r.get('failed')}")
    print("targets, as ratios from this run:")
    found = targets(results, sizes, slopes)
    for t in found:
        status = "not measured" if t.met is None else ("met" if t.met else "MISSED")
        print(f"  {t.text}: {t.value}  [{status}]")
    return 1 if any(t.met is False for t in found) else 0


if __name__ == "__main__":
    raise SystemExit(main())
