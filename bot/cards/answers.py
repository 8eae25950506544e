"""The replies to how people ask, as Markdown, Slack Block Kit and Feishu card JSON 2.0.

Pure functions from core values to each platform's shapes (the chat core picks them):

* a comparison (:class:`~bot.digest.compare.Comparison`) — "which to read first" and
  each PR's verdict, reading time, importance and risks side by side
  (:func:`render_comparison_markdown` / ``_slack`` / ``_feishu``);
* an answer to a question about a window (:class:`~bot.digest.ask.Answer`, optionally
  with the model's :class:`~bot.digest.ask.Phrasing`) — the matching PRs with what
  matched, or "none in that window" (:func:`render_answer_markdown` / ``_slack`` / ``_feishu``);
* the help for a message not understood, with the nearest examples
  (:func:`render_nearest_markdown` / ``_slack`` / ``_feishu``);
* an empty window with a button that opens the latest window with merged PRs
  (:func:`render_empty_window_slack` / ``_feishu``);
* the PRs a window merged, most important first, or their authors, most PRs first
  (:func:`render_merged_markdown` / ``_slack`` / ``_feishu``).

``notes`` (every renderer of a window takes them) are lines the core adds above the
content, already in the asker's language and unescaped: the window echo ("I read
上上周 as …", :func:`bot.cards.i18n.window_echo`), the "so far" of a week in progress
(:func:`bot.cards.i18n.so_far_note`).

Limits as the other renderers keep them (``tests/cards/card_checks.py``): Slack
messages of ≤ 50 blocks, sections ≤ 3000 characters, headers ≤ 150, ≤ 10 context
elements, a fallback ``text``; Feishu cards of ``markdown`` / ``hr`` / ``button``
elements under :data:`bot.cards.feishu.CARD_BYTES`. Long answers continue in more
messages or cards. PR text (titles, paths, diff lines, the model's words) is escaped.

Buttons: "分析此 PR" (``prhub_analyze_pr``; Slack value ``repo#number``, Feishu value
``{"action", "repo", "number", "lang"}``) and "查看 2026-W34" (:data:`ACTION_OPEN_WINDOW`;
Slack value ``repo|window``, Feishu ``{"action", "repo", "window", "lang"}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.cards import feishu, slack
from bot.cards._outline import FEISHU, MARKDOWN, SLACK, Markup, pr_number, pr_ref
from bot.cards.actions import ACTION_ANALYZE_PR, ACTION_OPEN_WINDOW
from bot.cards.escape import md_cell, md_line, one_line, split_text
from bot.cards.i18n import (
    answer_phrases,
    ask_phrases,
    level_name,
    minutes_text,
    n_prs,
    phrases,
    status_name,
    window_text,
)
from bot.digest.aggregate import by_importance
from bot.digest.ask import Answer, Evidence, Match, Phrasing
from bot.digest.compare import Comparison
from bot.models import Digest, DigestPR, Language, Window

__all__ = [
    "ACTION_ANALYZE_PR",
    "ACTION_OPEN_WINDOW",
    "render_answer_feishu",
    "render_answer_markdown",
    "render_answer_slack",
    "render_comparison_feishu",
    "render_comparison_markdown",
    "render_comparison_slack",
    "render_empty_window_feishu",
    "render_empty_window_slack",
    "render_merged_feishu",
    "render_merged_markdown",
    "render_merged_slack",
    "render_nearest_feishu",
    "render_nearest_markdown",
    "render_nearest_slack",
]

BUTTONS = 10
"""PRs of one reply that get an "analyze" button."""
TITLE_CHARS = 100
"""Characters of a PR title in a comparison cell."""


# -- shared pieces --------------------------------------------------------------------------------


def _query(answer: Answer) -> str:
    sep = phrases(answer.digest.language).list_sep
    return sep.join(answer.terms)


def _title(text: str, limit: int = slack.HEADER_TEXT) -> str:
    """A plain-text title: one line, at most ``limit`` characters, without ``<``, ``>`` and ``&``
    (the question's words are the asker's: nothing in a header can be read as a mention)."""
    text = one_line(text.translate(_PLAIN)) or "prhub"
    return text if len(text) <= limit else text[: limit - 1] + "…"


_PLAIN = str.maketrans({"<": "‹", ">": "›", "&": "＆"})


def _code(text: str, m: Markup) -> str:
    """A path or diff line as inline code (backticks inside would end the span)."""
    return m.code(text.replace("`", "'"))


def _evidence_line(item: Evidence, language: Language, m: Markup) -> str:
    kind = answer_phrases(language).evidence_kinds[item.kind]
    if item.kind == "diff" and item.path:
        return f"{kind} {_code(item.path, m)}: {_code(item.text, m)}"
    if item.kind in ("path", "diff"):
        return f"{kind}: {_code(item.text, m)}"
    return f"{kind}: {m.text(item.text)}"


def _match_lines(match: Match, language: Language, m: Markup) -> tuple[str, list[str]]:
    """The heading of one match (linked number, title, the words it matched) and its evidence."""
    words = answer_phrases(language)
    sep = phrases(language).list_sep
    head = f"{pr_ref(match.pr, m)} — {m.italic(m.text(words.matched.format(terms=sep.join(match.terms))))}"
    return head, [_evidence_line(e, language, m) for e in match.evidence]


def _context_lines(answer: Answer, notes: Sequence[str], *, chat: bool = False) -> list[str]:
    """Unescaped context lines: the caller's notes, the count, the label filter, common words (in chat only when
    nothing matched, where they say why: beside the PRs found they are a ranking note, kept for the full answer)."""
    lang = answer.digest.language
    words = answer_phrases(lang)
    lines = [note for note in notes if note.strip()]
    if answer.matches:
        lines.append(words.answer_count.format(n_prs=n_prs(answer.total, lang), total=answer.window_prs))
    if answer.label:
        lines.append(words.answer_label.format(label=answer.label))
    for count in answer.counts:
        if count.common and not (chat and answer.matches):
            lines.append(words.answer_common.format(term=count.term, mentions=count.mentions,
                                                    total=answer.window_prs))
    return lines


def _none_text(answer: Answer) -> str | None:
    """Why nothing answers the question (``None`` when something does)."""
    if answer.matches:
        return None
    lang = answer.digest.language
    words = answer_phrases(lang)
    window = window_text(answer.digest.window, lang)
    if len(answer.terms) > 1 and any(c.prs for c in answer.counts):
        sep = phrases(lang).list_sep
        counts = sep.join(words.term_count.format(term=c.term, n_prs=n_prs(c.prs, lang)) for c in answer.counts)
        return words.answer_none_all.format(terms=sep.join(answer.terms), counts=counts)
    if not answer.digest.prs:
        return words.empty_window.format(window=window)
    return words.answer_none.format(window=window, query=_query(answer))


def _claim_lines(phrasing: Phrasing | None, answer: Answer, m: Markup) -> list[str]:
    if phrasing is None or not phrasing.claims:
        return []
    by_number = {pr.number: pr for pr in answer.digest.prs}
    lines = []
    for claim in phrasing.claims:
        refs = " ".join(pr_number(by_number[n], m) for n in claim.prs if n in by_number)
        lines.append(f"{m.text(claim.text)} ({refs})" if refs else m.text(claim.text))
    return lines


def _phrasing_notes(phrasing: Phrasing | None, language: Language) -> list[str]:
    if phrasing is None or not (phrasing.claims or phrasing.dropped):
        return []
    words = answer_phrases(language)
    notes = [words.llm_note] if phrasing.claims else []
    if phrasing.dropped:
        notes.append(words.llm_dropped.format(n=phrasing.dropped))
    return notes


def _more_text(answer: Answer) -> str | None:
    hidden = answer.total - len(answer.matches)
    return answer_phrases(answer.digest.language).answer_more.format(n=hidden) if hidden > 0 else None


def _answer_title(answer: Answer) -> str:
    lang = answer.digest.language
    return answer_phrases(lang).answer_title.format(window=window_text(answer.digest.window, lang),
                                                    query=_query(answer))


# -- questions: Markdown ---------------------------------------------------------------------------

def render_answer_markdown(answer: Answer, *, phrasing: Phrasing | None = None, notes: Sequence[str] = ()) -> str:
    """The answer as Markdown: title, notes, the model's summary (when given), the matches with
    their evidence (or why there are none)."""
    lang = answer.digest.language
    m = MARKDOWN
    out = [f"## {md_line(_answer_title(answer))}", ""]
    context = _context_lines(answer, notes)
    if context:
        out += [*(f"*{md_line(line)}*" for line in context), ""]
    claims = _claim_lines(phrasing, answer, m)
    if claims:
        out += [*(f"- {line}" for line in claims), "", *(f"*{md_line(n)}*" for n in _phrasing_notes(phrasing, lang)),
                ""]
    for index, match in enumerate(answer.matches, 1):
        head, evidence = _match_lines(match, lang, m)
        out.append(f"{index}. {head}")
        out += [f"   - {line}" for line in evidence]
    for line in (_none_text(answer), _more_text(answer)):
        if line:
            out += ["", md_line(line)]
    return "\n".join(out).rstrip() + "\n"


# -- questions: Slack ------------------------------------------------------------------------------


def render_answer_slack(
    answer: Answer, *, phrasing: Phrasing | None = None, notes: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The answer as Slack messages ``{"text", "blocks"}``: post the first, the rest in its thread.

    Each match is a section (linked number and title, the words it matched, the evidence)
    with an "analyze" button for the first :data:`BUTTONS`.
    """
    lang = answer.digest.language
    title = _answer_title(answer)
    head: list[slack.Block] = [slack._header(_title(title))]
    context = [SLACK.text(line) for line in _context_lines(answer, notes, chat=True)]
    if context:
        head.append(slack._context(context))
    blocks: list[slack.Block] = []
    claims = _claim_lines(phrasing, answer, SLACK)
    if claims:
        blocks += slack._sections("\n".join(f"• {line}" for line in claims))
        blocks.append(slack._context([SLACK.text(n) for n in _phrasing_notes(phrasing, lang)]))
    analyze = phrases(lang).analyze_button
    for index, match in enumerate(answer.matches):
        heading, evidence = _match_lines(match, lang, SLACK)
        text = "\n".join([heading, *(f"• {line}" for line in evidence)])
        button = slack._button(analyze, ACTION_ANALYZE_PR, f"{answer.digest.repo}#{match.pr.number}") \
            if index < BUTTONS else None
        blocks += slack._sections(text, accessory=button)
    for line in (_none_text(answer), _more_text(answer)):
        if line:
            blocks += slack._sections(SLACK.text(line))
    parts = slack._pack(blocks, reserved=head)
    fallback = SLACK.text(title)
    return [{"text": fallback, "blocks": [*head, *part]} for part in parts if part or len(parts) == 1]


# -- questions: Feishu -----------------------------------------------------------------------------


def _md(content: str, size: str | None = None) -> feishu.Element:
    element = feishu.Element(tag="markdown", content=content)
    if size is not None:
        element["text_size"] = size  # type: ignore[typeddict-item]
    return element


def _md_elements(content: str) -> list[feishu.Element]:
    return [_md(chunk) for chunk in split_text(content, feishu.ELEMENT_TEXT, atomic=FEISHU.atomic)]


def _feishu_button(text: str, value: dict[str, str], *, primary: bool = False) -> feishu.Element:
    return feishu.Element(tag="button", text=feishu.PlainText(tag="plain_text", content=text),
                          type="primary" if primary else "default",
                          behaviors=[feishu.Behavior(type="callback", value=value)])


def _analyze_value(repo: str, number: int, lang: Language) -> dict[str, str]:
    return {"action": ACTION_ANALYZE_PR, "repo": repo, "number": str(number), "lang": lang}


def _cards(title: str, elements: list[feishu.Element], language: Language) -> list[dict[str, Any]]:
    """``elements`` packed into as many cards as they need; continuation cards say so."""
    parts = feishu._pack(elements, reserved=[])
    parts = [p[1:] if len(p) > 1 and p[0]["tag"] == "hr" else p for p in parts]
    cards = [feishu._card(_title(title), parts[0])]
    for number, part in enumerate(parts[1:], 2):
        label = _title(title) + phrases(language).continued.format(part=number, total=len(parts))
        cards.append(feishu._card(label, part, template="wathet"))
    return feishu._as_dicts(cards)


def render_answer_feishu(
    answer: Answer, *, phrasing: Phrasing | None = None, notes: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The answer as Feishu cards (JSON 2.0): send the first, the rest in the same thread."""
    lang = answer.digest.language
    elements: list[feishu.Element] = []
    context = _context_lines(answer, notes, chat=True)
    if context:
        elements.append(_md("<br>".join(FEISHU.text(line) for line in context), size="notation"))
    claims = _claim_lines(phrasing, answer, FEISHU)
    if claims:
        elements += _md_elements("\n".join(f"- {line}" for line in claims))
        elements.append(_md("<br>".join(FEISHU.text(n) for n in _phrasing_notes(phrasing, lang)), size="notation"))
        elements.append(feishu.Element(tag="hr"))
    analyze = phrases(lang).analyze_button
    for index, match in enumerate(answer.matches):
        heading, evidence = _match_lines(match, lang, FEISHU)
        elements += _md_elements("\n".join([heading, *(f"- {line}" for line in evidence)]))
        if index < BUTTONS:
            elements.append(_feishu_button(analyze, _analyze_value(answer.digest.repo, match.pr.number, lang)))
    for line in (_none_text(answer), _more_text(answer)):
        if line:
            elements.append(_md(FEISHU.text(line)))
    return _cards(_answer_title(answer), elements, lang)


# -- comparisons ----------------------------------------------------------------------------------


def _verdict(pr: DigestPR, language: Language) -> tuple[str, str, str, str]:
    """Verdict, reading time, importance and risks of one PR (unescaped; the risks are ours)."""
    words = phrases(language)
    if pr.analysis is None:
        placeholder = words.pending_placeholder
        return placeholder, "-", "-", "-"
    rec = pr.analysis.recommendation
    risks = words.clause_sep.join(r.title for r in pr.analysis.risks) or words.no_risks
    return (level_name(rec.level, language), minutes_text(rec.minutes, language),
            f"{pr.analysis.importance}/10", risks)


def _short(text: str, limit: int = TITLE_CHARS) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _comparison_title(comparison: Comparison) -> str:
    numbers = [f"#{pr.number}" for pr in comparison.prs] + [f"#{n}" for n in comparison.missing]
    return answer_phrases(comparison.language).compare_title.format(prs=" · ".join(numbers))


def _comparison_notes(comparison: Comparison, m: Markup) -> list[str]:
    """Which to read first, then the others; pending and missing PRs (escaped, marked up)."""
    lang = comparison.language
    words = answer_phrases(lang)
    sep = phrases(lang).list_sep
    lines: list[str] = []
    first = comparison.first
    if first is not None and first.analysis is not None:
        rec = first.analysis.recommendation
        lines.append(m.bold(words.read_first.format(pr=pr_number(first, m), level=level_name(rec.level, lang),
                                                    importance=first.analysis.importance,
                                                    minutes=minutes_text(rec.minutes, lang))))
        others = [pr for pr in comparison.prs if pr is not first and pr.analysis is not None]
        if others:
            lines.append(words.then_read.format(prs=sep.join(pr_number(pr, m) for pr in others)))
    if comparison.pending:
        lines.append(words.compare_pending.format(prs=sep.join(pr_number(pr, m) for pr in comparison.pending)))
    if comparison.missing:
        lines.append(words.compare_missing.format(prs=sep.join(f"#{n}" for n in comparison.missing)))
    return lines


def render_comparison_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown: which to read first, then a table of the PRs side by side."""
    lang = comparison.language
    columns = answer_phrases(lang).compare_columns
    out = [f"## {md_line(_comparison_title(comparison))}", "", *_comparison_notes(comparison, MARKDOWN), ""]
    if comparison.prs:
        out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for pr in comparison.prs:
            cells = [f"{pr_number(pr, MARKDOWN)} {md_cell(_short(pr.title))}",
                     *(md_cell(v) for v in _verdict(pr, lang))]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out).rstrip() + "\n"


def render_comparison_slack(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one Slack message: which to read first, then one section per PR in
    reading order whose fields put verdict, time, importance and risks side by side, each with
    an "analyze" button."""
    lang = comparison.language
    columns = answer_phrases(lang).compare_columns
    blocks: list[slack.Block] = [slack._header(_title(_comparison_title(comparison)))]
    notes = _comparison_notes(comparison, SLACK)
    if notes:
        blocks += slack._sections("\n".join(notes))
    analyze = phrases(lang).analyze_button
    for rank, pr in enumerate(comparison.prs[: slack.MAX_BLOCKS - 5], 1):
        block = slack._sections(f"{rank}. {pr_ref(pr, SLACK)}"[: slack.SECTION_TEXT])[0]
        values = _verdict(pr, lang)
        block["fields"] = [slack._text("mrkdwn", f"*{name}*\n{SLACK.text(value)}"[:2000])  # type: ignore[typeddict-unknown-key]
                           for name, value in zip(columns[1:], values, strict=True)]
        block["accessory"] = slack._button(analyze, ACTION_ANALYZE_PR, f"{comparison.repo}#{pr.number}")
        blocks.append(block)
    fallback = SLACK.text(_comparison_title(comparison))
    return {"text": fallback, "blocks": blocks}


def _feishu_cell(text: str) -> str:
    return FEISHU.text(text).replace("|", "｜")


def render_comparison_feishu(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one Feishu card: which to read first, a Markdown table of the PRs side
    by side (JSON 2.0 markdown renders tables), and an "analyze" button per PR."""
    lang = comparison.language
    columns = answer_phrases(lang).compare_columns
    elements: list[feishu.Element] = []
    notes = _comparison_notes(comparison, FEISHU)
    if notes:
        elements.append(_md("\n".join(notes)))
    if comparison.prs:
        rows = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
        for pr in comparison.prs:
            cells = [f"{pr_number(pr, FEISHU)} {_feishu_cell(_short(pr.title, 60))}",
                     *(_feishu_cell(v) for v in _verdict(pr, lang))]
            rows.append("| " + " | ".join(cells) + " |")
        elements += _md_elements("\n".join(rows))
    analyze = phrases(lang).analyze_button
    for pr in comparison.prs[:BUTTONS]:
        elements.append(_feishu_button(f"{analyze} #{pr.number}", _analyze_value(comparison.repo, pr.number, lang)))
    return feishu._as_dicts([feishu._card(_title(_comparison_title(comparison)), elements or [_md("…")])])[0]


# -- the help, nearest examples --------------------------------------------------------------------


def render_nearest_markdown(examples: Sequence[str], language: Language) -> str:
    """"I didn't understand that. Did you mean:" and the examples."""
    words = answer_phrases(language)
    lines = [words.nearest_title, *(f"- {MARKDOWN.code(e)}" for e in examples), "", words.nearest_more]
    return "\n".join(lines) + "\n"


def render_nearest_slack(examples: Sequence[str], language: Language) -> dict[str, Any]:
    """The help for a message not understood: the nearest examples, then how to see everything."""
    words = answer_phrases(language)
    text = "\n".join([SLACK.bold(words.nearest_title), *(f"• {SLACK.code(e)}" for e in examples)])
    return {"text": words.nearest_title,
            "blocks": [*slack._sections(text), slack._context([SLACK.text(words.nearest_more)])]}


def render_nearest_feishu(examples: Sequence[str], language: Language) -> dict[str, Any]:
    """The same as one Feishu card."""
    words = answer_phrases(language)
    body = "\n".join(f"- {FEISHU.code(e)}" for e in examples)
    elements = [_md(body), _md(FEISHU.text(words.nearest_more), size="notation")]
    return feishu._as_dicts([feishu._card(words.nearest_title, elements)])[0]


# -- an empty window -------------------------------------------------------------------------------


def render_empty_window_slack(
    window: Window, *, repo: str, language: Language, latest: Window | None, notes: Sequence[str] = (),
) -> dict[str, Any]:
    """"2026-W30 没有合并的 PR。" with the latest window that has merged PRs and a button that
    opens it (``notes``: the lines to show, e.g. :func:`bot.cards.i18n.latest_window_note`)."""
    words = answer_phrases(language)
    lines = [words.empty_window.format(window=window_text(window, language)), *notes]
    if latest is None and not notes:
        lines.append(words.no_merges.format(repo=repo))
    blocks = slack._sections("\n".join(SLACK.text(line) for line in lines))
    if latest is not None:
        button = slack._button(_title(words.open_window.format(window=latest.name), slack.BUTTON_TEXT),
                               ACTION_OPEN_WINDOW, f"{repo}|{latest.name}", primary=True)
        blocks.append(slack.Block(type="actions", elements=[button]))
    return {"text": SLACK.text(lines[0]), "blocks": blocks}


def render_empty_window_feishu(
    window: Window, *, repo: str, language: Language, latest: Window | None, notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The same as one Feishu card."""
    words = answer_phrases(language)
    title = words.empty_window.format(window=window_text(window, language))
    lines = [*notes] or ([] if latest is not None else [words.no_merges.format(repo=repo)])
    elements = [_md("<br>".join(FEISHU.text(line) for line in lines) or FEISHU.text(title))]
    if latest is not None:
        value = {"action": ACTION_OPEN_WINDOW, "repo": repo, "window": latest.name, "lang": language}
        elements.append(_feishu_button(words.open_window.format(window=latest.name), value, primary=True))
    return feishu._as_dicts([feishu._card(_title(title), elements)])[0]


# -- a window's merged PRs, or their authors -------------------------------------------------------

MERGED_LINES = 200
"""PRs (or authors) one list shows; the rest are counted."""
AUTHOR_PRS = 8
"""PR numbers shown per author."""


def _merged_title(digest: Digest, focus: str) -> str:
    words = ask_phrases(digest.language)
    template = words.authors_title if focus == "authors" else words.merged_title
    return template.format(window=window_text(digest.window, digest.language))


def _merged_context(digest: Digest, focus: str, notes: Sequence[str]) -> list[str]:
    lang = digest.language
    words = ask_phrases(lang)
    lines = [note for note in notes if note.strip()]
    if focus == "authors":
        people = len({pr.author for pr in digest.prs})
        lines.append(words.authors_count.format(people=people, n_prs=n_prs(len(digest.prs), lang)))
    else:
        lines.append(words.merged_count.format(n_prs=n_prs(len(digest.prs), lang), key=len(digest.key_prs)))
    return lines


def _authors(digest: Digest) -> list[tuple[str, list[DigestPR]]]:
    """Authors, most PRs first (ties: the most important PR first, then the name), each with their PRs."""
    by_author: dict[str, list[DigestPR]] = {}
    for pr in by_importance(digest.prs):
        by_author.setdefault(pr.author or "?", []).append(pr)
    order = {pr.number: i for i, pr in enumerate(by_importance(digest.prs))}
    return sorted(by_author.items(), key=lambda kv: (-len(kv[1]), order[kv[1][0].number], kv[0].lower()))


def _merged_lines(digest: Digest, focus: str, m: Markup) -> tuple[list[str], int]:
    """One line per PR (or author), and how many were left out."""
    lang = digest.language
    sep = phrases(lang).list_sep
    if focus == "authors":
        groups = _authors(digest)
        lines = []
        for author, prs in groups[:MERGED_LINES]:
            refs = sep.join(pr_number(pr, m) for pr in prs[:AUTHOR_PRS]) + ("…" if len(prs) > AUTHOR_PRS else "")
            lines.append(ask_phrases(lang).author_line.format(author=m.text(author), n_prs=n_prs(len(prs), lang),
                                                              prs=refs))
        return lines, max(0, len(groups) - MERGED_LINES)
    ordered = by_importance(digest.prs)
    lines = []
    for pr in ordered[:MERGED_LINES]:
        advice = level_name(pr.analysis.recommendation.level, lang) if pr.analysis else status_name("pending", lang)
        lines.append(f"{pr_number(pr, m)} {m.text(_short(pr.title))} — {m.italic(m.text(advice))} · "
                     f"{m.text(pr.author)}")
    return lines, max(0, len(ordered) - MERGED_LINES)


def render_merged_markdown(digest: Digest, focus: str = "list", *, notes: Sequence[str] = ()) -> str:
    """The window's merged PRs (``focus="list"``) or their authors (``"authors"``) as Markdown."""
    m = MARKDOWN
    out = [f"## {md_line(_merged_title(digest, focus))}", "",
           *(f"*{md_line(line)}*" for line in _merged_context(digest, focus, notes)), ""]
    lines, hidden = _merged_lines(digest, focus, m)
    out += [f"- {line}" for line in lines]
    if hidden:
        out += ["", md_line(ask_phrases(digest.language).more_prs.format(n=hidden))]
    return "\n".join(out).rstrip() + "\n"


def render_merged_slack(digest: Digest, focus: str = "list", *,
                        notes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The same as Slack messages: post the first, the rest (a long list) in its thread."""
    title = _merged_title(digest, focus)
    head: list[slack.Block] = [slack._header(_title(title)),
                               slack._context([SLACK.text(line) for line in _merged_context(digest, focus, notes)])]
    lines, hidden = _merged_lines(digest, focus, SLACK)
    blocks = slack._sections("\n".join(f"• {line}" for line in lines))
    if hidden:
        blocks += slack._sections(SLACK.text(ask_phrases(digest.language).more_prs.format(n=hidden)))
    parts = slack._pack(blocks, reserved=head)
    return [{"text": SLACK.text(title), "blocks": [*head, *part]} for part in parts if part or len(parts) == 1]


def render_merged_feishu(digest: Digest, focus: str = "list", *,
                         notes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The same as Feishu cards (JSON 2.0)."""
    context = _merged_context(digest, focus, notes)
    elements: list[feishu.Element] = [_md("<br>".join(FEISHU.text(line) for line in context), size="notation")]
    lines, hidden = _merged_lines(digest, focus, FEISHU)
    elements += _md_elements("\n".join(f"- {line}" for line in lines))
    if hidden:
        elements.append(_md(FEISHU.text(ask_phrases(digest.language).more_prs.format(n=hidden))))
    return _cards(_merged_title(digest, focus), elements, digest.language)
