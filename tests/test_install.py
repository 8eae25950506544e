"""The install path a new user takes, checked end to end.

README.md opens with one copy-pasteable line that creates ``.venv``, installs
``requirements.lock`` with hashes, installs the project with ``--no-deps`` and
prints the digest of ``examples/verl-2026-W16.jsonl``. The slow test runs that
very line, split on ``&&``, in a fresh directory holding only the committed
files (``git archive HEAD``), so a file that was never committed, a lock file
that misses a dependency or a stale README shows up here and not on a
user's machine. The Dockerfile cannot be built here (no Docker engine), so the
fast tests check that it repeats the README's steps: same lock file, same pip
flags, and the README's digest command as its default command.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCKERFILE = ROOT / "Dockerfile"

# The shipped example holds the 39 PRs merged in verl-project/verl during 2026-W16.
EXAMPLE_PR_COUNT = 39


def readme_main_line() -> str:
    """The README's first command: the one line that starts with ``python3 -m venv``."""
    lines = [
        line.strip()
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("python3 -m venv ")
    ]
    assert len(lines) == 1, f"README.md should hold exactly one install line, found {lines}"
    return lines[0]


def readme_steps() -> list[str]:
    """The README's install line split into its ``&&`` steps."""
    return [step.strip() for step in readme_main_line().split("&&")]


def pip_install_args(command: str) -> list[str] | None:
    """The arguments after ``pip install`` in a shell command, or None if it installs nothing."""
    words = shlex.split(command)
    for i, word in enumerate(words[:-1]):
        if (word == "pip" or word.endswith("/pip")) and words[i + 1] == "install":
            return words[i + 2 :]
    return None


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs of the Dockerfile, continuation lines joined."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    result = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        instruction, _, args = stripped.partition(" ")
        result.append((instruction.upper(), args.strip()))
    return result


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(path: Path) -> dict[str, str]:
    """``name -> version`` of a pip-compile lock file."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
        if match:
            pins[normalized(match.group(1))] = match.group(2)
    return pins


def test_readme_install_line_uses_the_hashed_lock() -> None:
    installs = [args for step in readme_steps() if (args := pip_install_args(step)) is not None]
    assert installs == [["--require-hashes", "-r", "requirements.lock"], ["--no-deps", "-e", "."]]
    assert readme_steps()[-1].startswith(".venv/bin/prhub digest ")


def test_dockerfile_repeats_the_readme_install() -> None:
    instructions = dockerfile_instructions()
    installs = [args for kind, cmd in instructions if kind == "RUN" and (args := pip_install_args(cmd))]
    readme_installs = [args for step in readme_steps() if (args := pip_install_args(step)) is not None]
    assert installs[0] == readme_installs[0], "the image must install the README's lock file, with hashes"
    # The image installs the project non-editable; everything else must match.
    assert [arg for arg in installs[1] if arg != "-e"] == [arg for arg in readme_installs[1] if arg != "-e"]
    assert len(installs) == 2, f"unexpected extra pip installs in the Dockerfile: {installs[2:]}"
    assert ("COPY", "requirements.lock ./") in instructions
    assert any(kind == "RUN" and cmd.startswith("python3 -m venv ") for kind, cmd in instructions)


def test_dockerfile_copies_only_files_that_exist() -> None:
    for kind, args in dockerfile_instructions():
        if kind != "COPY" or args.startswith("--from="):
            continue
        *sources, _destination = args.split()
        for source in sources:
            assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which is not in the repository"


def test_dockerfile_default_command_is_the_readme_digest() -> None:
    instructions = dict(dockerfile_instructions())
    entrypoint = json.loads(instructions["ENTRYPOINT"])
    command = json.loads(instructions["CMD"])
    readme_digest = shlex.split(readme_steps()[-1])
    assert entrypoint == ["prhub"]
    assert [Path(readme_digest[0]).name, *readme_digest[1:]] == entrypoint + command


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("requirements.lock", []), ("requirements-test.lock", ["test"])],
)
def test_lock_files_match_the_pins_in_pyproject(lock: str, extras: list[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    pins = lock_pins(ROOT / lock)
    for requirement in wanted:
        name, sep, version = requirement.partition("==")
        assert sep, f"{requirement!r} in pyproject.toml is not pinned with =="
        assert pins.get(normalized(name)) == version, f"{lock} is stale for {requirement}: run scripts/lock"
    lines = (ROOT / lock).read_text(encoding="utf-8").splitlines()
    assert "scripts/lock" in lines[0], f"{lock} should say on its first line how to regenerate it"


def committed_tree(destination: Path) -> Path:
    """Extract ``git archive HEAD`` of this repository into ``destination``."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    probe = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout with a commit: {probe.stderr.strip()}")
    archive = destination.parent / "head.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--output", str(archive), "HEAD"], check=True)
    destination.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(destination, filter="data")
    return destination


def clean_env() -> dict[str, str]:
    """This process's environment without the test runner's virtual environment."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS"}
    }
    venv_bin = str(ROOT / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run_step(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 0, (
        f"README step failed with exit {result.returncode}: {command}\n"
        f"--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-4000:]}"
    )
    return result


@pytest.mark.slow
def test_readme_install_and_digest_in_a_fresh_venv(tmp_path: Path) -> None:
    if shutil.which("python3") is None:
        pytest.skip("python3 is not on PATH")
    tree = committed_tree(tmp_path / "clone")
    *install, digest = readme_steps()
    for step in install:
        run_step(step, tree)

    venv = tree / ".venv"
    assert (venv / "bin" / "prhub").exists(), "the console script `prhub` was not installed"
    imported = run_step('.venv/bin/python -c "import bot, sys; print(bot.__file__)"', tree)
    assert str(tree / "bot") in imported.stdout, "the editable install should point at the clone"

    helped = run_step(".venv/bin/prhub --help", tree)
    assert "digest" in helped.stdout

    printed = run_step(digest, tree)
    assert str(EXAMPLE_PR_COUNT) in printed.stdout, (
        f"the README digest should mention the example's {EXAMPLE_PR_COUNT} PRs:\n{printed.stdout[:2000]}"
    )


@pytest.mark.slow
def test_wheel_carries_the_data_files(tmp_path: Path) -> None:
    """The image installs the project as a wheel (not editable): its prompts and default rules must be inside."""
    tree = committed_tree(tmp_path / "clone")
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(tree)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = out.glob("prhub_bot-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("bot/prompts/pr_analysis.j2", "bot/prompts/digest_summary.j2", "bot/defaults/labels.toml",
                   "bot/py.typed", "bot/cards/templates/report.html.j2", "bot/cards/templates/page.css",
                   "bot/cards/templates/page.js"):
        assert needed in names, f"{needed} is missing from the wheel"
