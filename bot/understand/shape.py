"""What a message is by its shape, before any request is read from it: a remark to colleagues, feedback or
thanks to the bot, a question about what the bot can do, or a request behind a courtesy.

The rules read cue words of classes, in both languages, never whole phrasings:

- **addressed to others** — ``各位`` / ``大家`` / ``fyi`` / ``交接`` (the channel), or a mention of someone else
  (``@王哥``, ``<@U0B2>``) with a statement of the speaker's (a mention alone asks nothing of anyone);
- **first-person statements** — the speaker's own past, plans and opinions (``我已经``, ``我先``, ``我来``,
  ``我回头``, ``我昨天``, ``I think``, ``I'll``), as opposed to what the speaker wants from the bot (``我想``,
  ``帮我``, ``给我``);
- **a request to the bot** — ``帮我``, ``给我``, ``发我``, ``请``, ``麻烦``, ``能否``, ``can you`` (without a mention
  of someone else), ``show``, ``list``, a question mark;
- **evaluation** — praise, thanks and complaints (``清楚``, ``好用``, ``方便``, ``帮大忙``, ``太慢``, ``helpful``);
- **capability** — what the bot can do (``你都能干什么``, ``支持哪些功能``, ``怎么用``, ``what's this bot good for``).

:func:`remark` scores a message as a remark: addressed to others or a first-person statement, and no request
to the bot. :func:`feedback` is evaluation without a request. :func:`asks_capability` is the help.
:func:`without_courtesy` drops a leading courtesy or acknowledgement clause (``明白了。``, ``好的，``,
``辛苦了，``, ``不对不对``, ``alright,``) so that what follows is read as the request.
"""

from __future__ import annotations

import re

from bot.understand.intents import SmallTalkKind
from bot.understand.smalltalk import small_talk

__all__ = ["asks_capability", "feedback", "remark", "without_courtesy"]

_A = r"(?<![A-Za-z])"
_Z = r"(?![A-Za-z])"
_GROUP = re.compile(r"^(?:各位|大家|同学们|兄弟们)|大家(?!好)|交接|"
                    r"谁(?:在|来|能|去)(?:看|修|跟|处理|查)|有人在(?:看|修|跟)|"
                    rf"{_A}(?:fyi|heads[\s-]up|ptal|folks|guys|everyone){_Z}|^(?:(?:hi|hey|ok|so)[\s,]+)?team{_Z}",
                    re.IGNORECASE)
"""The channel is spoken to (``各位``, ``大家``, ``fyi``, ``交接``)."""
_MENTION = re.compile(r"<@[A-Z0-9]{2,20}>|(?:^|\s)@(?!_user_)[^\s@，,。:：]{1,20}")
"""Someone is mentioned (the bot's own mention is removed before this is read; a mention alone asks nothing of
anyone: ``<@U0ALICE> PR #6046 值得读吗`` is still a question to the bot)."""
_STATEMENT = re.compile(
    r"我(?:们|这边)?(?:已经|刚刚?|先|来|回头|昨天|今天|明天|前天|上午|下午|晚点|等下|待会|觉得|认为|猜|记得|说的|在写|在改|"
    r"在搞|还在|正在|马上|打算|准备去|去吃|会去)|"
    rf"{_A}(?:i\s+think|i\s+guess|i\s+believe|i['’]ll|i\s+will|i['’]ve|i\s+have\s+(?:already|just)|i\s+just|we['’]ll|"
    rf"we\s+will|i['’]m\s+(?:going|working|writing|on)|i\s+already|it\s+will\s+break|it['’]ll\s+break){_Z}",
    re.IGNORECASE)
"""The speaker's own past, plans and opinions."""
_REQUEST = re.compile(
    r"帮我|帮忙|给我|发我|请问|请帮|麻烦(?!大家)|能否|能不能|可不可以|可以帮|我想(?:看|要|问|了解|订|知道)|我要|订阅|退订|"
    r"再发|重发|发一遍|发一下|发下|"
    r"提醒我|通知我|"
    rf"{_A}(?:can\s+you|could\s+you|please|pls|show\s+me|give\s+me|send\s+me|tell\s+me|subscribe|unsubscribe|"
    rf"what|which|who|where|how){_Z}",
    re.IGNORECASE)
"""A request or a question to the bot (a verb such as 看下 after ``我回头`` is the speaker's own plan)."""
_VOCATIVE = re.compile(r"^(?:老|小)[\u4e00-\u9fff](?:[，,\s]|(?=你|您))|"
                       r"^[\u4e00-\u9fff]{1,2}(?:哥|姐|总|老师|工)(?:[，,\s]|(?=你|您))")
"""A colleague addressed by name at the start (``老王你看下…``, ``小李，…``, ``张老师 你…``)."""
_LEADING_MENTION = re.compile(r"\s*(?:<@[A-Z0-9]{2,20}>|@(?!_user_)[^\s@，,。:：]{1,20})")
_DONE_YET = re.compile(r"了(?:吗|嗎|么|麼|没有?|沒有?)\s*[?？!！。.~～]*\s*$|(?<![A-Za-z])(?:yet|done)\s*\??\s*$",
                       re.IGNORECASE)
"""A question whether something is done (``发群里了吗``, ``merged yet?``): put to the one addressed first."""
_SECOND = re.compile(r"你|您|(?<![A-Za-z])(?:you|your)(?![A-Za-z])", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]\s*$|[吗嗎呢]\s*[?？!！。.~～]*\s*$")
_PR = re.compile(r"#\s?[0-9]{3,7}|(?<![0-9])[0-9]{4}(?![0-9])")

_EVALUATION: tuple[tuple[SmallTalkKind, re.Pattern[str]], ...] = (
    ("thanks", re.compile(rf"谢|感谢|多谢|辛苦|帮大忙|{_A}(?:thanks?|thank\s+you|thx|ty|cheers|appreciated?){_Z}",
                          re.IGNORECASE)),
    ("complaint", re.compile(r"太慢|好慢|很慢|慢死|卡住|没反应|不准|不对劲|答非所问|看不懂|"
                             rf"{_A}(?:too\s+slow|so\s+slow|slow|useless|wrong\s+again|not\s+helpful){_Z}",
                             re.IGNORECASE)),
    ("praise", re.compile(r"清楚|清晰|好用|方便|有用|实用|给力|厉害|不错|很棒|真棒|好棒|牛|赞|靠谱|省事|省心|哈哈|"
                          rf"{_A}(?:helpful|useful|great|awesome|nice|cool|handy|love\s+it|well\s+done|neat|"
                          rf"perfect){_Z}", re.IGNORECASE)),
)
_ASKS_BOT = re.compile(r"帮我|给我|发我|发一下|发下|麻烦|请问|请帮|能否|能不能|可以帮|看一下|看下|查|列|订阅|退订|"
                       r"上周|本周|这周|上个月|本月|这个月|最近|"
                       rf"{_A}(?:can\s+you|could\s+you|show|give|list|send|tell\s+me|subscribe|what|which|who|"
                       rf"where|how\s+(?:do|to|can))(?![A-Za-z])|[?？]", re.IGNORECASE)

_CAPABILITY = re.compile(
    r"(?:你|机器人|bot|这个?工具|这玩意儿?)[^。？?！!]{0,8}(?:能|会|可以)[^。？?！!]{0,6}(?:干|做|帮)?(?:些|点)?"
    r"(?:什么|啥|哪些|嘛)|"
    r"(?:支持|提供|有)(?:哪些|什么|啥)(?:功能|命令|指令|用法)|(?:使用说明|使用文档|用法说明|说明书|帮助文档)|"
    r"(?:机器人|bot|这个?工具)[^。？?！!]{0,6}(?:怎么|咋|如何)用|"
    r"有(?:使用)?(?:说明|教程|手册|文档)(?:文档)?(?:吗|嘛|么|没|不)|^(?:这个?|这玩意儿?)?\s?(?:怎么|咋|如何)用\s?(?:啊|呀|呢|哈)?\s?(?:[,，。?？!！]|$)|^你是(?:干嘛|干什么|做什么|干啥|啥)的|^你是谁|"
    r"(?:你|机器人|bot|这个?工具)[^。？?！!]{0,6}有(?:什么|啥|哪些)(?:本事|能耐|能力|功能|用处)|"
    r"怎么用(?:你|这个机器人|这个bot|它)|教(?:教)?我(?:怎么)?用|"
    rf"{_A}how\s+to\s+(?:talk\s+to|use|ask|work\s+with)\s+(?:you|u|it|the\s+bot|this\s+bot){_Z}|"
    rf"{_A}what\s+(?:can|should|could)\s+i\s+(?:ask|say\s+to|tell)\s+(?:you|u|it|the\s+bot){_Z}|"
    rf"{_A}(?:what\s+(?:[a-z]+\s+){{0,3}}can\s+(?:you|u)\s+(?:do|help)|what\s+(?:you|u)\s+can\s+do|what(?:['’]s|\s+is)\s+(?:this|the)\s+(?:bot|thing|tool)\s+(?:good\s+for|for)|what\s+can\s+(?:you|it|this\s+bot)|"
    rf"what\s+(?:do|does)\s+(?:you|it|this\s+bot)\s+(?:do|support)|how\s+(?:do\s+i|to)\s+use\s+(?:you|it|this)|"
    rf"what\s+are\s+you\s+(?:good\s+for|for)|what\s+features){_Z}",
    re.IGNORECASE)

_CLAUSE = re.compile(r"[，,。.!！~～;；]\s*|\s+")
_CORRECTION = re.compile(r"^(?:(?:明白|了解|懂|收到|好|行|嗯|可以)了?(?:啊|呀|哈)?|不对不对|不对|不是不是|不是这个|"
                         r"错了|"
                         r"no\s+wait|wait|sorry|抱歉|不好意思|另外|然后|对了|"
                         r"alright|all\s+right|ok\s+so|okay\s+so|so)$", re.IGNORECASE)


def remark(text: str) -> bool:
    """Whether ``text`` (normalised, the bot's mention removed) is said to colleagues or about oneself rather
    than asked of the bot: said to the channel; a first-person statement beside a mention of someone else (any
    request in it is theirs); or a first-person statement without a request or question to the bot."""
    if _GROUP.search(text):
        return True  # "各位，… 大家有空可以看看", "fyi the W16 digest mentions #6053": said to the channel
    mention = _MENTION.search(text) is not None or _VOCATIVE.search(text) is not None
    if mention and _SECOND.search(text):
        return True  # "@张三 你看下 #6046 是不是把你那个 bug 修了": said to them
    if _LEADING_MENTION.match(text) and _DONE_YET.search(text):
        return True  # "@小王 周报发群里了吗": whether the one addressed has done it
    statement = _STATEMENT.search(text) is not None
    if not statement:
        return False
    if mention:
        return True  # "@Lukas I think #5961 is the fix … can you try?": the request is theirs
    return _REQUEST.search(text) is None and _QUESTION.search(text) is None


def feedback(text: str) -> SmallTalkKind | None:
    """Thanks, praise or a complaint said to the bot without asking anything (``感谢，整理得非常清楚``, ``bot 你这回复
    也太慢了吧``, ``Thank you very much, is very helpful``), else ``None``."""
    if len(text) > 80 or _PR.search(text) or _ASKS_BOT.search(text):
        return None
    for kind, pattern in _EVALUATION:
        if pattern.search(text):
            return kind
    return None


def asks_capability(text: str) -> bool:
    """Whether ``text`` asks what the bot can do or how to use it."""
    return len(text) <= 120 and _CAPABILITY.search(text) is not None


_CORRECTION_LEAD = re.compile(r"^(?:不对|不是|错了)+\s?[，,。]?\s?(?:我说的不是这个|不是这个|我不是说这个)?"
                              r"\s?[，,。]?\s?")


def without_courtesy(text: str) -> str:
    """``text`` without a leading clause of courtesy, acknowledgement or correction (``明白了。``, ``好的，``,
    ``辛苦了，另外``, ``不对不对``, ``alright,``), when something is left to read; else ``text``."""
    rest = _CORRECTION_LEAD.sub("", text) or text
    for _ in range(4):
        m = _CLAUSE.search(rest)
        if m is None or m.start() == 0:
            break
        head, tail = rest[: m.start()], rest[m.end():]
        if not tail.strip() or not (small_talk(head) is not None or _CORRECTION.match(head)):
            break
        rest = tail
    return rest
