"""``prhub config``: write a starter ``prhub.toml`` and check one.

::

    prhub config init [--repo OWNER/NAME] [--channel PLATFORM:ID] [--out prhub.toml] [--force]
    prhub config check [--config FILE]

``init`` writes a commented file that binds a repository (and, with ``--channel``, a chat channel
with a Monday push) and checks it before saying so; an existing file is never overwritten without
``--force``. ``check`` reads the file the commands would read (``--config``, ``PRHUB_CONFIG``, else
``./prhub.toml``) with the environment, and prints every problem as ``FILE:LINE: …`` — an unknown key
at any level with the key, its line and the nearest known key — then exits 1; or one line saying
what the file sets up, exit 0.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from bot.commands.common import ConfigOption, LangOption, cli_language, error_line, fail
from bot.errors import ConfigError, PrhubError, UsageError

if TYPE_CHECKING:
    from bot.config import Settings

_stderr = Console(stderr=True)

app = typer.Typer(help="Write a starter prhub.toml, or check one (unknown keys, bad values, with their lines).",
                  no_args_is_help=True, rich_markup_mode=None)

STARTER = """\
# prhub configuration (prhub config init). Every key is optional; `prhub config check` checks this file.
# Reference of every key: docs/reference.md ("Settings"). Secrets stay in the environment (.env), not here.

timezone = "Asia/Shanghai"   # the weeks of digests and push times
language = "{language}"              # zh or en: digests, cards and the bot's replies

# Channels without a [channels] section use these (PRHUB_DEFAULT_REPO / PRHUB_DEFAULT_SOURCE do the same).
default_repo = "{repo}"
default_source = "{source}"   # github (GITHUB_TOKEN), git:PATH (a clone) or jsonl:PATH (a snapshot)

[repositories."{repo}"]
key_pr_bar = 6                # importance at or above it makes a key PR
core_paths = []               # globs whose changes are a regression risk, e.g. ["src/core/**"]
{channel}"""

CHANNEL = """
# One chat channel: its repository, language and weekly push ("mon 10:00" in its time zone).
[channels."{channel}"]
repo = "{repo}"
push = "mon 10:00"
"""


@app.command("init")
def init(
    repo: Annotated[str, typer.Option(metavar="OWNER/NAME", help="The repository the bot reports on.")] = "owner/name",
    source: Annotated[str, typer.Option(metavar="SPEC", help="Where its PRs come from: github, git:PATH or "
                                                             "jsonl:PATH.")] = "github",
    channel: Annotated[str | None, typer.Option(metavar="PLATFORM:ID", help="Also bind this channel (slack:C…, "
                                                                            "feishu:oc_…) with a Monday push.")] = None,
    lang: LangOption = None,
    out: Annotated[Path, typer.Option(metavar="FILE", help="Where to write it.")] = Path("prhub.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter prhub.toml bound to one repository (and a channel), then check it.

    Example: prhub config init --repo verl-project/verl --channel slack:C0123456789 --out prhub.toml
    """
    language = cli_language(lang)
    try:
        if "/" not in repo.strip("/") or repo.count("/") != 1:
            raise UsageError(f"--repo {repo!r} is not owner/name", zh=f"--repo {repo!r} 不是 owner/name 的形式")
        if out.exists() and not force:
            raise UsageError(f"{out} exists: nothing written (--force overwrites it)",
                             zh=f"{out} 已存在：没有写入（--force 会覆盖它）")
        text = STARTER.format(repo=repo, source=source, language=lang or language,
                              channel=CHANNEL.format(channel=channel, repo=repo) if channel else "")
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise PrhubError(f"cannot write {out}: {exc.strerror}", zh=f"无法写入 {out}：{exc.strerror}") from exc
        settings = _load(out)
    except PrhubError as exc:
        raise fail(exc, language) from exc
    done = (f"wrote {out}: {summary(settings, 'en')}; edit it, then run prhub config check --config {out}"
            if language == "en" else
            f"已写入 {out}：{summary(settings, 'zh')}；修改后运行 prhub config check --config {out} 检查")
    _stderr.print(escape(done), highlight=False, soft_wrap=True)


@app.command("check")
def check(config: ConfigOption = None, lang: LangOption = None) -> None:
    """Check the config file (--config, PRHUB_CONFIG or ./prhub.toml): every problem with its line, exit 1.

    Example: prhub config check --config prhub.toml
    """
    from bot.config import check_config

    language = cli_language(lang, config)
    path = config or (Path(os.environ["PRHUB_CONFIG"]) if os.environ.get("PRHUB_CONFIG") else Path("prhub.toml"))
    try:
        if not path.is_file():
            raise ConfigError(f"no config file to check: {path} does not exist (prhub config init writes one)",
                              zh=f"没有可检查的配置文件：{path} 不存在（prhub config init 可以生成一个）")
        found = check_config(path)
        if not found:
            settings = _load(path)
    except PrhubError as exc:
        raise fail(exc, language) from exc
    if found:
        for problem in found:
            error_line(problem.render(path, language), language)
        raise typer.Exit(code=1)
    line = f"{path}: ok — {summary(settings, language)}" if language == "en" else \
        f"{path}：没有问题 — {summary(settings, language)}"
    typer.echo(line)


def _load(path: Path) -> Settings:
    from bot.config import load_settings

    return load_settings(config=path)


def summary(settings: Settings, language: str) -> str:
    """What a config sets up, in a phrase: repositories, bound channels (with pushes) and the default repository."""
    repos = ", ".join(settings.repositories) or ("none" if language == "en" else "无")
    pushes = sum(1 for c in settings.channels.values() if c.push is not None)
    default = settings.default_repo or ("unset" if language == "en" else "未设置")
    if language == "en":
        return (f"repositories {repos}; {len(settings.channels)} channel(s) bound, {pushes} with a weekly push; "
                f"default_repo {default}")
    return f"仓库 {repos}；绑定了 {len(settings.channels)} 个频道，其中 {pushes} 个每周推送；default_repo {default}"


def register(root: typer.Typer) -> None:
    """Add ``config`` (``init``, ``check``) to ``root``."""
    root.add_typer(app, name="config")
