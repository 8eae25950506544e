"""What kind of file a changed path is: source, test, doc, CI, data, config, dependency manifest, …

Classification is by path only (the snapshot has no diff text). The rules are
product decisions; they are written as data below so they are easy to read and
to change. The first kind that matches wins, in the order of :class:`FileKind`.

Data is not code: result tables, benchmark and experiment outputs, notebooks, serialized arrays, fixtures,
evaluation task definitions (``**/tasks/**/*.yaml``) and the configs of examples, recipes and experiments are
:attr:`FileKind.DATA`. Their keys are no public name and no config contract (a task YAML of an evaluation
harness, an example config of a fine-tuning library, a regenerated benchmark JSON); what a repository's own
config *schema* defines (its config classes, its flags, its packaged default configs) stays
:attr:`FileKind.CONFIG` or :attr:`FileKind.SOURCE`.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache

from wcmatch import fnmatch, glob

_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE
_TABLE_SUFFIXES = frozenset({"csv", "tsv", "jsonl", "ndjson", "parquet", "arrow", "feather", "npy", "npz", "pkl",
                             "pickle", "h5", "hdf5", "xlsx", "ipynb"})
"""Data files by their format alone: tables, serialized arrays, notebooks."""


class FileKind(StrEnum):
    """Kinds of changed files, in the order they are tried."""

    GENERATED = "generated"  # written by tools (configured globs): read last, not timed
    DEPENDENCY = "dependency"  # manifests that pin what the project installs
    TEST = "test"
    CI = "ci"
    DATA = "data"  # results, tables, notebooks, fixtures, task definitions, example and experiment configs
    DOC = "doc"
    DOCKER = "docker"
    CONFIG = "config"
    EXAMPLE = "example"  # example scripts and recipes users copy
    SCRIPT = "script"
    SOURCE = "source"
    OTHER = "other"


_RULES: dict[FileKind, tuple[str, ...]] = {
    FileKind.DEPENDENCY: (
        "**/requirements*.txt",
        "**/requirements/*.txt",
        "**/setup.py",
        "**/setup.cfg",
        "**/pyproject.toml",
        "**/environment*.yml",
        "**/package.json",
        "**/Cargo.toml",
        "**/go.mod",
        "**/Pipfile",
    ),
    FileKind.TEST: ("tests/**", "test/**", "**/tests/**", "**/test_*.py", "**/*_test.py", "**/*_test.go",
                    "**/*.test.{js,ts,tsx}", "**/*.spec.{js,ts,tsx}", "**/conftest.py"),
    FileKind.CI: (".github/**", ".gitlab-ci.yml", ".gitlab/**", ".circleci/**", ".buildkite/**",
                  "**/Jenkinsfile", ".pre-commit-config.yaml"),
    FileKind.DATA: (
        f"**/*.{{{','.join(sorted(_TABLE_SUFFIXES))}}}",
        # evaluation task definitions and benchmark suites (an evaluation harness's tasks are data it runs)
        "**/tasks/**/*{.yaml,.yml,.json,_yaml}", "**/benchmarks/**/*.{yaml,yml,json,toml}",
        # results and outputs that tools write and people regenerate
        "**/{results,result,benchmark_results,outputs,output,runs,logs,reports,leaderboard}/**/*.{json,yaml,yml,toml,txt}",
        "**/*{result,results,benchmark,metrics,scores,leaderboard}*.json",
        # fixtures and sample data outside the tests (inside, they are the tests')
        "**/{fixtures,fixture,testdata,test_data,sample_data,samples,data,datasets,assets}/**/*.{json,yaml,yml,txt,xml}",
        # the configs of examples, recipes and experiments: what a user copies, not what the package reads
        "{examples,example,recipes,recipe,experiments,cookbook,cookbooks,tutorials,notebooks,projects}"
        "/**/*.{yaml,yml,json,toml}",
        "**/{examples,example,recipes,recipe,cookbook,tutorials}/**/*.{yaml,yml,json,toml}",
    ),
    FileKind.DOC: ("docs/**", "doc/**", "**/*.md", "**/*.rst", "**/*.mdx", "**/*.txt", "LICENSE*"),
    FileKind.DOCKER: ("**/Dockerfile*", "**/*.dockerfile", "docker/**", "**/docker-compose*.y*ml"),
    FileKind.CONFIG: ("**/*.{yaml,yml,toml,ini,cfg,json,conf}", "**/config/**", "**/configs/**"),
    FileKind.EXAMPLE: ("examples/**", "example/**", "recipe/**", "recipes/**", "**/shell/**"),
    FileKind.SCRIPT: ("**/*.{sh,bash,zsh,ps1,bat}", "scripts/**"),
    FileKind.SOURCE: ("**/*.{py,pyx,pyi,c,cc,cpp,cxx,h,hpp,cu,cuh,rs,go,java,kt,scala,js,jsx,ts,tsx,rb,swift,m,mm,"
                      "cs,php,lua,jl,r,triton}",),
}

_CONFIG_SOURCE = re.compile(r"(?:^|/)(?:config|configs|conf|settings)(?:/|\.py$)|_config\.py$|(?:^|/)config_\w+\.py$")


def _name_only(pattern: str) -> bool:
    """``**/NAME``, where NAME holds no ``/``: a glob that looks at the file name only."""
    return pattern.startswith("**/") and "/" not in pattern[3:]


class Globs:
    """Globs that paths are matched against (wcmatch: ``**`` crosses folders, ``*`` matches dotfiles, braces).

    A ``**/NAME`` glob (NAME without ``/``) is matched against the path's file name with wcmatch's fnmatch —
    the same answer for a repository path (no ``.`` or ``..`` folders, no trailing ``/``) at a fraction of the
    cost, since the translated ``**`` tries a look-ahead at every character of the path; every other glob, and every
    glob for a path that is not plain (a ``.``, ``..`` or empty folder, a leading or trailing ``/``), is matched
    against the whole path with wcmatch's glob.

    Args:
        patterns: the globs.
        ignore_case: match without regard to case.
    """

    def __init__(self, patterns: tuple[str, ...], *, ignore_case: bool) -> None:
        case = (glob.IGNORECASE, fnmatch.IGNORECASE) if ignore_case else (0, 0)
        names = [p[3:] for p in patterns if _name_only(p)]
        paths = [p for p in patterns if not _name_only(p)]
        self._names = fnmatch.compile(names, flags=fnmatch.DOTMATCH | fnmatch.BRACE | case[1]) if names else None
        self._paths = glob.compile(paths, flags=_FLAGS | case[0]) if paths else None
        # for paths that are not plain, where the names are not enough
        self._whole = glob.compile(list(patterns), flags=_FLAGS | case[0]) if names else None

    def match(self, path: str) -> bool:
        """Whether one of the globs matches ``path`` (a repository-relative POSIX path)."""
        if self._names is not None and self._whole is not None:
            if not _plain(path):  # `./x`, `a//b`, `a/../b`, `a/`: wcmatch's glob decides, as for every path before
                return bool(self._whole.match(path))
            if self._names.match(path.rsplit("/", 1)[-1]):
                return True
        return self._paths is not None and self._paths.match(path)


def _plain(path: str) -> bool:
    """No empty, ``.`` or ``..`` folder, no leading or trailing ``/``: a path as git and GitHub write them."""
    return all(part not in ("", ".", "..") for part in path.split("/"))


@lru_cache(maxsize=256)
def compile_globs(patterns: tuple[str, ...], *, ignore_case: bool = True) -> Globs:
    """:class:`Globs` of ``patterns`` (the last 256 distinct tuples are kept)."""
    return Globs(patterns, ignore_case=ignore_case)


@lru_cache(maxsize=65536)
def classify(path: str, generated: tuple[str, ...] = ()) -> FileKind:
    """The :class:`FileKind` of ``path`` (a repository-relative POSIX path).

    Args:
        path: e.g. ``verl/trainer/ppo/core_algos.py``.
        generated: globs of generated files (from the repository's config).
    """
    if generated and compile_globs(generated).match(path):
        return FileKind.GENERATED
    for kind, patterns in _RULES.items():
        if compile_globs(patterns).match(path):
            return kind
    return FileKind.OTHER


LOCK_FILE_NAMES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock",
                             "Cargo.lock", "go.sum", "Pipfile.lock", "composer.lock", "Gemfile.lock"})
_NOT_READING = re.compile(r"(?:^|/)(?:vendor|vendored|_vendor|third_party|thirdparty|__snapshots__)/|"
                          r"\.(?:ipynb|snap|min\.js|min\.css|map|svg|pb|pbtxt)$|(?:^|/)_generated_[^/]*$", re.I)


def is_lock_file(path: str) -> bool:
    """Whether ``path`` is a dependency lock file (``uv.lock``, ``package-lock.json``, …)."""
    name = path.rsplit("/", 1)[-1]
    return name in LOCK_FILE_NAMES or name.endswith(".lock")


_UNREAD_DATA = re.compile(rf"\.(?:{'|'.join(sorted(_TABLE_SUFFIXES))})$|"
                          r"(?:^|/)(?:results?|benchmark_results|outputs?|runs|logs|reports|leaderboard)/|"
                          r"(?:result|benchmark|metrics|scores|leaderboard)[^/]*\.json$", re.I)


@lru_cache(maxsize=65536)
def is_reading(path: str, kind: FileKind) -> bool:
    """Whether a reviewer reads the diff of ``path``: not a generated file, a lock file, a notebook, a
    test snapshot, vendored code, minified or serialized output, nor a data table or a results file (their
    lines count for no reading time; a task definition or an example config is read)."""
    if kind is FileKind.DATA and _UNREAD_DATA.search(path):
        return False
    return kind is not FileKind.GENERATED and not is_lock_file(path) and not _NOT_READING.search(path)


def is_config_schema(path: str) -> bool:
    """Whether a source file defines configuration users write (``…/config/*.py``,
    ``*_config.py``): changing it can break their config files."""
    return bool(_CONFIG_SOURCE.search(path))


def matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``path`` matches one of the globs (``**`` crosses folders)."""
    return bool(patterns) and compile_globs(patterns).match(path)
