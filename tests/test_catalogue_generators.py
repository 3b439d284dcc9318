"""The seed-aware generators: determinism, sizes, and each target checked by another solver.

Expected values come from independent implementations (scipy's k-d tree for the k-NN graph,
networkx's max-flow and matching algorithms, a brute-force flip check for max-cut) or from
physics (the Ising ground state; the high-temperature nearest-neighbour correlation tanh βJ).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from scipy.spatial import cKDTree

from graphnetz.data import combinatorial as comb
from graphnetz.data.ising import load_ising

GENERATORS = {
    "tsp": comb.load_tsp,
    "vrp": comb.load_vrp,
    "graph_colouring": comb.load_graph_colouring,
    "max_flow": comb.load_max_flow,
    "bipartite_matching": comb.load_bipartite_matching,
    "max_cut": comb.load_max_cut,
    "ising": load_ising,
}


def pairs(edge_index: torch.Tensor) -> set[tuple[int, int]]:
    return {tuple(p) for p in edge_index.t().tolist()}


def assert_simple_undirected(edge_index: torch.Tensor) -> None:
    edges = pairs(edge_index)
    assert len(edges) == edge_index.size(1)  # no duplicates
    assert all(a != b for a, b in edges)  # no self-loops
    assert all((b, a) in edges for a, b in edges)  # both directions


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_graph_other_seed_other_graph(name):
    make = GENERATORS[name]
    a, b, c = make(seed=3), make(seed=3), make(seed=4)
    assert torch.equal(a.edge_index, b.edge_index)
    if a.x is not None:
        assert torch.equal(a.x, b.x)
    differs = not torch.equal(a.edge_index, c.edge_index) or (
        a.x is not None and not torch.equal(a.x, c.x)
    )
    assert differs
    assert_simple_undirected(a.edge_index)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generators_leave_the_global_generators_alone(name):
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()[1].copy()
    GENERATORS[name](seed=0)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], np_state)


def test_tsp_is_200_points_in_the_unit_square_with_the_symmetric_4nn_graph():
    data = comb.load_tsp(seed=0)
    assert data.num_nodes == 200 and data.x.shape == (200, 2)
    assert torch.equal(data.x, data.pos)
    assert bool((data.x >= 0).all() and (data.x < 1).all())
    points = data.pos.double().numpy()
    _, nearest = cKDTree(points).query(points, k=5)  # itself + 4 neighbours
    expected = {(i, int(j)) for i in range(200) for j in nearest[i, 1:]}
    expected |= {(j, i) for i, j in expected}
    assert pairs(data.edge_index) == expected


def test_vrp_features_are_position_demand_and_depot_flag():
    data = comb.load_vrp(seed=0, num_customers=30, num_depots=2, k=3)
    assert data.x.shape == (32, 4)
    assert data.x[:2, 3].tolist() == [1.0, 1.0] and data.x[2:, 3].sum() == 0
    assert data.x[:2, 2].tolist() == [0.0, 0.0]
    assert bool((data.x[2:, 2] > 0).all() and (data.x[2:, 2] <= 1).all())


def test_colouring_graph_has_erdos_renyi_density_and_a_proper_colouring():
    data = comb.load_graph_colouring(seed=0)
    n, p = 200, 0.1
    m = data.edge_index.size(1) // 2
    mean, sd = p * n * (n - 1) / 2, (p * (1 - p) * n * (n - 1) / 2) ** 0.5
    assert abs(m - mean) < 5 * sd
    src, dst = data.edge_index
    assert not bool((data.y[src] == data.y[dst]).any())  # adjacent nodes differ in colour
    assert data.num_colours == int(data.y.unique().numel())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_flow_value_equals_networkx_on_the_same_arcs(seed):
    data = comb.load_max_flow(seed=seed, num_nodes=40, edge_prob=0.1)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(40))
    for (u, v), cap in zip(data.arc_index.t().tolist(), data.capacity.tolist(), strict=True):
        graph.add_edge(u, v, capacity=cap)
    assert data.flow_value == pytest.approx(nx.maximum_flow_value(graph, 0, 39))
    assert data.x[0].tolist() == [1.0, 0.0] and data.x[39].tolist() == [0.0, 1.0]


@pytest.mark.parametrize("seed", [0, 1])
def test_matching_is_a_maximum_weight_matching_as_networkx_finds(seed):
    size = 20
    data = comb.load_bipartite_matching(seed=seed, size=size, edge_prob=0.2)
    graph = nx.Graph()
    src, dst = data.edge_index
    for u, v, w in zip(src.tolist(), dst.tolist(), data.edge_weight.tolist(), strict=True):
        if u < v:
            assert u < size <= v  # every edge joins the two sides
            graph.add_edge(u, v, weight=w)
    best = nx.max_weight_matching(graph)
    best_weight = sum(graph[u][v]["weight"] for u, v in best)
    assert data.matching_weight == pytest.approx(best_weight, rel=1e-6)
    matched = data.matching.t().tolist()
    assert all(graph.has_edge(u, v) for u, v in matched)
    assert len({u for u, _ in matched} | {v for _, v in matched}) == 2 * len(matched)


def test_max_cut_no_single_flip_improves_and_cut_value_adds_up():
    data = comb.load_max_cut(seed=0, num_nodes=60, edge_prob=0.1)
    side = data.y.numpy()
    weights = np.zeros((60, 60))
    src, dst = data.edge_index.numpy()
    weights[src, dst] = data.edge_weight.numpy()
    upper = src < dst
    across = side[src[upper]] != side[dst[upper]]
    assert data.cut_value == pytest.approx(weights[src[upper], dst[upper]][across].sum(), rel=1e-5)
    for v in range(60):
        flipped = side.copy()
        flipped[v] = 1 - flipped[v]
        assert comb.cut_weight(weights, flipped) <= data.cut_value + 1e-9


def test_ising_is_a_20x20_open_square_lattice_of_pm1_spins():
    data = load_ising(seed=0)
    assert data.num_nodes == 400 and data.x.shape == (400, 1)
    assert set(data.x.view(-1).tolist()) <= {-1.0, 1.0}
    assert data.edge_index.size(1) == 2 * 2 * 20 * 19  # 760 lattice bonds, both directions
    rows, cols = data.edge_index // 20, data.edge_index % 20
    assert bool(((rows[0] - rows[1]).abs() + (cols[0] - cols[1]).abs() == 1).all())


def test_ising_at_the_reference_definition_is_its_grid_and_bernoulli_spins():
    """lattice=reference: every node joined to its up to 8 neighbours and to itself
    (PyG's grid, the reference package's graph); spins=bernoulli: its independent
    draws, P(+1) = (1 + tanh(1/T)) / 2 from a torch generator seeded with the seed."""
    import torch

    data = load_ising(seed=3, side=6, lattice="reference", spins="bernoulli")
    rows, cols = data.edge_index // 6, data.edge_index % 6
    chebyshev = torch.maximum((rows[0] - rows[1]).abs(), (cols[0] - cols[1]).abs())
    assert bool((chebyshev <= 1).all())
    pairs = set(map(tuple, data.edge_index.t().tolist()))
    expected = {
        (r1 * 6 + c1, r2 * 6 + c2)
        for r1 in range(6)
        for c1 in range(6)
        for r2 in range(6)
        for c2 in range(6)
        if max(abs(r1 - r2), abs(c1 - c2)) <= 1
    }
    assert pairs == expected and data.edge_index.size(1) == len(expected)  # self-loops too
    gen = torch.Generator().manual_seed(3)
    p_up = (1 + np.tanh(1 / 2.27)) / 2
    spins = np.where(torch.rand((36, 1), generator=gen).numpy() < p_up, 1.0, -1.0)
    assert np.array_equal(data.x.numpy(), spins)
    # the default task is unchanged: Metropolis spins on the 4-neighbour lattice
    assert torch.equal(
        load_ising(seed=3, side=6).edge_index,
        load_ising(seed=3, side=6, lattice="square").edge_index,
    )
    assert torch.equal(
        load_ising(seed=3, side=6).x, load_ising(seed=3, side=6, spins="metropolis").x
    )
    with pytest.raises(ValueError, match="lattice.*'square'.*'hexagonal'"):
        load_ising(seed=0, lattice="hexagonal")
    with pytest.raises(ValueError, match="spins.*'metropolis'.*'gibbs'"):
        load_ising(seed=0, spins="gibbs")


def test_ising_cold_lattice_orders_and_hot_lattice_follows_tanh_beta():
    cold = load_ising(seed=0, side=10, temperature=0.5, sweeps=300)
    bonds = 2 * 10 * 9
    assert cold.energy == pytest.approx(-bonds / 100, abs=0.15)  # (near) ground state
    # high temperature: <s_i s_j> ≈ tanh(1/T) for nearest neighbours
    temperature = 10.0
    energies = [
        load_ising(seed=s, side=20, temperature=temperature, sweeps=50).energy for s in range(8)
    ]
    expected = -np.tanh(1 / temperature) * (2 * 20 * 19) / 400
    assert np.mean(energies) == pytest.approx(expected, abs=0.06)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: comb.load_tsp(seed=0, num_nodes=5, k=5), "k must be smaller"),
        (lambda: comb.load_graph_colouring(seed=0, edge_prob=1.5), "edge_prob"),
        (lambda: load_ising(seed=0, temperature=0), "temperature"),
        (lambda: comb.load_max_flow(seed=0, num_nodes=1), "num_nodes"),
    ],
)
def test_bad_sizes_are_refused_with_the_value(call, message):
    with pytest.raises(ValueError, match=message):
        call()
