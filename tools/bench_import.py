#!/usr/bin/env python3
"""Benchmark: our TorchScript importer against the wheel's FX importer on OPT, side by side.

Each phase runs in its own subprocess so its peak RSS is its own (ru_maxrss of the child):
  trace   torch.jit.trace of OPT (the wrapper the `harness opt` driver traces)
  ours    trace + harness.frontends.torchscript + writing IR (text, weights elided; and bytecode with weights)
  fx      torch_mlir.fx.export_and_import(..., output_type="raw") + writing its text IR through
          the same writer (weights elided; once this printed FX's weights as hex)
Prints the figures and the ratio ours/FX for import time and for import+write time.
Target: ours/FX <= 1.0x. tools/bench_scaling.py measures the same phases over four sizes.

    python tools/bench_import.py                # OPT-125m (the default OPTConfig)
    python tools/bench_import.py --config tiny
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _build(config: str):
    from harness.models import opt as opt_driver

    model = opt_driver.build_opt(config)
    inputs = opt_driver.example_inputs(model.config)
    return opt_driver, model, inputs


def phase_trace(config: str, workdir: Path) -> dict:
    opt_driver, model, inputs = _build(config)
    t = time.perf_counter()
    opt_driver.trace_opt(model, inputs)
    return {"trace_s": time.perf_counter() - t}


def phase_ours(config: str, workdir: Path) -> dict:
    from harness.compiler.mlir import WriteOptions, write_module
    from harness.frontends.torchscript import ModuleBuilder, forward_annotator

    opt_driver, model, inputs = _build(config)
    t = time.perf_counter()
    traced = opt_driver.trace_opt(model, inputs).module
    trace_s = time.perf_counter() - t
    t = time.perf_counter()
    builder = ModuleBuilder()
    stats = builder.import_module(traced, forward_annotator(traced, inputs))
    import_s = time.perf_counter() - t
    t = time.perf_counter()
    text = write_module(builder.module, workdir / "ours.torch.mlir", WriteOptions(keep_weights=False))
    write_s = time.perf_counter() - t
    t = time.perf_counter()
    bc = write_module(builder.module, workdir / "ours.torch.mlirbc",
                      WriteOptions(keep_weights=True, bytecode=True))
    bytecode_s = time.perf_counter() - t
    return {
        "trace_s": trace_s, "import_s": import_s, "write_s": write_s, "bytecode_write_s": bytecode_s,
        "text_bytes": text.stat().st_size, "bytecode_bytes": bc.stat().st_size,
        "nodes": stats.nodes, "node_kinds": len(stats.node_kinds),
    }


def phase_fx(config: str, workdir: Path) -> dict:
    from torch_mlir import fx

    from harness.compiler.mlir import WriteOptions, write_module
    from harness.models.opt import OPTLastHiddenState

    _, model, inputs = _build(config)
    wrapper = OPTLastHiddenState(model)
    t = time.perf_counter()
    module = fx.export_and_import(wrapper, *inputs, output_type="raw")
    import_s = time.perf_counter() - t
    t = time.perf_counter()
    path = write_module(module, workdir / "fx.torch.mlir", WriteOptions(keep_weights=False))
    write_s = time.perf_counter() - t
    return {"import_s": import_s, "write_s": write_s, "text_bytes": path.stat().st_size}


PHASES = {"trace": phase_trace, "ours": phase_ours, "fx": phase_fx}


def run_phase(name: str, config: str, workdir: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--phase", name, "--config", config, "--workdir", str(workdir)],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench phase {name} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="125m")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        warnings.filterwarnings("ignore")
        result = PHASES[args.phase](args.config, Path(args.workdir))
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return 0
    with tempfile.TemporaryDirectory(prefix="harness-bench-import-") as tmp:
        workdir = Path(tmp)
        trace = run_phase("trace", args.config, workdir)
        ours = run_phase("ours", args.config, workdir)
        fx = run_phase("fx", args.config, workdir)
    mib = 2 ** 20
    print(f"OPT import benchmark, config {args.config} (each phase in its own process)")
    print(f"  trace (torch.jit.trace)        {trace['trace_s']:8.2f} s   "
          f"peak RSS {trace['peak_rss_mib']:8.0f} MiB")
    print(f"  ours: import                   {ours['import_s']:8.2f} s   "
          f"({ours['nodes']} nodes, {ours['node_kinds']} kinds)")
    print(f"  ours: write text, elided       {ours['write_s']:8.2f} s   {ours['text_bytes'] / mib:10.2f} MiB")
    print(f"  ours: write bytecode, weights  {ours['bytecode_write_s']:8.2f} s   "
          f"{ours['bytecode_bytes'] / mib:10.2f} MiB")
    print(f"  ours: peak RSS (trace+import+writes)        {ours['peak_rss_mib']:8.0f} MiB")
    print(f"  fx:   export_and_import raw    {fx['import_s']:8.2f} s")
    print(f"  fx:   write text               {fx['write_s']:8.2f} s   {fx['text_bytes'] / mib:10.2f} MiB")
    print(f"  fx:   peak RSS (export+import+write)        {fx['peak_rss_mib']:8.0f} MiB")
    ratio_import = ours["import_s"] / fx["import_s"]
    ratio_total = (ours["trace_s"] + ours["import_s"] + ours["write_s"]) / (fx["import_s"] + fx["write_s"])
    print(f"ratio ours/FX, import only:                     {ratio_import:6.3f}x (target <= 1.0x)")
    print(f"ratio ours/FX, trace+import+write vs export+import+write: {ratio_total:6.3f}x")
    print(f"ratio ours/FX, IR bytes written:                {ours['text_bytes'] / fx['text_bytes']:6.4f}x")
    rss_ratio = ours['peak_rss_mib'] / fx['peak_rss_mib']
    print(f"ratio ours/FX, peak RSS:                        {rss_ratio:6.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
