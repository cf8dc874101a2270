"""Issue 28: issue.md's maintainer sections, each filled by one case and left honest by another
("Not determined", "TorchScript only", "no known duplicate"), and the upstream catalog's triage.

The filled cases come from a real report (the and-tensor bundle's input through the pinned
torch-mlir-opt); the others from the section functions on real inputs of theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.knowledge import upstream
from harness.diagnose.report.sections import (
    Provenance,
    Through,
    blocks,
    reproduces_through,
    root_cause,
    UpstreamVerdict,
    search_upstream,
    section_values,
    triage,
    upstream_section,
)

from support import DATA, ROOT, harness

# Triaged known #4749: a reproducer for that PR, under known/ (not a new issue).
AND_TENSOR = ROOT / "reports" / "upstream" / "known" / "and-tensor-no-lowering" / "input.mlir"


def section(issue: str, name: str) -> str:
    start = issue.index(f"## {name}\n")
    end = issue.index("\n## ", start + 1)
    return issue[start + len(name) + 4:end].strip()


@pytest.fixture(scope="module")
def and_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    proc = harness("report", str(AND_TENSOR), "--pipeline", "torch-to-linalg", "--out", str(out), "--json",
                   "--blocks", "opt-125m", "--blocks", "ElementwiseAndTensor_basic", "--reproduces-through",
                   "both", timeout=900)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    return result, (Path(result["folder"]) / "issue.md").read_text()


def test_the_title_names_op_pass_and_label(and_report):
    result, _issue = and_report
    assert result["title"] == ("[torch-mlir] [known #4749] convert-torch-to-linalg does not lower "
                               "'torch.aten.__and__.Tensor' (it lowers 'torch.aten.bitwise_and.Tensor')")
    assert result["triage"] == "known #4749" and result["target_repo"] == "llvm/torch-mlir"


def test_root_cause_is_filled_from_the_blocker_analysis(and_report):
    _, issue = and_report
    text = section(issue, "Root cause")
    assert "At fault: the conversion `convert-torch-to-linalg` declines it here." in text
    assert "bisect: the first failing pass is `torch-finalizing-backend-type-conversion`" in text


def test_root_cause_not_determined_lists_what_was_tried():
    text = root_cause("", ["bisect: it named no pass (the pipeline passes alone)",
                           "no blocker analysis: the failure is a crash"])
    assert text.startswith("Not determined. Tried:\n\n- bisect: it named no pass")
    assert "- no blocker analysis" in text


def test_reproduces_through_both_when_a_port_showed_it(and_report):
    _, issue = and_report
    assert section(issue, "Reproduces through").startswith("Both (as given (--reproduces-through)): "
                                                           "the TorchScript path and the FX path")


def test_reproduces_through_torchscript_only_and_bare_ir():
    only = reproduces_through(Provenance(Through.TORCHSCRIPT_ONLY, "harness port fnet"), "x.mlir")
    assert only.startswith("TorchScript only (harness port fnet)") and "#3693" in only
    bare = reproduces_through(Provenance(), "input.mlir")
    assert bare.startswith("Not determined: the report started from a bare IR file (`input.mlir`)")
    assert "could not be tried" in bare


def test_blocks_lists_the_records_and_says_when_none(and_report):
    _, issue = and_report
    assert section(issue, "Blocks") == "- `opt-125m`\n- `ElementwiseAndTensor_basic`"
    assert blocks(Provenance()).startswith("Not determined: no model, e2e test or lit test run")


def test_upstream_names_the_duplicate(and_report):
    _, issue = and_report
    text = section(issue, "Upstream")
    assert "Target repository: **llvm/torch-mlir**." in text
    assert "Triage: **known #4749**." in text and "llvm/torch-mlir#4749 (pull request, open" in text
    # issue 44: known, so not a new issue: a reproducer for #4749, in issue.md and record.json
    assert "Filing: **not a new issue**: a reproducer to add to llvm/torch-mlir#4749 (below)." in text
    result, _ = and_report
    record = json.loads((Path(result["folder"]) / "record.json").read_text())["report"]
    assert record["filing"] == "comment on the known thread"
    assert record["threads"] == ["llvm/torch-mlir#4749"]
    # the catalog's hand search of this op, with its date and queries
    assert ("Searched llvm/torch-mlir's issues and pull requests (a stored snapshot of GitHub "
            "threads, searched by meaning) on 2026-12-07: #4749 (above) (queries: `") in text
    assert "not run" not in text


def test_upstream_no_known_duplicate_and_llvm_project():
    verdict = triage("torch.aten.nonzero", "", "error: something else", "linalg-fuse-elementwise-ops")
    text = upstream_section(verdict)
    assert str(verdict.verdict) == "new" and verdict.target_repo == "llvm/llvm-project"
    assert "Triage: **new**: no known duplicate" in text
    assert "Target repository: **llvm/llvm-project** (the failing pass is upstream MLIR's)." in text
    assert "Filing:" not in text  # a new issue: no thread to add it to
    # nobody searched for it: the searches to make, as links, never "not run"
    assert ("Not searched yet: search llvm/llvm-project's issues and pull requests before filing "
            "([`aten.nonzero`](https://github.com/llvm/llvm-project/issues?q=is%3Aissue+OR+is%3Apr+"
            "aten.nonzero), [`linalg-fuse-elementwise-ops`]") in text


def test_the_dynamic_broadcast_abort_is_by_design():
    verdict = triage("", "", "the code dies by SIGABRT: mismatched size for broadcast")
    assert verdict.label == "by design"
    # 240 made the guard, 2882 (the rejected PR) says why; #2149 (a dynamic broadcast_to) is not it
    assert [m.number for m in verdict.matches] == [240, 2882]
    assert "Triage: **by design**" in upstream_section(verdict)


def test_the_search_says_when_it_was_skipped(monkeypatch):
    """A search that cannot reach GitHub (an address that does not resolve) says so."""
    from harness.diagnose.report import sections

    monkeypatch.setattr(sections, "GITHUB_SEARCH", "https://nonexistent.invalid/search/issues")
    found = search_upstream(["torch.aten.nonzero"], timeout_s=5)
    assert not found.ran
    assert found.describe()[0].startswith("GitHub's issue search could not run (offline or refused")


@pytest.fixture
def github(monkeypatch):
    """GitHub's search API as a server of our own on 127.0.0.1: it answers from ``answers``
    (query -> items, or an HTTP status) and records the queries it was asked."""
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from harness.diagnose.report import sections

    asked: list[str] = []
    answers: dict[str, object] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["q"][0]
            asked.append(query)
            answer = answers.get(query, [])
            if isinstance(answer, int):
                self.send_response(answer)
                self.end_headers()
                return
            body = json.dumps({"total_count": len(answer), "items": answer}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(sections, "GITHUB_SEARCH", f"http://127.0.0.1:{server.server_port}/search/issues")
    yield asked, answers
    server.shutdown()
    server.server_close()


def item(number, title, state="open"):
    return {"number": number, "title": title, "state": state,
            "html_url": f"https://github.com/llvm/torch-mlir/issues/{number}"}


def test_the_search_client_asks_one_query_per_term_and_merges_the_hits(github):
    asked, answers = github
    answers['repo:llvm/torch-mlir "aten.foo"'] = [item(11, "foo fails"), item(12, "foo again")]
    answers['repo:llvm/torch-mlir "convert-torch-to-linalg"'] = [item(12, "foo again"),
                                                                 item(13, "x", "closed")]
    found = search_upstream(["aten.foo", "convert-torch-to-linalg", "aten.foo", ""])
    assert asked == ['repo:llvm/torch-mlir "aten.foo"', 'repo:llvm/torch-mlir "convert-torch-to-linalg"']
    assert found.ran and [h[0] for h in found.hits] == [11, 12, 13]
    lines = found.describe()
    assert lines[0].startswith("GitHub's issue search on ") and lines[0].endswith("found:")
    assert lines[3] == '- #13 (closed): "x" https://github.com/llvm/torch-mlir/issues/13'


def test_the_search_client_says_no_match_with_its_queries_and_date(github):
    import datetime

    found = search_upstream(["aten.bar"])
    assert found.describe() == [f"Searched: no match (GitHub's issue search on "
                                f"{datetime.date.today().isoformat()}: `repo:llvm/torch-mlir \"aten.bar\"`)."]


def test_a_refused_search_is_skipped_not_reported_as_no_match(github):
    asked, answers = github
    answers['repo:llvm/torch-mlir "aten.baz"'] = 403  # rate limited
    found = search_upstream(["aten.baz", "other"])
    assert not found.ran and asked == ['repo:llvm/torch-mlir "aten.baz"']
    assert "could not run (offline or refused: Forbidden)" in found.describe()[0]


def test_a_hand_search_in_the_catalog_is_what_the_section_says():
    from dataclasses import replace

    record = upstream.SearchRecord("llvm/torch-mlir", "2026-12-07", ("AtenFooOp::fold", "aten.foo crash"),
                                   blocker_ops=("torch.aten.foo",))
    verdict = replace(triage("torch.aten.foo", "", "error: x"), searched=(record,))
    text = upstream_section(verdict)
    assert ("Searched llvm/torch-mlir's issues and pull requests on 2026-12-07: no match (queries: "
            "`AtenFooOp::fold`; `aten.foo crash`).") in text
    assert "Not searched yet" not in text
    parsed = upstream.load_searches(
        '[[search]]\nrepo = "llvm/torch-mlir"\nsearched = "2026-12-07"\nqueries = ["q"]\n'
        'blocker_ops = ["torch.aten.foo"]\nmatches = [4]\n')
    assert parsed[0].about("torch.aten.foo", "") and "#4 (above)" in parsed[0].describe()
    with pytest.raises(Exception, match="each needs repo, searched and queries"):
        upstream.load_searches('[[search]]\nrepo = "r"\n')


def test_the_catalog_loads_typed_and_says_unverified_titles():
    reports = upstream.load()
    assert {r.number for r in reports} >= {4749, 4725, 4762, 2149, 240, 590, 989, 3693, 4593}
    # a title nobody saw on GitHub stays empty and is said to be unverified (#4721's was seen on
    # 2026-12-07, so an entry of its own here)
    unverified = upstream.load('[[report]]\nrepo = "llvm/torch-mlir"\nnumber = 7\nkind = "pull request"\n'
                               'state = "merged"\n')[0]
    assert unverified.title == "" and "title not verified" in unverified.describe()
    assert next(r for r in reports if r.number == 4721).title == "Decompose aten._int_mm to aten.mm"
    with pytest.raises(Exception, match="malformed"):
        upstream.load('[[report]]\nrepo = "llvm/torch-mlir"\nnumber = 1\n')


PORT_RECORD = DATA / "port" / "opt-tiny-stock.record.json"  # a real harness port opt


def test_a_port_record_says_torchscript_only_and_what_it_blocks(tmp_path):
    """`harness port opt --variant stock --size tiny --no-numerics` (the record in tests/data):
    TorchScript stops at the __and__ blocker, FX lowers."""
    proc = harness("report", str(AND_TENSOR), "--pipeline", "torch-to-linalg", "--out", str(tmp_path),
                   "--json", "--port-record", str(PORT_RECORD), timeout=900)
    assert proc.returncode == 1, proc.stderr
    issue = (Path(json.loads(proc.stdout)["folder"]) / "issue.md").read_text()
    assert section(issue, "Reproduces through").startswith(
        "TorchScript only: FX passes it, ONNX was not tried.\n\n- FX (torch.export + fx_importer): "
        "**passes** (port records of opt (opt): its port reached the pipelines without it)")
    assert section(issue, "Blocks") == "- `opt (opt)`"


def test_port_evidence_both_and_not_determined():
    from harness.diagnose.report.sections import PathOutcome, PathResult, PortEvidence, with_evidence

    ts = PortEvidence("m (s)", "torchscript", ("torch.aten.x",), True,
                      PathResult("torchscript", "TorchScript (x)", False, PathOutcome.NOT_TRIED))
    fx_hit = PortEvidence("m (s)", "fx", ("torch.aten.x",), True,
                          PathResult("fx", "FX (x)", True, PathOutcome.NOT_TRIED))
    fx_stopped = PortEvidence("m (s)", "fx", (), False,  # export failed: says nothing of this op
                              PathResult("fx", "FX (x)", True, PathOutcome.NOT_TRIED))
    assert with_evidence(Provenance(), (ts, fx_hit), ["torch.aten.x"]).through is Through.BOTH
    undecided = with_evidence(Provenance(), (ts, fx_stopped), ["torch.aten.x"])
    assert undecided.through is Through.NOT_DETERMINED and undecided.blocks == ("m (s)",)
    assert reproduces_through(undecided, "x.mlir").startswith(
        "TorchScript only: FX stops earlier at another failure.\n\n- FX (x): **fails-otherwise**")
    unrelated = with_evidence(Provenance(), (ts, fx_hit), ["torch.aten.y"])
    assert unrelated == Provenance()


def test_a_fold_crash_under_canonicalize_is_torch_mlirs():
    """canonicalize is MLIR's driver, but the fold that crashes is torch-mlir's op's."""
    text = ("crash: SIGSEGV in Canonicalizer at mlir::TensorType::getShape "
            "via mlir::torch::Torch::AtenAnyDimsOp::fold")
    assert triage("", "", text, "canonicalize").target_repo == "llvm/torch-mlir"
    assert triage("", "", "crash: SIGSEGV in Canonicalizer at mlir::Foo", "canonicalize").target_repo \
        == "llvm/llvm-project"


def test_the_projects_finding_leads_the_root_cause():
    found = section_values(UpstreamVerdict(), "Not determined. Tried:\n\n- bisect", Provenance(
        finding="`AtenAnyDimsOp::fold` reads the sizes of an unranked result."), "x.mlir", str)
    root = found["ROOT_CAUSE"]
    # issue 44, second triage: the cause stands alone, no "Not determined. Tried:" beside it
    assert root == "`AtenAnyDimsOp::fold` reads the sizes of an unranked result."
    plain = section_values(UpstreamVerdict(), "Not determined. Tried:\n\n- bisect", Provenance(),
                           "x.mlir", str)
    assert "project's finding" not in plain["ROOT_CAUSE"]


def test_reproduces_through_states_every_frontends_path_supported_first():
    # Issue 44: each frontend's result, FX and ONNX (upstream's supported paths) before
    # TorchScript, and a path nobody tried said as such.
    from harness.commands.numerics import path_results
    from harness.diagnose.report.sections import torchscript_only

    only = Provenance(paths=path_results(["torchscript=hits",
                                          "fx=passes:upstream's fx_importer config passes X",
                                          "onnx=passes"]))
    text = reproduces_through(only, "x.mlir")
    assert text.splitlines()[0] == ("TorchScript only: FX passes it, ONNX passes it. Upstream no "
                                    "longer runs the TorchScript e2e config (llvm/torch-mlir#3693).")
    assert [line.split(":")[0] for line in text.splitlines()[2:]] == [
        "- FX (torch.export + fx_importer)", "- ONNX (torch.onnx.export + onnx_importer)",
        "- TorchScript (torch.jit + a JIT IR importer; its IR matches what upstream's JIT IR importer, "
        "off by default since llvm/torch-mlir#3693, emits)"]
    assert "**passes** (upstream's fx_importer config passes X)" in text
    assert torchscript_only(only) is True
    fx = Provenance(paths=path_results(["fx=hits", "torchscript=hits"]))
    text = reproduces_through(fx, "x.mlir")
    assert text.startswith("Upstream's supported path hit it: FX.")
    assert "- ONNX (torch.onnx.export + onnx_importer): **not-tried**" in text
    assert torchscript_only(fx) is False
    # ONNX not tried: whether only TorchScript hits it is not known; ONNX stopping earlier at
    # another failure does not meet it
    assert torchscript_only(Provenance(paths=path_results(["torchscript=hits", "fx=passes"]))) is None
    assert torchscript_only(Provenance(paths=path_results(
        ["torchscript=hits", "fx=passes", "onnx=fails-otherwise:export"]))) is True
    with pytest.raises(Exception, match="give FRONTEND=OUTCOME"):
        path_results(["fx=maybe"])
