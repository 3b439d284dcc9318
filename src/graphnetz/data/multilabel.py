"""Loaders of the multi-label node-classification datasets.

PCG, HumLoc, EukLoc, BlogCatalog, DBLP, Yelp and OGB-Proteins.

Every loader is ``load_<name>(root, mirror=None, **params) -> Data`` with

* ``x`` float ``[N, F]`` (BlogCatalog: a *sparse* COO identity, see :func:`load_blogcatalog`),
* ``edge_index`` long ``[2, E]``: undirected (both directions), no self loops, no duplicates,
* ``y`` float ``[N, C]`` in {0, 1},
* ``train_mask``/``val_mask``/``test_mask`` bool ``[N]`` (one predefined split) or ``[N, K]``
  (K predefined splits; training uses column ``seed % K``),
* ``feature_note``: where the node features came from; ``split_note``: which split is used
  (shipped files, or seeded 60/20/20 when they are absent or overlap).

MLGNC files (PCG, HumLoc, EukLoc, BlogCatalog, DBLP) come from the data mirror
(``<mirror>/MLGNC/...``, layout of the ``Tianqi-py/MLGNC`` repository's ``data/`` folder);
they are copied into ``<root>/MLGNC/<same path>`` and parsed there; the processed graph is
cached in ``<root>/MLGNC/processed/<name>[-split<seed>].pt`` and built again when a raw
file changes in the mirror. The mirror is only ever read.
Yelp and OGB-Proteins come from torch_geometric / ogb downloads (or a mirror holding their
raw files).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from graphnetz.atomic import write_atomic

from .mirror import DatasetUnavailableError, resolve_mirror, stage_files, unavailable

MLGNC_SOURCE = (
    "https://github.com/Tianqi-py/MLGNC/tree/e7f609fbc226cff5d4ec2a8eed114a4c2177b51f/data"
)
CACHE_VERSION = 2
SPLIT_FILES = ("split_0.pt", "split_1.pt", "split_2.pt")
#: The raw files each MLGNC loader reads: (folder under the mirror, files).
RAW_FILES = {
    "pcg": ("MLGNC/pcg_removed_isolated_nodes", ("features.csv", "labels.csv", "edges_undir.csv")),
    "humloc": ("MLGNC/HumanGo", ("features.csv", "labels.csv", "edge_list.csv", "split.pt")),
    "eukloc": ("MLGNC/EukaryoteGo", ("features.csv", "labels.csv", "edge_list.csv", "split.pt")),
    "blogcatalog": ("MLGNC", ("blogcatalog.mat",)),
    "dblp": ("MLGNC/dblp", ("dblp.edgelist", "labels.txt")),
}
#: Where the shipped splits ``SPLIT_FILES`` of a loader lie (seeded splits replace them
#: when they are absent or overlap).
SPLIT_DIRS = {
    "pcg": "MLGNC/pcg_removed_isolated_nodes_0.6",
    "blogcatalog": "MLGNC/blogcatalog_0.6",
    "dblp": "MLGNC/dblp/dblp_0.6",
}


# ----------------------------------------------------------------------------- helpers
def undirected_edge_index(src: np.ndarray, dst: np.ndarray, num_nodes: int) -> torch.Tensor:
    """Both directions of every pair, self loops and duplicates removed, sorted by (src, dst)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst
    a = np.r_[src[keep], dst[keep]]
    b = np.r_[dst[keep], src[keep]]
    key = np.unique(a * num_nodes + b)
    return torch.from_numpy(np.stack([key // num_nodes, key % num_nodes]))


def masks_from_indices(splits: Sequence[dict[str, Any]], num_nodes: int) -> dict[str, torch.Tensor]:
    """Index-tensor splits (MLGNC's ``split*.pt``) → bool masks ``[N]`` (K = 1) or ``[N, K]``."""
    out = {}
    for key in ("train_mask", "val_mask", "test_mask"):
        mask = torch.zeros(num_nodes, len(splits), dtype=torch.bool)
        for k, split in enumerate(splits):
            mask[torch.as_tensor(split[key]).long(), k] = True
        out[key] = mask[:, 0] if len(splits) == 1 else mask
    return out


def random_split_masks(
    num_nodes: int, seed: int, num_splits: int = 1, fractions: tuple[float, float] = (0.6, 0.2)
) -> dict[str, torch.Tensor]:
    """Seeded random train/val/test masks (default 60/20/20); split k uses seed + k."""
    splits = []
    for k in range(num_splits):
        perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(seed + k))
        n_train = int(round(fractions[0] * num_nodes))
        n_val = int(round(fractions[1] * num_nodes))
        splits.append(
            {
                "train_mask": perm[:n_train],
                "val_mask": perm[n_train : n_train + n_val],
                "test_mask": perm[n_train + n_val :],
            }
        )
    return masks_from_indices(splits, num_nodes)


def _build_data(x, edge_index, y, masks, feature_note: str, split_note: str) -> Data:
    return Data(
        x=x,
        edge_index=edge_index,
        y=y.float(),
        feature_note=feature_note,
        split_note=split_note,
        num_nodes=int(y.shape[0]),
        **masks,
    )


def _stage(
    name: str, root: str | os.PathLike, mirror, relative_dir: str, files: Sequence[str]
) -> Path:
    """Stage MLGNC raw files into ``root/relative_dir`` or raise an actionable error."""
    mirror_path = resolve_mirror(mirror)
    target = Path(root) / relative_dir
    if not stage_files(
        mirror_path, relative_dir, target, files, name, processed=_built(root, name)
    ):
        hint = FileNotFoundError(
            f"MLGNC data has no automatic download; fetch {MLGNC_SOURCE}/"
            f"{relative_dir.removeprefix('MLGNC/')} into {target}"
        )
        raise unavailable(name, mirror_path, relative_dir, files, hint)
    return target


def split_overlaps(masks: dict[str, torch.Tensor]) -> dict[str, int]:
    """Nodes shared by two of train/val/test, summed over splits (all 0 for a valid split)."""
    tr, va, te = (masks[k] for k in ("train_mask", "val_mask", "test_mask"))
    return {
        "train&val": int((tr & va).sum()),
        "train&test": int((tr & te).sum()),
        "val&test": int((va & te).sum()),
    }


def _mlgnc_splits(
    name: str, root, mirror, relative_dir: str, num_nodes: int, split_seed: int
) -> tuple[dict[str, torch.Tensor], str]:
    """The shipped ``split_{0,1,2}.pt`` as [N, 3] masks, plus a note saying what was used.

    Falls back to three seeded 60/20/20 splits (seeds split_seed + k) when the files are
    absent, or when they are not disjoint: overlapping train/val/test sets would leak
    test labels into training or model selection (MLGNC's DBLP splits do overlap).
    """
    try:
        folder = _stage(name, root, mirror, relative_dir, SPLIT_FILES)
    except DatasetUnavailableError:
        note = f"seeded 60/20/20 (seeds {split_seed}..{split_seed + 2}): split files absent"
        return random_split_masks(num_nodes, split_seed, num_splits=len(SPLIT_FILES)), note
    splits = [torch.load(folder / f, weights_only=True) for f in SPLIT_FILES]
    masks = masks_from_indices(splits, num_nodes)
    overlaps = split_overlaps(masks)
    if any(overlaps.values()):
        note = (
            f"seeded 60/20/20 (seeds {split_seed}..{split_seed + 2}): the shipped "
            f"{relative_dir}/split_*.pt overlap ({overlaps}, summed over 3 splits)"
        )
        warnings.warn(f"{name}: {note}", stacklevel=3)
        return random_split_masks(num_nodes, split_seed, num_splits=len(SPLIT_FILES)), note
    return masks, f"shipped {relative_dir}/split_{{0,1,2}}.pt"


def _built(root, name: str) -> list[Path]:
    """The cached graphs of ``name`` (built from its staged raw files)."""
    processed = Path(root) / "MLGNC" / "processed"
    return [*processed.glob(f"{name}.pt"), *processed.glob(f"{name}-split*.pt")]


def _cached(root, mirror, name: str, build: Callable[[], Data], split_seed: int | None = None):
    """Load ``root/MLGNC/processed/<name>[-split<seed>].pt`` or build and write it atomically.

    The raw files are staged first (:func:`graphnetz.data.mirror.stage_files`): when a
    staged copy is replaced (the mirror's file changed), every cached graph of ``name`` is
    removed and built again from the new files. ``split_seed`` is part of the file name,
    since seeded splits (DBLP's always) depend on it.
    """
    processed = Path(root) / "MLGNC" / "processed"
    built = _built(root, name)
    sources = [RAW_FILES[name]] + ([(SPLIT_DIRS[name], SPLIT_FILES)] if name in SPLIT_DIRS else [])
    mirror_path = resolve_mirror(mirror)
    for relative_dir, files in sources:
        target = Path(root) / relative_dir
        stage_files(mirror_path, relative_dir, target, files, name, processed=built)
    key = name if split_seed is None else f"{name}-split{split_seed}"
    path = processed / f"{key}.pt"
    if path.is_file():
        stored = torch.load(path, weights_only=True)
        if stored.get("version") == CACHE_VERSION:
            note = stored.pop("feature_note")
            stored.pop("version")
            return Data(feature_note=note, num_nodes=int(stored["y"].shape[0]), **stored)
    data = build()
    payload = {k: data[k] for k in data.keys() if k != "num_nodes"}
    payload["version"] = CACHE_VERSION
    write_atomic(path, lambda handle: torch.save(payload, handle), "wb")
    return data


def _read_matrix(path: Path, header=None) -> torch.Tensor:
    return torch.from_numpy(pd.read_csv(path, header=header).to_numpy(dtype=np.float32))


# ------------------------------------------------------------------ biological datasets
def load_pcg(root: str, mirror=None, split_seed: int = 0) -> Data:
    """PCG (protein phenotypes): 3233 nodes, 32 given features, 15 labels, 3 shipped splits."""

    def build() -> Data:
        folder = _stage("pcg", root, mirror, *RAW_FILES["pcg"])
        x = _read_matrix(folder / "features.csv")
        y = _read_matrix(folder / "labels.csv")
        edges = pd.read_csv(folder / "edges_undir.csv", header=None).to_numpy(np.int64)
        n = y.shape[0]
        masks, split_note = _mlgnc_splits("pcg", root, mirror, SPLIT_DIRS["pcg"], n, split_seed)
        return _build_data(
            x,
            undirected_edge_index(edges[:, 0], edges[:, 1], n),
            y,
            masks,
            "given: 32 protein features",
            split_note,
        )

    return _cached(root, mirror, "pcg", build, split_seed)


def _load_go(name: str, root, mirror) -> Data:
    """HumLoc/EukLoc: edge_list.csv (prot1, prot2 as floats + per-type weights, ignored)."""

    def build() -> Data:
        rel = RAW_FILES[name][0]
        folder = _stage(name, root, mirror, *RAW_FILES[name])
        x = _read_matrix(folder / "features.csv")
        y = _read_matrix(folder / "labels.csv")
        edges = pd.read_csv(folder / "edge_list.csv", usecols=["prot1", "prot2"])
        edges = edges.to_numpy(np.float64).round().astype(np.int64)
        n = y.shape[0]
        split = torch.load(folder / "split.pt", weights_only=True)
        return _build_data(
            x,
            undirected_edge_index(edges[:, 0], edges[:, 1], n),
            y,
            masks_from_indices([split], n),
            "given: 32 protein sequence features",
            f"shipped {rel}/split.pt",
        )

    return _cached(root, mirror, name, build)


def load_humloc(root: str, mirror=None) -> Data:
    """HumLoc (MLGNC/HumanGo): 3106 proteins, 32 features, 14 locations, predefined split."""
    return _load_go("humloc", root, mirror)


def load_eukloc(root: str, mirror=None) -> Data:
    """EukLoc (MLGNC/EukaryoteGo): 7766 proteins, 32 features, 22 locations, predefined split."""
    return _load_go("eukloc", root, mirror)


# ------------------------------------------------------------------- social datasets
def sparse_identity(num_nodes: int) -> torch.Tensor:
    """A sparse COO identity: one-hot node ids at O(N) memory (dense would be O(N²))."""
    idx = torch.arange(num_nodes).repeat(2, 1)
    return torch.sparse_coo_tensor(
        idx, torch.ones(num_nodes), (num_nodes, num_nodes), check_invariants=True
    ).coalesce()


def load_blogcatalog(
    root: str, mirror=None, split_seed: int = 0, features: str = "sparse_identity"
) -> Data:
    """BlogCatalog: 10312 bloggers, 39 interest groups, no node features.

    ``features="sparse_identity"`` (default): x is a sparse COO identity, i.e. a one-hot
    node id. A linear first layer on it *is* a learnable per-node embedding, and
    ``F.linear``/PyG convolutions accept sparse COO input, so nothing dense of size N² is
    ever built (a dense float32 identity would take 425 MB). ``features="dense_identity"``
    builds the dense matrix for code that cannot take sparse input.
    """
    choices = ("sparse_identity", "dense_identity")
    if features not in choices:
        raise ValueError(f"features={features!r} is not one of {choices}")

    def build() -> Data:
        from scipy.io import loadmat

        folder = _stage("blogcatalog", root, mirror, *RAW_FILES["blogcatalog"])
        mat = loadmat(folder / "blogcatalog.mat")
        adj = mat["network"].tocoo()
        y = torch.from_numpy(np.asarray((mat["group"] != 0).todense(), dtype=np.float32))
        n = y.shape[0]
        masks, split_note = _mlgnc_splits(
            "blogcatalog", root, mirror, SPLIT_DIRS["blogcatalog"], n, split_seed
        )
        return _build_data(
            sparse_identity(n), undirected_edge_index(adj.row, adj.col, n), y, masks, "", split_note
        )

    data = _cached(root, mirror, "blogcatalog", build, split_seed)
    if features == "dense_identity":
        data.x = data.x.to_dense()
    data.feature_note = (
        f"identity (BlogCatalog has no features; {features.replace('_', ' ')}"
        " one-hot node ids, equivalent to a learnable node embedding)"
    )
    return data


def structural_features(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Five standardised structural features for featureless graphs (DBLP's fallback).

    Columns: log(1 + degree); local clustering; mean log(1 + degree) of the neighbours;
    random-walk return probabilities P²_ii and P³_ii (P = D⁻¹A), the k = 2, 3 entries of
    the random-walk positional encoding. Each column is z-scored.
    """
    from ..analysis.statistics import local_clustering, simple_adjacency

    adj = simple_adjacency(edge_index, num_nodes)
    deg = np.asarray(adj.sum(1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    p = adj.multiply(inv[:, None]).tocsr()
    p2 = p @ p
    logdeg = np.log1p(deg)
    cols = [
        logdeg,
        local_clustering(adj),
        np.asarray(p @ logdeg).ravel(),
        np.asarray(p2.diagonal()).ravel(),
        np.asarray(p2.multiply(p.T).sum(1)).ravel(),  # (P³)_ii = Σ_j (P²)_ij P_ji
    ]
    feats = np.stack(cols, 1)
    std = feats.std(0)
    feats = (feats - feats.mean(0)) / np.where(std > 0, std, 1.0)
    return torch.from_numpy(feats.astype(np.float32))


def load_dblp(root: str, mirror=None, split_seed: int = 0) -> Data:
    """DBLP (MLGNC co-authorship): 28702 authors, 4 research areas.

    The shipped ``dblp_0.6/split_*.pt`` are not disjoint (train ∩ val ≈ 3400 nodes and
    val ∩ test ≈ 1100 per split; ≈ 4600 nodes in none), so three seeded 60/20/20
    splits replace them (see ``split_note``).

    The original node features (split zip archives over 4 MiB) are absent offline, so x
    is the structural fallback of :func:`structural_features` (recorded in feature_note).
    """

    def build() -> Data:
        folder = _stage("dblp", root, mirror, *RAW_FILES["dblp"])
        y = _read_matrix(folder / "labels.txt")
        edges = pd.read_csv(folder / "dblp.edgelist", sep="\t", header=None).to_numpy(np.int64)
        n = y.shape[0]
        edge_index = undirected_edge_index(edges[:, 0], edges[:, 1], n)
        masks, split_note = _mlgnc_splits("dblp", root, mirror, SPLIT_DIRS["dblp"], n, split_seed)
        return _build_data(
            structural_features(edge_index, n),
            edge_index,
            y,
            masks,
            "structural fallback (DBLP features missing offline): z-scored "
            "log-degree, clustering, mean neighbour log-degree, random-walk "
            "return probabilities k=2,3",
            split_note,
        )

    return _cached(root, mirror, "dblp", build, split_seed)


# ------------------------------------------------------- download-backed large datasets
YELP_FILES = ("adj_full.npz", "feats.npy", "class_map.json", "role.json")


def load_yelp(root: str, mirror=None) -> Data:
    """Yelp (GraphSAINT) via ``torch_geometric.datasets.Yelp``; mirror layout ``Yelp/raw``."""
    from torch_geometric.datasets import Yelp

    mirror_path = resolve_mirror(mirror)
    target = Path(root) / "Yelp"
    stage_files(mirror_path, "Yelp/raw", target / "raw", YELP_FILES, "yelp")
    try:
        data = Yelp(str(target))[0]
    except Exception as exc:  # offline: the Google-Drive download fails
        raise unavailable("yelp", mirror_path, "Yelp/raw", YELP_FILES, exc) from exc
    n = data.num_nodes
    return _build_data(
        data.x,
        undirected_edge_index(*data.edge_index.numpy(), n),
        data.y,
        {k: data[k] for k in ("train_mask", "val_mask", "test_mask")},
        "given: 300-dim review word2vec features",
        "GraphSAINT split",
    )


PROTEINS_FILES = (
    tuple(
        f"raw/{f}.csv.gz"
        for f in (
            "edge",
            "edge-feat",
            "node-label",
            "node_species",
            "num-node-list",
            "num-edge-list",
        )
    )
    + tuple(f"split/species/{s}.csv.gz" for s in ("train", "valid", "test"))
    + ("RELEASE_v1.txt",)
)


def load_ogbn_proteins(root: str, mirror=None) -> Data:
    """OGB-Proteins via the optional ``ogb`` package (``pip install graphnetz[ogb]``).

    The nodes have no features; x is the mean of the 8-dim features of incident edges
    (the usual rule for this dataset). Mirror layout: ``ogbn_proteins/{raw,split}/...``.
    """
    try:
        from ogb.nodeproppred import PygNodePropPredDataset
    except ImportError as exc:
        raise ImportError(
            "dataset 'ogbn_proteins' needs the optional 'ogb' package: "
            "pip install graphnetz[ogb]  (or: pip install ogb)"
        ) from exc
    mirror_path = resolve_mirror(mirror)
    base = Path(root) / "ogb"
    stage_files(
        mirror_path, "ogbn_proteins", base / "ogbn_proteins", PROTEINS_FILES, "ogbn_proteins"
    )
    try:
        dataset = PygNodePropPredDataset("ogbn-proteins", root=str(base))
    except Exception as exc:
        raise unavailable(
            "ogbn_proteins", mirror_path, "ogbn_proteins", PROTEINS_FILES, exc
        ) from exc
    data, split = dataset[0], dataset.get_idx_split()
    n = data.num_nodes
    src, dst = data.edge_index
    x = torch.zeros(n, data.edge_attr.size(1)).index_add_(0, dst, data.edge_attr.float())
    x /= torch.bincount(dst, minlength=n).clamp(min=1).unsqueeze(1)
    masks = masks_from_indices(
        [{"train_mask": split["train"], "val_mask": split["valid"], "test_mask": split["test"]}], n
    )
    return _build_data(
        x,
        undirected_edge_index(src.numpy(), dst.numpy(), n),
        data.y,
        masks,
        "mean of incident edge features (proteins have no node features)",
        "OGB species split",
    )
