"""What every ``prhub`` command shares (the digest command in :mod:`bot.cli` and :mod:`bot.commands`): the
options, the language of the command line's messages and its one-line errors.

Errors: every command ends a failure with one line on stderr, in the reader's language
(:func:`cli_language`: ``--lang``, ``PRHUB_LANGUAGE``, the config file's ``language``, the locale, else
Chinese) — ``错误：…`` or ``error: …`` — and exit status 2 when the command line itself is wrong
(:class:`~bot.errors.UsageError`, and click's own usage errors, read by :class:`PrhubGroup`), 1 for any
other failure (:func:`fail`). Nothing prints typer's boxed errors or a traceback for an expected error.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Callable, Coroutine, Sequence
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer._click import exceptions as usage  # typer's own click (0.29 vendors it): its usage errors
from typer.core import TyperGroup

from bot.errors import PrhubError, UsageError

_T = TypeVar("_T")

Lang = Literal["zh", "en"]
"""The values of ``--lang``: :data:`bot.models.Language`, spelled here so that building the command line
(``prhub --help``) imports no pydantic model (tests/test_cli_imports.py checks the two agree)."""

# Options several commands share, declared once so their names, placeholders and help read the same everywhere.
SourceOption = Annotated[
    str | None,
    typer.Option("--source", metavar="SPEC",
                 help="Where PRs come from: github, git:PATH (a local clone) or jsonl:PATH (a snapshot "
                      "file, plain or .gz); default github when --repo is given."),
]
RepoOption = Annotated[
    str | None, typer.Option("--repo", metavar="OWNER/NAME",
                             help="Repository owner/name; may be left out when the source holds only one.")
]
WeekOption = Annotated[
    str | None,
    typer.Option("--week", metavar="WEEK",
                 help="ISO week such as 2026-W16, or 'this' / 'last' (default: last complete week)."),
]
SinceOption = Annotated[
    str | None,
    typer.Option("--since", metavar="YYYY-MM-DD", help="First day, inclusive; instead of --week."),
]
UntilOption = Annotated[
    str | None,
    typer.Option("--until", metavar="YYYY-MM-DD", help="Last day, inclusive; instead of --week."),
]
TzOption = Annotated[
    str | None, typer.Option("--tz", metavar="ZONE",
                             help="IANA time zone of the window (default from config: Asia/Shanghai).")
]
OutOption = Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write to this file instead of stdout.")]
ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", metavar="FILE",
                 help="The prhub.toml to read (default: PRHUB_CONFIG, else ./prhub.toml when there is one)."),
]
LangOption = Annotated[Lang | None, typer.Option("--lang", metavar="zh|en", help="Language: zh or en.")]

_stderr = Console(stderr=True)


def _locale_language() -> Lang | None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "").lower()
        if value.startswith("zh"):
            return "zh"
        if value.startswith("en"):
            return "en"
        if value:
            return None
    return None


def cli_language(lang: str | None = None, config: Path | str | None = None) -> Lang:
    """The language of the command line's messages: ``lang`` (``--lang``), else ``PRHUB_LANGUAGE``, else the
    ``language`` of the config file (``config``, ``PRHUB_CONFIG`` or ``./prhub.toml``; a file that does not
    read is skipped), else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: ``zh…`` or ``en…``), else ``zh``."""
    for value in (lang, os.environ.get("PRHUB_LANGUAGE")):
        if value in ("zh", "en"):
            return value  # type: ignore[return-value]
    path = Path(config) if config else Path(os.environ["PRHUB_CONFIG"]) if os.environ.get("PRHUB_CONFIG") else \
        Path("prhub.toml")
    try:
        found = tomllib.loads(path.read_text(encoding="utf-8")).get("language")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        found = None
    if found in ("zh", "en"):
        return found  # type: ignore[no-any-return]
    return _locale_language() or "zh"


def error_line(message: str, lang: Lang) -> None:
    """Print ``error: MESSAGE`` (``错误：MESSAGE`` in Chinese) as one line on stderr."""
    head = "错误：" if lang == "zh" else "error: "
    _stderr.print(f"[bold red]{escape(head.rstrip())}[/]{' ' if lang != 'zh' else ''}{escape(message)}",
                  highlight=False, markup=True, soft_wrap=True)


def fail(exc: PrhubError, lang: Lang) -> typer.Exit:
    """Print ``exc`` as one line in ``lang`` (its Chinese text when it has one); the exit to raise: status 2 for
    a :class:`~bot.errors.UsageError`, else 1."""
    error_line(" ".join(exc.message(lang).split()), lang)
    return typer.Exit(code=2 if isinstance(exc, UsageError) else 1)


def parse_day(value: str | None, option: str) -> date | None:
    """The date of ``--since`` / ``--until`` (``YYYY-MM-DD``), ``None`` when not given.

    Raises:
        UsageError: another form (both languages name the expected one).
    """
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError as exc:
        raise UsageError(f"{option} {value!r} is not a date: expected YYYY-MM-DD, e.g. 2026-04-13",
                         zh=f"{option} 的值 {value!r} 不是日期：应写成 YYYY-MM-DD，例如 2026-04-13") from exc


def _option_value(args: Sequence[str], name: str) -> str | None:
    for n, arg in enumerate(args):
        if arg == name and n + 1 < len(args):
            return args[n + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


_NOT_ONE_OF = re.compile(r"^(?:Value error, )?(?P<value>'.*') is not one of (?P<choices>.+?)\.?$")


def _usage_text(exc: typer.TyperException, lang: Lang) -> str:
    """Click's usage error in one line, in ``lang``, with the command's help to read."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "prhub"
    message = str(exc.message).removeprefix("Value error, ").rstrip(".")
    param = getattr(exc, "param", None)
    name = (param.opts[0] if param.opts else (param.name or "").upper()) if param is not None else ""
    if isinstance(exc, usage.NoSuchOption):
        close = f" (did you mean {', '.join(exc.possibilities)}?)" if exc.possibilities else ""
        zh_close = f"（是不是 {'、'.join(exc.possibilities)}？）" if exc.possibilities else ""
        en, zh = f"no such option {exc.option_name}{close}", f"没有选项 {exc.option_name}{zh_close}"
    elif isinstance(exc, usage.MissingParameter) and name:
        en, zh = f"missing {name}", f"缺少 {name}"
    elif isinstance(exc, usage.BadParameter) and name:
        choice = _NOT_ONE_OF.match(message)
        if choice is not None:
            allowed = choice["choices"].replace("'", "")
            en = f"{name} takes {allowed.replace(', ', ' | ')}, not {choice['value']}"
            zh = f"{name} 只能是 {allowed.replace(', ', '、')}，不能是 {choice['value']}"
        else:
            en, zh = f"{name}: {message}", f"{name} 的值无效：{message}"
    elif (command_name := re.match(r"^No such command '(.+)'$", message)) is not None:
        en, zh = f"no such command {command_name[1]!r}", f"没有命令 {command_name[1]!r}"
    elif (extra := re.match(r"^Got unexpected extra arguments? \((.+)\)$", message)) is not None:
        en, zh = f"unexpected argument(s): {extra[1]}", f"多余的参数：{extra[1]}"
    else:
        en, zh = message, f"命令行有误：{message}"
    see = f"; see {command} --help" if lang == "en" else f"。运行 {command} --help 查看用法"
    return " ".join(((zh if lang == "zh" else en) + see).split())


def load_env_file() -> str | None:
    """Read ``./.env`` (or the file ``PRHUB_ENV_FILE`` names; empty: none) into the environment, as docker
    compose's ``env_file`` does: ``KEY=value`` lines, variables already set win. Returns an error line when
    ``PRHUB_ENV_FILE`` names a file that does not exist, else ``None``."""
    named = os.environ.get("PRHUB_ENV_FILE")
    if named == "":
        return None
    path = Path(named or ".env")
    if not path.is_file():
        return f"env file not found: {path} (from PRHUB_ENV_FILE)" if named else None
    from dotenv import load_dotenv

    load_dotenv(path, override=False)
    return None


def _no_type(ctx: object) -> None:
    return None


def _quiet_arguments(command: Any) -> Any:
    """``command`` with its positional arguments shown by their name alone in help (``N``, not ``N <str>``:
    typer shows an argument's type even when it has a metavar), in its subcommands too."""
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = _no_type
    for sub in getattr(command, "commands", {}).values():
        _quiet_arguments(sub)
    return command


class PrhubGroup(TyperGroup):
    """The ``prhub`` command group: click's usage errors as one line in the reader's language with exit status 2
    (instead of typer's boxed panel); the rest as typer does."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command ``cmd_name`` with quiet argument placeholders (:func:`_quiet_arguments`)."""
        return _quiet_arguments(super().get_command(ctx, cmd_name))

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        """Run the command line; see the class docstring."""
        argv = list(sys.argv[1:] if args is None else args)
        env_file = load_env_file()
        if env_file is not None:
            lang = cli_language(_option_value(argv, "--lang"), _option_value(argv, "--config"))
            error_line(env_file if lang == "en" else env_file.replace("env file not found:", "找不到环境变量文件："),
                       lang)
            sys.exit(1)
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            result = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except usage.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except usage.ClickException as exc:
            lang = cli_language(_option_value(argv, "--lang"), _option_value(argv, "--config"))
            error_line(_usage_text(exc, lang), lang)
            sys.exit(exc.exit_code)
        except typer.Abort:
            _stderr.print("Aborted.", highlight=False)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


def warner(console: Console) -> Callable[[str], None]:
    """A ``warn(message)`` that prints its first message as one ``warning:`` line on ``console`` (stderr)
    and drops any later one (a Redis that stopped answering says so once)."""
    warned: list[str] = []

    def warn(message: str) -> None:
        if not warned:
            warned.append(message)
            console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)

    return warn


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(main)``, with ``main``'s result handed back without being the result of the run's main task.

    On CPython 3.11 to 3.13, ``asyncio.run`` puts back the SIGINT handler by calling ``signal.getsignal``, which
    builds (and drops) an error message holding the ``repr`` of its own handler — a partial bound to the main
    task, whose ``repr`` shows the task's result. For a digest that result is every PR, analysis and card text:
    its ``repr`` took a quarter of a second on verl's full history, twice. Here the main task returns ``None``.

    Raises:
        Whatever ``main`` raises.
    """
    import asyncio

    box: list[_T] = []

    async def main_task() -> None:
        box.append(await main)

    asyncio.run(main_task())
    return box[0]


def check_source_spec(spec: str) -> str:
    """``spec`` when it names a kind of source ``--source`` takes (``github``, ``git:PATH``, ``jsonl:PATH``).

    Raises:
        UsageError: another kind, or no path (both languages list the forms).
    """
    kind, sep, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if (kind == "github" and not rest.strip()) or (sep and kind in ("git", "jsonl") and rest.strip()):
        return spec
    forms = "github, git:PATH (a local clone) or jsonl:PATH (a snapshot file)"
    raise UsageError(f"--source {spec!r} is not a source: expected {forms}",
                     zh=f"--source {spec!r} 不是可用的数据源：应为 github、git:PATH（本地克隆）"
                        f"或 jsonl:PATH（快照文件）")


def window_option(week: str | None, since: str | None, until: str | None, tz: str) -> Callable[[], Any]:
    """Check ``--week`` / ``--since`` / ``--until`` / the time zone now; returns what gives the window when the
    source is read (a ``Callable[[], Window]``; "last" is the week before the moment it is called).

    Raises:
        UsageError: a value that cannot be read, or a window that does not exist (both languages).
    """
    from datetime import UTC, datetime

    from bot.digest.window import resolve_window, zone
    from bot.errors import WindowError

    first, last = parse_day(since, "--since"), parse_day(until, "--until")

    def window() -> Any:
        return resolve_window(week=week, since=first, until=last, tz=tz, now=datetime.now(UTC))

    try:
        zone(tz)
        window()
    except WindowError as exc:
        raise UsageError(str(exc), zh=exc.zh) from exc
    return window


def note_empty_window(repo: str, window: Any, span: tuple[Any, Any, int] | None, lang: Lang) -> None:
    """After an empty report: one line on stderr saying which weeks the source has data for
    (``span``: first and last merge and the count, from :func:`bot.sources.base.merge_span`)."""
    from bot.digest.window import latest_week

    if span is None:
        en = f"no PR of {repo} was merged in {window.name}; try another --week or --since/--until"
        zh = f"{window.name} 没有 {repo} 合并的 PR；换一个 --week，或用 --since/--until 指定日期"
    else:
        first, last, count = span
        first_week, _ = latest_week([first], window.timezone) or (window, first)
        last_week, _ = latest_week([last], window.timezone) or (window, last)
        day = last.astimezone(first_week.start.tzinfo).date().isoformat()
        en = (f"no PR of {repo} was merged in {window.name}; this source has {count} PRs of it, merged "
              f"{first_week.name} to {last_week.name} (latest week with merges: {last_week.name}, "
              f"last merge {day})")
        zh = (f"{window.name} 没有 {repo} 合并的 PR；这个数据源里它有 {count} 个 PR，合并于 {first_week.name} 至 "
              f"{last_week.name}（最近一个有合并 PR 的周是 {last_week.name}，最后一次合并在 {day}）")
    head = "提示：" if lang == "zh" else "note: "
    _stderr.print(f"[yellow]{escape(head)}[/]{escape(zh if lang == 'zh' else en)}", highlight=False, markup=True,
                  soft_wrap=True)
