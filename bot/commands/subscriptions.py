"""``prhub subscriptions``: list, export and import the subscriptions the bots keep in Redis, and their change log.

::

    prhub subscriptions [--subscriber slack:C123] [--check] [--lang zh|en]    one line per subscription
    prhub subscriptions --format json > subscriptions.json                    the export (every field)
    prhub subscriptions import subscriptions.json [--replace]                 read an export back
    prhub subscriptions log [--limit 50]                                      who changed what, and when
    prhub subscriptions preview "npu -ci" [--repo R] [--source S] [--until D]  what it would have sent (4 weeks)

The list shows each subscription as ``subscriber  repo  filter said back  [filter]``: the filter
in words (:func:`bot.filters.describe`) and in the grammar (:meth:`bot.filters.Filter.text`, what
``subscribe`` and the export take). Subscriptions of the config file (``[[subscriptions]]``) are
marked ``(config file)``; they are not exported (they live in the file). ``--check`` compares
each label with those the repository used in its source's last 12 weeks (and its rules): an
unknown one is flagged with the known ones.

The export is JSON: ``{"format": "prhub-subscriptions", "version": 1, "exported_at",
"subscriptions": [{"subscriber", "repo", "filter", "description", "created_at", "created_by"}]}``.
``import`` adds each entry (an equal subscription is kept, not doubled; who made it and when are
kept, so ``path:@me`` still means that person); ``--replace`` also removes the stored
subscriptions of the subscribers the file names that it does not hold. Every change is logged
as made by ``cli``. Redis is required (``PRHUB_REDIS_URL``); the old layouts are migrated first.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import (
    ConfigOption,
    Lang,
    RepoOption,
    SourceOption,
    UntilOption,
    check_source_spec,
    cli_language,
    fail,
    parse_day,
    run,
)
from bot.errors import ConfigError, FilterError, PrhubError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.models import Language

_stderr = Console(stderr=True)
CHECK_WEEKS = 12
EXPORT_FORMAT = "prhub-subscriptions"
EXPORT_VERSION = 1

app = typer.Typer(help="List, export and import subscriptions; show their change log.", no_args_is_help=False,
                  rich_markup_mode=None)


def register(root: typer.Typer) -> None:
    """Add ``subscriptions`` (and its ``import`` and ``log``) to ``root``."""
    root.add_typer(app, name="subscriptions")


def _settings(config: Path | None, lang: str | None = None) -> tuple[Settings, Lang]:
    """The settings (``--config``) and the language of messages.

    Raises:
        typer.Exit: the settings did not load (its one line printed).
    """
    from bot.config import load_settings

    try:
        settings = load_settings(config=config)
    except PrhubError as exc:
        raise fail(exc, cli_language(lang, config)) from exc
    language: Lang = lang if lang in ("zh", "en") else settings.language  # type: ignore[assignment]
    return settings, language


@app.callback(invoke_without_command=True)
def subscriptions(
    ctx: typer.Context,
    subscriber: Annotated[str | None, typer.Option(metavar="PLATFORM:ID", help="Only this subscriber: slack:U123, "
                                                                                "slack:C123, feishu:oc_xxx.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Flag labels the repository has never used.")] = False,
    output: Annotated[Literal["text", "json"], typer.Option("--format", metavar="text|json",
                                                            help="text: one line each; json: the export (import "
                                                                 "reads it).")] = "text",
    lang: Annotated[Lang | None, typer.Option("--lang", metavar="zh|en",
                                              help="Language of the filters said back.")] = None,
    config: ConfigOption = None,
) -> None:
    """List subscriptions (each filter in words and in the grammar), or export them with --format json.

    Example: prhub subscriptions --subscriber slack:C0123456789
    """
    if ctx.invoked_subcommand is not None:
        return
    settings, language = _settings(config, lang)
    try:
        text = run(_list(settings, subscriber, check, output, language))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    typer.echo(text, nl=False)


@app.command("import")
def import_(
    file: Annotated[str, typer.Argument(metavar="FILE", show_default=False,
                                        help="An export (prhub subscriptions --format json), or - for stdin.")],
    replace: Annotated[bool, typer.Option("--replace", help="Also remove the stored subscriptions of the "
                                                            "subscribers in the file that it does not hold.")] = False,
    config: ConfigOption = None,
) -> None:
    """Read an export back into Redis (equal subscriptions are kept, not doubled).

    Example: prhub subscriptions import subscriptions.json
    """
    settings, language = _settings(config)
    try:
        text = sys.stdin.read() if file == "-" else _read(Path(file))
        added, removed, total = run(_import(settings, text, replace=replace))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    line = f"{total} subscription(s) in the file: {added} added, {total - added} already there"
    _stderr.print(Text(line + (f", {removed} removed" if replace else "")), highlight=False)


@app.command("log")
def log(
    limit: Annotated[int, typer.Option(metavar="N", help="The last N changes.", min=1)] = 50,
    output: Annotated[Literal["text", "json"], typer.Option("--format", metavar="text|json",
                                                            help="text or json.")] = "text",
    config: ConfigOption = None,
) -> None:
    """The change log: when, who, what (subscribe / unsubscribe), the subscriber, the repository and the filter.

    Example: prhub subscriptions log --limit 20
    """
    settings, language = _settings(config)
    try:
        text = run(_log(settings, limit, output))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    typer.echo(text, nl=False)


@app.command("preview")
def preview(
    filter_text: Annotated[str, typer.Argument(metavar="FILTER", show_default=False,
                                               help="A filter as subscribe takes it: 'npu rollout -ci', "
                                                    "'path:verl/trainer author:dependabot'.")],
    source: SourceOption = None,
    repo: RepoOption = None,
    until: UntilOption = None,
    me: Annotated[str | None, typer.Option("--me", metavar="HANDLE",
                                           help="The GitHub handle that path:@me / author:@me mean.")] = None,
    output: Annotated[Literal["text", "json"], typer.Option("--format", metavar="text|json",
                                                            help="text: one sentence; json: the counts and "
                                                                 "every PR number.")] = "text",
    lang: Annotated[Lang | None, typer.Option("--lang", metavar="zh|en", help="Language: zh or en.")] = None,
    config: ConfigOption = None,
) -> None:
    """How many alerts a subscription would have sent in the last four weeks (k from bots), e.g. which PRs.

    No Redis needed; the same preview the bots give on saving a subscription.

    Example: prhub subscriptions preview "npu -ci" --source jsonl:examples/verl-2026-W12-W16.jsonl.gz --until 2026-04-19
    """
    from bot.sources.base import default_source_spec

    settings, language = _settings(config, lang)
    try:
        spec = check_source_spec(default_source_spec(source, repo, settings))
        last = parse_day(until, "--until")
        found = run(_preview(settings, spec, repo, filter_text, last, me, language))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    if output == "json":
        typer.echo(json.dumps({"repo": found.repo, "filter": found.filter.text(), "first": found.first.isoformat(),
                               "last": found.last.isoformat(), "prs_read": found.read, "alerts": found.count,
                               "from_bots": found.from_bots, "bots_left_out": found.bots_left_out,
                               "numbers": list(found.matched), "unusable": found.unusable or None},
                              ensure_ascii=False, indent=2))
        return
    typer.echo(found.text(language))


async def _preview(settings: Settings, spec: str, repo: str | None, text: str, last: Any, me: str | None,
                   language: Language) -> Any:
    import asyncio

    from bot.app import open_services
    from bot.codeowners import cached_codeowners
    from bot.digest.window import date_window, zone
    from bot.filters import parse_filter
    from bot.sources.base import canonical_repo
    from bot.subscriptions import PREVIEW_WEEKS, preview_alerts

    async with open_services(settings, store="memory") as services:
        pr_source = services.channels.source(spec)
        name = canonical_repo(repo or settings.default_repo, await asyncio.to_thread(pr_source.repos))
        try:
            flt = parse_filter(text, aliases=settings.repo(name).aliases)
        except FilterError as exc:
            raise ConfigError(str(exc), zh=exc.message("zh")) from exc
        end = last or datetime.now(UTC).astimezone(zone(settings.timezone)).date()
        first = end - timedelta(weeks=PREVIEW_WEEKS) + timedelta(days=1)
        window = date_window(first, end, settings.timezone)
        prs = await asyncio.to_thread(pr_source.merged_prs, name, window)
        owners = None
        if flt.uses_codeowners:
            owners = await cached_codeowners(services.store, pr_source, name, ttl_s=settings.codeowners_ttl_s)

        async def analyse(pr: Any) -> Any:
            return await services.digests.pr(pr, language=language, window_prs=prs)

        return await preview_alerts(prs, flt, settings=settings, repo=name, first=first, last=end, analyse=analyse,
                                    me=me, codeowners=owners, language=language)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path.name}: {exc.strerror}",
                          zh=f"无法读取 {path.name}：{exc.strerror}") from exc


async def _list(settings: Settings, subscriber: str | None, check: bool, output: str, lang: Language) -> str:
    import asyncio

    from bot.app import open_services
    from bot.digest.window import date_window
    from bot.filters import describe
    from bot.subscriptions import known_labels

    async with open_services(settings, store="redis", purpose="subscriptions live in Redis") as services:
        found = await services.subscriptions.all()
        chosen = [(who, sub) for who, subs in sorted(found.items()) for sub in subs
                  if subscriber is None or who.key == subscriber]
        if output == "json":
            entries = [{"subscriber": who.key, "repo": sub.repo, "filter": sub.filter.text(),
                        "description": describe(sub.filter, lang),
                        "created_at": sub.created_at.isoformat() if sub.created_at else None,
                        "created_by": sub.created_by} for who, sub in chosen if not sub.from_config]
            document = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"), "subscriptions": entries}
            _stderr.print(Text(f"{len(entries)} subscription(s) exported"), highlight=False)
            return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        known: dict[str, list[str]] = {}
        lines: list[str] = []
        for who, sub in chosen:
            line = f"{who.key}\t{sub.repo}\t{describe(sub.filter, lang)}\t[{sub.filter.text()}]"
            if sub.from_config:
                line += "\t(config file)"
            if check and sub.filter.labels:
                if sub.repo not in known:
                    today = datetime.now(UTC).date()
                    window = date_window(today - timedelta(weeks=CHECK_WEEKS), today, "UTC")
                    source = services.channels.source_for_repo(sub.repo)
                    prs = await asyncio.to_thread(source.merged_prs, sub.repo, window)
                    known[sub.repo] = known_labels(prs, settings, sub.repo)
                unknown = [label for label in sub.filter.labels if label not in known[sub.repo]]
                if unknown:
                    line += f"\t(unknown label {', '.join(unknown)}; known: {', '.join(known[sub.repo])})"
            lines.append(line)
    _stderr.print(Text(f"{len(lines)} subscription(s)"), highlight=False)
    return "".join(line + "\n" for line in lines)


def _entries(text: str) -> list[dict[str, Any]]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the file is not JSON (line {exc.lineno}: {exc.msg}); export one with "
                          "prhub subscriptions --format json") from exc
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise ConfigError(f"not a subscriptions export (expected \"format\": \"{EXPORT_FORMAT}\")")
    if document.get("version") != EXPORT_VERSION:
        raise ConfigError(f"export version {document.get('version')!r} is not {EXPORT_VERSION}")
    entries = document.get("subscriptions")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError("\"subscriptions\" must be a list of objects")
    return entries


async def _import(settings: Settings, text: str, *, replace: bool) -> tuple[int, int, int]:
    from bot.app import open_services
    from bot.filters import parse_filter
    from bot.subscriptions import Subscriber, Subscription

    records: list[tuple[Subscriber, Subscription]] = []
    for n, entry in enumerate(_entries(text)):
        where = f"subscriptions[{n}]"
        who, repo = str(entry.get("subscriber", "")), str(entry.get("repo", ""))
        platform, _, ident = who.partition(":")
        if platform not in ("slack", "feishu", "feishu-webhook") or not ident:
            raise ConfigError(f"{where}: subscriber {who!r} is not slack:…, feishu:… or feishu-webhook:NAME")
        if "/" not in repo:
            raise ConfigError(f"{where}: repo {repo!r} is not owner/name")
        try:
            flt = parse_filter(str(entry.get("filter", "")), aliases=settings.repo(repo).aliases)
        except FilterError as exc:
            raise ConfigError(f"{where}: filter {entry.get('filter')!r}: {exc}") from exc
        made = entry.get("created_at")
        try:
            created = datetime.fromisoformat(made) if isinstance(made, str) else None
        except ValueError as exc:
            raise ConfigError(f"{where}: created_at {made!r} is not an ISO time") from exc
        by = entry.get("created_by")
        records.append((Subscriber(platform, ident), Subscription(repo=repo, filter=flt, created_at=created,
                                                                  created_by=str(by) if by else None)))
    async with open_services(settings, store="redis", purpose="subscriptions live in Redis") as services:
        added, removed = await services.subscriptions.import_records(records, replace=replace, by="cli")
    return added, removed, len(records)


async def _log(settings: Settings, limit: int, output: str) -> str:
    from bot.app import open_services
    from bot.digest.window import zone

    async with open_services(settings, store="redis", purpose="subscriptions live in Redis") as services:
        changes = await services.subscriptions.changes(limit=limit)
    if output == "json":
        return json.dumps([c.model_dump(mode="json") for c in changes], ensure_ascii=False, indent=2) + "\n"
    tz = zone(settings.timezone)
    lines = [f"{c.at.astimezone(tz).isoformat(timespec='seconds')}\t{c.by or '-'}\t{c.action}\t{c.subscriber}\t"
             f"{c.repo}\t[{c.filter}]" + (f"\t({c.via})" if c.via != "chat" else "") for c in changes]
    _stderr.print(Text(f"{len(lines)} change(s)"), highlight=False)
    return "".join(line + "\n" for line in lines)
