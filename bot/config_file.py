"""Where a setting sits in ``prhub.toml``: line numbers for the config's errors, read from the file's text.

:func:`key_lines` reads the text of a TOML document line by line and records, for every key path it
defines, the 1-based line where it is first defined: table headers (``[repositories."o/n"]``), arrays
of tables (``[[subscriptions]]``, each element by its index), ``key = value`` lines and dotted keys.
Keys inside an inline table or a multi-line array are not listed on their own; they sit on the line
of the key that holds them, which is where :func:`locate` points (it answers the longest known prefix).

:func:`problems` turns pydantic's validation errors of :class:`~bot.config.Settings` into one line each
— ``prhub.toml:3: unknown key 'timezon' (did you mean 'timezone'?)`` — naming the key and its line,
at any depth (the top level, a repository's section, a label rule, a channel, a subscription).

The text is only read here, never changed; :mod:`tomllib` remains the parser of the values.
"""

from __future__ import annotations

import difflib
import re
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["ConfigProblem", "KeyPath", "key_lines", "locate", "problems", "toml_error_line"]

KeyPath = tuple[str | int, ...]
"""A key's place in the document: table and key names, and the index of an array-of-tables element."""

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_KEY = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_TABLE = re.compile(rf"^[ \t]*\[[ \t]*({_DOTTED})[ \t]*\][ \t]*(?:#.*)?$")
_ARRAY = re.compile(rf"^[ \t]*\[\[[ \t]*({_DOTTED})[ \t]*\]\][ \t]*(?:#.*)?$")
_KEY_VALUE = re.compile(rf"^[ \t]*({_DOTTED})[ \t]*=(.*)$")
_ONE_KEY = re.compile(_KEY)


def _parts(dotted: str) -> tuple[str, ...]:
    """The keys of a dotted key (``repositories."verl-project/verl"`` -> two keys), quotes removed."""
    out: list[str] = []
    for match in _ONE_KEY.finditer(dotted):
        raw = match.group(0)
        if raw.startswith('"'):
            out.append(str(tomllib.loads(f"k = {raw}")["k"]))  # TOML's own escapes
        elif raw.startswith("'"):
            out.append(raw[1:-1])
        else:
            out.append(raw)
    return tuple(out)


@dataclass
class _Scan:
    """Where the reader is inside a value that spans lines."""

    depth: int = 0
    """Open ``[`` and ``{`` of a multi-line array."""
    quote: str | None = None
    """The delimiter of an open multi-line string (``\"\"\"`` or ``'''``)."""


def _scan_value(text: str, state: _Scan) -> None:
    """Follow ``text`` (the rest of a line) through strings, brackets and a comment, updating ``state``."""
    i = 0
    while i < len(text):
        if state.quote is not None:
            end = text.find(state.quote, i)
            if end < 0:
                return
            i = end + 3
            state.quote = None
            continue
        ch = text[i]
        if text.startswith('"""', i) or text.startswith("'''", i):
            state.quote = text[i:i + 3]
            i += 3
        elif ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif ch == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
        elif ch == "#":
            return
        else:
            if ch in "[{":
                state.depth += 1
            elif ch in "]}":
                state.depth = max(0, state.depth - 1)
            i += 1


def key_lines(text: str) -> dict[KeyPath, int]:
    """The 1-based line where each key path of the TOML ``text`` is first defined (see the module docstring).

    Never raises: text that is not TOML gives what could be read (the parser reports the error itself).
    """
    lines: dict[KeyPath, int] = {}
    arrays: dict[KeyPath, int] = {}  # an array of tables (its concrete path) -> its current element's index
    table: KeyPath = ()
    state = _Scan()

    def concrete(parts: Sequence[str]) -> KeyPath:
        path: KeyPath = ()
        for part in parts:
            path = (*path, part)
            if path in arrays:
                path = (*path, arrays[path])
        return path

    def note(path: KeyPath, number: int) -> None:
        for end in range(1, len(path) + 1):
            lines.setdefault(path[:end], number)

    for number, line in enumerate(text.splitlines(), start=1):
        if state.quote is not None or state.depth > 0:
            _scan_value(line, state)
            continue
        if (found := _ARRAY.match(line)) is not None:
            parts = _parts(found.group(1))
            array = (*concrete(parts[:-1]), parts[-1])
            arrays[array] = arrays.get(array, -1) + 1
            table = (*array, arrays[array])
            note(table, number)
        elif (found := _TABLE.match(line)) is not None:
            table = concrete(_parts(found.group(1)))
            note(table, number)
        elif (found := _KEY_VALUE.match(line)) is not None:
            note((*table, *_parts(found.group(1))), number)
            _scan_value(found.group(2), state)
    return lines


def locate(lines: Mapping[KeyPath, int], loc: Sequence[str | int]) -> tuple[KeyPath, int | None]:
    """The longest prefix of ``loc`` the file defines and its line (``((), None)`` when none is)."""
    for end in range(len(loc), 0, -1):
        prefix = tuple(loc[:end])
        if prefix in lines:
            return prefix, lines[prefix]
    return (), None


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong in a config file: its ``line`` (``None`` when the file does not define the place),
    the key path as written in TOML (``repositories."o/n".key_pr_bar``) and what is wrong."""

    line: int | None
    where: str
    message: str
    zh: str = ""
    """The message in Chinese (empty: the English one is shown)."""

    def render(self, path: Path | str, language: str = "en") -> str:
        """``prhub.toml:3: <where>: <message>`` in one line (``prhub.toml: …`` without a line), in ``language``."""
        place = f"{path}:{self.line}" if self.line is not None else str(path)
        message = self.zh if language == "zh" and self.zh else self.message
        sep = "：" if language == "zh" else ": "
        return f"{place}{sep}{self.where}{sep}{message}" if self.where else f"{place}{sep}{message}"


def _toml_key(part: str | int) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    return part if re.fullmatch(_BARE, part) else '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _written(path: KeyPath) -> str:
    out = ""
    for part in path:
        key = _toml_key(part)
        out += key if isinstance(part, int) or not out else f".{key}"
    return out


def _unwrap(annotation: Any) -> Any:
    """``X`` of ``X | None``; the annotation itself otherwise."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return members[0] if len(members) == 1 else annotation
    return annotation


def _model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model whose keys sit at ``loc`` (a dict's key and a tuple's index step into their values)."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
            continue
        origin, args = typing.get_origin(current), typing.get_args(current)
        if origin in (dict, Mapping) and len(args) == 2:
            current = args[1]
        elif origin in (tuple, list) and args:
            current = args[0]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def problems(exc: ValidationError, text: str, model: type[BaseModel]) -> list[ConfigProblem]:
    """Each error of ``exc`` (validating ``model`` from the TOML ``text``) with its line and key path.

    An unknown key is ``unknown key 'timezon' (did you mean 'timezone'?)`` or, inside a section,
    ``unknown key 'lable' in repositories."o/n".label_rules[0] …``; a bad value keeps pydantic's reason.
    In the order of the file's lines.
    """
    lines = key_lines(text)
    out: list[ConfigProblem] = []
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
        found, line = locate(lines, loc)
        if error["type"] == "extra_forbidden" and loc:
            key, parent = loc[-1], loc[:-1]
            owner = _model_at(model, parent)
            known = sorted(owner.model_fields) if owner is not None else []
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else (
                f" (known keys: {', '.join(known)})" if 0 < len(known) <= 12 else "")
            zh_hint = f"（是不是 '{close[0]}'？）" if close else (
                f"（可用的键：{'、'.join(known)}）" if 0 < len(known) <= 12 else "")
            section = f" in {_written(parent)}" if parent else ""
            zh_section = f"{_written(parent)} 里" if parent else ""
            out.append(ConfigProblem(line, "", f"unknown key '{key}'{section}{hint}",
                                     f"{zh_section}没有 '{key}' 这个键{zh_hint}"))
            continue
        shown = found if found else loc
        if error["type"] == "missing" and len(loc) > len(found):
            shown = (*found, loc[len(found)])
        reason = str(error["msg"])
        out.append(ConfigProblem(line, _written(shown), reason[:1].lower() + reason[1:],
                                 f"值无效（{reason}）" if error["type"] != "missing" else "缺少这个键"))
    return sorted(out, key=lambda p: p.line if p.line is not None else 0)


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def toml_error_line(exc: tomllib.TOMLDecodeError) -> tuple[int | None, str]:
    """The line of a TOML syntax error and its message, one phrase: ``(3, "invalid value at column 31")``."""
    message = str(exc)
    found = _AT.search(message)
    if found is None:
        return None, message
    what = message[: found.start()].strip()
    what = what[:1].lower() + what[1:]
    return int(found.group(1)), f"{what} at column {found.group(2)}"
