"""Deciding what a message asks once its parts are read (:class:`bot.understand.parts._Reading`): a
follow-up of the thread (:func:`_follow_up`), else one request, most specific first (:func:`_decide`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import islice

from bot.understand import followup as fu
from bot.understand.followup import MAX_FOLLOW_UP
from bot.understand.intents import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    MergedIntent,
    PRIntent,
    PRQuestion,
    QuestionIntent,
)
from bot.understand.lexicon import (
    _ANALYZE,
    _AREA,
    _BY_LABEL,
    _CHANGE,
    _DIGEST,
    _EN_STOP,
    _HELP,
    _KEY,
    _LABEL_IN,
    _LABEL_LIKE,
    _LISTING,
    _LOOK,
    _MERGED,
    _OPENER,
    _PR_WORD,
    _WHAT,
    _WHO,
    _WORTH,
    MAX_TERMS,
    _blank,
    _concepts,
    _label,
    _leftover,
    _terms,
    detect_language,
)
from bot.understand.parts import (
    _BARE_NUMBER,
    _Reading,
)

_STATEMENT = re.compile(
    r"^(?:(?:ok|so|and|also|btw|fyi)[,，]?\s+)?(?:i['’]ll|we['’]ll|i\s+will|we\s+will|i['’]m\s+going\s+to|we['’]re\s+going\s+to|"
    r"i\s+(?:have|need|want)\s+to|we\s+(?:have|need|want)\s+to|i\s+just|we\s+just|let['’]?s|"
    r"(?:can|could|would|will)\s+(?:someone|somebody|anyone|anybody|you\s+guys|y['’]?all)|(?:someone|somebody)\s+(?:should|must|please|pls))"
    r"(?![A-Za-z])|\b(?:my|our)\s+(?:prs?|pull\s+requests?|patch(?:es)?|changes?)\s+(?:got|was|were|is|are|has\s+been|"
    r"have\s+been|finally)\b|\b(?:look\s+at|review|check|approve|merge|rebase)\s+my\s+(?:prs?|pull\s+requests?|patch(?:es)?|changes?)\b|"
    r"^(?:晚点|等下|待会儿?|回头|明天|今天|下周|这周|本周)?\s?(?:我们?|咱们?|我这边|我们这边)(?:组|这边)?\s?"
    r"(?:这周|本周|今天|明天|下周|马上|等下|待会儿?|回头|晚点|昨天|前天|刚才|今早|上午|下午)?\s?(?:主要|一直|也|都|还)?\s?"
    r"(?:要把|得把|要去|得去|会|准备|打算|计划|刚|刚刚|正在|在搞|在弄|在做|在写|在改|还在|已经|把|又?(?:提|发|开|交)了?)|"
    r"麻烦大家|请大家|大家帮忙|辛苦大家|大家辛苦|辛苦了|你(?:那个|这个|那|的)\s?(?:pr|合并请求)",
    re.IGNORECASE)
"""A statement about one's own work or a request to the others in the channel (``I'll fix the rollout bug this
week``, ``can someone review my PR later``, ``我刚提了个 PR，麻烦大家 review 一下``): its PR and change words make
no search."""
_MONTHLY = re.compile(r"月报|月報|月度总结|月度報告|月度报告|(?<![A-Za-z])monthly(?![A-Za-z])", re.IGNORECASE)
_QUESTION_END = re.compile(r"[?？]|[吗嗎呢么麼]\s?[.!。！~～]*$|没有?\s?(?:哈|啊|呀|呢|哇)?\s?[.!。！~～]*$|"
                           r"^\s?(?:did|has|have|was|were|is|are|does|do|any)(?![A-Za-z])", re.IGNORECASE)
"""A question's form, for a change word whose only context is a window (``上周有人改 ci 吗``; not
``昨天的会改到周五了``)."""
_OWN_REPORT = re.compile(r"(?:写|交|填|提交|补|发邮件)(?:完|好)?了?\s?(?:的)?(?:周报|週報|月报|日报)|"
                         r"(?:周报|週報|月报|日报)[^。！？!?#]{0,8}?(?:还没|没)?(?:写|交|填|提交|补)(?:完|好)?(?:了|吗|没)?|"
                         r"进展(?:还行|还可以|一般|不错|顺利|挺好|很慢|不大)|"
                         r"^(?:i|we)\s+(?:subscribed|signed\s+up|read|saw|wrote|sent|finished)(?![A-Za-z])",
                         re.IGNORECASE)
"""One's own report, progress or reading (``周报写完了``, ``今天要交周报``, ``进展还行``, ``i subscribed to the
newsletter``): no request for the bot's digest."""


def _is_question_shaped(text: str) -> bool:
    return bool(_OPENER.search(text) and (_PR_WORD.search(text) or _CHANGE.search(text)))


_FOLLOW_UP_FRAME = re.compile(r"这个\s?pr|這個\s?pr|那个\s?pr|那個\s?pr|(?<![A-Za-z])(?:this|that|"
                              r"the)\s+pr(?![A-Za-z])|"
                              r"(?<![A-Za-z])(?:them|it|those|these|ones?)(?![A-Za-z])|那个|那個|这个|這個|的|"
                              r"仔细看|细看|细读|精读|好好看|看看|看下|看|读|大吗|大不大|高吗|多吗|"
                              r"(?<![A-Za-z])(?:for|from|to|in|of|the|show|me|list|pls|please|same|again|too)(?![A-Za-z])",
                              re.IGNORECASE)


def _follow_up(r: _Reading) -> FollowUpIntent | None:
    """The follow-up ``r`` is (:mod:`bot.understand.followup`), or ``None`` when it says enough by itself: a
    message that asks with words of its own (a PR or change word, ``哪些``, ``标签``, a digest word) is read
    as it is."""
    text = r.text.strip()
    if len(text) > MAX_FOLLOW_UP:
        return None
    if fu.ENGLISH.match(text) or fu.CHINESE.match(text):
        return FollowUpIntent(language="en" if fu.ENGLISH.match(text) else "zh", text=text)
    strong = bool(fu.LEAD.match(text) or _TRAIL_NE.search(text) or fu.ONLY.match(text))
    numbers = r.numbers()
    outside = r.rest
    if not numbers and strong:  # 跟 5939 比呢: a bare number is a PR here
        bare = [m for m in islice(_BARE_NUMBER.finditer(outside), 2) if len(m["n"]) >= 3]
        if len(bare) == 1:
            numbers = [int(bare[0]["n"])]
            outside = _blank(outside, [bare[0].span()])
    question = fu.question_of(outside)
    shift = -1 if fu.BEFORE.search(r.text) else 1 if fu.AFTER.search(r.text) else None
    nth = fu.nth_of(outside)
    pr_ref = _PR_REF.search(outside) is not None
    rest = outside
    for pattern in (_PR_REF, *fu.follow_up_words(), _FOLLOW_UP_FRAME, _ASK_FRAME):
        rest = pattern.sub(lambda m: " " * len(m.group(0)), rest)
    compare = fu.COMPARE.search(outside) is not None
    labelled = _label(rest)
    asks = (_PR_WORD.search(rest) or _CHANGE.search(rest) or _OPENER.search(rest) or _DIGEST.search(rest)
            or _MERGED.search(rest) or _WHO.search(rest) or _HELP.search(rest.strip()) or _KEY.search(rest)
            or _LISTING.search(rest))
    if asks or (labelled is not None and not strong):
        return None
    if labelled is not None:
        rest = _blank(rest, [labelled[1]])
    terms = _terms(rest)
    label = labelled[0] if labelled else (terms[0] if len(terms) == 1 and _LABEL_LIKE.fullmatch(terms[0])
                                          and strong else None)
    if label is not None and not labelled:
        terms = []
    window = r.window.spec if r.window is not None and r.window.problem is None and shift is None else None
    said = r.window.said if r.window is not None else None
    lang = detect_language(text, [label] if label else terms)
    base = FollowUpIntent(language=lang, said=said, text=text)
    if len(numbers) == 1:
        explicit = _WHAT.search(r.text) or _WORTH.search(r.text) or _ANALYZE.search(r.text) or question
        if strong and not terms and window is None and not (r.refs and r.refs[0][1]) and (
                compare or not explicit or fu.LEAD.match(text)):
            return replace(base, number=numbers[0], question=question, compare=compare)
        return None
    if numbers:
        return None
    if question is not None and window is None and (not terms or nth is not None or pr_ref):
        picked = tuple(terms) or ((label,) if label and pr_ref else ())
        return replace(base, question=question, nth=nth, terms=picked)
    if terms:
        return None
    if shift is not None and window is None:
        return replace(base, shift=-1 if shift < 0 else 1, label=label)
    if compare and len(text) <= 30 and window is None:
        return replace(base, compare=True)
    if pr_ref and window is None and label is None:
        return replace(base, question="worth")  # 帮我看看这个 PR
    if (window is not None or label is not None) and strong:
        narrow = fu.ONLY.match(text) is not None and label is not None
        return replace(base, window=window, label=label, narrow=narrow)
    return None


_TRAIL_NE = re.compile(r"(?:呢|咧|嘞)\s*[?？!！。.~～]*$")
_ASK_FRAME = re.compile(r"有啥|有什么|有什麼|有没有|有沒有|是不是|会不会|什么|什麼|啥|吗|嗎|嘛|么|不$|大吗|"
                        r"(?<![A-Za-z])(?:any|are\s+there|what\s+are\s+the|is\s+it|are\s+they)(?![A-Za-z])",
                        re.IGNORECASE)
_PR_REF = re.compile(r"(?:这个|這個|那个|那個)\s?(?:pr|PR)|(?<![A-Za-z])(?:this|that|the)\s+pr(?![A-Za-z])|的\s?(?:pr|"
                     r"PR)",
                     re.IGNORECASE)


def _decide(r: _Reading) -> Intent:
    text = r.text
    numbers = r.numbers()
    if len(numbers) >= 2:
        return CompareIntent(tuple(numbers), repo=r.repo, language=detect_language(text))
    statement = _STATEMENT.search(text) is not None
    if numbers and statement and not (_QUESTION_END.search(text) or _WHAT.search(text) or _WORTH.search(text)
                                      or _ANALYZE.search(text)):
        return HelpIntent(language=detect_language(text), said=text, remark=True)  # 我刚在周报里写了 #6046
    if numbers:
        question: PRQuestion = "start" if fu.START.search(text) else "risks" if fu.RISKS.search(text) else \
            "what" if _WHAT.search(text) and not _WORTH.search(text) else "worth"
        return PRIntent(numbers[0], repo=r.repo, language=detect_language(text), question=question, text=text)
    if _COMPARED.search(text) and not statement and _PRS_NAMED.search(text):  # "几个 sglang 的 PR 比一比": which?
        return ClarifyIntent(text, "compare_which", "pr", language=detect_language(text))
    if r.window is None and (event := _EVENT.search(text)) is not None:  # "上次 oncall 轮换那周": which week?
        return ClarifyIntent(event.group(0), "unknown_ref", "merged" if _MERGED.search(text) or _PR_WORD.search(
            text) else "digest", language=detect_language(text))
    window, said = (r.window.spec, r.window.said) if r.window else (None, None)
    asks_for = _ASKS_FOR.search(r.rest)
    bare = _blank(r.rest, [asks_for.span()]) if asks_for else r.rest  # "pull up", "发我": no search words
    labelled = _label(bare)
    rest = _blank(bare, [labelled[1]]) if labelled else bare
    label = labelled[0] if labelled else None
    folders = [(m["p"] or m["q"] or m["r"]).strip("/").lower() for m in _FOLDER.finditer(rest)
               if (m["p"] or m["q"] or m["r"]).lower() not in _EN_STOP]  # "docker 目录", "the docs folder"
    terms = [t for t in _terms(rest, label) if t.lower() not in _FOLDER_WORDS and t.lower() not in folders]
    terms += folders + [p for p in r.path_like if p.lower() not in _EN_STOP]
    terms = terms[:MAX_TERMS]
    concept = any(_concepts().find(t) is not None for t in terms)
    change = _CHANGE.search(rest) is not None or concept
    about_prs = _PR_WORD.search(rest) is not None
    if label is None and len(terms) > 1 and (inside := _LABEL_IN.search(rest)) is not None \
            and inside["l"].lower() in terms:  # 上周 fully_async 里有哪些是修 bug 的: a label and a question in it
        label = inside["l"].lower()
        terms = [t for t in terms if t != label]
    lang = detect_language(text, [label] if label else [])
    single_label = len(terms) == 1 and _LABEL_LIKE.fullmatch(terms[0]) is not None
    intent: Intent | None = None
    asked = bool(_DIGEST.search(rest) or _OPENER.search(rest) or _LOOK.search(rest))
    scoped = _SCOPE.search(rest)
    if label is None and scoped is not None and (scoped["l"] or scoped["l2"]).lower() in terms \
            and _concepts().find(scoped["l"] or scoped["l2"]) is None \
            and not _DOING.fullmatch(scoped["l"] or scoped["l2"]):  # a concept is searched, not a label
        # "npu 这块", "fully_async 方向的进展", "the sglang stuff", "the rollout bit"
        label = (scoped["l"] or scoped["l2"]).lower()
        terms = [t for t in terms if t != label]
        single_label = False
        if not terms or not change:
            return _clarified(r, LabelIntent(label, repo=r.repo, language=lang, window=window, said=said, loose=True))
    who = _WHO.search(rest)
    if _authors_asked(rest, terms):
        return _clarified(r, MergedIntent(window, repo=r.repo, language=lang, said=said, focus="authors"))
    if who is not None and not _terms(_blank(rest, [who.span()]), label):
        # "谁贡献最多", "本月谁合并的 PR 最多", "top contributors last month"
        intent = MergedIntent(window, repo=r.repo, language=lang, said=said, focus="authors")
    elif label is not None:
        if change and terms:
            intent = QuestionIntent(tuple(terms), window=window, label=label, repo=r.repo, language=lang, said=said,
                                    text=text)
        else:
            intent = LabelIntent(label, repo=r.repo, language=lang, window=window, said=said)
    elif change and terms and (about_prs or _OPENER.search(rest) or _QUESTION_END.search(text) or (
            concept and r.window is not None) or asks_for):
        # "哪些 PR 改了 rollout 的配置", "which PRs touched fully_async last week", "W16 有没有改 megatron 的 PR"
        intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif terms and about_prs and not _DIGEST.search(rest):
        if single_label:  # "上周 trainer 有哪些重点 PR", "trainer PRs last week"
            intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window,
                                 said=said)
        else:
            intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif terms and single_label and r.window is not None and not _DIGEST.search(rest) \
            and (_leftover(rest, stop=False) == 1 or asks_for):
        # "上周 npu", "npu W16", "pull up vllm for the week before last": a label and a window, nothing else
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said)
    elif single_label and any((m["a"] or m["b"] or m["c"]).lower() == terms[0] and (m["c"] or asked)
                              for m in _AREA.finditer(rest)):
        # "what's new in rollout this week", "npu 的动态", "rollout 最近怎么样", "fsdp 最近有啥动静"
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said,
                             loose=True)
    elif terms and _BY_LABEL.search(text) and single_label:  # vllm 相关的 上上周 按标签看下
        intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window, said=said)
    elif terms and r.window is not None and _QUESTION_END.search(text) and not _DIGEST.search(rest) \
            and not statement and any(re.search(r"[0-9_./]", t) for t in terms):  # fp8 stuff in wk16?
        intent = QuestionIntent(tuple(terms), window=window, repo=r.repo, language=lang, said=said, text=text)
    elif not terms and not _DIGEST.search(rest) and (
            _MERGED.search(rest) or (about_prs and _LISTING.search(rest) and not _KEY.search(rest))):
        # "本月合并了哪些 PR", "what merged this month", "list PRs since Monday"
        intent = MergedIntent(window, repo=r.repo, language=lang, said=said)
    elif _DIGEST.search(rest) or (r.window is not None and not _leftover(rest)) or (
            r.window is not None and not terms and not about_prs and asks_for) or (
            _KEY.search(rest) and about_prs and (r.window is not None or _LISTING.search(rest))):
        monthly = _MONTHLY.search(rest) if window is None else None
        # a monthly report without a month: the last whole month, as a weekly one is the last whole week
        reports = [m.span() for m in _DIGEST.finditer(rest)]
        named = rest.lower().find(terms[0]) if single_label else -1
        if single_label and not monthly and reports and 0 <= named < reports[0][0] \
                and _terms(_blank(rest, reports), label) == terms:
            # "本周 rollout 的 pr 挑重点说说", "npu 的周报": one label's report is its view (the digest when the
            # word is no label of the data)
            intent = LabelIntent(terms[0], repo=r.repo, language=detect_language(text, terms), window=window,
                                 said=said, loose=True)
        else:
            intent = DigestIntent(week="month-1" if monthly else window, repo=r.repo, language=lang,
                                  said=monthly.group(0) if monthly else said)
    if intent is None and not statement and not _OWN_REPORT.search(text):
        return HelpIntent(language=lang, said=text)
    if intent is None or (isinstance(intent, DigestIntent | LabelIntent) and _OWN_REPORT.search(text)) or (
            statement and not isinstance(intent, DigestIntent)):
        return HelpIntent(language=lang, said=text, remark=True)
    return _clarified(r, intent)


def _clarified(r: _Reading, intent: Intent) -> Intent:
    """``intent``, or the question back when its window could not be read."""
    if r.window is not None and r.window.problem is not None:
        wanted = {DigestIntent: "digest", LabelIntent: "label", MergedIntent: "merged",
                  QuestionIntent: "question"}.get(type(intent), "digest")
        return ClarifyIntent(r.window.said, r.window.problem, wanted,  # type: ignore[arg-type]
                             language=getattr(intent, "language", None))
    return intent


_COMPARED = re.compile(r"对比|比较|比一比|比比|哪个更|哪一个更|"
                       r"(?<![A-Za-z])(?:compare|comparison|versus|vs\.?|side\s+by\s+side)"
                       r"(?![A-Za-z])", re.IGNORECASE)
"""A comparison asked for in so many words (a PR comparison without numbers is asked back)."""
_FOLDER = re.compile(r"(?<![A-Za-z0-9_./-])(?P<p>[A-Za-z0-9_.][A-Za-z0-9_./-]{0,80})\s?(?:的)?\s?(?:目录|文件夹|路径)|"
                     r"(?<![A-Za-z])(?:folder|directory|dir)\s+(?!(?:changed|changes|has|have|was|is|got|been|in|on|of|"
                     r"for|to|lately|recently)(?![A-Za-z]))(?P<q>[A-Za-z0-9_.][A-Za-z0-9_./-]{0,80})|"
                     r"(?<![A-Za-z0-9_./-])(?P<r>[A-Za-z0-9_.][A-Za-z0-9_./-]{0,80})\s+(?:folder|directory|dir)(?![A-Za-z])",
                     re.IGNORECASE)
"""A folder named as one (``docker 目录``, ``the docker folder``): its name is searched (paths match it), the word
目录 is not."""
_FOLDER_WORDS = frozenset({"目录", "文件夹", "路径", "folder", "directory", "dir"})
_PRS_NAMED = re.compile(r"pr|合并请求|修复|的修|改动|那几个|这几个|那些|这些|几个|"
                        r"(?<![A-Za-z])(?:fix(?:es)?|changes|patches|ones|those|these)(?![A-Za-z])",

                        re.IGNORECASE)
_EVENT = re.compile(r"(?:发布|发版|上线|封版|冲刺|团建|开会|评审|放假|假期|休假|国庆|春节|迭代|里程碑|演示)"
                    r"(?:前|后|之前|之后|的)?"
                    r"(?:那|的那)(?:一)?(?:周|週|天|阵子|几天)|"
                    r"(?<![A-Za-z])(?:since|before|after|around|during)\s+(?:the|our|my)\s+(?:last\s+|previous\s+|next\s+)?"
                    r"(?:release|offsite|off-site|hackathon|sprint|launch|meeting|demo|retro|freeze|code\s+freeze|"
                    r"deadline|holidays?|vacation|conference|all-hands|milestone|planning)(?![A-Za-z])|"
                    r"(?<![A-Za-z])the\s+(?:sprint|week|release|demo)\s+(?:before|after)\s+the\s+[A-Za-z]+|"
                    r"(?<![A-Za-z])the\s+(?:week|day|sprint)\s+(?:we|they|you|i|our\s+team)\s+[a-z]+(?![A-Za-z])|"
                    r"(?:事故|故障|宕机|出事)(?:那|的那)(?:一)?(?:周|週|天)|"
                    r"(?<![A-Za-z])(?:(?:the|this|our|my)\s+)?(?:last|previous|prior|current|this|past)\s+"
                    r"(?:sprint|iteration|release\s+cycle|milestone)(?![A-Za-z])|"
                    r"(?:上|这|這|本|上一|上个|上個|这个|這個)\s?(?:个|個)?\s?(?:迭代|冲刺|sprint)|"
                    r"(?:上次|那次|上回|之前|前阵子)[^，。,.?？!！]{0,12}?"
                    r"(?:那周|那一周|那天|那次|的时候|那阵子|说的那个|提到的那个|讲的那个)|(?<![A-Za-z])(?:the\s+week\s+(?:of|when|after|before)\s+(?:the|our|my|we)\s+"
                    r"[A-Za-z]+|that\s+week|the\s+day\s+of\s+the\s+[A-Za-z]+)(?![A-Za-z])", re.IGNORECASE)
"""A time or thing known only outside the chat (``上次 oncall 轮换那周``, ``上次开会说的那个``, ``the week of the
hackathon``, ``that week``): asked back, or, in a thread, the thread's window."""
_ASKS_FOR = re.compile(r"发我|发给我|发一下|给我|我要|我想要|想看|看看|看下|看一下|整理|"
                       r"(?<![A-Za-z])(?:send\s+me|give\s+me|show\s+me|pull\s+up|i\s+(?:want|need))(?![A-Za-z])",
                       re.IGNORECASE)
"""A window asked for with a verb of sending or showing and nothing else (``能否把上上周的也一并发我一下``): its
digest."""
_SCOPE = re.compile(r"(?<![A-Za-z0-9_./-])(?P<l>[A-Za-z][A-Za-z0-9_.+-]{1,40})\s?(?:的)?\s?"
                    r"(?:这块|那块|这边|那边|这部分|那部分|部分|方向|板块|模块|领域|方面)|"
                    r"(?<![A-Za-z])(?:the\s+)?(?P<l2>[A-Za-z][A-Za-z0-9_.+-]{1,40})\s+"
                    r"(?:stuff|bits?|side|area|things|part|corner|front|world|land|space)(?![A-Za-z])", re.IGNORECASE)
"""A label named as the scope of a topic: ``npu 这块``, ``fully_async 方向``, ``the sglang stuff`` (``rollout
相关的`` is a search for the word)."""
_DOING = re.compile(r"merg(?:e|es|ed|ing)|ship(?:s|ped|ping)?|land(?:s|ed|ing)?|"
                    r"chang(?:e|es|ed|ing)|fix(?:es|ed|ing)?|touch(?:es|ed|ing)", re.IGNORECASE)
"""What people do to PRs (``who's been merging stuff``): the verb before "stuff", never the scope of a label."""
_WHO_ASKED = re.compile(r"谁|哪些人|哪几位|哪位|(?:几|哪几)个人|哪些同学|(?<![A-Za-z])who(?![A-Za-z])", re.IGNORECASE)
_MOST = re.compile(r"最多|最活跃|最积极|最勤快|排名|排行|排一下|前几|主要|推进|贡献|提的|提交|合的|合并的|合入的|"
                   r"merg(?:e|ed|es|ing)|land(?:ed|ing)|ship(?:ped|ping)|"
                   r"(?<![A-Za-z])(?:most|top|busiest|ranking|ranked|leading|main(?:ly)?|behind|carry(?:ing)?|mvp)(?![A-Za-z])",
                   re.IGNORECASE)
_PEOPLE = re.compile(r"贡献者|作者们|提交者|贡献(?:排行|排名|榜)|排行榜|最多的(?:同学|人|几位|几个人)|"
                     r"(?<![A-Za-z])(?:contributors?|authors|committers|"
                     r"leaderboard)(?![A-Za-z])|"
                     r"按作者|按人|每个人|(?<![A-Za-z])by\s+(?:author|who\s+wrote)", re.IGNORECASE)


def _authors_asked(rest: str, terms: list[str]) -> bool:
    """Whether ``rest`` asks who merged a window's PRs, most first, scored from cue classes: a who word with a
    word of most or of authorship (``那个上周的那个贡献最多的那些人是谁啊``, ``Who are making most PRs``,
    ``主要是谁在推进的``), or the authors named (``top authors march``, ``几位贡献者``, ``按作者排一下``) — and no
    search word of its own beyond labels."""
    who = _WHO_ASKED.search(rest) is not None
    most = _MOST.search(rest) is not None
    people = _PEOPLE.search(rest) is not None
    if not ((who and most) or people):
        return False
    own = [t for t in terms if not _LABEL_LIKE.fullmatch(t) and t.lower() not in _AUTHOR_WORDS]
    return not own


_AUTHORS_WORDS_ZH = ("贡献者", "贡献", "作者", "提交者", "邀请", "分享", "技术", "统计", "出力", "干活", "产出", "人头",
                     "按人", "同学", "同学们", "几位")
_AUTHOR_WORDS = frozenset({"authors", "author", "contributors", "contributor", "top", "most", "making", "committers",
                           "people", *_AUTHORS_WORDS_ZH})
