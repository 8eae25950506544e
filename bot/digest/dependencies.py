"""What a PR changes in what the project depends on, and in its own version, read from the patches.

:func:`read_dependencies` gives one :class:`DependencyChange` per change: requirement lines of manifests
(``name==1.2``, ``"name>=1,<2"``), ``uses: action@v4`` of CI files, ``FROM image:tag`` and ``pip install name==x``
of Docker files and scripts, code that starts to branch on a dependency's version, and the repository's own
version — in a manifest (``version = "0.3.1"``), a version file (``VERSION``, ``version.txt``, ``pkg/version/version``)
or a module (``__version__ = "0.3.1"`` in ``_version.py``, ``version.py``, ``__init__.py``).

Versions are surface unless they say something: the own version is a **release** (``version_bump``: a final version
or a release candidate, ``0.15.0.dev0`` -> ``0.15.0``) or a **development version** (``dev_version_bump``:
``0.19.1`` -> ``0.19.2.dev0``, or the bump a title calls the one *after* a release); a version check that only moves
(the same line removed elsewhere in the PR, or re-indented) is no new dependency range; a re-indented
requirement line is no range change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.digest.diffscan import changed_lines
from bot.digest.files import FileKind
from bot.models import PullRequest

__all__ = ["OWN_VERSION_KINDS", "DependencyChange", "follows_release", "is_dev_version", "read_dependencies"]

OWN_VERSION_KINDS = frozenset({"version_bump", "dev_version_bump"})
"""Kinds of a change of the repository's own version: a release, or a development version."""

_SPEC = r"""(?:===|==|>=|<=|~=|!=|<|>)\s*[^"',;#\s]+"""
_REQUIREMENT = re.compile(rf"""^\s*["']?([A-Za-z][A-Za-z0-9_.\-]*)(?:\[[^\]]*\])?\s*({_SPEC}(?:\s*,\s*{_SPEC})*)""")
_VERSION = r"""v?\d+(?:\.\w+)+(?:[-+][\w.]+)?"""
_OWN_VERSION = re.compile(rf"""^\s*["']?(?:__version__|version|VERSION)["']?\s*[:=]\s*["']?({_VERSION})""")
_BARE_VERSION = re.compile(rf"""^\s*({_VERSION})\s*$""")
_VERSION_FILES = frozenset({"VERSION", "version.txt", "version"})
_VERSION_MODULES = frozenset({"_version.py", "version.py", "__init__.py", "__about__.py"})
_PYTHON_REQUIRES = re.compile(r"""^\s*["']?(?:requires-python|python_requires)["']?\s*[:=]\s*["']([^"']+)["']""")
_ACTION = re.compile(r"\buses:\s*([\w.\-]+/[\w.\-/]+)@(\S+)")
_IMAGE = re.compile(r"^\s*FROM\s+(\S+?):(\S+)", re.I)
_PIP_IN_SCRIPT = re.compile(r"\bpip3?\s+install\b.*?\b([A-Za-z][\w.\-]*)\s*==\s*([\w.+\-]+)")
_VERSION_GATE = re.compile(r"__version__|\bversion\.parse\s*\(|\bparse_version\s*\(|\bVersion\s*\(|"
                           r"\bversion_info\b|\bis_version_(?:ge|gt|le|lt)\b|\bversion\s*\(\s*\S")
_OWN_ASSIGNMENT = re.compile(r"^\s*__version__\s*[:=]")
_TEMPORARY = re.compile(r"\b(?:temporar\w*|for now|until|workaround|pin(?:ned|s)?)\b", re.I)
_DEV = re.compile(r"(?:\.|-|_)?dev\d*\b|\+|-snapshot\b|\.post\d*\.dev", re.I)
_AFTER_RELEASE = re.compile(r"\b(?:after|post|following)[-\s]+(?:the\s+)?(?:v?\d+(?:\.\w+)+\s+)?release\b|"
                            r"\bpost[-\s]?release\b|\b(?:back\s+to|bump\s+to|start)\s+(?:the\s+)?dev\b", re.I)


@dataclass(frozen=True)
class DependencyChange:
    """One dependency change of a PR, as :func:`read_dependencies` classifies it.

    Attributes:
        kind: ``dependency_upgrade`` (a dependency added, removed or moved to another exact version, a base image
            or an installed package version changed), ``dependency_pin`` (an exact or upper-bound pin put on),
            ``dependency_range`` (a version range changed, or code made to depend on a dependency's version),
            ``ci_action_bump`` (a CI action's version), ``version_bump`` (the repository's own version, to a
            release or a release candidate), ``dev_version_bump`` (the own version, to a development version).
        path: the file.
        name: the package, action or image (empty for the own version).
        before: the old specifier or version (empty when added).
        after: the new specifier or version (empty when removed).
    """

    kind: str
    path: str
    name: str
    before: str = ""
    after: str = ""

    @property
    def evidence(self) -> str:
        """``path: name before -> after`` for a risk's evidence."""
        change = f"{self.before or '-'} -> {self.after or '-'}" if self.before or self.after else ""
        return f"{self.path}: {' '.join(x for x in (self.name, change) if x)}".rstrip(": ")


def is_dev_version(version: str) -> bool:
    """``0.19.2.dev0``, ``1.0-dev``, ``2.1+local``, ``3.0-SNAPSHOT``: a version no release carries (a release
    candidate ``1.0rc1`` or a pre-release ``1.0b2`` is a release)."""
    return bool(_DEV.search(version))


def follows_release(title: str) -> bool:
    """The title calls its version bump the one after a release (``Update version.txt after 0.19.4 release``,
    ``post release v0.35.0``, ``back to dev``): the version it sets is the next development version."""
    return bool(_AFTER_RELEASE.search(title))


def _specs(lines: list[str], pattern: re.Pattern[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in lines:
        found = pattern.search(text)
        if found and any(c.isdigit() for c in found.group(2)):
            out[found.group(1).lower()] = re.sub(r"\s+", "", found.group(2))
    return out


def _pinned(spec: str) -> bool:
    return spec.startswith("==") or bool(re.search(r"(?:^|,)<(?!=)", spec)) or "<=" in spec


def _own_version(path: str, kind: FileKind, lines: list[str]) -> str | None:
    """The own version one side of a file's patch sets, or ``None``: a manifest's or a module's ``version =``
    line, or the line of a version file."""
    name = PurePosixPath(path).name
    if name in _VERSION_FILES:
        found = [m.group(1) for m in map(_BARE_VERSION.match, lines) if m]
        return found[-1] if found else None
    if kind is FileKind.DEPENDENCY or name in _VERSION_MODULES:
        found = [m.group(1) for m in map(_OWN_VERSION.match, lines) if m]
        return found[-1] if found else None
    return None


def _version_change(pr: PullRequest, path: str, before: str, after: str) -> DependencyChange:
    dev = is_dev_version(after) or follows_release(pr.title)
    return DependencyChange("dev_version_bump" if dev else "version_bump", path, "", before, after)


def read_dependencies(pr: PullRequest, kinds: dict[str, FileKind]) -> tuple[DependencyChange, ...]:
    """The dependency and own-version changes of ``pr`` read from its patches (see the module docstring).
    The supported Python versions of a manifest (``requires-python``, ``python_requires``) are the range of a
    dependency named ``python``: raising its lower bound drops users of the older versions.
    A manifest edit that changes none of these gives nothing. Files without a patch give nothing."""
    out: list[DependencyChange] = []
    temporary = bool(_TEMPORARY.search(pr.title))
    sides = {f.path: _sides(f.patch) for f in pr.files if f.patch and kinds.get(f.path) is not FileKind.GENERATED}
    removed_code = {" ".join(line.code.split()) for f in pr.files if f.path in sides and kinds.get(f.path)
                    is FileKind.SOURCE for line in changed_lines(f.path, f.patch or "") if line.sign == "-"}
    for f in pr.files:
        if f.path not in sides:
            continue
        kind = kinds.get(f.path, FileKind.OTHER)
        removed, added = sides[f.path]
        own = _own_version(f.path, kind, removed), _own_version(f.path, kind, added)
        if own[0] and own[1] and own[0] != own[1]:
            out.append(_version_change(pr, f.path, own[0], own[1]))
        if kind is FileKind.DEPENDENCY:
            out += _manifest(f.path, removed, added, temporary)
        elif kind is FileKind.CI:
            before, after = _specs(removed, _ACTION), _specs(added, _ACTION)
            out += [DependencyChange("ci_action_bump", f.path, name, before[name], after[name])
                    for name in sorted(set(before) & set(after)) if before[name] != after[name]]
        if kind in (FileKind.DOCKER, FileKind.SCRIPT, FileKind.CI):
            for pattern in (_IMAGE, _PIP_IN_SCRIPT):
                before, after = _specs(removed, pattern), _specs(added, pattern)
                out += [DependencyChange("dependency_pin" if temporary else "dependency_upgrade", f.path, name,
                                         before[name], after[name])
                        for name in sorted(set(before) & set(after)) if before[name] != after[name]]
        if kind is FileKind.SOURCE and _new_version_check(f.path, f.patch or "", removed_code):
            out.append(DependencyChange("dependency_range", f.path, "version check"))
    return tuple(out)


def _sides(patch: str | None) -> tuple[list[str], list[str]]:
    """(removed, added) lines of a patch, without their sign."""
    raw = (patch or "").splitlines()
    return ([line[1:] for line in raw if line.startswith("-") and not line.startswith("---")],
            [line[1:] for line in raw if line.startswith("+") and not line.startswith("+++")])


def _manifest(path: str, removed: list[str], added: list[str], temporary: bool) -> list[DependencyChange]:
    """The requirement changes of a manifest's patch (the own version and re-indented lines left out)."""
    before = _specs([x for x in removed if not _OWN_VERSION.match(x)], _REQUIREMENT)
    after = _specs([x for x in added if not _OWN_VERSION.match(x)], _REQUIREMENT)
    for side, lines in ((before, removed), (after, added)):
        found = [m.group(1) for m in map(_PYTHON_REQUIRES.match, lines) if m]
        if found:
            side["python"] = re.sub(r"\s+", "", found[-1])
    out = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, ""), after.get(name, "")
        if old == new:
            continue  # the same requirement, moved or re-indented
        if old and new and old.startswith("==") and new.startswith("=="):
            change = "dependency_upgrade"  # from one exact version to another
        elif new and _pinned(new) and (not _pinned(old) if old else temporary):
            change = "dependency_pin"
        elif old and new:
            change = "dependency_range"
        else:
            change = "dependency_upgrade"  # a dependency added or dropped
        out.append(DependencyChange(change, path, name, old, new))
    return out


def _new_version_check(path: str, patch: str, removed_code: set[str]) -> bool:
    """Whether the added code of a source file compares a dependency's version in a line that is not just moved
    or re-indented (the same code removed anywhere in the PR) and does not set the module's own version."""
    for line in changed_lines(path, patch):
        code = line.code
        if (line.sign == "+" and "ersion" in code and _VERSION_GATE.search(code)  # each form has "[vV]ersion"
                and not _OWN_ASSIGNMENT.match(code) and " ".join(code.split()) not in removed_code):
            return True
    return False
