"""The pairing fingerprint: runs of one seed share it, a changed split or negatives do not,
and the report marks seed-pairs whose fingerprints differ as unpaired."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch_geometric.data import Data

from graphnetz.report import BenchmarkReport
from graphnetz.run_record import RunRecord
from graphnetz.tasks.graph_tasks import GraphClassificationTask
from graphnetz.tasks.link_tasks import LinkPredictionTask
from graphnetz.tasks.node_tasks import NodeClassificationTask
from graphnetz.training.pairing import dataset_content, digest, pairing_fingerprint
from graphnetz.training.run import run_experiment

RANDOM = {"type": "random", "train": 0.6, "val": 0.2}


def _graph(seed: int = 0) -> Data:
    g = torch.Generator().manual_seed(seed)
    edges = torch.randint(0, 40, (2, 160), generator=g)
    edges = torch.cat([edges, edges.flip(0)], dim=1)
    return Data(
        x=torch.randn(40, 5, generator=g),
        edge_index=edges,
        y=torch.randint(0, 3, (40,), generator=g),
        num_nodes=40,
    )


def _node(dataset, seed, split=RANDOM):
    return pairing_fingerprint(dataset, NodeClassificationTask.prepare(dataset, seed, split))


def test_same_data_and_seed_give_the_same_fingerprint():
    assert _node(_graph(), 0) == _node(_graph(), 0)


def test_another_split_changes_only_the_split_digest():
    base, other = _node(_graph(), 0), _node(_graph(), 0, {**RANDOM, "train": 0.5})
    assert base["dataset"] == other["dataset"] and base["split"] != other["split"]


def test_other_dataset_content_changes_the_dataset_digest():
    changed = _graph()
    changed.x[0, 0] += 1.0
    assert _node(_graph(), 0)["dataset"] != _node(changed, 0)["dataset"]


def test_a_kept_dataset_digest_follows_every_change_of_the_dataset():
    """A loaded dataset's digest is kept for the next run of the process, and computed
    again when a tensor is modified in place, replaced, or another value changes."""
    dataset = _graph()
    first = _node(dataset, 0)["dataset"]
    assert _node(dataset, 1)["dataset"] == first == digest(dataset_content(dataset))
    assert not hasattr(dataset, "train_mask")  # a run's split is its copy's, not the cache's
    dataset.x[0, 0] += 1.0  # in place: a new version
    changed = _node(dataset, 0)["dataset"]
    assert changed != first and changed == digest(dataset_content(dataset))
    dataset.y = dataset.y.flip(0)  # another tensor
    assert _node(dataset, 0)["dataset"] == digest(dataset_content(dataset)) != changed
    dataset.num_nodes = 41  # not a tensor
    assert _node(dataset, 0)["dataset"] == digest(dataset_content(dataset))


def test_link_prediction_fingerprints_its_evaluation_negatives():
    data = Data(edge_index=_graph().edge_index, num_nodes=40)
    first = pairing_fingerprint(data, LinkPredictionTask.prepare(data, 0))
    again = pairing_fingerprint(data, LinkPredictionTask.prepare(data, 0))
    other = pairing_fingerprint(data, LinkPredictionTask.prepare(data, 1))
    assert set(first) == {"dataset", "split", "negatives"} and first == again
    assert other["negatives"] != first["negatives"] and other["split"] != first["split"]


def test_graph_level_split_is_fingerprinted_by_the_graphs_of_each_split():
    graphs = []
    for i in range(20):
        g = _graph(i)
        graphs.append(Data(x=g.x, edge_index=g.edge_index, y=torch.tensor([i % 2])))

    def fingerprint(seed):
        return pairing_fingerprint(graphs, GraphClassificationTask.prepare(graphs, seed))

    assert fingerprint(0) == fingerprint(0)
    assert fingerprint(0)["split"] != fingerprint(1)["split"]
    assert fingerprint(0)["dataset"] == fingerprint(1)["dataset"]


def test_a_shuffled_in_memory_dataset_is_other_content():
    from torch_geometric.datasets import FakeDataset

    dataset = FakeDataset(num_graphs=6, avg_num_nodes=8)
    shuffled = dataset[torch.tensor([5, 4, 3, 2, 1, 0])]  # same store, other indices
    assert digest(dataset_content(dataset)) == digest(dataset_content(dataset))
    assert digest(dataset_content(dataset)) != digest(dataset_content(shuffled))


def test_digest_tells_dtype_and_shape_apart():
    assert digest(torch.zeros(4, dtype=torch.int32)) != digest(torch.zeros(2, dtype=torch.int64))
    assert digest(torch.arange(6).view(2, 3)) != digest(torch.arange(6).view(3, 2))


def _karate(make_cfg, model, *extra):
    cfg = make_cfg("dataset=karate", f"model={model}", "trainer.max_epochs=2", "seed=0", *extra)
    record = run_experiment(cfg)
    assert record.status == "ok", record.error
    return record


def test_sparse_features_are_fingerprinted_by_their_entries():
    # BlogCatalog's one-hot ids are a sparse identity: hashed by indices and values,
    # whatever the sparse layout
    ids = torch.eye(6)
    assert digest(ids.to_sparse()) == digest(ids.to_sparse_csr())
    other = ids.clone()
    other[0, 1] = 1.0
    assert digest(ids.to_sparse()) != digest(other.to_sparse())
    assert digest(ids.to_sparse()) != digest(ids)


def test_a_deliberately_mismatched_split_is_reported_unpaired(make_cfg):
    gcn = _karate(make_cfg, "gcn")
    mlp = _karate(make_cfg, "mlp")
    assert gcn.pairing == mlp.pairing  # two models, one seed: the same data
    moved = _karate(make_cfg, "mlp", "dataset.split.train=0.5")
    assert moved.pairing["split"] != gcn.pairing["split"]
    records = [gcn.to_dict(), {**moved.to_dict(), "model": "mlp_moved"}]
    report = BenchmarkReport.from_records(records)
    with pytest.warns(UserWarning, match="not paired"):
        text = report.to_markdown()
    unpaired = report.analysis().unpaired
    assert unpaired[["model_a", "model_b", "seed", "differs"]].values.tolist() == [
        ["gcn", "mlp_moved", 0, "split"]
    ]
    assert "## Paired-design check" in text
    pair = report.pairwise().iloc[0]
    assert pair["n_common"] == 0 and "unpaired seed(s) 0" in pair["note"]


def test_records_without_a_fingerprint_read_as_none_and_are_not_flagged(make_cfg):
    rec = _karate(make_cfg, "gcn").to_dict()
    old = {k: v for k, v in rec.items() if k != "pairing"}
    assert RunRecord.from_dict(old).pairing is None
    report = BenchmarkReport.from_records([rec, {**old, "model": "other"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert report.analysis().unpaired.empty
