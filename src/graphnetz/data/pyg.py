"""Loaders for datasets that torch_geometric ships a class for (Planetoid, Karate, ...).

Each loader takes ``root`` (the project's data directory) and ``mirror`` (a folder of raw
files in torch_geometric's layout, or None). With a mirror the raw files are staged into
``root`` first, so torch_geometric finds them and never downloads; the mirror is only read.

:func:`load_pyg_dataset` serves every class of :data:`RAW_LAYOUTS` from one config
(``pyg_class: torch_geometric.datasets.<Class>``): where the class reads its raw files
(``<mirror>/<Class>/<Name>/raw/...``, the same path under ``root``) and how its objects
become what a task type takes (:mod:`graphnetz.data.pyg_adapt`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.utils import get_class
from torch_geometric.data import Data

from graphnetz.data import pyg_adapt
from graphnetz.data.mirror import build_from_mirror, resolve_mirror

PLANETOID_NAMES = ("Cora", "CiteSeer", "PubMed")
_PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")


def planetoid_raw_files(name: str) -> list[str]:
    return [f"ind.{name.lower()}.{suffix}" for suffix in _PLANETOID_SUFFIXES]


def load_planetoid(
    root: str | os.PathLike, mirror=None, *, name: str, split: str = "public"
) -> Data:
    """Planetoid citation graph with its canonical (public) split masks."""
    from torch_geometric.datasets import Planetoid

    if name not in PLANETOID_NAMES:
        raise ValueError(f"unknown Planetoid dataset {name!r}; valid: {list(PLANETOID_NAMES)}")
    base = Path(root) / "Planetoid"
    return build_from_mirror(
        name,
        mirror,
        f"Planetoid/{name}/raw",
        base / name / "raw",
        planetoid_raw_files(name),
        lambda: Planetoid(str(base), name, split=split)[0],
    )


def load_karate(root=None, mirror=None) -> Data:
    """Zachary's karate club (built into torch_geometric: no files, no download)."""
    from torch_geometric.datasets import KarateClub

    data = KarateClub()[0]
    del data.train_mask  # one labelled node per class is no split; the task draws a seeded one
    return data


# ------------------------------------------------------------ any torch_geometric class
@dataclass(frozen=True)
class RawLayout:
    """Where a torch_geometric class reads its raw files, relative to its ``root``.

    ``raw_dir(name)`` is the folder (also the path under the mirror's ``<Class>/``),
    ``files(name)`` the entries the class checks (files, or folders such as ModelNet's
    categories), ``names`` the valid ``name`` values (empty: the class takes none),
    ``splits`` the values of its ``split``/``train`` argument whose parts form the
    canonical split (empty: one object).
    """

    raw_dir: Callable[[str | None], str]
    files: Callable[[str | None], tuple[str, ...]]
    names: tuple[str, ...] = ()
    splits: tuple[Any, ...] = ()
    split_arg: str = "split"


def _rdkit() -> bool:
    try:
        import rdkit  # noqa: F401
    except ImportError:
        return False
    return True


_HETERO_NAMES = ("Roman-empire", "Amazon-ratings", "Minesweeper", "Tolokers", "Questions")
_MODELNET_10 = "bathtub bed chair desk dresser monitor night_stand sofa table toilet".split()
_MODELNET_40 = (
    "airplane bathtub bed bench bookshelf bottle bowl car chair cone cup curtain desk door "
    "dresser flower_pot glass_box guitar keyboard lamp laptop mantel monitor night_stand "
    "person piano plant radio range_hood sink sofa stairs stool table tent toilet tv_stand "
    "vase wardrobe xbox"
).split()
_SHAPENET_IDS = (
    "02691156 02773838 02954340 02958343 03001627 03261776 03467517 03624134 03636649 "
    "03642806 03790512 03797390 03948459 04099429 04225987 04379243"
).split()


THREE_PARTS = (("train", "train"), ("val", "val"), ("test", "test"))
TRAIN_TEST = (("train", True), ("test", False))  # classes split by a boolean ``train``


def _lower(name: str | None) -> str:
    return str(name).lower().replace("-", "_")


def _no_name(_: str | None) -> str:
    return "raw"


RAW_LAYOUTS: dict[str, RawLayout] = {
    "HeterophilousGraphDataset": RawLayout(
        lambda n: f"{_lower(n)}/raw", lambda n: (f"{_lower(n)}.npz",), _HETERO_NAMES
    ),
    "WikiCS": RawLayout(_no_name, lambda n: ("data.json",)),
    "MovieLens100K": RawLayout(_no_name, lambda n: ("u.item", "u.user", "u1.base", "u1.test")),
    "PPI": RawLayout(
        _no_name,
        lambda n: tuple(
            f"{s}_{f}"
            for s in ("train", "valid", "test")
            for f in ("feats.npy", "graph_id.npy", "graph.json", "labels.npy")
        ),
        splits=THREE_PARTS,
    ),
    "EllipticBitcoinDataset": RawLayout(
        _no_name,
        lambda n: tuple(f"elliptic_txs_{p}.csv" for p in ("features", "edgelist", "classes")),
    ),
    "MalNetTiny": RawLayout(
        _no_name,
        lambda n: ("malnet-graphs-tiny", "split_info_tiny/type"),
        splits=THREE_PARTS,
    ),
    "ModelNet": RawLayout(
        _no_name,
        lambda n: tuple(_MODELNET_10 if n == "10" else _MODELNET_40),
        ("10", "40"),
        splits=TRAIN_TEST,
        split_arg="train",
    ),
    "MNISTSuperpixels": RawLayout(
        _no_name, lambda n: ("MNISTSuperpixels.pt",), splits=TRAIN_TEST, split_arg="train"
    ),
    "GNNBenchmarkDataset": RawLayout(
        lambda n: f"{n}/raw",
        lambda n: (f"{n}_v2.pt" if n in ("MNIST", "CIFAR10") else f"{n}.pt",),
        ("MNIST", "CIFAR10"),
        splits=THREE_PARTS,
    ),
    "ShapeNet": RawLayout(
        _no_name,
        lambda n: (*_SHAPENET_IDS, "train_test_split"),
        splits=THREE_PARTS,
    ),
    "QM9": RawLayout(
        _no_name,
        lambda n: (
            ("gdb9.sdf", "gdb9.sdf.csv", "uncharacterized.txt") if _rdkit() else ("qm9_v3.pt",)
        ),
    ),
    "ZINC": RawLayout(
        _no_name,
        lambda n: tuple(
            f"{s}.{ext}" for ext in ("pickle", "index") for s in ("train", "val", "test")
        ),
        splits=THREE_PARTS,
    ),
    "LRGBDataset": RawLayout(
        lambda n: f"{_lower(n).replace('_', '-')}/raw",
        lambda n: ("train.pt", "val.pt", "test.pt"),
        ("Peptides-func", "Peptides-struct"),
        splits=THREE_PARTS,
    ),
}


def layout_of(pyg_class: str) -> tuple[str, RawLayout]:
    """The class name and raw layout of ``torch_geometric.datasets.<Class>``."""
    name = pyg_class.rsplit(".", 1)[-1]
    if name not in RAW_LAYOUTS:
        raise ValueError(
            f"no raw-file layout known for {pyg_class!r}; valid: "
            f"{[f'torch_geometric.datasets.{c}' for c in RAW_LAYOUTS]}"
        )
    return name, RAW_LAYOUTS[name]


def raw_location(pyg_class: str, name: str | None = None) -> tuple[str, tuple[str, ...]]:
    """``(<Class>/<raw dir>, entries)``: where the mirror (and ``root``) hold the raw files."""
    cls_name, layout = layout_of(pyg_class)
    return f"{cls_name}/{layout.raw_dir(name)}", layout.files(name)


def _entries_as_files(mirror: Path | None, relative_dir: str, entries) -> list[str]:
    """The entries, folders present in the mirror expanded into the files they hold."""
    files: list[str] = []
    for entry in entries:
        folder = mirror / relative_dir / entry if mirror else None
        if folder is not None and folder.is_dir():
            files += sorted(
                str(p.relative_to(mirror / relative_dir)) for p in folder.rglob("*") if p.is_file()
            )
        else:
            files.append(entry)
    return files


def load_pyg_dataset(
    root: str | os.PathLike,
    mirror=None,
    *,
    pyg_class: str,
    name: str | None = None,
    class_args: dict[str, Any] | None = None,
    adapt: str | None = None,
    **options: Any,
) -> Any:
    """A torch_geometric dataset, its raw files staged from the mirror when it has them.

    ``pyg_class`` is the class path (``torch_geometric.datasets.WikiCS``), ``name`` its
    ``name`` argument where it takes one, ``class_args`` its other arguments. Classes with a
    canonical split (``RawLayout.splits``) are built once per part and returned as
    ``{part: dataset}`` (``train``/``val``/``test``, or ``train``/``test``). ``adapt`` names a
    function of :mod:`graphnetz.data.pyg_adapt` that turns the result into what the
    dataset's task type takes (called with the remaining ``options``); without one a
    one-graph dataset is returned as its ``Data``.
    """
    cls_name, layout = layout_of(pyg_class)
    if layout.names and name not in layout.names:
        raise ValueError(f"unknown {cls_name} name {name!r}; valid: {list(layout.names)}")
    cls = get_class(pyg_class)
    base = Path(root) / cls_name
    kwargs = {"name": name} if layout.names else {}
    kwargs.update(class_args or {})

    def build() -> Any:
        if not layout.splits:
            return cls(str(base), **kwargs)
        return {
            part: cls(str(base), **kwargs, **{layout.split_arg: value})
            for part, value in layout.splits
        }

    relative_dir, entries = raw_location(pyg_class, name)
    mirror_path = resolve_mirror(mirror)
    files = _entries_as_files(mirror_path, relative_dir, entries)
    loaded = build_from_mirror(
        name or cls_name, mirror_path, relative_dir, base / layout.raw_dir(name), files, build
    )
    if adapt is None:
        # a one-graph dataset is returned as its graph (tasks take a Data object)
        return loaded[0] if not layout.splits and len(loaded) == 1 else loaded
    if adapt not in pyg_adapt.ADAPTERS:
        raise ValueError(f"unknown adapt {adapt!r}; valid: {list(pyg_adapt.ADAPTERS)}")
    return getattr(pyg_adapt, adapt)(loaded, **options)
