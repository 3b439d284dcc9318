"""Multi-label classification metrics (rows are nodes or graphs); pure functions.

Missing targets: a NaN target (ogbg-molpcba leaves most labels of a molecule unmeasured)
is no observation. It counts in no metric: not in a label's positives or negatives, not
in its AP/AUROC ranking, not in any TP/FP/FN count (micro or macro), and a row's top-k
ranks its labelled labels only. Integer targets have none.

Label-exclusion rule, applied per evaluated split (counting labelled rows only):

- A label with **no positive** row in the split is excluded from every macro
  average (AP, AUROC and F1): AP and AUROC are undefined for it, and macro-F1 excludes
  it too so that all macro metrics average over the same labels. It is counted in
  ``n_labels_excluded``.
- A label where **every** labelled row is positive has a defined AP (= 1) and F1 but no
  AUROC (no negatives); it is excluded from ``macro_auroc`` only, unless
  ``require_both_classes`` is set: then it is excluded from every macro average, the rule
  of the OGB and LRGB evaluators (which average AP over labels with a positive and a
  negative), and counted in ``n_labels_excluded``.
- ``micro_f1`` pools TP/FP/FN over **all** labels: false positives on an excluded
  label are real errors and micro-F1 stays defined.
- If every label is excluded (or the split is empty), all four metrics are NaN and the
  counts are still reported.

Thresholded F1 (``micro_f1``, ``macro_f1``): predictions at or above ``threshold`` (on
sigmoid probabilities) are positive. Top-k F1 (``micro_f1_topk``, ``macro_f1_topk``), the
multi-label study's F1: each node predicts its k highest-scoring labels, k being the
node's *true* label count (an oracle threshold, so it measures ranking within a node, not
calibration); a node without labels predicts none (the study's code slices ``[-0:]`` and
so predicts every label for such nodes). Both follow the NaN and exclusion rules above.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

METRIC_KEYS = ("micro_f1", "macro_f1", "micro_f1_topk", "macro_f1_topk", "macro_auroc", "macro_ap")
PRIMARY_METRIC = "macro_ap"


def _f1(tp: Tensor, fp: Tensor, fn: Tensor) -> Tensor:
    """2TP / (2TP + FP + FN), 0 where the denominator is 0 (sklearn's zero_division=0)."""
    denom = 2 * tp + fp + fn
    return torch.where(denom > 0, 2 * tp / denom.clamp(min=1), torch.zeros_like(denom))


def multilabel_metrics(
    preds: Tensor,
    target: Tensor,
    *,
    from_logits: bool = True,
    threshold: float = 0.5,
    mask: Tensor | None = None,
    require_both_classes: bool = False,
) -> dict[str, float]:
    """Micro/macro F1 (thresholded and top-k), macro AUROC and macro AP (primary).

    Args:
        preds: ``[N, C]`` logits (``from_logits=True``) or probabilities in [0, 1].
        target: ``[N, C]`` in {0, 1} (any dtype); NaN (float targets) marks a missing one.
        from_logits: apply a sigmoid to ``preds`` first.
        threshold: probability at or above which a label is predicted for F1.
        mask: optional boolean ``[N]`` selecting the evaluated nodes (the split).
        require_both_classes: macro averages keep only labels with a positive *and* a
            negative labelled row (the OGB evaluator's rule); default: a positive suffices.

    Returns:
        ``micro_f1``, ``macro_f1``, ``micro_f1_topk``, ``macro_f1_topk``,
        ``macro_auroc``, ``macro_ap`` (floats, NaN when undefined) and the integer counts ``n_labels_evaluated``, ``n_labels_excluded``.
    """
    if preds.dim() != 2 or preds.shape != target.shape:
        raise ValueError(
            "preds and target must both be [N, C] with equal shapes, got "
            f"{tuple(preds.shape)} and {tuple(target.shape)}"
        )
    if mask is not None:
        preds, target = preds[mask], target[mask]
    probs = preds.detach().float()
    probs = probs.sigmoid() if from_logits else probs
    target, labelled = _observed(target)
    n_pos, n_neg = target.sum(0), (labelled.long() - target).sum(0)
    kept = _kept_labels(n_pos, n_neg, require_both_classes)
    n_kept = int(kept.sum())
    result: dict[str, float] = dict.fromkeys(METRIC_KEYS, math.nan)
    result["n_labels_evaluated"] = n_kept
    result["n_labels_excluded"] = int(target.size(1) - n_kept)
    if n_kept == 0:
        return result

    thresholded, top_k = (probs >= threshold).long(), _top_k(probs, target, labelled)
    for suffix, hard in (("", thresholded * labelled), ("_topk", top_k)):
        tp = (hard * target).sum(0).double()
        fp = (hard * (1 - target)).sum(0).double()
        fn = ((1 - hard) * target).sum(0).double()
        result[f"micro_f1{suffix}"] = float(_f1(tp.sum(), fp.sum(), fn.sum()))
        result[f"macro_f1{suffix}"] = float(_f1(tp, fp, fn)[kept].mean())

    ap, auroc = _ranking_metrics(probs, target, labelled)
    result["macro_ap"] = _mean_over(ap, kept)
    result["macro_auroc"] = _mean_over(auroc, kept & (n_neg > 0))
    return result


def _observed(target: Tensor) -> tuple[Tensor, Tensor]:
    """``(target as 0/1 integers with NaN as 0, boolean [N, C] mask of the labelled entries)``."""
    target = target.detach()
    if not target.is_floating_point():
        return target.long(), torch.ones_like(target, dtype=torch.bool)
    labelled = ~target.isnan()
    return torch.where(labelled, target, 0).long(), labelled


def _kept_labels(n_pos: Tensor, n_neg: Tensor, require_both_classes: bool) -> Tensor:
    """The labels the macro averages keep (the exclusion rule of the module docstring)."""
    kept = n_pos > 0
    return kept & (n_neg > 0) if require_both_classes else kept


def _top_k(probs: Tensor, target: Tensor, labelled: Tensor) -> Tensor:
    """0/1 predictions: each row's k highest-scoring labelled labels, k = the row's true
    label count (an unlabelled entry ranks last, and k never exceeds the labelled ones)."""
    probs = probs.masked_fill(~labelled, -math.inf)
    order = probs.argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(order)
    positions = torch.arange(probs.size(1), device=probs.device)
    rank.scatter_(1, order, positions.expand_as(order).contiguous())
    return (rank < target.sum(1, keepdim=True)).long()


def _ranking_metrics(probs: Tensor, target: Tensor, labelled: Tensor) -> tuple[Tensor, Tensor]:
    """Per label: ``(AP, AUROC)`` of the scores over that label's labelled rows (NaN where
    it has no positive, resp. no positive or no negative).

    Columns with every row labelled (the usual case) are ranked together, one sort for all
    labels; the others one at a time on their labelled rows.
    """
    complete = labelled.all(0)
    ap = torch.full((probs.size(1),), math.nan, dtype=torch.float64, device=probs.device)
    auroc = ap.clone()
    if bool(complete.any()):
        ap[complete], auroc[complete] = _ranked_columns(probs[:, complete], target[:, complete])
    for c in (~complete).nonzero().flatten().tolist():
        rows = labelled[:, c]
        ap_c, auroc_c = _ranked_columns(probs[rows, c : c + 1], target[rows, c : c + 1])
        ap[c], auroc[c] = ap_c[0], auroc_c[0]
    return ap, auroc


def _ranked_columns(scores: Tensor, truth: Tensor) -> tuple[Tensor, Tensor]:
    """AP and AUROC of each column of ``scores`` ``[n, C]`` against 0/1 ``truth``.

    The definitions of scikit-learn's ``average_precision_score`` and ``roc_auc_score``
    (and torchmetrics' binary AP / AUROC), with tied scores forming one threshold:
    AP = Σ over thresholds (R_t − R_{t−1}) · P_t, AUROC = the trapezoid area under the
    ROC curve through the thresholds. Per row of the descending ranking, with g its group
    of tied scores: AP = (1/P) Σ_{positive rows} precision at the end of g, and
    AUROC = (1/(P·N)) Σ_{negative rows} (positives ranked before g + half the positives
    in g). Counts and sums in float64.
    """
    # One label per row ([C, n], contiguous): sorts, gathers and scans run along rows.
    scores, truth = scores.t().contiguous(), truth.t().contiguous()
    n = scores.size(1)
    ranked, order = scores.sort(dim=1, descending=True)  # order inside a tie: irrelevant
    hits = truth.gather(1, order)  # 0/1 integers
    y = hits.double()
    position = torch.arange(n, device=scores.device).expand_as(ranked)
    new_value = torch.ones_like(ranked, dtype=torch.bool)
    new_value[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    last_of_group = torch.ones_like(new_value)
    last_of_group[:, :-1] = new_value[:, 1:]
    group_start = torch.where(new_value, position, 0).cummax(dim=1).values
    group_end = torch.where(last_of_group, position, n).flip(1).cummin(dim=1).values.flip(1)
    # counted in integers: exact as in float64, and a CUDA float cumsum has no
    # deterministic kernel (torch refuses it in deterministic runs)
    tp_through = hits.cumsum(1).double()
    positives = tp_through[:, -1] if n else y.sum(1)
    negatives = n - positives
    tp_at_end = tp_through.gather(1, group_end)
    ap = (y * tp_at_end / (group_end + 1)).sum(1) / positives
    tp_before_group = (tp_through - y).gather(1, group_start)
    auroc = ((1 - y) * (tp_before_group + tp_at_end) / 2).sum(1) / (positives * negatives)
    undefined = positives == 0
    ap = ap.masked_fill(undefined, math.nan)
    auroc = auroc.masked_fill(undefined | (negatives == 0), math.nan)
    return ap, auroc


def _mean_over(values: Tensor, labels: Tensor) -> float:
    """Unweighted mean of ``values`` over the selected labels (NaN when none)."""
    return float(values[labels].mean()) if bool(labels.any()) else math.nan


def prior_macro_ap(target: Tensor, *, require_both_classes: bool = False) -> float:
    """Macro AP of a constant score (the label prior): the chance level of ``macro_ap``.

    A constant score gives each label an AP equal to its positive rate (among its labelled
    rows), so this is the mean positive rate over the labels the macro average keeps (the
    NaN and exclusion rules above); NaN when it keeps none. A model scoring near it ranks
    rows no better than chance.
    """
    target, labelled = _observed(target)
    n_pos, n_labelled = target.sum(0), labelled.sum(0)
    kept = _kept_labels(n_pos, n_labelled - n_pos, require_both_classes)
    if not bool(kept.any()):
        return math.nan
    return float((n_pos[kept].float() / n_labelled[kept].float()).mean())
