"""The fitted judgement: a PR's importance (1–10) and reading verdict from named facts.

The heuristic analyzer (:mod:`bot.digest.heuristic`) reads facts from a PR — its change type, how much code
it changes once moves and renames are taken out, whether it lands in a core file, which public names it removes,
which dependencies it moves, what its title says it fixes … — and turns them into *features*: named numbers,
most of them 0 or 1, a few sizes on a log scale (:data:`FEATURES` lists them with their meaning). One linear
model reads them:

- **importance** = ``intercept + Σ weight × value`` (a ridge regression fitted to the judged importance, each
  repository weighing the same), rounded and held to 1–10;
- **verdict** from that importance, as the judges' own tables give it: ``skip`` below the first cut,
  ``close_read`` from the second, ``skim`` between (two whole numbers, fitted to the judged verdicts), so a PR's
  importance and its verdict never disagree.

Both are fitted by ``bench/fit_judgement.py`` from the hand-judged weeks of ``tests/data/judged/`` (seven
repositories) and shipped as package data (``bot/digest/weights.json``); that script reproduces the file
exactly. Nothing here is tuned by hand: to change a judgement, change a fact or a feature and fit again.

**Calibration to the repository.** A repository whose every PR is small and careful must not see a third of
them called key, and a busy one must not bury its real changes. Each digest knows the repository's recent
history (the PR records of the weeks before its window, as every source reads them for core files); the
*path-level* importance of those PRs — the same model on what every source gives for them: title, files and
line counts, no description or diff — is averaged, and the importance of a PR moves by
``calibration × (reference − that average)``, where ``reference`` is the same average over the repositories
the model was fitted on. As the model is linear, the average of those scores is the score of the average
path-level features, which is what a digest keeps (:func:`repository_offset`, whatever the model). The offset is
one more contribution, printed with the others by :func:`explain`.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

Verdict = Literal["skip", "skim", "close_read"]
VERDICTS: tuple[Verdict, ...] = ("skip", "skim", "close_read")
CALIBRATION_FEATURE = "repository_offset"
"""The name the calibration offset carries in an explanation (it is not a fitted feature)."""


@dataclass(frozen=True, slots=True)
class Feature:
    """One named fact the models read: its name and what it means, in Chinese and English."""

    name: str
    zh: str
    en: str


FEATURES: tuple[Feature, ...] = (
    Feature("type_feat", "类型：新功能", "type: feature"),
    Feature("type_fix", "类型：修复", "type: fix"),
    Feature("type_perf", "类型：性能", "type: performance"),
    Feature("type_refactor", "类型：重构", "type: refactor"),
    Feature("type_doc", "类型：文档", "type: docs"),
    Feature("type_ci", "类型：CI", "type: CI"),
    Feature("type_test", "类型：测试", "type: tests"),
    Feature("type_chore", "类型：杂项", "type: chore"),
    Feature("type_revert", "类型：回滚", "type: revert"),
    Feature("code_size", "要读的代码行（log2，去掉搬移与替换）", "code lines to read (log2, moves and renames out)"),
    Feature("files", "要读的文件数（log2）", "files to read (log2)"),
    Feature("no_code", "没有改源码、配置或依赖", "no source, config or dependency file changed"),
    Feature("broad_non_code", "大范围的非代码改动（示例、CI、镜像、文档）",
            "broad non-code change (examples, CI, images, docs)"),
    Feature("mechanical", "机械改动（搬移、批量替换）", "mechanical change (moves, a repeated substitution)"),
    Feature("core", "落在核心文件", "lands in a core file"),
    Feature("removed_names", "移除或改签名的公开名字（个数，log2）", "public names removed or re-signed (count, log2)"),
    Feature("changed_default", "改了默认值", "a default changed"),
    Feature("removed_module", "删除或改名源码模块", "a source module removed or renamed"),
    Feature("dependency_upgrade", "依赖升级", "a dependency upgraded"),
    Feature("dependency_range", "依赖版本范围变化", "a dependency range changed"),
    Feature("dependency_pin", "临时固定依赖版本", "a dependency pinned"),
    Feature("ci_action_bump", "CI action 升级", "a CI action bumped"),
    Feature("version_bump", "本项目版本号变化", "the project's own version changed"),
    Feature("breaking", "标明不兼容", "marked breaking"),
    Feature("numerics_fix", "修复计算结果（loss、梯度、mask、dtype…）",
            "fixes what the code computes (loss, gradient, mask, dtype…)"),
    Feature("guard", "只是校验输入", "only validates an input"),
    Feature("instrumentation", "只改日志、计时、profiling", "only logging, timers, profiling"),
    Feature("explained", "描述的解释篇幅（log2）", "how much the description explains (log2)"),
    Feature("tests", "改了测试", "tests changed"),
    Feature("new_module", "新增源码模块", "a new source module"),
    Feature("prose_only", "只改注释、文档字符串", "comments and docstrings only"),
    Feature("large", "大规模改动", "a large change"),
    Feature("project_rename", "改了包名或项目名", "renames the package or project"),
    Feature("code_new", "新文件里的代码行（log2）", "code lines in new files (log2)"),
    Feature("tiny", "极小的代码改动（≤4 行）", "a tiny code change (<= 4 lines)"),
    Feature("crash_fix", "修复崩溃或报错", "fixes a crash or an error"),
    Feature("correctness_words", "说明里提到静默错误、泄漏、竞争", "says silent, wrong, leak, race…"),
    Feature("spread", "涉及的源码区域数（log2）", "source areas touched (log2)"),
    Feature("title_docs", "标题说的是文档、注释、类型标注", "title speaks of docs, comments, type hints"),
    Feature("deleted_share", "已有代码中删除行的占比", "share of deleted lines in existing code"),
    Feature("config_schema", "改了配置定义", "changes a config schema"),
    Feature("dev_version_bump", "开发版本号变化", "a development version bump"),
    Feature("deprecation", "弃用了名字", "deprecates a name"),
    Feature("deprecated_removal", "移除已弃用的代码", "removes deprecated code"),
    Feature("behavior_change", "原先兜底之处改为报错", "raises where it used to fall back"),
    Feature("numerics_change", "改动计算数值（缩放、归一化、dtype、随机种子…）",
            "changes numerics (scaling, normalisation, dtype, seeds…)"),
    Feature("object_cache", "以活对象为键的缓存", "a cache keyed on live objects"),
    Feature("fix_core", "核心路径上的实际修复", "a real fix in a core path"),
    Feature("feature_core", "核心部分的新能力", "a new capability in a central part"),
    Feature("feature_secondary", "次要部分的新功能", "a feature in a secondary part"),
    Feature("contract", "接口或配置契约变化", "a contract change (name removed, default changed)"),
    Feature("numerics", "修正计算结果", "a fix of what the code computes"),
    Feature("upgrade_with_code", "需要改代码的依赖升级", "an upgrade that needed code changes"),
    Feature("local_fix", "局部修复", "a local fix"),
    Feature("small_fix", "很小的修复", "a small fix"),
    Feature("minor_non_code", "小的非代码改动", "a minor non-code change"),
    Feature("trivial", "琐碎改动（注释、CI action、文档措辞）", "a trivial change (comments, CI actions, wording)"),
)
"""Every feature the models read, in the order of the weight vectors."""

FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)


@dataclass(frozen=True, slots=True)
class Model:
    """The fitted weights (``bot/digest/weights.json``).

    Attributes:
        names: the feature names, in the order of the weights (a subset of :data:`FEATURE_NAMES` or all).
        importance_intercept: the importance of a PR whose every feature is 0.
        importance_weights: points of importance per unit of each feature.
        verdict_cuts: the lowest importance of a ``skim`` and of a ``close_read``.
        calibration: how much of the repository's offset from the reference is taken out (0 = none, 1 = all).
        reference: the mean path-level importance of the fitted repositories' histories.
    """

    names: tuple[str, ...]
    importance_intercept: float
    importance_weights: tuple[float, ...]
    verdict_cuts: tuple[int, int]
    calibration: float = 0.0
    reference: float = 0.0

    def to_json(self) -> dict[str, object]:
        """The model as the JSON object ``weights.json`` holds (weights by feature name, rounded to 1e-6)."""
        r = _round
        return {
            "importance": {"intercept": r(self.importance_intercept),
                           "weights": {n: r(w) for n, w in zip(self.names, self.importance_weights, strict=True)}},
            "verdict": {"skim_from": self.verdict_cuts[0], "close_read_from": self.verdict_cuts[1]},
            "calibration": {"strength": r(self.calibration), "reference": r(self.reference)},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Model:
        """The model of a ``weights.json`` object.

        Raises:
            ValueError: a weight names a feature :data:`FEATURE_NAMES` does not know, or the file lacks a part.
        """
        try:
            imp, ver, cal = data["importance"], data["verdict"], data.get("calibration", {})
            if not (isinstance(imp, dict) and isinstance(ver, dict) and isinstance(cal, dict)):
                raise TypeError("importance, verdict and calibration must be objects")
            names = tuple(imp["weights"])
            unknown = [n for n in names if n not in FEATURE_NAMES]
            if unknown:
                raise ValueError(f"weights name features this version does not know: {unknown}")
            return cls(names=names, importance_intercept=float(imp["intercept"]),
                       importance_weights=tuple(float(imp["weights"][n]) for n in names),
                       verdict_cuts=(int(ver["skim_from"]), int(ver["close_read_from"])),
                       calibration=float(cal.get("strength", 0.0)), reference=float(cal.get("reference", 0.0)))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"weights file is missing a part: {exc!r}") from exc


def _round(x: float) -> float:
    return round(x, 6) + 0.0  # + 0.0: no "-0.0" in the file


@lru_cache(maxsize=1)
def shipped_model() -> Model:
    """The model shipped with the package (``bot/digest/weights.json``), read once."""
    text = resources.files("bot.digest").joinpath("weights.json").read_text(encoding="utf-8")
    return Model.from_json(json.loads(text))


@dataclass(frozen=True, slots=True)
class Contribution:
    """How one feature moved one PR's importance: its value, and the points of importance it added."""

    name: str
    value: float
    importance: float


@dataclass(frozen=True, slots=True)
class Judgement:
    """The model's answer for one PR.

    Attributes:
        importance: 1–10, the rounded and clamped ``importance_score`` (at least
            :data:`PROJECT_RENAME_IMPORTANCE` for a project rename).
        importance_score: intercept + contributions + the repository offset, before rounding.
        verdict: ``skip`` / ``skim`` / ``close_read``, from ``importance`` and the model's cuts.
        offset: the repository calibration's points of importance (0 without history).
        contributions: one per feature with a non-zero value, in the model's order.
    """

    importance: int
    importance_score: float
    verdict: Verdict
    offset: float
    contributions: tuple[Contribution, ...]


def repository_offset(model: Model, profile: Mapping[str, float] | None) -> float:
    """Points of importance that calibrate a PR to its repository: ``calibration × (reference − mean)``, where
    ``mean`` is the model's importance score of the repository's average recent PR — ``profile``, the mean
    path-level feature values of its history (the model is linear: the mean of the scores is the score of the
    means). 0 when the history is unknown (``None``)."""
    if profile is None:
        return 0.0
    mean = model.importance_intercept + sum(w * profile.get(n, 0.0)
                                            for n, w in zip(model.names, model.importance_weights, strict=True))
    return model.calibration * (model.reference - mean) if math.isfinite(mean) else 0.0


def verdict_of(importance: int, cuts: tuple[int, int]) -> Verdict:
    """``skip`` below ``cuts[0]``, ``close_read`` from ``cuts[1]``, else ``skim``."""
    return "skip" if importance < cuts[0] else "close_read" if importance >= cuts[1] else "skim"


def judge(values: Mapping[str, float], *, model: Model | None = None, offset: float = 0.0) -> Judgement:
    """Importance and verdict of one PR from its feature ``values`` (missing features are 0).

    Args:
        values: feature name → value (see :data:`FEATURES`).
        model: the weights; default :func:`shipped_model`.
        offset: the repository calibration (:func:`repository_offset`), added to the importance score.
    """
    m = model or shipped_model()
    parts = tuple(Contribution(n, values.get(n, 0.0), w * values.get(n, 0.0))
                  for n, w in zip(m.names, m.importance_weights, strict=True) if values.get(n, 0.0))
    raw = m.importance_intercept + sum(p.importance for p in parts) + offset
    importance = max(1, min(10, math.floor(raw + 0.5)))
    verdict = verdict_of(importance, m.verdict_cuts)
    if values.get("project_rename"):
        # the one hand rule left: a sweep that renames the project or its package changes every user's imports,
        # links and install commands — key for everyone, though a skim, whatever a diff of renames weighs
        importance, verdict = max(importance, PROJECT_RENAME_IMPORTANCE), "skim"
    return Judgement(importance=importance, importance_score=raw, verdict=verdict, offset=offset, contributions=parts)


PROJECT_RENAME_IMPORTANCE = 6


_VERDICT_WORDS = {"zh": {"skip": "可跳过", "skim": "建议浏览", "close_read": "值得精读"},
                  "en": {"skip": "skip", "skim": "skim", "close_read": "close read"}}
_NAME_CELLS = 50


def _pad(text: str, cells: int) -> str:
    """``text`` padded with spaces to ``cells`` terminal columns (a CJK character takes two)."""
    width = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(1, cells - width)


def explain(judgement: Judgement, language: Literal["zh", "en"] = "en", *, model: Model | None = None) -> list[str]:
    """Lines a person reads: the intercept, each feature's value and the points of importance it moved, the
    repository offset, the total, and the verdict the importance falls in. Largest moves first."""
    m = model or shipped_model()
    label = {f.name: (f.zh if language == "zh" else f.en) for f in FEATURES}
    words = _VERDICT_WORDS[language]
    head = ("事实", "取值", "重要性") if language == "zh" else ("fact", "value", "importance")
    rows = [f"{_pad(head[0], _NAME_CELLS)}{_pad(head[1], 8)}{head[2]}"]
    rows.append(f"{_pad('截距' if language == 'zh' else 'intercept', _NAME_CELLS)}{'':8}{m.importance_intercept:+.2f}")
    for p in sorted(judgement.contributions, key=lambda p: -abs(p.importance)):
        rows.append(f"{_pad(label.get(p.name, p.name), _NAME_CELLS)}{p.value:<8.2f}{p.importance:+.2f}")
    if judgement.offset:
        name = "仓库校准（与该仓库近期 PR 相比）" if language == "zh" else "repository calibration (vs its recent PRs)"
        rows.append(f"{_pad(name, _NAME_CELLS)}{'':8}{judgement.offset:+.2f}")
    total = "合计" if language == "zh" else "total"
    rows.append(f"{_pad(total, _NAME_CELLS)}{'':8}{judgement.importance_score:.2f}")
    low, high = m.verdict_cuts
    rows.append(("重要性 {i}/10；结论：{v}（{lo} 起{skim}，{hi} 起{close}）" if language == "zh"
                 else "importance {i}/10; verdict: {v} ({skim} from {lo}, {close} from {hi})").format(
        i=judgement.importance, v=words[judgement.verdict], lo=low, hi=high, skim=words["skim"],
        close=words["close_read"]))
    return rows


def design_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str] = FEATURE_NAMES) -> list[list[float]]:
    """Rows of feature values in the order of ``names`` (missing = 0), for fitting."""
    return [[float(r.get(n, 0.0)) for n in names] for r in rows]
