"""Thanks, greetings and praise: a one-line friendly answer instead of "I didn't understand".

:func:`small_talk` reads a whole message (mentions removed, normalised) that is only small talk —
``谢谢``, ``谢啦``, ``thx 👍``, ``hi``, ``你好``, ``牛 这个好用``, ``nice, exactly what i needed``,
``good bot``, ``how are you`` — into its kind; a message that also asks something is not small talk
(``谢谢，上周周报呢`` is a digest request).
"""

from __future__ import annotations

import re

from bot.understand.intents import SmallTalkKind

__all__ = ["small_talk"]

_EDGE = re.compile(r"[\s,，.。!！~～?？:：;；…\-—()（）\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+")
_KINDS: tuple[tuple[SmallTalkKind, re.Pattern[str]], ...] = (
    ("thanks", re.compile(
        r"(?:(?:awesome|great|nice|cool|perfect|ok|okay|好的|好|行)\s?)*"
        r"(?:谢谢|谢啦|谢了|多谢|感谢|谢谢你|谢谢啦|辛苦了|辛苦啦|thx|thanks?|thank\s?you|thank\s?u|ty|tks|tysm|cheers|"
        r"(?:many|much)\s?thanks|thanks\s?(?:a\s?lot|so\s?much|again|man|bot|buddy|prhub)|ありがとう)"
        r"(?:\s?(?:你|您|啦|了|哈|哦|呀|bot|prhub|a\s?lot|a\s?bunch|a\s?ton|heaps|so\s?much|again|mate|man|bro|dude|all|"
        r"folks|that['’]?s\s?(?:all|it)|!+))*",
        re.IGNORECASE)),
    ("greeting", re.compile(
        r"(?:你好|您好|嗨|哈喽|哈啰|早上好|早安|早|晚上好|下午好|在吗|在不在|hi|hello|hey|yo|hiya|howdy|"
        r"good\s?(?:morning|afternoon|evening)|morning)(?:\s?(?:呀|啊|哈|bot|prhub|there|all|everyone|机器人|小助手|~+))*",
        re.IGNORECASE)),
    ("how_are_you", re.compile(
        r"(?:最近怎么样|最近好吗|你好吗|过得怎么样|how\s?are\s?(?:you|u)(?:\s?doing)?|how['’]?s\s?it\s?going|"
        r"what['’]?s\s?up|sup|how\s?(?:are\s?)?things)", re.IGNORECASE)),
    ("praise", re.compile(
        r"(?:(?:牛|太牛了|牛逼|nb|厉害|真棒|好棒|不错|好用|挺好用|很好用|真好用|太好用了|给力|赞|点赞|666+|好的|收到|了解|明白|懂了|"
        r"这个好用|这个不错|很有用|有用|太有用了|nice|great|awesome|cool|perfect|excellent|amazing|love\s?it|good\s?bot|"
        r"(?:great|good|nice)\s?(?:job|work|one)(?:\s?bot)?|"
        r"well\s?done|exactly\s?what\s?i\s?needed|just\s?what\s?i\s?needed|that\s?helps|helpful|very\s?helpful|"
        r"this\s?is\s?(?:great|awesome|useful|helpful|nice)|works|it\s?works|useful)\s?)+", re.IGNORECASE)),
    ("ack", re.compile(r"(?:ok|okay|k|kk|got\s?it|roger|noted|sure|fine|好|好吧|行|嗯|嗯嗯|哦|噢|ok的|好滴|哈哈+|lol|"
                       r"可以(?:可以)?|"
                       r"好嘞|妥|妥了|"
                       r"👍|🙏|👌|😂|🎉)", re.IGNORECASE)),
    ("bye", re.compile(r"(?:再见|拜拜|回见|bye|see\s?(?:you|ya)|later|good\s?night|晚安|that['’]?s\s?(?:all|it)|就这些|"
                       r"没了)",
                       re.IGNORECASE)),
)
MAX_SMALL_TALK = 60
"""Longer messages are never small talk."""


def small_talk(text: str) -> SmallTalkKind | None:
    """The kind of small talk ``text`` is, when it is nothing else (``None`` otherwise)."""
    if len(text) > MAX_SMALL_TALK:
        return None
    parts = [p for p in _EDGE.split(text) if p]
    if not parts:
        return "ack" if text.strip() else None
    found: list[SmallTalkKind] = []
    for part in parts:
        kind = next((k for k, pattern in _KINDS if pattern.fullmatch(part)), None)
        if kind is None:
            joined = " ".join(parts)
            whole = next((k for k, pattern in _KINDS if pattern.fullmatch(joined)), None)
            return whole
        found.append(kind)
    for preferred in ("thanks", "praise", "how_are_you", "greeting", "bye", "ack"):
        if preferred in found:
            return preferred
    return None
