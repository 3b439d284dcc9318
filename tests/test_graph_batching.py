"""Mini-batches cut from a split collated once equal torch_geometric's collation; the
full-batch loader yields and draws what torch's DataLoader does."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from graphnetz.tasks.graph_batching import SplitBatcher
from graphnetz.tasks.node_tasks import full_batch_loader


def _graphs(n: int, *, edge_attr: bool = False, labels: int = 0) -> list[Data]:
    gen = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(n):
        nodes = 2 + i % 5
        edges = torch.randint(0, nodes, (2, 3 + i % 4), generator=gen)
        y = torch.rand(1, labels, generator=gen) if labels else torch.tensor([i % 2])
        graph = Data(x=torch.randn(nodes, 3, generator=gen), edge_index=edges, y=y)
        if edge_attr:
            graph.edge_attr = torch.randn(edges.size(1), 2, generator=gen)
        graphs.append(graph)
    return graphs


def _assert_same_batch(ours: Batch, pyg: Batch) -> None:
    assert set(ours.keys()) == set(pyg.keys())
    for key in pyg.keys():
        assert torch.equal(ours[key], pyg[key]), key
    assert ours.num_graphs == pyg.num_graphs


def test_a_gathered_batch_equals_pygs_collation_of_the_same_graphs():
    for kwargs in ({}, {"edge_attr": True}, {"labels": 4}):
        graphs = _graphs(23, **kwargs)
        index = torch.tensor([7, 0, 22, 3, 3, 15])
        ours = SplitBatcher(graphs, batch_size=4).gather(index)
        _assert_same_batch(ours, Batch.from_data_list([graphs[i] for i in index]))


def test_an_epoch_draws_the_batches_pygs_shuffled_loader_draws():
    graphs = _graphs(37)
    torch.manual_seed(5)
    pyg = list(DataLoader(graphs, batch_size=8, shuffle=True))
    after_pyg = torch.get_rng_state()
    torch.manual_seed(5)
    ours = list(SplitBatcher(graphs, batch_size=8))
    assert len(ours) == len(pyg) == 5
    for a, b in zip(ours, pyg, strict=True):
        _assert_same_batch(a, b)
    assert torch.equal(torch.get_rng_state(), after_pyg)  # the same draws, so later ones too


def test_graphs_with_other_attributes_are_collated_by_pyg():
    graphs = _graphs(9)
    for g in graphs:
        g.pos = torch.zeros(g.num_nodes, 2)
    batcher = SplitBatcher(graphs, batch_size=4)
    assert batcher.whole is None
    torch.manual_seed(1)
    ours = list(batcher)
    torch.manual_seed(1)
    for a, b in zip(ours, DataLoader(graphs, batch_size=4, shuffle=True), strict=True):
        _assert_same_batch(a, b)


def test_scalar_or_node_level_targets_are_collated_by_pyg():
    scalar = [Data(x=torch.ones(3, 1), edge_index=torch.tensor([[0], [1]]), y=torch.tensor(1.0))]
    per_node = [Data(x=torch.ones(3, 1), edge_index=torch.tensor([[0], [1]]), y=torch.ones(3))]
    assert SplitBatcher(scalar * 4, batch_size=2).whole is None
    assert SplitBatcher(per_node * 4, batch_size=2).whole is None


def test_the_full_batch_loader_yields_and_draws_what_a_dataloader_does():
    graph = _graphs(1)[0]
    epochs = {}
    for name, loader in (
        ("torch", TorchDataLoader([graph], batch_size=1, collate_fn=lambda b: b[0])),
        ("ours", full_batch_loader(graph)),
    ):
        torch.manual_seed(11)
        epochs[name] = [list(loader) for _ in range(3)], torch.get_rng_state(), len(loader)
    (ours, ours_rng, ours_len), (theirs, theirs_rng, theirs_len) = epochs["ours"], epochs["torch"]
    assert all(batch is graph for epoch in ours for batch in epoch)
    assert [len(e) for e in ours] == [len(e) for e in theirs] == [1, 1, 1]
    assert torch.equal(ours_rng, theirs_rng)  # one base-seed draw per epoch, as torch's
    assert ours_len == theirs_len == 1


def test_lightning_can_rebuild_the_full_batch_loader():
    """Lightning re-creates a loader from its constructor's arguments (to inject a
    sampler); the full-batch loader keeps DataLoader's constructor for that."""
    from lightning.pytorch.utilities.data import _update_dataloader
    from torch.utils.data import SequentialSampler

    graph = _graphs(1)[0]
    loader = full_batch_loader(graph)
    rebuilt = _update_dataloader(loader, SequentialSampler(loader.dataset))
    assert type(rebuilt) is type(loader) and [b for b in rebuilt] == [graph]
