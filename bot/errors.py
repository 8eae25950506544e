"""The one exception tree of prhub; the CLI and the platform handlers translate it at the edge.

::

    PrhubError                      base; ``str(exc)`` is one line a person can act on
    ├── ConfigError                 bad prhub.toml / environment value
    ├── WindowError                 malformed week, since > until, unknown time zone
    ├── FilterError                 a subscription filter that cannot be read or used (zh + en messages)
    ├── SourceError                 a PR source could not give what was asked
    │   ├── SnapshotFormatError     a snapshot line is not JSON or lacks a field (has ``path``, ``line``)
    │   ├── UnknownRepoError        the source holds no PR of that repository
    │   ├── PRNotFoundError         no merged PR with that number
    │   ├── GitHubError             the GitHub API refused or failed a request (has ``status``)
    │   │   └── RateLimitError      a rate limit outlasted the bounded waits (has ``wait_s``)
    │   └── CodeownersError         no CODEOWNERS to read: the source has no file contents, or the
    │                               repository has no CODEOWNERS file (zh + en messages)
    ├── RenderError                 a report could not be rendered (no Chromium to print a PDF with)
    ├── UsageError                  a command line that cannot be run as written: a bad option value, a
    │                               missing or conflicting option (the CLI exits 2; other errors exit 1)
    ├── StoreUnavailableError       Redis is down: state could not be read or saved (zh + en messages)
    ├── AccessError                 a channel asked for a repository or host it may not see (zh + en)
    ├── DeliveryError               a chat platform refused or could not take a message (has ``code``, ``status``)
    │   ├── FeishuAPIError          the Feishu Open API or a webhook refused (``bot.delivery.feishu``)
    │   └── ResponseUrlError        a Slack ``response_url`` refused a post (``bot.delivery.slack``)
    └── LLMError                    a call to the language model failed
        ├── LLMCallError            this call failed (timeout, bad reply, retries spent): the PR falls back
        └── LLMStopError            the model cannot be used for the rest of the run: the run stops
            ├── LLMAuthError        the provider refused the credentials (401/403)
            └── LLMQuotaError       the account's quota is spent (429 ``insufficient_quota``)

Code raises the most specific class and chains the cause (``raise … from exc``);
nothing catches ``Exception`` to log and carry on. An error a person may read in the command line
carries its Chinese text too (``zh=``): :meth:`PrhubError.message` gives the one of the reader's
language, falling back to the English ``str(exc)``.
"""

from __future__ import annotations


class PrhubError(Exception):
    """Base of every error prhub raises on purpose.

    Args:
        message: the English text, one line (``str(exc)``).
        zh: the same in Chinese, when the error reaches people (the command line's errors).
    """

    def __init__(self, message: str = "", *args: object, zh: str | None = None) -> None:
        super().__init__(message, *args)
        self.zh = zh

    def message(self, language: str) -> str:
        """The text in ``language`` (``zh`` or ``en``); English when no Chinese text was given."""
        return self.zh if language == "zh" and self.zh else str(self)


class ConfigError(PrhubError):
    """The configuration (TOML file or environment) is invalid."""


class WindowError(PrhubError, ValueError):
    """A time window could not be built: malformed week, since after until, unknown zone."""


class SourceError(PrhubError):
    """A PR source failed to deliver."""


class _Bilingual(PrhubError):
    """Mixin of errors a person reads in their language: ``str(exc)`` is the English message,
    :meth:`message` gives the one of ``language`` (``zh`` or ``en``)."""

    def __init__(self, en: str, *, zh: str) -> None:
        super().__init__(en, zh=zh)
        self.messages = {"en": en, "zh": zh}

    def message(self, language: str) -> str:
        """The message in ``language`` (``zh`` or ``en``; anything else gives English)."""
        return self.messages.get(language, self.messages["en"])


class FilterError(_Bilingual, ValueError):
    """A subscription filter could not be read (unknown key, bad value, unknown label) or used
    (``path:@me`` before the person linked a GitHub handle). Both messages name what is known."""


class CodeownersError(_Bilingual, SourceError):
    """No CODEOWNERS could be read: the source has no file contents (a JSONL snapshot), or the
    repository has none of ``.github/CODEOWNERS``, ``CODEOWNERS``, ``docs/CODEOWNERS``."""


class ReleaseError(_Bilingual, SourceError):
    """A release window cannot be read: no such tag (both messages name the latest), or the source knows no
    releases (a snapshot file)."""


class StoreUnavailableError(_Bilingual):
    """Redis does not answer, so state (subscriptions, the change log, a lock) could not be read or
    saved. ``str(exc)`` is for the log; :meth:`message` tells the person nothing was saved."""

    def __init__(self, reason: str) -> None:
        super().__init__("The bot's storage is unavailable right now, so nothing was saved or changed. "
                         "Please try again in a few minutes.",
                         zh="机器人的存储暂时不可用，这次没有保存或修改任何内容，请过几分钟再试。")
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class AccessError(_Bilingual):
    """A request for a repository (or a PR link of a host) this channel may not see; the messages
    name what it may see."""


class SnapshotFormatError(SourceError):
    """A line of a JSONL snapshot is not valid JSON or not a valid PR record.

    Attributes:
        path: the snapshot file.
        line: 1-based line number of the bad record.
    """

    def __init__(self, path: str, line: int, reason: str, *, zh: str | None = None) -> None:
        super().__init__(f"{path}:{line}: {reason}", zh=f"{path}:{line}：{zh or reason}")
        self.path = path
        self.line = line
        self.reason = reason


class UnknownRepoError(SourceError):
    """The source holds no pull request of the requested repository."""


class PRNotFoundError(SourceError):
    """No merged pull request with that number in that repository."""


class GitHubError(SourceError):
    """The GitHub API answered with an error that retrying cannot fix, or kept failing.

    Attributes:
        status: the HTTP status of the last answer (0 when none came: network failure).
    """

    def __init__(self, message: str, *, status: int = 0, zh: str | None = None) -> None:
        super().__init__(message, zh=zh)
        self.status = status


class RateLimitError(GitHubError):
    """A GitHub rate limit (primary or secondary) outlasted the bounded retries or the longest wait.

    Attributes:
        wait_s: seconds GitHub asked to wait before the next request.
    """

    def __init__(self, message: str, *, status: int, wait_s: float, zh: str | None = None) -> None:
        super().__init__(message, status=status, zh=zh)
        self.wait_s = wait_s


class RenderError(PrhubError):
    """A report could not be rendered (e.g. ``--format pdf`` without a Chromium to print with)."""


class UsageError(PrhubError):
    """The command line cannot be run as written: an option's value cannot be read (``--since 2026-13-01``,
    ``--week next``, ``--tz Mars/Base``), a required option is missing or two exclude each other. The CLI
    exits with status 2 for it (1 for every other error)."""


class DeliveryError(PrhubError):
    """A platform refused a message, could not be reached, or the conversation cannot receive it.

    Attributes:
        code: the platform's error: Slack's ``error`` string (``channel_not_found``), Feishu's numeric
            code (``230025``); ``""`` when there is none.
        status: the HTTP status of the answer (0 when none came: network failure).
    """

    def __init__(self, message: str, *, code: str | int = "", status: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class LLMError(PrhubError):
    """A call to the language model failed."""


class LLMCallError(LLMError):
    """One call failed for good (timeout, a reply that stayed invalid after the re-ask, a
    rate limit or server error that outlasted the retries, a refused request).

    The caller falls back to the heuristic text for that one PR or narrative and
    records ``str(exc)`` as the ``fallback_reason``.
    """


class LLMStopError(LLMError):
    """The model cannot be used for the rest of this run; retrying cannot help."""


class LLMAuthError(LLMStopError):
    """The LLM provider refused the credentials (HTTP 401 or 403)."""


class LLMQuotaError(LLMStopError):
    """The LLM account's quota is spent (HTTP 429 with the ``insufficient_quota`` code)."""
