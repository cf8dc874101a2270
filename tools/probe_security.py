#!/usr/bin/env python3
"""Adversarial probes of the real ``harness`` command line (a security round), each in
its own temp folder: one line per probe, PASS or FAIL with what was seen; exit 1 on any FAIL.

- pasted commands: a pipeline with shell code is refused before any run (exit 2, nothing
  created), and a printed ``reproduce:`` line, pasted into bash, runs that command and nothing
  else;
- planted configs: a ``lit.cfg.py`` above a folder of records is never run by ``harness diff``;
- records that point outside their folder: ``harness sweep --merge`` renders, links and copies
  no file outside the sweep's folders (a reproducer, a symlinked check or log);
- odd homes: ``harness report`` with ``$HOME`` holding a quote, a newline, spaces or non-ASCII
  leaves no part of it in any bundle file or archive member name, and a path outside the known
  folders with a space in a folder name leaves no folder name;
- temp files: ``harness bisect`` leaves nothing in ``$TMPDIR``;
- round 4: a record's pipeline that starts with ``-`` never reaches torch-mlir-opt as its flags
  (``diff`` of a planted run or timeline record; a ``-load-pass-plugin`` library or a
  ``--mlir-generate-reproducer`` that overwrites a user's file); links planted in a sweep's
  ``--out`` (its lock, a model's log) and in a ``--merge`` output (a record, a log) are replaced,
  never written through; a forged record in ``--merge`` is one paragraph naming it (exit 2).

    python tools/probe_security.py            # about 45 s on 2 cores (the probes run 3 side by side)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRASHER = ROOT / "tests" / "data" / "crashers" / "A_remainder_int_by_zero.mlir"  # SIGFPE in canonicalize
OK_IR = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
SECRET = "PROBE-SECRET-7f3a"
PRIVATE = "Jane"  # a name in every odd home: it must not reach a bundle in any form


@dataclass
class Probe:
    name: str
    ok: bool
    detail: str = ""


def harness(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=full, timeout=timeout, check=False)


def _said(proc: subprocess.CompletedProcess) -> str:
    return " ".join((proc.stderr or proc.stdout).split())[:200]


# --- pasted commands ---------------------------------------------------------------------------

def probe_injected_pipelines(tmp: Path) -> list[Probe]:
    ir = tmp / "ok.mlir"
    ir.write_text(OK_IR)
    out = []
    for what, pipeline in [("pipe", "-canonicalize | touch {m}"),
                           ("and", "-canonicalize && touch {m}"),
                           ("newline", "-canonicalize\ntouch {m}"),
                           ("backquote", "-canonicalize `touch {m}`"),
                           ("textual", "builtin.module(canonicalize) ; touch {m}")]:
        marker = tmp / f"PWNED-{what}"
        proc = harness("run", ir, "--pipeline=" + pipeline.format(m=marker), cwd=tmp)
        ok = proc.returncode == 2 and not marker.exists() and "reproduce" not in proc.stdout
        made = "created" if marker.exists() else "nothing created"
        out.append(Probe(f"run refuses a pipeline with shell code ({what})", ok,
                         f"exit {proc.returncode}, {made}: {_said(proc)}"))
    return out


def probe_pasted_reproduce_line(tmp: Path) -> list[Probe]:
    pipeline = '-canonicalize --mlir-pass-pipeline-crash-reproducer="$(touch PWNED)"'
    proc = harness("run", CRASHER, "--pipeline=" + pipeline, cwd=tmp)
    line = next((ln.removeprefix("reproduce: ") for ln in proc.stdout.splitlines()
                 if ln.startswith("reproduce: ")), "")
    if not line:
        return [Probe("a pasted reproduce line runs nothing else", False,
                      f"no reproduce line: {_said(proc)}")]
    pasted = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp, timeout=60,
                            check=False)
    ok = not (tmp / "PWNED").exists() and "reproducer generated at `$(touch PWNED)`" in pasted.stderr
    return [Probe("a pasted reproduce line runs the same command and nothing else", ok, line[:160])]


# --- planted configs -----------------------------------------------------------------------------

def probe_planted_lit_config(tmp: Path) -> list[Probe]:
    marker = tmp / "PLANTED-RAN"
    (tmp / "lit.cfg.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    records = tmp / "shared" / "records"
    records.mkdir(parents=True)
    ir = records / "ok.mlir"
    ir.write_text(OK_IR)
    run = harness("run", ir, "--pipeline", "builtin.module(canonicalize)", "--json", cwd=tmp)
    (records / "ok.json").write_text(run.stdout)
    proc = harness("diff", "--opt", "wheel", "--opt", "wheel", records, cwd=tmp)
    return [Probe("diff runs no lit.cfg.py planted above a folder of records",
                  proc.returncode == 0 and not marker.exists(), f"exit {proc.returncode}: {_said(proc)}")]


# --- records that point outside their folder -----------------------------------------------------

def _record(model: str, reproducer: str) -> dict:
    blocker = {"rank": 1, "stage": "torch-to-linalg", "signature": f"no-lowering:{model}",
               "op": "torch.aten.x", "reproducer": reproducer}
    port = {"frontend": "torchscript", "outcome": "fails", "failed_stage": "torch-to-linalg",
            "blockers": [blocker]}
    return {"schema": "harness.port/1", "model": model, "source": "type", "model_type": model,
            "variants": [{"variant": "stock", "name": model, "ports": [port]}]}


def probe_records_outside_their_folder(tmp: Path) -> list[Probe]:
    secret = tmp / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text(f"root:{SECRET}:19000:0:99999:7:::\n")
    shard = tmp / "shard"
    (shard / "records").mkdir(parents=True)
    (shard / "records" / "gpt2.json").write_text(json.dumps(_record("gpt2", str(secret))))
    link = shard / "ports" / "blocker-1.mlir"
    link.parent.mkdir()
    link.symlink_to(secret)
    (shard / "records" / "bert.json").write_text(json.dumps(_record("bert", str(link))))
    (shard / "checks" / "gpt2").mkdir(parents=True)
    (shard / "checks" / "gpt2" / "stock.torchscript.json").symlink_to(secret)
    (shard / "logs").mkdir()
    (shard / "logs" / "gpt2.log").symlink_to(secret)
    merged = tmp / "merged"
    proc = harness("sweep", "--merge", shard, "--out", merged, cwd=tmp)
    page = merged / "index.html"
    leaked = [str(p.relative_to(merged)) for p in merged.rglob("*")
              if p.is_file() and SECRET in p.read_text(errors="replace")]
    ok = proc.returncode == 1 and page.is_file() and not leaked
    return [Probe("sweep --merge renders and copies no file a record points to outside the sweep", ok,
                  f"exit {proc.returncode}; files holding the secret: {leaked or 'none'}")]


# --- odd homes -----------------------------------------------------------------------------------

HOMES = {"quote": 'h"ome/Jane Doe', "newline": "new\nline/Jane Doe", "spaces": "home dir/Jane Doe",
         "unicode": "été/Jane Jörg", "dollar-backslash": "d$ir\\x/Jane Doe"}


def _forms(text: str) -> set[str]:
    """``text`` as it could be printed: as is, MLIR-escaped, JSON-escaped."""
    mlir = "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else
                   "".join(f"\\{b:02X}" for b in c.encode()) for c in text)
    return {text, mlir, mlir.lower(), json.dumps(text)[1:-1]}


def probe_odd_home(tmp: Path, kind: str) -> list[Probe]:
    home = tmp / HOMES[kind]
    models = home / "my models"
    models.mkdir(parents=True)
    # A Python location outside every known folder, in a folder whose name has a space.
    outside = f"/opt/{PRIVATE} Doe/train.py"
    src = models / "train.mlir"
    src.write_text(f'#loc = loc("{outside}":3:1)\n' + CRASHER.read_text())
    out = home / "out"
    proc = harness("report", src, "--pipeline", "builtin.module(canonicalize)", "--no-reduce", "--out", out,
                   cwd=home, env={"HOME": str(home)}, timeout=300)
    bundles = [p for p in out.glob("report-*") if p.is_dir()] if out.is_dir() else []
    archives = list(out.glob("report-*.tar.gz")) if out.is_dir() else []
    if proc.returncode != 1 or len(bundles) != 1 or len(archives) != 1:
        return [Probe(f"report redacts a home with {kind}", False, f"exit {proc.returncode}: {_said(proc)}")]
    needles = set().union(*(_forms(part) for part in (PRIVATE, "Jörg", HOMES[kind].split("/")[0])))
    found = []
    for f in sorted(bundles[0].iterdir()):
        text = f.read_text(errors="replace")
        found += [f"{f.name}: {n!r}" for n in needles if n in text]
    with tarfile.open(archives[0]) as tar:
        for member in tar.getmembers():
            found += [f"member {member.name!r}" for n in needles if n in member.name]
            if member.isfile():
                data = tar.extractfile(member).read().decode(errors="replace")
                found += [f"archived {member.name.rsplit('/', 1)[-1]}: {n!r}" for n in needles if n in data]
    return [Probe(f"report redacts a home with {kind} in every file and archive member", not found,
                  "; ".join(sorted(set(found))[:4]) or "no trace")]


# --- temp files ----------------------------------------------------------------------------------

def probe_bisect_temp_files(tmp: Path) -> list[Probe]:
    tmpdir, work = tmp / "tmpdir", tmp / "work"
    tmpdir.mkdir(), work.mkdir()
    proc = harness("bisect", CRASHER, "--pipeline", "builtin.module(canonicalize)", cwd=work,
                   env={"TMPDIR": str(tmpdir)})
    left = [p.name for p in tmpdir.iterdir()]
    return [Probe("bisect leaves nothing in the temp dir (its files go under harness-out/)",
                  proc.returncode == 1 and not left and (work / "harness-out").is_dir(),
                  f"exit {proc.returncode}; left in TMPDIR: {left or 'nothing'}")]


# --- round 4: records as flags, links in output folders, forged records ----------------------

VICTIM_TEXT = "the user's own file\n"


def _victim(tmp: Path) -> Path:
    victim = tmp / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    return victim


def probe_record_pipeline_as_flags(tmp: Path) -> list[Probe]:
    victim = _victim(tmp)
    out = []
    for what, pipeline in (("plugin", f"-load-pass-plugin={tmp / 'evil.so'} -canonicalize"),
                           ("reproducer", f"--mlir-generate-reproducer={victim} -canonicalize")):
        records = tmp / what
        records.mkdir()
        (records / "ok.mlir").write_text(OK_IR)
        (records / "planted.json").write_text(json.dumps(
            {"outcome": "success", "input_path": "ok.mlir", "pipeline": pipeline}))
        proc = harness("diff", "--opt", "wheel", "--opt", "wheel", records, cwd=tmp)
        ok = (proc.returncode == 2 and victim.read_text() == VICTIM_TEXT
              and "Traceback" not in proc.stderr)
        out.append(Probe(f"diff never hands a record's pipeline to torch-mlir-opt as flags ({what})",
                         ok, f"exit {proc.returncode}: {_said(proc)}"))
    timeline = tmp / "timeline"
    (tmp / "ok.mlir").write_text(OK_IR)
    made = harness("timeline", tmp / "ok.mlir", "--pipeline", "builtin.module(canonicalize)",
                   "--out", timeline, cwd=tmp)
    record = timeline / "timeline.json"
    if made.returncode != 0 or not record.is_file():
        return [*out, Probe("diff holds a timeline record to its folder", False,
                            f"timeline exit {made.returncode}: {_said(made)}")]
    data = json.loads(record.read_text())
    data.pop("input_ir", None)
    data["input_path"] = str(victim)  # a file outside its folder
    record.write_text(json.dumps(data))
    proc = harness("diff", "--opt", "wheel", "--opt", "wheel", timeline, cwd=tmp)
    return [*out, Probe("diff refuses a timeline record whose input is outside its folder",
                        proc.returncode == 2 and "outside" in proc.stderr,
                        f"exit {proc.returncode}: {_said(proc)}")]


def probe_links_in_sweep_out(tmp: Path) -> list[Probe]:
    victim = _victim(tmp)
    out = tmp / "out"
    (out / "logs").mkdir(parents=True)
    (out / ".sweep.lock").symlink_to(victim)
    (out / "logs" / "seggpt.log").symlink_to(victim)  # refused quickly: its inputs cannot be planned
    proc = harness("sweep", "seggpt", "--frontend", "fx", "--out", out, cwd=tmp, timeout=300)
    replaced = not (out / ".sweep.lock").is_symlink() and not (out / "logs" / "seggpt.log").is_symlink()
    ok = victim.read_text() == VICTIM_TEXT and replaced and (out / "index.html").is_file()
    state = "intact" if victim.read_text() == VICTIM_TEXT else "WRITTEN"
    first = [Probe("a sweep replaces links planted in --out (its lock, a model's log)", ok,
                   f"exit {proc.returncode}; victim {state}")]
    merged = tmp / "merged"
    (merged / "records").mkdir(parents=True)
    (merged / "logs").mkdir()
    (merged / "records" / "seggpt.json").symlink_to(victim)
    (merged / "logs" / "seggpt.log").symlink_to(victim)
    proc = harness("sweep", "--merge", out, "--out", merged, cwd=tmp)
    ok = (victim.read_text() == VICTIM_TEXT and not (merged / "records" / "seggpt.json").is_symlink()
          and (merged / "index.html").is_file())
    return [*first, Probe("sweep --merge replaces links planted in its --out (a record, a log)", ok,
                          f"exit {proc.returncode}: {_said(proc)}")]


def probe_forged_merge_records(tmp: Path) -> list[Probe]:
    out = []
    for what, forged in (("variants a string", {"variants": "nope"}),
                         ("ports a number", {"variants": [{"variant": "stock", "name": "gpt2", "ports": 7}]}),
                         ("a list", None)):
        shard = tmp / what.replace(" ", "-")
        (shard / "records").mkdir(parents=True)
        data: object = [1, 2] if forged is None else {**_record("gpt2", ""), **forged}
        (shard / "records" / "gpt2.json").write_text(json.dumps(data))
        proc = harness("sweep", "--merge", shard, "--out", tmp / f"merged-{shard.name}", cwd=tmp)
        ok = proc.returncode == 2 and "gpt2.json" in proc.stderr and "Traceback" not in proc.stderr
        out.append(Probe(f"sweep --merge of a forged record ({what}) is one paragraph naming it", ok,
                         f"exit {proc.returncode}: {_said(proc)}"))
        shutil.rmtree(shard)
    return out


PROBES: list[tuple[str, Callable[[Path], list[Probe]]]] = [
    ("injection", probe_injected_pipelines), ("paste", probe_pasted_reproduce_line),
    ("lit", probe_planted_lit_config), ("records", probe_records_outside_their_folder),
    ("bisect-tmp", probe_bisect_temp_files), ("flags", probe_record_pipeline_as_flags),
    ("links", probe_links_in_sweep_out), ("forged", probe_forged_merge_records),
    *((f"home-{kind}", lambda tmp, kind=kind: probe_odd_home(tmp, kind)) for kind in HOMES),
]


def run(name: str, probe: Callable[[Path], list[Probe]]) -> list[Probe]:
    with tempfile.TemporaryDirectory(prefix=f"probe-{name}-") as tmp:
        try:
            return probe(Path(tmp))
        except Exception as e:  # a probe that breaks is a failure, said in one line
            return [Probe(name, False, f"the probe itself failed: {type(e).__name__}: {e}")]


def main() -> int:
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = [p for found in pool.map(lambda np: run(*np), PROBES) for p in found]
    for p in results:
        detail = f"  ({p.detail})" if p.detail and not p.ok else ""
        print(f"{'PASS' if p.ok else 'FAIL'}  {p.name}{detail}")
    failed = sum(not p.ok for p in results)
    print(f"{len(results) - failed} of {len(results)} probes pass in {time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
