#!/usr/bin/env python3
"""docs/fix.md's table: the 21 architectures through both frontends with ``harness port --fix``,
model by model (outcome per frontend, the fixes kept, the largest difference from eager).

Each model runs as a user runs it (``python -m harness port MODEL --fix --json F``), in its own
process, one after the other (a tiny model takes about a minute on 2 cores). The table is
printed as Markdown (what docs/fix.md shows), then the totals against the
targets: at least 19 of 21 verified on TorchScript, 21 of 21 on FX.

    python tools/fix_table.py                     # all 21, tiny, both frontends, --fix
    python tools/fix_table.py gpt2 bart           # some of them
    python tools/fix_table.py --no-fix            # the same without --fix, to compare
    python tools/fix_table.py --records DIR       # also keep each record.json in DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (the table's name, the MODEL argument of harness port)
MODELS = (
    ("GPT-2", "gpt2"), ("GPT-Neo", "gpt_neo"), ("GPT-NeoX", "gpt_neox"), ("GPT-J", "gptj"),
    ("Llama", "llama"), ("Mistral", "mistral"), ("Qwen2", "qwen2"), ("Qwen3", "qwen3"),
    ("Phi", "phi"), ("Phi-3", "phi3"), ("Gemma", "gemma"), ("Falcon", "falcon"),
    ("Bloom", "bloom"), ("OPT", "opt"), ("MPT", "mpt"), ("StableLM", "stablelm"),
    ("BERT", "bert"), ("RoBERTa", "roberta"), ("DistilBERT", "distilbert"),
    ("T5 encoder", "t5:encoder"), ("BART", "bart"),
)
FRONTENDS = ("torchscript", "fx")
TARGETS = {"torchscript": 19, "fx": 21}


def port(model: str, fix: bool, out: Path, timeout_s: float) -> dict | str:
    """The record of one port (a dict), or why there is none (a string)."""
    record_path = out / f"{model.replace(':', '-')}.json"
    # OPT: the stock variant only (FixedOPT is the project's hand-edited copy, not a target).
    extra = ["--variant", "stock"] if model == "opt" else []
    command = [sys.executable, "-m", "harness", "port", model, "--frontend", "both", "--out",
               str(out), "--json", str(record_path), "--no-progress", *extra,
               *(["--fix"] if fix else [])]
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"no record: timed out after {timeout_s:g} s"
    if not record_path.is_file():
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return f"no record (exit {proc.returncode}): {last[:160]}"
    return json.loads(record_path.read_text())


def cells(record: dict | str) -> dict[str, tuple[str, str, str]]:
    """Per frontend: (outcome, fixes kept, max abs diff)."""
    if isinstance(record, str):
        return {f: (record, "", "") for f in FRONTENDS}
    found = {}
    for p in record["variants"][0]["ports"]:
        kept = [s["fix"] for s in p.get("fixes", []) if s["outcome"] == "kept"]
        rolled = [s["fix"] for s in p.get("fixes", []) if s["outcome"] == "rolled-back"]
        fixes = ", ".join(dict.fromkeys(kept)) + "".join(f" ({r} rolled back)" for r in rolled)
        diffs = [n["max_abs_diff"] for n in p.get("numerics", [])]
        diff = max(diffs, key=lambda d: float("inf") if isinstance(d, str) else d) if diffs else ""
        outcome = p["outcome"]
        if outcome != "verified" and p.get("failed_stage"):
            first = (p.get("blockers") or [{}])[0]
            what = first.get("op") or first.get("message", "")
            outcome += f" at {p['failed_stage']}" + (f": {what[:70]}" if what else "")
        shown = f"{diff:.2g}" if isinstance(diff, float) else str(diff)
        found[p["frontend"]] = (outcome, fixes or "-", shown)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="harness port MODEL names (default: all 21)")
    parser.add_argument("--no-fix", action="store_true", help="port without --fix")
    parser.add_argument("--records", help="copy each record.json into this folder")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per model")
    args = parser.parse_args()
    chosen = [(label, m) for label, m in MODELS if not args.models or m in args.models]
    unknown = set(args.models) - {m for _, m in MODELS}
    if unknown:
        parser.error(f"not among the 21: {', '.join(sorted(unknown))}")
    verified = dict.fromkeys(FRONTENDS, 0)
    print("| model | TorchScript | fixes | max diff | FX | fixes | max diff |")
    print("|---|---|---|---|---|---|---|")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fix-table-") as tmp:
        for label, model in chosen:
            record = port(model, not args.no_fix, Path(tmp), args.timeout)
            row = cells(record)
            for f in FRONTENDS:
                verified[f] += row.get(f, ("",))[0] == "verified"
            print(f"| {label} | " + " | ".join(" | ".join(row.get(f, ("missing", "", "")))
                                                for f in FRONTENDS) + " |", flush=True)
            if args.records and not isinstance(record, str):
                Path(args.records).mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(tmp) / f"{model.replace(':', '-')}.json", args.records)
    n = len(chosen)
    print(f"\nverified: TorchScript {verified['torchscript']}/{n}, FX {verified['fx']}/{n} "
          f"({'with' if not args.no_fix else 'without'} --fix; {time.monotonic() - start:.0f} s)")
    if n == len(MODELS):
        met = all(verified[f] >= TARGETS[f] for f in FRONTENDS)
        print(f"targets (TorchScript >= {TARGETS['torchscript']}, FX >= {TARGETS['fx']}): "
              f"{'met' if met else 'NOT met'}")
        return 0 if met else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
