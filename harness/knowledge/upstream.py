"""Upstream torch-mlir reports that match a failure the harness can diagnose: a report says
"possibly known upstream" when its blocker (the op whose conversion failed) is one of these.

Kept small and checked by hand (title and state as seen on GitHub); a match is a lead for
the reader, not a claim that the report is a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.enums import ParsableEnum


class UpstreamKind(ParsableEnum):
    ISSUE = "issue"
    PULL_REQUEST = "pull request"


@dataclass(frozen=True)
class UpstreamReport:
    repo: str                      # llvm/torch-mlir
    number: int
    kind: UpstreamKind
    state: str                     # when last checked by hand: "open", "merged", "closed"
    title: str
    blocker_ops: tuple[str, ...]   # the blocker it is about
    reported_ops: tuple[str, ...] = ()  # when set, the op MLIR named must be one of these too
    note: str = ""                 # how it relates, in one clause

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"

    @property
    def url(self) -> str:
        part = "pull" if self.kind is UpstreamKind.PULL_REQUEST else "issues"
        return f"https://github.com/{self.repo}/{part}/{self.number}"

    def matches(self, blocker: str, reported: str = "") -> bool:
        if blocker not in self.blocker_ops:
            return False
        return not self.reported_ops or reported in self.reported_ops

    def describe(self) -> str:
        note = f"; {self.note}" if self.note else ""
        return (f"{self.ref} ({self.kind.value}, {self.state} when last checked: "
                f"\"{self.title}\"{note}) {self.url}")


KNOWN_UPSTREAM: tuple[UpstreamReport, ...] = (
    UpstreamReport(
        "llvm/torch-mlir", 4749, UpstreamKind.PULL_REQUEST, "open",
        "[TorchToLinalg] Lower aten.__and__.Tensor with tensor broadcasting",
        blocker_ops=("torch.aten.__and__.Tensor",),
        note="adds the lowering to convert-torch-to-linalg, reusing bitwise_and's; found on the "
             "same literal & mask pattern of an HF attention mask",
    ),
    UpstreamReport(
        "llvm/torch-mlir", 4625, UpstreamKind.ISSUE, "open",
        "Torch-to-Linalg lowering fails to legalize torch.vtensor.literal for Hugging Face "
        "TinyLlama forward export",
        blocker_ops=("torch.aten.__and__.Tensor",), reported_ops=("torch.vtensor.literal",),
        note="reports the same symptom (the literal) on an HF model; the thread names no cause",
    ),
)


def matching(blocker: str, reported: str = "") -> list[UpstreamReport]:
    """The known reports for a blocker (and the op MLIR named), in the list's order."""
    return [r for r in KNOWN_UPSTREAM if r.matches(blocker, reported)]
