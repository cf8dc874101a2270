"""Redaction in harness report: paths holding any characters, in linear time
and bounded memory (item 2), on the Redactor itself and on real bundles.

The forms a path takes in the bundle (MLIR's string escapes, JSON, shell quoting) are written
here independently of the code under test."""

from __future__ import annotations

import json
import os
import shlex
import tarfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.diagnose.report import ReportOptions, make_report
from harness.diagnose.report.redact import Redactor

from support import CRASHERS

SPACED_HOME = "/x/home dir/Jane Doe"


def _mlir(text: str) -> str:
    """How MLIR prints ``text`` inside a string literal (llvm::printEscapedString)."""
    out = []
    for b in text.encode():
        c = chr(b)
        out.append("\\\\" if c == "\\" else c if 0x20 <= b < 0x7F and c != '"' else f"\\{b:02X}")
    return "".join(out)


def _forms(path: str) -> set[str]:
    """Every way ``path`` can be written in a bundle file."""
    return {path, _mlir(path), json.dumps(path)[1:-1], shlex.quote(path).strip("'"),
            path.replace("'", "'\"'\"'")}


def _redactor(home: str, staging: str = "/out dir/.report-partial-x1") -> Redactor:
    return Redactor(prefixes=[(staging, ""), (home, "~")], user="jdoe")


# --- the Redactor ------------------------------------------------------------------------------

def test_paths_with_spaces_are_redacted_in_every_form():
    r = _redactor(SPACED_HOME)
    text = (f"{SPACED_HOME}/proj/a.mlir:3:1: error: x\n"
            f"Program arguments: torch-mlir-opt {shlex.quote(SPACED_HOME + '/proj/a.mlir')}\n"
            "written to /out dir/.report-partial-x1/input.mlir; jdoe was here")
    assert r.text(text) == ("~/proj/a.mlir:3:1: error: x\n"
                            "Program arguments: torch-mlir-opt '~/proj/a.mlir'\n"
                            "written to input.mlir; <user> was here")
    ir = f'#loc = loc("{_mlir(SPACED_HOME)}/m.py":1:2)\n%0 = "x"() {{p = "/srv/a b/c"}}\n'
    # by component: the folder "a b" goes with the rest of the path
    assert "".join(r.ir_chunks([ir])) == '#loc = loc("~/m.py":1:2)\n%0 = "x"() {p = "<path>/c"}\n'


def test_a_folder_is_redacted_only_where_its_name_ends():
    r = _redactor(SPACED_HOME)
    assert r.text(f"{SPACED_HOME}.bak/x {SPACED_HOME}x {SPACED_HOME}.") == \
        "<path>/x <path>/Jane Doex ~."  # other paths, redacted by component


def test_redaction_of_a_100_mb_class_line_is_bounded_in_memory(tmp_path):
    """A line of 16 MB of hex weights: an earlier redactor took 120x its size (the string-literal regex);
    streamed, the peak stays below the size of the line."""
    src, dest = tmp_path / "big.mlir", tmp_path / "out.mlir"
    hex_digits = "0123456789ABCDEF" * (1 << 20)
    src.write_text(f'%w = torch.vtensor.literal(dense<"0x{hex_digits}"> : tensor<8388608xf32>) '
                   f'loc("{_mlir(SPACED_HOME)}/m.py":1:1)\n')
    tracemalloc.start()
    try:
        _redactor(SPACED_HOME).copy_file(src, dest, ir=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert dest.read_text() == src.read_text().replace(_mlir(SPACED_HOME), "~")
    assert peak < 0.75 * src.stat().st_size, f"peak {peak / 2**20:.1f} MiB"


_component = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"),
                     min_size=1, max_size=8).filter(lambda c: c not in (".", ".."))
_homes = st.lists(_component, min_size=1, max_size=3).map(lambda parts: "/h/" + "/".join(parts))


@settings(max_examples=200, deadline=None)
@given(home=_homes, rest=st.lists(_component, min_size=0, max_size=2),
       before=st.sampled_from(["", " ", "(", "'", '"', "=", "\n", "at "]),
       split=st.integers(min_value=0, max_value=400))
def test_any_path_under_any_home_is_redacted_in_every_form(home, rest, before, split):
    path = "/".join([home, *rest])
    r = _redactor(home)
    for form in _forms(path):
        text = f"x{before}{form}: error"
        out = r.text(text)
        assert home not in out and _mlir(home) not in out, (form, out)
        # The same text in two chunks, split anywhere, reads the same.
        k = split % (len(text) + 1)
        assert "".join(r.text_chunks([text[:k], text[k:]])) == out
    ir = f'loc("{_mlir(path)}":1:2) "{_mlir(path)}"\n'
    assert _mlir(home) not in "".join(r.ir_chunks([ir]))


# --- real bundles ------------------------------------------------------------------------------

NONZERO = """\
#loc1 = loc("{home}/models/opt.py":10:4)
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {{
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64> loc(#loc1)
  return %0 : !torch.vtensor<[?,1],si64>
}}
"""


def _bundle_texts(result) -> dict[str, str]:
    """Every bundle file, from the folder and from the archive, and the archive's names."""
    texts = {name: (Path(result.folder) / name).read_text(errors="replace") for name in result.files}
    with tarfile.open(result.archive) as tar:
        texts["tar:names"] = "\n".join(tar.getnames())
        for m in tar.getmembers():
            if m.isfile():
                texts[f"tar:{m.name}"] = tar.extractfile(m).read().decode(errors="replace")
    return texts


def _report_under(home: Path, kind: str, monkeypatch) -> object:
    """A report made as a user whose home is ``home``: input and output under it."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    src = home / "proj" / "input file.mlir"
    src.parent.mkdir(exist_ok=True)
    if kind == "crash":
        src.write_bytes((CRASHERS / "A_remainder_int_by_zero.mlir").read_bytes())
        pipeline = "-canonicalize"
    else:
        src.write_text(NONZERO.format(home=_mlir(str(home))))
        pipeline = "torch-to-linalg"
    return make_report(src, pipeline, options=ReportOptions(out_dir=home / "out dir", reduce=False))


@pytest.mark.parametrize("kind", ["crash", "legalization"])
def test_a_home_with_spaces_leaves_no_trace_in_the_bundle(tmp_path, monkeypatch, kind):
    home = tmp_path / "home dir" / "Jane Doe"
    result = _report_under(home, kind, monkeypatch)
    assert result.reproduced
    texts = _bundle_texts(result)
    for name, text in texts.items():
        for private in (str(home), _mlir(str(home)), "Jane Doe", "Jane\\20Doe", ".report-partial-"):
            assert private not in text, f"{private!r} left in {name}"
    backtrace = texts["backtrace.txt"]
    if kind == "crash":
        assert "'~/proj/input file.mlir'" in backtrace  # the program arguments, redacted
    else:
        assert 'loc("~/models/opt.py":10:4)' in texts["input.mlir"]


# Each example is a real report (about 1 s with reduce off): a few, with any characters.
_real_components = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"),
                           min_size=1, max_size=6).filter(
    lambda c: c not in (".", "..") and len(c.encode()) < 60)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(parts=st.lists(_real_components, min_size=1, max_size=2),
       kind=st.sampled_from(["crash", "legalization"]))
def test_any_home_leaves_no_trace_in_any_bundle_file(tmp_path_factory, monkeypatch, parts, kind):
    base = tmp_path_factory.mktemp("home")
    home = base.joinpath(*parts)
    try:
        result = _report_under(home, kind, monkeypatch)
    except OSError:  # a name the file system refuses (too long once encoded)
        return
    for name, text in _bundle_texts(result).items():
        for form in _forms(str(home)):
            assert form not in text, f"home {str(home)!r} as {form!r} left in {name}"
    assert os.path.commonpath([result.folder, str(home)]) == str(home)


# Issue 26 item 4: the forms the earlier rules missed, and paths redacted by component.

def _write_escaped(text: str) -> str:
    """LLVM's raw_ostream::write_escaped, written out here from its definition."""
    out = ""
    for b in text.encode():
        c = chr(b)
        plain = c if 32 <= b < 127 else f"\\{b:03o}"
        out += {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}.get(c) or plain
    return out


@pytest.mark.parametrize("home", ['/tmp/h"ome/Jane Doe', "/tmp/new\nline/Jane Doe", "/tmp/d$ir/Jane Doe",
                                  "/tmp/b\\ack/Jane Doe", "/tmp/\u00e9t\u00e9/Jane J\u00f6rg"])
def test_a_home_leaves_no_trace_in_llvm_json_or_c_string_forms(monkeypatch, home):
    monkeypatch.setenv("HOME", home)
    r = Redactor.for_machine([], enabled=True)
    print_arg = home.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    args = "0.\tProgram arguments: torch-mlir-opt"
    texts = [f'{args} "{print_arg}/models/a.mlir" -o /dev/null',               # sys::printArg
             f'{args} "{_write_escaped(home)}/models/a.mlir" -o /dev/null',     # write_escaped
             "stderr: " + json.dumps(f"{home}/models/a.mlir"),                  # JSON
             "stderr: " + json.dumps(f"{home}/models/a.mlir", ensure_ascii=False)]
    for text in texts:
        out = r.text(text)
        assert "Jane" not in out and "~/models/a.mlir" in out, (text, out)
    # A diagnostic's file read from stderr is cut at the newline: the part after it is private too.
    tail = f"{home}/models/a.mlir".split("\n")[-1]
    assert "Jane" not in json.dumps(r.json({"file": tail}))


@pytest.mark.parametrize("path, kept", [("/opt/Jane Doe/train.py", "<path>/train.py"),
                                        ("/srv/data sets/Jane Doe/x.py", "<path>/x.py")])
def test_a_path_outside_the_known_folders_is_redacted_whole_by_component(path, kept):
    # Was "<path>/Jane Doe/train.py": the fallback stopped at the space.
    r = Redactor(prefixes=[], user="")
    out = r.text(f'at {path}:3: error')
    assert out == f"at {kept}:3: error"
    ir = "".join(r.ir_chunks([f'%0 = torch.aten.add loc("{path}":3:1)\n']))
    assert f'loc("{kept}":3:1)' in ir and "Jane" not in ir


def test_a_system_account_name_is_not_redacted_as_a_word(monkeypatch):
    """Written as root (a CI container), "root cause", --root-cause and TorchScript's <root>
    stay as written; the home /root is still ~. A personal name is still redacted."""
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "root")
    monkeypatch.setenv("HOME", "/root")
    r = Redactor.for_machine([], enabled=True)
    assert r.user == ""
    assert r.text("Root cause: see --root-cause; module <root> in /root/m.py") == \
        "Root cause: see --root-cause; module <root> in ~/m.py"
    monkeypatch.setattr(getpass, "getuser", lambda: "jdoe")
    assert Redactor.for_machine([], enabled=True).text("jdoe was here") == "<user> was here"
