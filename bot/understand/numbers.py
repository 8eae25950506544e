"""Small numbers as people write them: ``16``, ``十六``, ``两``, ``two``, ``a couple of``.

:func:`number` reads one written number up to 9999 (Chinese numerals up to 99), or
``None``; :data:`ZH_NUMBER` and :data:`EN_NUMBER` are the regular-expression
fragments that find them (bounded, so a scan stays linear).
"""

from __future__ import annotations

ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
EN_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple of": 2,
            "couple of": 2, "fourteen": 14, "thirty": 30}

ZH_NUMBER = r"(?:[0-9]{1,4}|[零〇一二两兩三四五六七八九十]{1,3})"
"""Arabic digits (1–4) or a Chinese numeral of up to three characters (一 … 九十九)."""
EN_NUMBER = (r"(?:[0-9]{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty"
             r"|(?:a\s)?couple(?:\sof)?)")
"""Arabic digits or an English number word (``a couple of`` = 2)."""


def number(text: str) -> int | None:
    """The value of one written number (``16``, ``十六``, ``二十``, ``两``, ``two``), else ``None``."""
    word = " ".join(text.strip().lower().split())
    if word.isascii() and word.isdigit():
        return int(word)
    if word in EN_WORDS:
        return EN_WORDS[word]
    if not word or any(ch not in ZH_DIGITS and ch != "十" for ch in word):
        return None
    if "十" not in word:
        return int("".join(str(ZH_DIGITS[ch]) for ch in word)) if len(word) <= 2 else None
    tens, _, ones = word.partition("十")
    if len(tens) > 1 or len(ones) > 1 or "十" in ones:
        return None
    return (ZH_DIGITS[tens] if tens else 1) * 10 + (ZH_DIGITS[ones] if ones else 0)
