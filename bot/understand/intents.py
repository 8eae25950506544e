"""What a person asks the bot: the intent classes every platform shares.

All intents are frozen dataclasses. Those that read a time window carry it as a
*window spec* (``week`` on :class:`DigestIntent`, ``window`` elsewhere; the
grammar is :data:`bot.digest.window.SPEC_FORMS`, resolved by
:func:`bot.digest.window.window_from_spec`; ``None`` = the door's default
window) and the words that named it (``said``, for "I read 上上周 as …").
Fields that only help the reply (``said``, the question as asked) are left
out of equality, so an intent compares equal to one built by hand.

The chat core (:class:`bot.handlers.core.Core`) answers every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.models import Language
from bot.understand.windows import WindowProblem

PRQuestion = Literal["worth", "what", "risks", "start"]
MergedFocus = Literal["list", "authors"]
"""What is asked about a window's merged PRs: the list, or who merged them."""
"""What is asked about one PR: is it worth reading (``worth``), what does it do (``what``), what are its
risks (``risks``), where to start reading (``start``)."""


@dataclass(frozen=True)
class DigestIntent:
    """A digest request: ``本周周报``, ``上上周周报``, ``digest 2026-W16``, ``本月总结``.

    ``week`` is a window spec (``this``, ``last``, ``2026-W16``, ``week-2``, ``month-0`` …)
    or ``None`` (the last complete week, as ``prhub digest`` does).
    """

    week: str | None = None
    repo: str | None = None
    language: Language | None = None
    said: str | None = field(default=None, compare=False)

    @property
    def window(self) -> str | None:
        """The window spec (the same as ``week``; every windowed intent has ``window``)."""
        return self.week


@dataclass(frozen=True)
class PRIntent:
    """One PR: "PR #6046 值得读吗" (``question="worth"``), "6046这个PR讲了什么" (``"what"``).

    ``repo`` when the message names one (URL or ``owner/name#N``).
    """

    number: int
    repo: str | None = None
    language: Language | None = None
    question: PRQuestion = "worth"
    text: str = field(default="", compare=False)
    """The message as asked (a thread's PR may be compared with it: ``what's the difference with #5997``)."""


@dataclass(frozen=True)
class CompareIntent:
    """Several PRs side by side: ``#6046 和 #6029 哪个更值得读``, ``compare 6046 and 6029``.

    ``numbers`` are distinct, in the order asked (2 to :data:`MAX_COMPARED`).
    """

    numbers: tuple[int, ...]
    repo: str | None = None
    language: Language | None = None


MAX_COMPARED = 6
"""Most PRs one comparison holds; more are asked about in the order given, the rest dropped."""


@dataclass(frozen=True)
class LabelIntent:
    """The label view of one window: ``npu 标签``, ``上周 trainer 有哪些重点 PR``, ``trainer PRs last week``.

    ``window`` ``None`` = the door's default (the latest week with merged PRs).
    """

    label: str
    repo: str | None = None
    language: Language | None = None
    window: str | None = None
    said: str | None = field(default=None, compare=False)
    loose: bool = field(default=False, compare=False)
    """Read from a digest request with one word more (``fsdp 最近有啥动静``): when the word is no label of the
    data, the digest is answered."""


@dataclass(frozen=True)
class MergedIntent:
    """The PRs merged in a window: ``本月合并了哪些 PR``, ``what merged this month``; with
    ``focus="authors"`` who merged them, most PRs first: ``谁贡献最多``, ``top contributors last month``."""

    window: str | None = None
    repo: str | None = None
    language: Language | None = None
    said: str | None = field(default=None, compare=False)
    focus: MergedFocus = "list"


@dataclass(frozen=True)
class QuestionIntent:
    """A question about the PRs of a window, answered from the data with citations:
    ``哪些 PR 改了 rollout 的配置？``, ``which PRs touched fully_async last week?``.

    ``terms`` are the search words as written (``rollout``, ``配置``, ``fully_async``, a path);
    ``label`` narrows the search to one label when the message names one.
    """

    terms: tuple[str, ...]
    window: str | None = None
    label: str | None = None
    repo: str | None = None
    language: Language | None = None
    said: str | None = field(default=None, compare=False)
    text: str = field(default="", compare=False)
    """The question as asked (normalised), for the LLM's phrasing of the answer."""


@dataclass(frozen=True)
class SubscribeIntent:
    """Alert the conversation when a matching PR is merged.

    ``text`` is the request as said (``订阅 npu rollout -ci``, ``subscribe label:npu path:verl/trainer/**``,
    ``/prhub subscribe …`` as ``subscribe …``): the core reads it with the repository's aliases and
    labels (:func:`bot.filters.parse_subscription`), so a filter that does not read is answered
    there, in the person's language. Without ``text``, ``label`` is the one label to follow (the
    cards' 订阅标签 buttons). ``repo`` when the request names one.
    """

    label: str = ""
    repo: str | None = None
    language: Language | None = None
    text: str = ""
    add: bool = False
    """Add the filter's values to the subscription held (``再加个 trtllm``, ``also throw in sglang``)."""


@dataclass(frozen=True)
class UnsubscribeIntent:
    """Stop alerts: the subscription with the filter ``text`` says (``退订 npu``), or every one
    (``退订全部``, ``unsubscribe all``, of ``repo`` when named); ``label`` as in :class:`SubscribeIntent`.
    ``parts``: values to take out of the subscriptions held (``rollout 和 megatron 先都停掉 只看 npu``), a
    login's number (``048``) or near miss included; ``kind:author`` / ``kind:path`` / ``kind:label`` is every
    value of that kind (``drop the author part``)."""

    label: str = ""
    repo: str | None = None
    language: Language | None = None
    text: str = ""
    parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkGitHubIntent:
    """``我的 GitHub 是 alice`` / ``my GitHub is alice``: the asker's GitHub handle, for ``path:@me``
    (the paths CODEOWNERS gives them) and ``author:@me``."""

    handle: str
    language: Language | None = None


PersonalDigestAction = Literal["on", "off", "show"]


@dataclass(frozen=True)
class PersonalDigestIntent:
    """"My area this week": ``每周给我发我的周报`` / ``send me my weekly digest`` (``on``: every week in
    a DM, in the person's time zone), ``不要再发我的周报`` / ``stop my weekly digest`` (``off``),
    ``我的周报`` / ``my digest`` (``show``: last week's, now)."""

    action: PersonalDigestAction = "show"
    language: Language | None = None


@dataclass(frozen=True)
class ListSubscriptionsIntent:
    """List the asker's subscriptions: ``我的订阅``, ``我订阅了什么``, ``what am I subscribed to``."""

    language: Language | None = None


@dataclass(frozen=True)
class ClarifyIntent:
    """A window that could not be read: the reply asks which one (never another week in silence).

    ``said`` is the words as written, ``problem`` why they could not be read (a window's problem, or
    ``no_pr``: a PR question without a PR, ``no_context``: a follow-up with nothing before it,
    ``which_pr``: words that fit several PRs, ``unknown_ref``: a time or thing known only outside the chat
    — ``上次 oncall 轮换那周``, ``the week of the hackathon``, ``that week`` outside a thread —, ``compare_which``: a
    comparison of PRs named only by topic), ``wanted`` what the person was asking for.
    """

    said: str
    problem: WindowProblem | Literal["no_pr", "no_context", "which_pr", "unknown_ref", "compare_which"]
    wanted: Literal["digest", "label", "merged", "question", "pr"]
    language: Language | None = None


SmallTalkKind = Literal["thanks", "greeting", "praise", "ack", "how_are_you", "bye", "complaint"]


@dataclass(frozen=True)
class SmallTalkIntent:
    """Thanks, greetings, praise (``谢谢``, ``thanks!``, ``你好``, ``good bot``): a one-line friendly answer."""

    kind: SmallTalkKind = "thanks"
    language: Language | None = None


FollowUpShift = Literal[-1, 1]


@dataclass(frozen=True)
class FollowUpIntent:
    """A message that only makes sense after the thread's last answer (:mod:`bot.understand.followup`):
    ``那上周呢`` (``window``), ``the week before that`` (``shift=-1``: the window one week before the last
    one), ``and #6029?`` (``number``), ``那 npu 的呢`` (``label``), ``有啥风险`` (``question="risks"``),
    ``where do I start`` (``question="start"``), ``第二个`` (``nth=2``: the second PR of a comparison),
    ``只看 npu 的`` (``narrow``: the label narrows the last question), ``跟 5939 比呢`` (``compare``), ``那个 fp8
    padding 的 PR 有啥风险`` (``terms``: the words that pick a PR of the last window). ``said``: the window's
    words."""

    window: str | None = None
    shift: FollowUpShift | None = None
    number: int | None = None
    label: str | None = None
    question: PRQuestion | None = None
    nth: int | None = None
    narrow: bool = False
    compare: bool = False
    terms: tuple[str, ...] = ()
    language: Language | None = None
    said: str | None = field(default=None, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class HelpIntent:
    """Nothing understood (or ``help``): the help, with the examples nearest to ``said``
    (:func:`bot.understand.examples.nearest_examples`)."""

    language: Language | None = None
    said: str = field(default="", compare=False)
    asked: bool = field(default=False, compare=False)
    """The person asked for the help (``help``, ``帮助``) rather than saying something not understood."""
    remark: bool = field(default=False, compare=False)
    """Said to colleagues or about oneself (``各位…``, ``我先去吃饭了``): no request was meant."""


Intent = (
    DigestIntent | PRIntent | CompareIntent | LabelIntent | MergedIntent | QuestionIntent | SubscribeIntent
    | UnsubscribeIntent | ListSubscriptionsIntent | LinkGitHubIntent | PersonalDigestIntent | ClarifyIntent
    | HelpIntent | SmallTalkIntent | FollowUpIntent
)
"""Every intent the understanding gives."""
