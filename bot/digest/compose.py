"""Sentences composed from what a PR's diff shows, in the digest's language: the words of highlights, key changes,
the PR's summary and the follow-up advice when no model writes them (and wherever a model's reply falls short).

A PR's sentence has three parts (:class:`Composed`):

- **what**: the kind of change and the component, then the title's subject in quotes (a title is the author's
  words, kept as written): ``trainer 新功能「flowgrpo trainer」`` / ``trainer feature "flowgrpo trainer"``;
- **detail**: the names the diff shows (:class:`bot.models.ChangeFact` and the risks' evidence) — removed, added,
  moved, defaults changed, a raise where it fell back, a dependency pinned, the PR reverted; identifiers and paths in
  backticks; without any, the file to start reading at;
- **why**: why it matters, from the most telling fact or risk (who is affected), else from the kind of change.

Nothing is copied from the PR's description. The words are :data:`TEXTS` in Chinese and English.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.digest.description import shorten
from bot.digest.labels import OTHER, TITLE_TAIL, subject
from bot.models import Analysis, ChangeFact, DigestPR, Language, Risk

__all__ = ["TEXTS", "ComposeTexts", "Composed", "advice", "component", "compose", "pr_sentence", "summary"]

MAX_DETAILS = 2
"""Clauses of detail in one sentence."""
MAX_NAMES = 3
"""Names listed in one clause."""
SUBJECT_CHARS = 60
SWEEP_FILES = 20
"""A PR changing more files than this is said to (a sweep, a rename, a migration)."""


@dataclass(frozen=True)
class ComposeTexts:
    """The words of composed sentences in one language (``str.format`` fields named in each)."""

    what: str
    """``{component}``, ``{kind}``, ``{subject}``."""
    what_bare: str
    """``{kind}``, ``{subject}`` (no component)."""
    release: str
    """``{subject}`` of a release."""
    kinds: dict[str, str]
    sentence: str
    """``{number}``, ``{what}``, ``{detail}``, ``{why}``."""
    sentence_no_why: str
    summary: str
    """The PR's own summary: ``{what}``, ``{detail}``, ``{why}``."""
    clause_sep: str
    name_sep: str
    more: str
    """After the names shown: ``{n}`` names in all, ``{rest}`` not shown."""
    facts: dict[str, str]
    """Per fact kind, ``{names}`` (and ``{n}``: how many)."""
    dependency: dict[str, str]
    """Per dependency risk kind, ``{evidence}``."""
    reverts: str
    start_at: str
    """``{path}``: where to start reading, when no other fact is known."""
    sweep: str
    """``{n}`` files, ``{path}`` the first to read: a PR over :data:`SWEEP_FILES` files without other facts."""
    why_facts: dict[str, str]
    why_risks: dict[str, str]
    why_kinds: dict[str, str]
    """Per change type; ``{component}`` may be used."""
    why_kinds_bare: dict[str, str]
    advice: dict[str, str]
    """Per fact or risk kind, ``{number}``, ``{fact}``: one follow-up."""


TEXTS: dict[Language, ComposeTexts] = {
    "zh": ComposeTexts(
        what="{component} {kind}「{subject}」",
        what_bare="{kind}「{subject}」",
        release="发布 {subject}",
        kinds={"feat": "新功能", "fix": "修复", "refactor": "重构", "perf": "性能优化", "doc": "文档", "ci": "CI 调整",
               "chore": "维护", "test": "测试", "revert": "回滚"},
        sentence="#{number} {what}：{detail}——{why}。",
        sentence_no_why="#{number} {what}：{detail}。",
        summary="{what}：{detail}。{why}。",
        clause_sep="；",
        name_sep="、",
        more=" 等 {n} 个",
        facts={
            "deprecated_removal": "移除已弃用的 {names}",
            "removed": "移除或改名了 {names}",
            "removed_file": "删除源码文件 {names}",
            "required": "给 {names} 加了必填参数",
            "default": "改了 {names} 的默认值",
            "raises": "原来兜底处理的地方改为抛出 {names}",
            "deprecated": "弃用 {names}",
            "numerics": "改动了 {names} 的计算",
            "cache": "新增以对象为键的缓存 {names}",
            "added": "新增 {names}",
            "renamed": "移动了 {names}",
            "tests": "附带 {n} 个测试文件",
            "tests_one": "附带 1 个测试文件",
        },
        dependency={
            "dependency_pin": "锁定依赖 {evidence}",
            "dependency_range": "改了依赖版本范围 {evidence}",
            "dependency_upgrade": "升级依赖 {evidence}",
            "version_bump": "版本号改为 {evidence}",
            "ci_action_bump": "CI Action 换了版本 {evidence}",
        },
        reverts="回滚 #{number}",
        start_at="主要改动在 {path}",
        sweep="改动 {n} 个文件，最多的是 {path}",
        why_facts={
            "deprecated_removal": "仍在使用它的调用方会失效",
            "removed": "仍在使用这些名称的调用方和配置会失效",
            "removed_one": "仍在使用它的调用方和配置会失效",
            "removed_file": "从这些文件导入的代码会失效",
            "required": "所有调用方都需要传这个参数",
            "default": "沿用默认值的配置行为会变",
            "raises": "依赖原兜底行为的用户需要处理这个异常",
            "deprecated": "使用方需要迁移，之后的版本会删除它",
            "numerics": "训练或计算结果可能与之前不同",
            "cache": "可能泄漏内存或命中过期结果",
        },
        why_risks={
            "breaking_change": "不兼容变更，升级需要迁移",
            "revert": "被回滚的改动不再生效",
            "dependency_pin": "这是临时锁定，问题解决后需要去掉",
            "dependency_range": "部署环境需要符合新的版本范围",
            "dependency_upgrade": "部署环境需要对应版本的依赖",
            "version_bump": "使用者可以升级到这个版本",
            "core_path_change": "改在核心文件上，回归会影响多数用户",
            "missing_tests": "源码改动没有附带测试，回归风险需要人工确认",
            "large_change": "改动面大，需要分模块审阅",
        },
        why_kinds={
            "feat": "用到 {component} 的用户可以按需采用", "fix": "用到 {component} 的用户会受影响",
            "perf": "影响 {component} 的速度或资源占用", "refactor": "行为应当不变，{component} 的调用方一般无需改动",
            "doc": "只影响文档", "ci": "只影响 CI，不影响用户", "test": "只影响测试",
            "chore": "维护性改动，用到这些脚本、镜像或配置的用户需要留意", "revert": "被回滚的改动不再生效",
        },
        why_kinds_bare={
            "feat": "用户可以按需采用的新能力", "fix": "用到这部分的用户会受影响", "perf": "影响速度或资源占用",
            "refactor": "行为应当不变，调用方一般无需改动", "doc": "只影响文档", "ci": "只影响 CI，不影响用户",
            "test": "只影响测试", "chore": "维护性改动，用到这些脚本、镜像或配置的用户需要留意",
            "revert": "被回滚的改动不再生效",
        },
        advice={
            "deprecated_removal": "#{number} 移除了已弃用的 {fact}：确认弃用期已过，在发布说明里列出，"
                                  "并检查还在用它的调用方。",
            "removed": "#{number} 移除或改名了 {fact}：检查调用方和示例配置，在发布说明里写明替代方式。",
            "removed_file": "#{number} 删除了 {fact}：检查从它导入的代码。",
            "required": "#{number} 给 {fact} 加了必填参数：更新所有调用方。",
            "default": "#{number} 改了 {fact} 的默认值：在发布说明里告知使用者。",
            "raises": "#{number} 原来兜底处理的地方改为抛出 {fact}：告知依赖旧行为的用户。",
            "deprecated": "#{number} 弃用了 {fact}：在发布说明里写明替代方式和删除版本。",
            "numerics": "#{number} 改动了 {fact} 的计算：用固定随机种子对比改动前后的 loss 或指标。",
            "cache": "#{number} 新增以对象为键的缓存 {fact}：确认缓存何时清理。",
            "dependency_pin": "#{number} 锁定了 {fact}：问题解决后去掉锁定。",
            "dependency_range": "#{number} 改了版本范围 {fact}：确认新范围的两端都测过。",
            "revert": "#{number} 回滚了 {fact}：确认被回滚的改动何时、以何种方式重新合入。",
            "breaking_change": "#{number} 声明了不兼容变更：在发布说明里写明迁移方式。",
            "missing_tests": "#{number} 改了核心文件 {fact} 却没有附带测试：补一个覆盖它的测试。",
        },
    ),
    "en": ComposeTexts(
        what="{component} {kind} “{subject}”",
        what_bare="{kind} “{subject}”",
        release="release {subject}",
        kinds={"feat": "feature", "fix": "fix", "refactor": "refactor", "perf": "performance", "doc": "docs",
               "ci": "CI change", "chore": "chore", "test": "tests", "revert": "revert"},
        sentence="#{number} {what}: {detail} — {why}.",
        sentence_no_why="#{number} {what}: {detail}.",
        summary="{what}: {detail}. {why}.",
        clause_sep="; ",
        name_sep=", ",
        more=" and {rest} more",
        facts={
            "deprecated_removal": "removes the deprecated {names}",
            "removed": "removes or renames {names}",
            "removed_file": "deletes the source file {names}",
            "required": "adds a required parameter to {names}",
            "default": "changes the default of {names}",
            "raises": "raises {names} where it used to fall back",
            "deprecated": "deprecates {names}",
            "numerics": "changes how {names} is computed",
            "numerics_many": "changes how {names} are computed",
            "cache": "adds a cache keyed on live objects, {names}",
            "added": "adds {names}",
            "renamed": "moves {names}",
            "tests": "with {n} test files",
            "tests_one": "with a test file",
        },
        dependency={
            "dependency_pin": "pins {evidence}",
            "dependency_range": "changes the version range {evidence}",
            "dependency_upgrade": "upgrades {evidence}",
            "version_bump": "sets the version to {evidence}",
            "ci_action_bump": "moves a CI action to {evidence}",
        },
        reverts="reverts #{number}",
        start_at="mostly in {path}",
        sweep="changes {n} files, most in {path}",
        why_facts={
            "deprecated_removal": "callers still using it break",
            "removed": "callers and configs still using these names break",
            "removed_one": "callers and configs still using it break",
            "removed_file": "code importing these files breaks",
            "required": "every caller must now pass the parameter",
            "default": "configs relying on the old default behave differently",
            "raises": "users relying on the fallback must now handle the error",
            "deprecated": "users need to migrate before a later release removes it",
            "numerics": "training or computed results may differ from before",
            "cache": "it may leak memory or return stale results",
        },
        why_risks={
            "breaking_change": "an incompatible change: upgrading needs a migration",
            "revert": "the reverted change no longer applies",
            "dependency_pin": "a temporary pin that needs removing once the cause is fixed",
            "dependency_range": "environments must satisfy the new range",
            "dependency_upgrade": "environments need the matching dependency versions",
            "version_bump": "users can upgrade to this version",
            "core_path_change": "it touches a core file, so a regression would affect most users",
            "missing_tests": "no test covers the source change, so a regression needs checking by hand",
            "large_change": "a large change that needs review module by module",
        },
        why_kinds={
            "feat": "users of {component} can adopt it", "fix": "users of {component} are affected",
            "perf": "affects the speed or memory of {component}",
            "refactor": "behaviour should not change; callers of {component} need no change",
            "doc": "affects the docs only", "ci": "affects CI only, not users", "test": "affects tests only",
            "chore": "maintenance; users of these scripts, images or configs should take note",
            "revert": "the reverted change no longer applies",
        },
        why_kinds_bare={
            "feat": "a new capability users can adopt", "fix": "users of this part are affected",
            "perf": "affects speed or memory", "refactor": "behaviour should not change; callers need no change",
            "doc": "affects the docs only", "ci": "affects CI only, not users", "test": "affects tests only",
            "chore": "maintenance; users of these scripts, images or configs should take note",
            "revert": "the reverted change no longer applies",
        },
        advice={
            "deprecated_removal": "#{number} removes the deprecated {fact}: confirm the deprecation period is over, "
                                  "list it in the release notes and check callers still using it.",
            "removed": "#{number} removes or renames {fact}: check callers and example configs, and state the "
                       "replacement in the release notes.",
            "removed_file": "#{number} deletes {fact}: check code importing it.",
            "required": "#{number} adds a required parameter to {fact}: update every caller.",
            "default": "#{number} changes the default of {fact}: announce it in the release notes.",
            "raises": "#{number} now raises {fact} where it fell back: tell users relying on the old path.",
            "deprecated": "#{number} deprecates {fact}: state the replacement and the removal version.",
            "numerics": "#{number} changes how {fact} is computed: compare losses or metrics before and after "
                        "with a fixed seed.",
            "cache": "#{number} adds a cache keyed on live objects, {fact}: check when it is cleared.",
            "dependency_pin": "#{number} pins {fact}: remove the pin once the cause is fixed.",
            "dependency_range": "#{number} changes the range {fact}: check both ends are tested.",
            "revert": "#{number} reverts {fact}: decide when and how the reverted work comes back.",
            "breaking_change": "#{number} declares an incompatible change: document the migration in the release "
                               "notes.",
            "missing_tests": "#{number} changes the core file {fact} without tests: add one that covers it.",
        },
    ),
}

FACT_ORDER = ("deprecated_removal", "removed", "removed_file", "required", "default", "raises", "deprecated",
              "numerics", "cache", "added", "renamed")
"""Which facts a sentence tells first: what breaks callers, then what changes behaviour, then what is new."""
WHY_ORDER = ("breaking_change", "deprecated_removal", "removed", "removed_file", "required", "raises", "default",
             "deprecated", "revert", "numerics", "cache", "dependency_pin", "dependency_range", "dependency_upgrade",
             "version_bump", "missing_tests", "core_path_change", "large_change")
_DEPENDENCY_KINDS = ("dependency_pin", "dependency_range", "dependency_upgrade", "version_bump")
_DIGIT = re.compile(r"\d")
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)?[\w.+-]*")
_PATH_FOCUS = re.compile(r"^[\w.@+-]+(?:/[\w.@+-]+)*\.\w+$|^[\w.@+-]+(?:/[\w.@+-]+)+$")


@dataclass(frozen=True)
class Composed:
    """The three parts of a PR's sentence (see the module docstring); ``why_kind`` the fact or risk kind ``why``
    comes from (``""``: from the change type)."""

    what: str
    detail: str
    why: str
    why_kind: str = ""


def _code(name: str) -> str:
    name = name.strip().strip("`")
    return f"`{name}`" if name else ""


def _names(items: Sequence[str], t: ComposeTexts) -> str:
    unique = [x for x in dict.fromkeys(items) if x]
    text = t.name_sep.join(_code(x) for x in unique[:MAX_NAMES])
    if len(unique) > MAX_NAMES:
        text += t.more.format(n=len(unique), rest=len(unique) - MAX_NAMES)
    return text


NOT_COMPONENTS = frozenset({OTHER, "perf", "performance", "fix", "bugfix", "feat", "feature", "refactor", "chore",
                            "breaking", "test", "doc", "release", "deps", "build"})
"""Labels that say the kind of a change, not the part of the project it is in."""


def component(labels: Sequence[str], files: Sequence[str] = ()) -> str:
    """The component a PR is about: its first label that names a part of the project (not
    :data:`NOT_COMPONENTS`), else the folder most of its files are in (its last two parts), else its first label
    that is not ``other``, else ``""``."""
    for label in labels:
        if label not in NOT_COMPONENTS:
            return label
    folders = [str(PurePosixPath(p).parent) for p in files if "/" in p]
    if folders:
        top = max(dict.fromkeys(folders), key=folders.count)
        return "/".join(top.split("/")[-2:])
    return next((label for label in labels if label != OTHER), "")


def _subject(title: str) -> str:
    return shorten(TITLE_TAIL.sub("", subject(title)).strip().rstrip("."), SUBJECT_CHARS).replace("「", "“") \
        .replace("」", "”")


def _fact_names(facts: Sequence[ChangeFact], kind: str) -> list[str]:
    if kind == "removed":
        return [f.name for f in facts if f.kind == "removed" and f.name]
    if kind == "removed_file":
        return [f.path for f in facts if f.kind == "removed" and not f.name]
    if kind == "renamed":
        return [f"{f.name} → {f.path}" if f.name else f.path for f in facts if f.kind == "renamed"]
    if kind == "required":
        return [f.name.split("(")[0] for f in facts if f.kind == "required"]
    if kind == "added":
        return [f.path for f in facts if f.kind == "added"]
    return [f.name for f in facts if f.kind == kind and f.name]


def _evidence_tail(text: str) -> str:
    """``path: name a -> b`` → ``name a -> b``: the part a reader needs."""
    return text.split(": ", 1)[1] if ": " in text else text


def compose(title: str, analysis: Analysis, language: Language, *, labels: Sequence[str] = (),
            files: Sequence[str] = (), release: bool = False) -> Composed:
    """The parts of the sentence about one PR (see the module docstring).

    Args:
        title: the PR's title (its subject is quoted).
        analysis: its analysis (change type, risks, ``facts``, recommendation focus).
        language: ``zh`` or ``en``.
        labels: its labels (the first that is not ``other`` is the component).
        files: its changed paths (the component when no label names one).
        release: the PR releases the repository (what reads "发布 0.20.0").
    """
    t = TEXTS[language]
    facts = analysis.facts
    risks = {r.kind: r for r in analysis.risks}
    where = component(labels, files)
    subject_text = _subject(title)
    if release:
        version = _VERSION.search(subject_text)
        what = t.release.format(subject=_code(version.group(0)) if version else f"「{subject_text}」"
                                if language == "zh" else f"“{subject_text}”")
    elif where:
        what = t.what.format(component=where, kind=t.kinds.get(analysis.change_type, ""), subject=subject_text)
    else:
        what = t.what_bare.format(kind=t.kinds.get(analysis.change_type, ""), subject=subject_text)
    clauses: list[str] = []
    present: list[str] = []
    if analysis.reverts is not None:
        clauses.append(t.reverts.format(number=analysis.reverts))
    single: set[str] = set()  # kinds with one name: "it", "is", not "these names", "are"
    for kind in FACT_ORDER:
        names = _fact_names(facts, kind)
        if names:
            present.append(kind)
            if len(set(names)) == 1:
                single.add(kind)
            if len(clauses) < MAX_DETAILS:
                said = t.facts.get(f"{kind}_many", t.facts[kind]) if len(set(names)) > 1 else t.facts[kind]
                clauses.append(said.format(names=_names(names, t), n=len(names)))
    for kind in _DEPENDENCY_KINDS:
        risk = risks.get(kind)
        shown = [_evidence_tail(e) for e in risk.evidence if e != title and _DIGIT.search(e)] if risk else []
        if shown and len(clauses) < MAX_DETAILS:
            clauses.append(t.dependency[kind].format(evidence=_names(shown, t)))
    if not clauses:
        start = next((f for f in analysis.recommendation.focus if _PATH_FOCUS.match(f)), "")
        if start:
            many = len(files) > SWEEP_FILES
            clauses.append((t.sweep if many else t.start_at).format(path=_code(start), n=len(files)))
    tests = next((f for f in facts if f.kind == "tests"), None)
    if tests is not None and clauses and len(clauses) < MAX_DETAILS + 1:
        clauses.append(t.facts["tests_one" if tests.name == "1" else "tests"].format(n=tests.name, names=""))
    why, why_kind = "", ""
    for kind in WHY_ORDER:
        if kind in present and kind in t.why_facts:
            one = t.why_facts.get(f"{kind}_one") if kind in single else None
            why, why_kind = one or t.why_facts[kind], kind
            break
        if kind in risks and kind in t.why_risks and not (kind == "missing_tests" and "core_path_change" not in risks):
            why, why_kind = t.why_risks[kind], kind
            break
    if not why:
        kind = analysis.change_type
        why = t.why_kinds[kind].format(component=where) if where else t.why_kinds_bare.get(kind, "")
    return Composed(what=what, detail=t.clause_sep.join(clauses), why=why, why_kind=why_kind)


def pr_sentence(pr: DigestPR, language: Language, files: Sequence[str] = (), *, release: bool = False) -> str:
    """``#N what：detail——why。`` for a highlight or a key change; ``""`` when ``pr`` has no analysis yet."""
    if pr.analysis is None:
        return ""
    t = TEXTS[language]
    c = compose(pr.title, pr.analysis, language, labels=pr.labels, files=files, release=release)
    if not c.detail:
        return f"#{pr.number} {c.what}——{c.why}。" if language == "zh" else f"#{pr.number} {c.what} — {c.why}."
    template = t.sentence if c.why else t.sentence_no_why
    return template.format(number=pr.number, what=c.what, detail=c.detail, why=c.why)


def summary(title: str, analysis: Analysis, language: Language, files: Sequence[str] = (),
            labels: Sequence[str] = ()) -> str:
    """What a PR does in one or two sentences (the heuristic analysis's ``summary``), composed like
    :func:`pr_sentence` without the number."""
    t = TEXTS[language]
    c = compose(title, analysis, language, labels=labels, files=files)
    if not c.detail:
        return f"{c.what}。{c.why}。" if language == "zh" else f"{c.what}. {c.why[:1].upper()}{c.why[1:]}."
    why = c.why if language == "zh" else c.why[:1].upper() + c.why[1:]
    return t.summary.format(what=c.what, detail=c.detail, why=why)


def advice(pr: DigestPR, kind: str, language: Language) -> str:
    """One follow-up tied to a fact of ``pr``: the PR, the fact of ``kind`` (a fact kind or a risk kind) and the
    action; ``""`` when ``pr`` shows no such fact (no advice without one)."""
    analysis = pr.analysis
    if analysis is None:
        return ""
    t = TEXTS[language]
    risks: dict[str, Risk] = {r.kind: r for r in analysis.risks}
    fact = ""
    if kind in ("deprecated_removal", "removed", "removed_file", "required", "default", "raises", "deprecated",
                "numerics", "cache"):
        names = _fact_names(analysis.facts, kind)
        fact = _names(names, t) if names else ""
    elif kind in ("dependency_pin", "dependency_range") and kind in risks:
        fact = _names([_evidence_tail(e) for e in risks[kind].evidence if e != pr.title and _DIGIT.search(e)], t)
    elif kind == "revert" and analysis.reverts is not None:
        fact = f"#{analysis.reverts}"
    elif kind == "breaking_change" and kind in risks:
        fact = "-"
    elif kind == "missing_tests" and "missing_tests" in risks and "core_path_change" in risks:
        fact = _names(list(risks["core_path_change"].evidence), t)
    if not fact or kind not in t.advice:
        return ""
    return t.advice[kind].format(number=pr.number, fact=fact)
