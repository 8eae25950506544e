"""File kinds and globs (bot/digest/files.py)."""

from __future__ import annotations

import pytest
from wcmatch import glob

from bot.digest.files import FileKind, Globs, classify, matches_any

PATHS = [
    "setup.py", "pkg/setup.py", ".github/workflows/ci.yml", ".hidden/a.py", "a/.b/c.md", "x/.Dockerfile",
    "Setup.PY", "docs/.nojekyll", "REQUIREMENTS.TXT", "a/b/Requirements-dev.txt", "verl/trainer/ppo/core_algos.py",
    "csrc/kernels/attn.cu", "requirements.txt", "tests/test_a.py", "a/megatron_worker.py", "a/MegatronWorker.py",
    "README", "./setup.py", "./Dockerfile", "src/./x.py", "x/README.md/", "a//b.py", "../up/a.py", "/abs/a.py",
]
GLOBS = [
    ("**/*.py",), ("**/setup.py", "docs/**"), ("**/*.{yml,yaml}",), ("**/.*",), ("**/*megatron*", "verl/**"),
    ("**/requirements*.txt",), ("**/*.cu", "tests/**"), ("**/README",),
]


@pytest.mark.parametrize("patterns", GLOBS)
@pytest.mark.parametrize("ignore_case", [True, False])
def test_globs_answer_as_wcmatch_does_for_the_whole_path(patterns: tuple[str, ...], ignore_case: bool) -> None:
    # `**/NAME` globs are matched against the file name only: the same answer as wcmatch's glob on the path
    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | (glob.IGNORECASE if ignore_case else 0)
    whole = glob.compile(list(patterns), flags=flags)
    globs = Globs(patterns, ignore_case=ignore_case)
    assert [globs.match(p) for p in PATHS] == [bool(whole.match(p)) for p in PATHS]
    assert any(globs.match(p) for p in PATHS)


def test_name_only_globs_see_hidden_folders_and_ignore_case_when_asked() -> None:
    assert Globs(("**/*.py",), ignore_case=False).match(".hidden/deep/a.py")
    assert not Globs(("**/*.py",), ignore_case=False).match("Setup.PY")
    assert Globs(("**/*.py",), ignore_case=True).match("Setup.PY")


def test_classify_and_matches_any_use_the_globs() -> None:
    assert classify("pkg/setup.py") is FileKind.DEPENDENCY
    assert classify("a/b/Requirements-dev.txt") is FileKind.DEPENDENCY
    assert classify("x/.Dockerfile") is FileKind.DOCKER
    assert classify("gen/api_pb2.py", ("**/*_pb2.py",)) is FileKind.GENERATED
    assert matches_any("verl/trainer/ppo/core_algos.py", ("verl/trainer/**",))
    assert not matches_any("verl/workers/a.py", ("verl/trainer/**", "**/*.cu"))
    assert not matches_any("a.py", ())
