"""Multi-label metrics cross-checked against scikit-learn."""

import math

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from graphnetz.tasks.multilabel_metrics import multilabel_metrics, prior_macro_ap


def _random_case(seed: int = 0, n: int = 60, c: int = 6):
    rng = np.random.default_rng(seed)
    target = (rng.random((n, c)) < 0.3).astype(int)
    target[:, 2] = 0  # a label with no positive in the split
    target[0, 4] = 1  # make sure every other label has one
    target[:, 5] = 1  # a label every node carries
    target[0, [0, 1, 3]] = 1
    logits = rng.normal(size=(n, c)) + 1.5 * (target - 0.5)
    logits[:5, 0] = logits[5:10, 0]  # ties in the ranking
    return torch.tensor(logits), torch.tensor(target)


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def test_matches_sklearn_on_kept_labels():
    logits, target = _random_case()
    y, p = target.numpy(), _sigmoid(logits.numpy())
    pred = (p >= 0.5).astype(int)
    kept = [0, 1, 3, 4, 5]  # label 2 has no positive
    auroc_kept = [0, 1, 3, 4]  # label 5 has no negative
    out = multilabel_metrics(logits, target)
    assert out["macro_ap"] == pytest.approx(
        np.mean([average_precision_score(y[:, c], p[:, c]) for c in kept]), abs=1e-6
    )
    assert out["macro_auroc"] == pytest.approx(
        np.mean([roc_auc_score(y[:, c], p[:, c]) for c in auroc_kept]), abs=1e-6
    )
    assert out["macro_f1"] == pytest.approx(
        f1_score(y[:, kept], pred[:, kept], average="macro", zero_division=0), abs=1e-9
    )
    # micro-F1 pools all labels: false positives on the empty label still count
    assert out["micro_f1"] == pytest.approx(
        f1_score(y, pred, average="micro", zero_division=0), abs=1e-9
    )
    assert out["n_labels_evaluated"] == 5
    assert out["n_labels_excluded"] == 1


@pytest.mark.parametrize("seed", range(6))
def test_ranking_metrics_match_sklearn_per_label_with_ties_and_missing_targets(seed):
    # Many tied scores (few distinct values), labels of every positive rate, and NaN
    # targets in some columns (those are ranked on their labelled rows only).
    rng = np.random.default_rng(seed)
    n, c = 120, 9
    probs = rng.integers(0, 2 + 5 * seed, size=(n, c)) / (2 + 5 * seed)
    target = (rng.random((n, c)) < rng.uniform(0.02, 0.7, size=c)).astype(np.float64)
    target[:, 0] = 1.0  # every row positive: AP 1, no AUROC
    target[rng.random((n, c)) < 0.2 * (np.arange(c) % 3 == 1)] = np.nan
    out = multilabel_metrics(torch.tensor(probs), torch.tensor(target), from_logits=False)
    ap, auroc = [], []
    for j in range(c):
        rows = ~np.isnan(target[:, j])
        y, p = target[rows, j], probs[rows, j]
        if y.sum() > 0:
            ap.append(average_precision_score(y, p))
            if y.sum() < len(y):
                auroc.append(roc_auc_score(y, p))
    assert out["macro_ap"] == pytest.approx(np.mean(ap), abs=1e-12)
    assert out["macro_auroc"] == pytest.approx(np.mean(auroc), abs=1e-12)


def test_probabilities_and_logits_agree():
    logits, target = _random_case(1)
    a = multilabel_metrics(logits, target)
    b = multilabel_metrics(logits.sigmoid(), target, from_logits=False)
    for key in ("micro_f1", "macro_f1", "macro_auroc", "macro_ap"):
        assert a[key] == pytest.approx(b[key])


def test_mask_selects_the_split():
    logits, target = _random_case(2)
    mask = torch.zeros(len(target), dtype=torch.bool)
    mask[::2] = True
    assert multilabel_metrics(logits, target, mask=mask) == pytest.approx(
        multilabel_metrics(logits[mask], target[mask])
    )


def test_perfect_ranking_gives_ap_and_auroc_one():
    target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    out = multilabel_metrics(target.float() * 4 - 2, target)
    assert out["macro_ap"] == 1.0 and out["macro_auroc"] == 1.0
    assert out["micro_f1"] == 1.0 and out["macro_f1"] == 1.0


def test_every_label_empty_returns_nan_with_counts():
    out = multilabel_metrics(torch.randn(10, 3), torch.zeros(10, 3))
    assert all(math.isnan(out[k]) for k in ("micro_f1", "macro_f1", "macro_auroc", "macro_ap"))
    assert out["n_labels_evaluated"] == 0 and out["n_labels_excluded"] == 3


def test_empty_split_does_not_crash():
    out = multilabel_metrics(torch.randn(0, 4), torch.zeros(0, 4))
    assert math.isnan(out["macro_ap"]) and out["n_labels_excluded"] == 4


def test_shape_mismatch_is_refused_with_shapes_named():
    with pytest.raises(ValueError, match=r"\(5, 3\).*\(5, 4\)"):
        multilabel_metrics(torch.randn(5, 3), torch.zeros(5, 4))


def test_prior_macro_ap_is_sklearns_ap_of_a_constant_score():
    rng = np.random.default_rng(5)
    y = (rng.random((50, 6)) < [0.05, 0.2, 0.5, 0.9, 0.0, 0.3]).astype(np.float32)
    kept = [c for c in range(6) if y[:, c].sum() > 0]
    assert 4 not in kept  # a label without positives is excluded, as in macro_ap
    expected = np.mean([average_precision_score(y[:, c], np.zeros(50)) for c in kept])
    assert prior_macro_ap(torch.from_numpy(y)) == pytest.approx(expected)
    assert math.isnan(prior_macro_ap(torch.zeros(5, 3)))


def _reference_topk(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The multi-label study's rule, written independently: each node's k best labels."""
    pred = np.zeros_like(y)
    for i, k in enumerate(y.sum(1)):
        if k:  # a node without labels predicts none (see the module docstring)
            pred[i, np.argsort(-p[i], kind="stable")[:k]] = 1
    return pred


def test_top_k_f1_matches_sklearn_on_the_study_rule():
    logits, target = _random_case(seed=3)
    target[7] = 0  # an unlabelled node
    y, p = target.numpy(), _sigmoid(logits.numpy())
    pred = _reference_topk(p, y)
    kept = [0, 1, 3, 4, 5]
    out = multilabel_metrics(logits, target)
    assert out["micro_f1_topk"] == pytest.approx(f1_score(y, pred, average="micro"))
    assert out["macro_f1_topk"] == pytest.approx(
        f1_score(y[:, kept], pred[:, kept], average="macro", zero_division=0)
    )
    assert pred.sum() == y.sum()  # k labels per node: as many predicted as true


def test_top_k_f1_differs_from_thresholded_f1_when_scores_are_uncalibrated():
    target = torch.tensor([[1, 0, 0], [0, 1, 1], [1, 0, 1]])
    logits = target.float() * 2 - 5  # right ranking, every probability below 0.5
    out = multilabel_metrics(logits, target)
    assert out["micro_f1"] == 0.0 and out["macro_f1"] == 0.0
    assert out["micro_f1_topk"] == 1.0 and out["macro_f1_topk"] == 1.0
