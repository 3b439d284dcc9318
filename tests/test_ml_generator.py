"""The synthetic multi-label generator: seeding, the hypersphere labels, the edge model.

The mirror tests compare the generator at the study's parameters with the study's released
Synthetic1 points and labels (MLGNC/Hyperspheres_10_10_0).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

from graphnetz.analysis import label_homophily
from graphnetz.data import ml_synthetic
from graphnetz.data.ml_synthetic import (
    attachment_probability,
    find_alpha_b,
    generate_ml_graph,
    load_ml_synthetic,
    sample_points,
)
from graphnetz.data.mldatagen import (
    SYNTHETIC1_SPHERE_SIZES,
    coordinatewise_ball,
    mldatagen_points,
    points_per_sphere,
)


def test_same_seed_gives_identical_graph():
    a = load_ml_synthetic(seed=5, num_nodes=400)
    b = load_ml_synthetic(seed=5, num_nodes=400)
    c = load_ml_synthetic(seed=6, num_nodes=400)
    for key in ("x", "edge_index", "y", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(a[key], b[key]), key
    assert not torch.equal(a.edge_index, c.edge_index) or not torch.equal(a.x, c.x)


def test_uniform_model_labels_are_exactly_the_spheres_containing_each_point():
    g = generate_ml_graph(
        seed=1, num_nodes=500, num_features=6, num_labels=8, point_model="uniform"
    )
    points, centres, radii = g["points"], g["centres"], g["radii"]
    for c in range(8):  # an independent, per-label membership test
        inside = ((points - centres[c]) ** 2).sum(axis=1) <= radii[c] ** 2
        np.testing.assert_array_equal(g["y"][:, c], inside)
    assert g["y"].any(axis=1).all()  # every point lies in >= 1 label sphere
    assert (np.linalg.norm(centres, axis=1) + radii <= 1 + 1e-12).all()  # spheres inside


def test_mldatagen_labels_are_the_owner_plus_the_spheres_holding_the_written_point():
    radii = np.linspace(0.25, 0.75, 8)
    out = mldatagen_points(400, 6, radii, np.random.default_rng(1), np.random.default_rng(0))
    x, drawn, owner, centres = out["x"], out["drawn"], out["owner"], out["centres"]
    assert (np.linalg.norm(centres, axis=1) + radii <= 1 + 1e-12).all()  # spheres inside
    assert (np.diff(owner) >= 0).all()  # rows grouped by owner sphere, in sphere order
    quota = 400 * radii / radii.sum()  # N_k ∝ r_k
    assert (np.abs(np.bincount(owner, minlength=8) - quota) < 1).all()
    # the drawn point lies in its owner sphere; the written one is a permutation of it
    assert (np.linalg.norm(drawn - centres[owner], axis=1) <= radii[owner] + 1e-12).all()
    np.testing.assert_array_equal(np.sort(x, axis=1), np.sort(drawn, axis=1))
    assert not np.array_equal(x, drawn)
    for c in range(8):
        inside = ((x - centres[c]) ** 2).sum(axis=1) <= radii[c] ** 2
        np.testing.assert_array_equal(out["y"][:, c], inside | (owner == c))


def test_coordinatewise_ball_fills_the_radius_faster_than_uniform_sampling():
    # each step adds U² of the remaining squared radius, U ~ U(-1, 1): E[1 - U²] = 2/3, so
    # E‖offset‖² / r² = 1 − (2/3)^d (0.704 in d = 3), against d / (d + 2) = 0.6 for a
    # uniform point in the ball
    rng = np.random.default_rng(0)
    n, r = 20000, 0.4
    points = coordinatewise_ball(np.full((n, 3), 0.1), np.full(n, r), rng)
    share = (((points - 0.1) ** 2).sum(axis=1) / r**2).mean()
    assert share == pytest.approx(1 - (2 / 3) ** 3, abs=0.01)
    assert (((points - 0.1) ** 2).sum(axis=1) <= r**2 + 1e-12).all()


def test_default_radii_are_the_studys_for_20_labels_and_drawn_otherwise():
    rngs = np.random.default_rng(0), np.random.default_rng(0)
    radii = sample_points(3000, 10, 20, *rngs)["radii"]
    # N_k = N r_k / Σr gives the study's row blocks back
    assert points_per_sphere(3000, radii).tolist() == list(SYNTHETIC1_SPHERE_SIZES)
    assert radii.sum() == pytest.approx(10.09)
    drawn = generate_ml_graph(seed=0, num_nodes=50, num_labels=5, radius_range=(0.3, 0.4))
    assert ((drawn["radii"] >= 0.3) & (drawn["radii"] <= 0.4)).all()
    with pytest.raises(ValueError, match="num_labels=5"):
        generate_ml_graph(seed=0, num_nodes=50, num_labels=5, radii="synthetic1")
    with pytest.raises(ValueError, match="point_model must be one of"):
        generate_ml_graph(seed=0, num_nodes=50, point_model="cubes")


def test_attachment_probability_formula():
    # p = 1/(1 + (d/b)^α): p(0) = 1, p(b) = 1/2, p(2b) = 1/(1 + 2^α)
    assert attachment_probability(np.array(0.0), 3.0, 0.1) == 1.0
    assert attachment_probability(np.array(0.1), 3.0, 0.1) == pytest.approx(0.5)
    assert attachment_probability(np.array(0.2), 3.0, 0.1) == pytest.approx(1 / 9)


def test_edge_frequency_follows_social_distance_probability():
    g = generate_ml_graph(seed=2, num_nodes=900, alpha=2.0, b=0.1)
    y = g["y"].astype(float)
    n, c = y.shape
    i, j = np.triu_indices(n, k=1)
    distance = np.abs(y[i] - y[j]).sum(1) / c
    linked = np.zeros((n, n), bool)
    linked[g["edges"][0], g["edges"][1]] = True
    checked = 0
    for value in np.unique(distance)[:4]:  # small distances, where p is not ~0
        sel = distance == value
        if sel.sum() < 2000:
            continue
        checked += 1
        expected = 1 / (1 + (value / 0.1) ** 2.0)
        observed = linked[i[sel], j[sel]].mean()
        assert observed == pytest.approx(expected, abs=4 * np.sqrt(0.25 / sel.sum()) + 1e-3)
    assert checked >= 3


def test_graph_is_undirected_without_self_loops_or_duplicates():
    data = load_ml_synthetic(seed=0, num_nodes=300)
    src, dst = data.edge_index
    assert (src != dst).all()
    pairs = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert len(pairs) == data.edge_index.size(1)
    assert all((d, s) in pairs for s, d in pairs)


def test_larger_alpha_gives_higher_homophily():
    graphs = [
        load_ml_synthetic(seed=0, num_nodes=600, alpha=a, b=0.05)
        for a in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
    ]
    hs = [label_homophily(g.edge_index, g.y) for g in graphs]
    assert all(x < y for x, y in zip(hs, hs[1:], strict=False)), hs


def test_larger_b_gives_more_edges():
    counts = [
        load_ml_synthetic(seed=0, num_nodes=600, alpha=4.0, b=b).edge_index.size(1)
        for b in (0.02, 0.05, 0.1, 0.2)
    ]
    assert all(x < y for x, y in zip(counts, counts[1:], strict=False)), counts


def test_sampling_never_builds_a_dense_n_by_n_matrix():
    n = 3000
    tracemalloc.start()
    generate_ml_graph(seed=0, num_nodes=n, alpha=8.0, b=0.03)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < n * n * 8  # one dense float64 n × n matrix would be 72 MB


def test_blocked_sampling_gives_the_unblocked_graph_when_edges_are_deterministic(monkeypatch):
    # alpha = 1e6 turns p = 1 / (1 + (d / b)^alpha) into a step: 1 for d < b, 0 for d > b
    # (b = 0.07 is no multiple of 1/20, so no pair sits at p = 1/2). The edges are then a
    # function of the labels alone, and 997-entry row blocks must find exactly the pairs
    # that one block over the whole upper triangle finds.
    whole = generate_ml_graph(seed=0, num_nodes=200, alpha=1e6, b=0.07)
    monkeypatch.setattr(ml_synthetic, "BLOCK_ENTRIES", 997)  # many tiny row blocks
    blocked = generate_ml_graph(seed=0, num_nodes=200, alpha=1e6, b=0.07)
    np.testing.assert_array_equal(blocked["y"], whole["y"])
    assert whole["edges"].shape[1] > 0
    pairs = {tuple(e) for e in whole["edges"].T.tolist()}
    assert {tuple(e) for e in blocked["edges"].T.tolist()} == pairs
    assert blocked["edges"].shape == whole["edges"].shape  # and no pair twice


def test_blocked_sampling_draws_as_many_edges_as_the_edge_model_expects(monkeypatch):
    # random edges: blocks consume the random stream differently, so compare the edge
    # count with its expectation sum_{i<j} p_ij, computed densely from the labels
    monkeypatch.setattr(ml_synthetic, "BLOCK_ENTRIES", 997)
    g = generate_ml_graph(seed=0, num_nodes=200, alpha=4.0, b=0.05)
    y = g["y"].astype(float)
    hamming = (y[:, None, :] != y[None, :, :]).sum(-1) / y.shape[1]
    p = 1.0 / (1.0 + (hamming / 0.05) ** 4.0)
    upper = np.triu(np.ones_like(p, dtype=bool), k=1)
    mean, sd = p[upper].sum(), np.sqrt((p * (1 - p))[upper].sum())
    assert abs(g["edges"].shape[1] - mean) < 4 * sd


@pytest.mark.parametrize("quality, kept", [(0.0, 0), (0.2, 2), (0.5, 5), (0.8, 8), (1.0, 10)])
def test_feature_quality_keeps_fraction_of_relevant_features(quality, kept):
    g = generate_ml_graph(seed=3, num_nodes=100, feature_quality=quality, irrelevant_features=4)
    assert g["x"].shape == (100, 14)  # width independent of r
    assert g["kept_features"].size == kept
    np.testing.assert_array_equal(g["x"][:, :kept], g["points"][:, g["kept_features"]])
    assert (np.abs(g["x"][:, kept:]) <= 1).all()


def test_loader_contract_and_split():
    data = load_ml_synthetic(seed=4, num_nodes=500, irrelevant_features=3)
    assert data.x.dtype == torch.float32 and data.x.shape == (500, 13)
    assert data.y.shape == (500, 20) and set(data.y.unique().tolist()) <= {0.0, 1.0}
    masks = torch.stack([data.train_mask, data.val_mask, data.test_mask])
    assert masks.dtype == torch.bool and (masks.sum(0) == 1).all()
    assert masks.sum(1).tolist() == [300, 100, 100]
    assert "noise" in data.feature_note


def test_find_alpha_b_hits_target_on_a_fresh_graph():
    alpha, b, measured = find_alpha_b(0.6)
    assert measured == pytest.approx(0.6, abs=0.01)
    data = load_ml_synthetic(seed=11, num_nodes=1500, alpha=alpha, b=b)
    assert label_homophily(data.edge_index, data.y) == pytest.approx(0.6, abs=0.05)


def test_find_alpha_b_explains_unreachable_targets():
    with pytest.raises(ValueError, match="not reachable"):
        find_alpha_b(0.95, b=0.12)


def released_synthetic1(mirror):
    folder = mirror / "MLGNC" / "Hyperspheres_10_10_0"
    x = np.loadtxt(folder / "features.csv", delimiter=",", skiprows=1)
    y = np.loadtxt(folder / "labels.csv", delimiter=",", skiprows=1).astype(bool)
    return x, y


def expected_homophily(y, alpha, b, rows=500):
    """Σ p_ij J_ij / Σ p_ij over pairs i < j: the homophily the edge rule gives on average."""
    yf = y.astype(np.float64)
    sizes = yf.sum(1)
    weighted = total = 0.0
    for start in range(0, len(y), rows):
        inter = yf[start : start + rows] @ yf.T
        union = sizes[start : start + rows, None] + sizes[None, :] - inter
        p = 1 / (1 + ((union - inter) / y.shape[1] / b) ** alpha)
        upper = np.arange(len(y))[None, :] > np.arange(start, start + len(inter))[:, None]
        weighted += (p * inter / union)[upper].sum()
        total += p[upper].sum()
    return weighted / total


def test_released_synthetic1_rows_come_in_the_recorded_sphere_blocks(mirror):
    _, y = released_synthetic1(mirror)
    owner = np.repeat(np.arange(20), SYNTHETIC1_SPHERE_SIZES)
    assert y[np.arange(3000), owner].all()  # block k's rows all carry label k
    for k in range(19):  # and label k's run of rows stops within 5 rows of its block's end
        end = sum(SYNTHETIC1_SPHERE_SIZES[: k + 1])
        assert not y[end : end + 6, k].all()


def test_generator_at_the_papers_parameters_matches_released_synthetic1(mirror):
    x_released, y_released = released_synthetic1(mirror)
    stage = sample_points(3000, 10, 20, np.random.default_rng(0), np.random.default_rng(0))
    y = stage["y"]
    assert y.sum(1).mean() == pytest.approx(y_released.sum(1).mean(), abs=0.15)  # 3.23
    target = expected_homophily(y_released, 8.8, 0.12)  # 0.377, as published
    assert expected_homophily(y, 8.8, 0.12) == pytest.approx(target, abs=0.025)
    # same point sampler: mean |x| of each row's largest, 2nd, … coordinate
    profile = np.sort(np.abs(stage["points"]), axis=1).mean(0)
    np.testing.assert_allclose(profile, np.sort(np.abs(x_released[:, :10]), 1).mean(0), atol=0.02)
