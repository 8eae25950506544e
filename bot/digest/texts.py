"""The words the heuristic analyzer and the digest narrative write, in Chinese and English.

Templates use ``str.format`` fields; numbers passed in are always computed ones.
Section titles of the rendered report live with the renderers (``bot/cards/i18n.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Language


@dataclass(frozen=True)
class AnalysisTexts:
    """Per-PR texts of the heuristic analyzer."""

    breaking_title: str
    breaking_detail: str
    revert_title: str
    revert_detail: str
    core_title: str
    core_detail: str
    """``{n}`` core files (``{s}``: the English plural's "s", empty for one)."""
    tests_title: str
    tests_detail: str
    contract_title: str
    contract_detail: str
    """``{n}`` files (``{s}``: the English plural's "s"), of the removed or renamed names, defaults and parameters."""
    dependency_title: str
    dependency_detail: str
    large_title: str
    large_detail: str
    dependency_kinds: dict[str, tuple[str, str]]  # risk kind -> (title, detail with {evidence})
    meaning_kinds: dict[str, tuple[str, str]]  # risk kind read from what changed lines mean -> (title, detail)
    reason_importance: str
    reason_sep: str
    reason_mechanical: str
    summary_from_title: str
    point_scope: str
    point_added: str
    point_removed: str
    point_added_one: str
    point_removed_one: str
    point_tests: str
    point_no_tests: str
    root_dir: str = ""
    """How the repository's top folder is named in running text (not ``/``)."""


ANALYSIS: dict[Language, AnalysisTexts] = {
    "zh": AnalysisTexts(
        breaking_title="破坏性变更",
        breaking_detail="标题或描述声明了不兼容变更，升级前需检查调用方与配置。",
        revert_title="回滚",
        revert_detail="回滚了 {target}，需确认被回滚功能的后续计划。",
        core_title="核心路径变更",
        core_detail="修改了 {n} 个核心文件（配置的核心路径，或仓库近期历史中改动最多的源码），回归的影响面大。",
        tests_title="缺少测试覆盖",
        tests_detail="修改了 {lines} 行源码，但没有改动任何测试文件。",
        contract_title="配置/接口契约变更",
        contract_detail="{n} 个文件删除或改名了公开的名称、字段或参数，给公开函数加了必填参数，或改了默认值："
                        "已有配置和调用方可能失效。",
        dependency_title="依赖升级",
        dependency_detail="依赖版本或清单有变化，需关注兼容性与环境一致性。",
        large_title="大规模变更",
        large_detail="涉及 {files} 个文件、{lines} 行可审阅改动，建议分模块审阅。",
        dependency_kinds={
            "dependency_range": ("依赖版本范围变化", "放宽、收紧了版本约束，或让代码按依赖版本分支：{evidence}。"),
            "dependency_pin": ("临时锁定依赖版本", "锁定了版本或加了上限：{evidence}；问题解决后记得去掉。"),
            "ci_action_bump": ("CI Action 版本升级", "CI 用的 Action 换了版本：{evidence}。"),
            "version_bump": ("发布版本号", "仓库自身的版本号改为发布版本：{evidence}。"),
            "dev_version_bump": ("开发版本号", "仓库自身的版本号改为开发版本（不是发布）：{evidence}。"),
        },
        meaning_kinds={
            "deprecation": ("新增弃用", "弃用了 {evidence}：使用方需要迁移，之后的版本会删除它。"),
            "deprecated_removal": ("删除已弃用的内容", "删除了此前已弃用的 {evidence}：还在使用它的调用方会失效。"),
            "behavior_change": ("兜底处理改为报错", "原来告警、返回或退出的路径现在抛出异常：{evidence}。"),
            "numerics_change": ("计算结果可能变化",
                                "改动的代码行涉及数值计算（loss、缩放、归一化、dtype、随机种子、学习率等）："
                                "{evidence}；结果可能与之前不同。"),
            "object_cache": ("以存活对象为键的缓存",
                             "缓存以模块、张量或其 data_ptr()/id() 为键：对象无法释放，或内存复用后命中过期结果："
                             "{evidence}。"),
        },
        reason_importance="重要性 {importance}/10，洞察度 {insight}/10",
        reason_sep="；",
        reason_mechanical="多数文件是逐行替换（批量改名或替换），浏览即可",
        summary_from_title="{subject}。共修改 {files} 个文件（+{additions}/-{deletions}），主要位于 {where}。",
        point_scope="改动 {files} 个文件（+{additions}/-{deletions}），集中在 {where}",
        point_added="新增 {first} 等 {n} 个源码文件",
        point_removed="删除 {first} 等 {n} 个文件",
        point_added_one="新增源码文件 {first}",
        point_removed_one="删除文件 {first}",
        point_tests="附带 {n} 个测试文件改动",
        point_no_tests="未改动测试",
        root_dir="仓库根目录",
    ),
    "en": AnalysisTexts(
        breaking_title="Breaking change",
        breaking_detail="The title or description declares an incompatible change; check callers and configs.",
        revert_title="Revert",
        revert_detail="Reverts {target}; confirm what happens to the reverted work.",
        core_title="Core path change",
        core_detail="Touches {n} core file{s} (configured core paths, or the source the repository's recent history "
                    "changes most); a regression there reaches most users.",
        tests_title="Missing tests",
        tests_detail="Changes {lines} lines of source code without touching any test file.",
        contract_title="Config/API contract change",
        contract_detail="Public names, fields or parameters removed or renamed, required parameters added, or "
                        "defaults changed, in {n} file{s}; "
                        "existing configs and callers may break.",
        dependency_title="Dependency upgrade",
        dependency_detail="Dependency versions or manifests change; watch compatibility.",
        large_title="Large change",
        large_detail="{files} files and {lines} reviewable lines; review it module by module.",
        dependency_kinds={
            "dependency_range": ("Dependency range change",
                                 "A version constraint is widened or narrowed, or code branches on a dependency's "
                                 "version: {evidence}."),
            "dependency_pin": ("Temporary dependency pin",
                               "A version is pinned or capped: {evidence}; remove it once the cause is fixed."),
            "ci_action_bump": ("CI action bump", "A CI action moves to another version: {evidence}."),
            "version_bump": ("Release version", "The repository's own version moves to a release: {evidence}."),
            "dev_version_bump": ("Development version",
                                 "The repository's own version moves to a development version (no release): "
                                 "{evidence}."),
        },
        meaning_kinds={
            "deprecation": ("Deprecation", "Deprecates {evidence}: users need to migrate before a later release "
                                           "removes it."),
            "deprecated_removal": ("Deprecated code removed",
                                   "Removes what was deprecated: {evidence}; callers still using it break."),
            "behavior_change": ("Raises where it fell back",
                                "A path that used to warn, return or exit now raises: {evidence}."),
            "numerics_change": ("Numerics change",
                                "Changed lines touch what is computed (loss, scaling, normalisation, dtype, seed, "
                                "learning rate, …): {evidence}; results may differ."),
            "object_cache": ("Cache over live objects",
                             "A cache keyed on modules, tensors, data_ptr() or id(): it keeps objects alive, or "
                             "returns stale results once their memory is reused: {evidence}."),
        },
        reason_importance="importance {importance}/10, insight {insight}/10",
        reason_sep="; ",
        reason_mechanical="mostly line-for-line replacements (a rename or sweep); skimming is enough",
        summary_from_title="{subject}. Changed files: {files} (+{additions}/-{deletions}), mostly in {where}.",
        point_scope="changed files: {files} (+{additions}/-{deletions}), mostly in {where}",
        point_added="new source files: {n}, largest {first}",
        point_removed="removed files: {n}, e.g. {first}",
        point_added_one="new source file {first}",
        point_removed_one="removed file {first}",
        point_tests="test files changed: {n}",
        point_no_tests="no test changes",
        root_dir="the repository root",
    ),
}


@dataclass(frozen=True)
class DigestTexts:
    """Narrative texts of a digest written without an LLM."""

    empty_headline: str
    empty_summary: str
    pr_count: tuple[str, str]
    """``{n}`` PRs: (one, many)."""
    headline: str
    headline_no_key: str
    headline_labels: str
    headline_release: str
    headline_revert: str
    label_count: str
    list_sep: str
    list_and: str
    """Joins the last two items of a list: ``#1、#2 和 #3``, ``#1, #2 and #3``."""
    pr_ref: str
    highlight_label: str
    highlight_label_key: str
    """The area of :attr:`highlight_label` when a busier area holds no key PR (it is not the busiest)."""
    highlight_pr: str
    highlight_related: str
    highlight_series: str
    series_parts: str
    series_no_parts: str
    more: str
    highlight_same_fix: str
    summary: str
    summary_opening: str
    """``{period}``, ``{themes}``: what the window was about."""
    summary_sep: str
    theme_fix_short: str
    theme_fix: str
    theme_series_short: str
    theme_series: str
    theme_file_short: str
    theme_file: str
    theme_single_short: str
    theme_single: str
    theme_label_short: str
    theme_label: str
    change_types: str
    type_names: dict[str, str]
    key_change: str
    key_change_quiet: str
    trend_note: str
    trend_mixed: str
    risk_note: str
    risk_where: str
    period_week: str
    period_other: str
    suggestions: dict[str, str]
    suggestion_default: str
    suggestion_revert_pair: str
    pending_note: str
    language: Language = "zh"
    """The language these texts are in (what :mod:`bot.digest.compose` writes in)."""

    def join(self, items: list[str]) -> str:
        """``items`` as running text: ``a``, ``a and b``, ``a, b and c`` (``a、b 和 c``)."""
        if len(items) <= 1:
            return "".join(items)
        return self.list_sep.join(items[:-1]) + self.list_and + items[-1]

    def prs(self, n: int) -> str:
        """``n`` PRs in words: ``1 PR``, ``3 PRs``, ``3 个 PR``."""
        one, many = self.pr_count
        return (one if n == 1 else many).format(n=n)


DIGEST: dict[Language, DigestTexts] = {
    "zh": DigestTexts(
        empty_headline="本周期没有合并的 PR。",
        empty_summary="{repo} 在 {start} 至 {end} 之间没有合并任何 PR。",
        pr_count=("{n} 个 PR", "{n} 个 PR"),
        headline="{period}合并 {prs}，重点 PR {key} 个{labels}。",
        headline_no_key="{period}合并 {prs}，没有重点 PR{labels}。",
        headline_labels="；活动集中在 {labels}",
        headline_release="发布：{prs}。",
        headline_revert="{revert} 回滚了同期合并的 {target}。",
        label_count="{label}（{count}）",
        list_sep="、",
        list_and=" 和 ",
        pr_ref="#{number}「{title}」",
        highlight_label="{label} 模块最活跃：{prs_count}，重点包括 {prs}；"
                        "这部分变化最多，用到 {label} 的用户最需要关注。",
        highlight_label_key="{label} 模块合并了 {prs_count}，其中有重点改动：{prs}；用到 {label} 的用户需要留意。",
        highlight_pr="#{number} {title}：{summary}",
        highlight_related="{prs} 都修改了 `{path}`：它们的改动会相互影响，需要放在一起阅读。",
        highlight_series="「{name}」{span}：{prs}；同一系列需要按顺序阅读。",
        series_parts="（第 {first}–{last} 部分，{count}）",
        series_no_parts="…（同一系列，{count}）",
        more="另 {n} 个",
        highlight_same_fix="{prs} 修的是 `{path}` 里的同一个问题（「{topic}」）：一个问题修了 {n} 次，"
                           "需要一起阅读，确认已经修好。",
        summary=(
            "{period}仓库共合并 {count} 个 PR，其中 {key} 个为重点 PR（重要性 ≥ {bar}），"
            "平均重要性 {avg_importance}，平均洞察度 {avg_insight}。"
            "改动类型：{types}。{risks}"
        ),
        summary_opening="{period}的主线是：{themes}。",
        summary_sep="",
        theme_fix_short="「{topic}」的修复",
        theme_fix="{Name}：{prs} 都改了 `{path}`，同一个问题修了 {n} 次。",
        theme_series_short="「{name}」系列",
        theme_series="{Name}：{prs}（{mix}）。",
        theme_file_short="{component} 里围绕 `{file}` 的改动",
        theme_file="{Name}：{prs}（{mix}）都改了 `{path}`。",
        theme_single_short="「{subject}」",
        theme_single="{Name}（#{number}）：{detail}。",
        theme_label_short="{label} 方向的工作",
        theme_label="{Name}：{count}，包括 {prs}（{mix}）。",
        change_types="{name} {count} 个",
        type_names={"feat": "新功能", "fix": "修复", "refactor": "重构", "perf": "性能", "doc": "文档",
                    "ci": "CI", "chore": "杂项", "test": "测试", "revert": "回滚"},
        key_change="{sentence}（重要性 {importance}/10）。",
        key_change_quiet="{period}没有 PR 达到重点线（重要性 ≥ {bar}），最重要的几个如下。",
        trend_note="以{main_type}为主（{main_count}/{count}）",
        trend_mixed="改动类型分散（{count} 个 PR）",
        risk_note="主要风险：{risks}。",
        risk_where="主要涉及 {labels}",
        period_week="本周",
        period_other="本期",
        suggestions={
            "missing_tests": "为 {prs} 补充单元测试或集成测试，优先覆盖核心路径上的改动。",
            "core_path_change": "对 {prs} 涉及的核心路径做回归验证。",
            "config_contract_change": "检查 {prs} 删除、改名或改了默认值的字段与参数，同步更新示例与文档并告知使用者。",
            "dependency_upgrade": "在 CI 与部署环境中验证 {prs} 的依赖变化，确认版本约束一致。",
            "dependency_pin": "{prs} 临时锁定了依赖版本，问题解决后去掉锁定。",
            "dependency_range": "确认 {prs} 改动后的版本范围在支持的各版本上都测过。",
            "large_change": "{prs} 改动较大，建议按模块拆分审阅并关注后续修复。",
            "revert": "确认 {prs} 回滚的功能何时、以何种方式重新合入。",
            "breaking_change": "{prs} 含破坏性变更，发布说明中需写明迁移方式。",
            "deprecation": "{prs} 弃用了接口或参数：在发布说明中写明替代方式和删除版本。",
            "deprecated_removal": "{prs} 删除了已弃用的内容：确认弃用期已过，并在发布说明中列出。",
            "behavior_change": "{prs} 把原来的兜底处理改成了报错：确认依赖旧行为的调用方已知晓。",
            "numerics_change": "{prs} 改动了数值计算：用固定随机种子对比改动前后的 loss 或指标。",
            "object_cache": "{prs} 新增了以对象为键的缓存：检查缓存何时清理，避免内存泄漏或命中过期结果。",
        },
        suggestion_default="本周期没有突出的风险，保持常规审阅即可。",
        suggestion_revert_pair=("{revert} 回滚了同期合并的 {target}，两者相抵；"
                                "确认 {target} 的改动是否会修正后重新提交。"),
        pending_note="{count} 个 PR 的分析结果尚未生成：{prs}。",
    ),
    "en": DigestTexts(
        empty_headline="No PRs were merged in this window.",
        empty_summary="{repo} merged no pull requests between {start} and {end}.",
        pr_count=("{n} PR", "{n} PRs"),
        headline="{prs} merged {period}, {key} of them key{labels}.",
        headline_no_key="{prs} merged {period}, none of them key{labels}.",
        headline_labels="; most activity in {labels}",
        headline_release=" Release: {prs}.",
        headline_revert=" {revert} reverts {target}, merged in the same window.",
        label_count="{label} ({count})",
        list_sep=", ",
        list_and=" and ",
        pr_ref="#{number} “{title}”",
        highlight_label="{label} was the busiest area: {prs_count}, notably {prs}; users of {label} are the most "
                        "affected.",
        highlight_label_key="{label} merged {prs_count} with key changes among them: {prs}; users of {label} should "
                            "take note.",
        highlight_pr="#{number} {title}: {summary}",
        highlight_related="{prs} change the same file `{path}`: their changes affect each other, so read them "
                          "together.",
        highlight_series="“{name}”{span}: {prs}; parts of one series need reading in order.",
        series_parts=", parts {first}–{last} ({count})",
        series_no_parts=" … (a series of {count})",
        more="{n} more",
        highlight_same_fix="{prs} fix the same problem in `{path}` (“{topic}”): one problem needed {n} fixes, so "
                           "read them together to check it is solved.",
        summary=(
            "Merged {period}: {prs}, {key} of them key (importance ≥ {bar}); "
            "average importance {avg_importance}, average insight {avg_insight}. "
            "Change types: {types}. {risks}"
        ),
        summary_opening="{period} was about {themes}.",
        summary_sep=" ",
        theme_fix_short="the fixes of “{topic}”",
        theme_fix="{Name} ({prs}) change `{path}`: one problem, {n} fixes.",
        theme_series_short="the “{name}” series",
        theme_series="{Name}: {prs} ({mix}).",
        theme_file_short="the {component} work on `{file}`",
        theme_file="{Name}: {prs} ({mix}) change `{path}`.",
        theme_single_short="“{subject}”",
        theme_single="{Name} (#{number}): {detail}.",
        theme_label_short="the {label} work",
        theme_label="{Name}: {count}, including {prs} ({mix}).",
        change_types="{name} {count}",
        type_names={"feat": "feature", "fix": "fix", "refactor": "refactor", "perf": "performance",
                     "doc": "docs", "ci": "CI", "chore": "chore", "test": "test", "revert": "revert"},
        key_change="{sentence} (importance {importance}/10).",
        key_change_quiet="No PR reached the key bar (importance ≥ {bar}) {period}; the most important ones follow.",
        trend_note="mostly {main_type} ({main_count}/{count})",
        trend_mixed="mixed change types ({count} PRs)",
        risk_note="Main risks: {risks}.",
        risk_where="mostly in {labels}",
        period_week="this week",
        period_other="in this window",
        suggestions={
            "missing_tests": "Add unit or integration tests for {prs}, core-path changes first.",
            "core_path_change": "Run regression checks on the core paths touched by {prs}.",
            "config_contract_change": "Check the fields and parameters removed, renamed or re-defaulted by {prs}; "
                                      "update examples and docs.",
            "dependency_upgrade": "Verify the dependency changes of {prs} in CI and where you deploy.",
            "dependency_pin": "{prs} pin dependencies for now; remove the pins once the cause is fixed.",
            "dependency_range": "Check that the version ranges changed by {prs} are tested at both ends.",
            "large_change": "{prs} are large; review them module by module and watch for follow-up fixes.",
            "revert": "Decide when and how the work reverted by {prs} comes back.",
            "breaking_change": "{prs} break compatibility; document the migration in the release notes.",
            "deprecation": "{prs} deprecate names; state the replacement and the removal version in the release "
                           "notes.",
            "deprecated_removal": "{prs} remove deprecated code; confirm the deprecation period has passed and list "
                                  "the removals in the release notes.",
            "behavior_change": "{prs} now raise where they fell back; make sure callers relying on the old path "
                               "know.",
            "numerics_change": "{prs} change what is computed; compare losses or metrics before and after with a "
                               "fixed seed.",
            "object_cache": "{prs} add caches keyed on live objects; check when they are cleared, to avoid leaks "
                            "and stale hits.",
        },
        suggestion_default="No notable risks in this window; the usual review is enough.",
        suggestion_revert_pair=("{revert} reverts {target}, merged in the same window, so the two cancel out; "
                                "check whether the work of {target} comes back in a fixed form."),
        pending_note="No analysis yet for {count} of the PRs: {prs}.",
        language="en",
    ),
}
