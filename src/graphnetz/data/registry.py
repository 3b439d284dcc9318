"""The dataset catalogue, built from ``conf/dataset/*.yaml``: category -> task type -> names.

``LOADER_REGISTRY[category][task_type]`` lists the dataset configs (by ``name``) of that
category serving that task type, the names sorted; :func:`catalogue` gives each config's
entry (task types, natural task, epochs, loader). :func:`offline_availability` says
whether a dataset can be loaded here without a network: generated and built-in data
always can; others when their raw files are in the data directory already or in the
mirror (``paths.data_mirror`` / ``$GRAPHNETZ_DATA_MIRROR``); when they are in neither, the
loader downloads them, except from a source with no download path (:data:`NO_DOWNLOAD`),
whose files must be placed by hand. It reads only file names, never loads a dataset. A
loader outside this package can say where its files live by carrying a
``raw_sources(**loader_kwargs) -> [(mirror_dir, data_dir_subdir, files)]`` attribute
(``files`` None: the folder must exist and hold a file).
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hydra.utils import get_method
from omegaconf import OmegaConf

from graphnetz.config_dir import CONF_DIR

Source = tuple[str, str, "tuple[str, ...] | list[str] | None"]


@dataclass(frozen=True)
class CatalogueEntry:
    """One ``conf/dataset/<file>.yaml``: ``dataset=<file>`` selects it."""

    config: str
    name: str
    category: str
    task_types: tuple[str, ...]
    natural_task: str | None
    epochs: Mapping[str, int]
    loader: Mapping[str, Any] = field(repr=False)
    #: ``split:`` of the config (None: the dataset's canonical split or the loader's own).
    split: Any = None

    @property
    def loader_kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in self.loader.items() if k != "_target_"}


def _natural_task(cfg: Mapping) -> str | None:
    for entry in cfg.get("defaults") or []:
        if isinstance(entry, Mapping):
            for key, value in entry.items():
                if key.split()[-1].startswith("/task"):
                    return value
    return None


def catalogue(conf_dir: Path = CONF_DIR) -> list[CatalogueEntry]:
    """Every dataset config, in file-name order."""
    entries = []
    for path in sorted((Path(conf_dir) / "dataset").glob("*.yaml")):
        cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        missing = [k for k in ("name", "category", "task_types", "loader") if k not in cfg]
        if missing:
            raise ValueError(f"dataset config {path} lacks {missing}")
        entries.append(
            CatalogueEntry(
                config=path.stem,
                name=cfg["name"],
                category=cfg["category"],
                task_types=tuple(cfg["task_types"]),
                natural_task=_natural_task(cfg),
                epochs=MappingProxyType(dict(cfg.get("epochs") or {})),
                loader=MappingProxyType(dict(cfg["loader"])),
                split=cfg.get("split"),
            )
        )
    return entries


def build_registry(entries: list[CatalogueEntry]) -> dict[str, dict[str, list[str]]]:
    """``{category: {task_type: [names, sorted]}}``, categories and task types sorted."""
    registry: dict[str, dict[str, list[str]]] = {}
    for entry in entries:
        for task_type in entry.task_types:
            registry.setdefault(entry.category, {}).setdefault(task_type, []).append(entry.name)
    return {c: {t: sorted(registry[c][t]) for t in sorted(registry[c])} for c in sorted(registry)}


LOADER_REGISTRY: dict[str, dict[str, list[str]]] = build_registry(catalogue())


# ----------------------------------------------------------------- offline availability
@dataclass(frozen=True)
class Availability:
    """``offline`` True / False, or None when the loader does not say where its files are."""

    offline: bool | None
    how: str

    def __str__(self) -> str:
        word = {True: "yes", False: "no", None: "?"}[self.offline]
        return f"{word} ({self.how})"


def _same(folder: str, files) -> list[Source]:
    return [(folder, folder, tuple(files))]


def _fixed(folder: str, files) -> Callable[..., list[Source]]:
    """The sources of a loader that reads the same files whatever its arguments."""
    return lambda **_: _same(folder, files)


def _sources_table() -> dict[str, Callable[..., list[Source]]]:
    from graphnetz.data import hyperspheres, knowledge, multilabel, pyg, tu

    return {
        "graphnetz.data.pyg.load_planetoid": lambda name, **_: _same(
            f"Planetoid/{name}/raw", pyg.planetoid_raw_files(name)
        ),
        "graphnetz.data.pyg.load_pyg_dataset": lambda pyg_class, name=None, **_: _same(
            *pyg.raw_location(pyg_class, name)
        ),
        "graphnetz.data.tu.load_tudataset": lambda name, **_: _same(
            f"TUDataset/{name}/raw", tu.tu_raw_files(name)
        ),
        "graphnetz.data.knowledge.load_fb15k_237": lambda **_: _same(
            "FB15k_237/raw", knowledge.KG_FILES
        ),
        "graphnetz.data.knowledge.load_wn18rr": lambda **_: _same(
            "WordNet18RR/raw", knowledge.KG_FILES
        ),
        **{
            f"graphnetz.data.multilabel.load_{name}": _fixed(folder, files)
            for name, (folder, files) in multilabel.RAW_FILES.items()
        },
        "graphnetz.data.hyperspheres.load_hyperspheres": _fixed(
            hyperspheres.FOLDER, hyperspheres.RAW_FILES
        ),
        "graphnetz.data.multilabel.load_yelp": lambda **_: _same("Yelp/raw", multilabel.YELP_FILES),
        "graphnetz.data.multilabel.load_ogbn_proteins": lambda **_: [
            ("ogbn_proteins", "ogb/ogbn_proteins", multilabel.PROTEINS_FILES)
        ],
        "graphnetz.data.coauthorship.load_dblp_coauthorship": lambda **_: _same(
            "MLGNC/dblp", ["dblp.edgelist"]
        ),
        "graphnetz.data.ogb.load_ogb": lambda name, **_: [
            (name.replace("-", "_"), f"ogb/{name.replace('-', '_')}", None)
        ],
    }


def _network_sources(name: str, network: str | None = None, **_) -> list[Source]:
    """The network catalogue's mirror file (``<mirror>/networks/<folder>/<file>``, also
    read from the data dir in that layout); an entry without one only downloads, into
    the data dir's ``networks/netzschleuder/<catalogue>/<network>.csv.zip``."""
    from graphnetz.data.networks import network_entry  # the network-catalogue loader's table

    entry = network_entry(name)
    network = str(network) if network is not None else entry.default_network
    local = entry.mirror_file(network)
    if local is None:  # in the data dir once downloaded: the archive the loader keeps
        archive = f"networks/netzschleuder/{entry.catalogue}"
        return [(f"networks/{name} (download only)", archive, [f"{network}.csv.zip"])]
    folder = f"networks/{local.folder}"
    return [(folder, folder, [local.file])]


NETWORK_LOADER = "graphnetz.data.networks.load_network"
BUILT_IN = ("graphnetz.data.pyg.load_karate",)
NEEDS_OGB = ("graphnetz.data.ogb.load_ogb", "graphnetz.data.multilabel.load_ogbn_proteins")
#: Mirror folders whose source has no automatic download: the MLGNC repository's ``data/``
#: (the multi-label datasets, their hyperspheres points, DBLP co-authorship). A loader
#: reading one of them fails offline and online alike until its files are placed by hand.
NO_DOWNLOAD = ("MLGNC",)


def has_download(sources: list[Source]) -> bool:
    """Whether a loader reading ``sources`` can fetch them itself when they are absent."""
    return not any(Path(remote).parts[0] in NO_DOWNLOAD for remote, _, _ in sources)


def _holds(folder: Path, files) -> bool:
    if files is None:
        return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))
    return all((folder / f).exists() for f in files)


def _describer(entry: CatalogueEntry) -> Callable[..., list[Source]] | None:
    target = entry.loader["_target_"]
    table = {**_sources_table(), NETWORK_LOADER: _network_sources}
    return table.get(target) or getattr(get_method(target), "raw_sources", None)


def entry_sources(entry: CatalogueEntry) -> list[Source] | None:
    """``[(mirror_dir, data_dir_subdir, files)]`` the entry's loader reads (files None:
    any file of the folder); None for a loader that does not say (or reads no files)."""
    describe = _describer(entry)
    return None if describe is None else describe(**entry.loader_kwargs)


def offline_availability(
    entry: CatalogueEntry, data_dir: str | Path | None, mirror: str | Path | None
) -> Availability:
    """Whether ``entry`` loads here without a network, and from where."""
    target = entry.loader["_target_"]
    loader = get_method(target)
    describe = _describer(entry)
    if describe is None and "seed" in inspect.signature(loader).parameters:
        return Availability(True, "generated")  # a seeded generator that reads no files
    if target in BUILT_IN:
        return Availability(True, "built in")
    if target in NEEDS_OGB and importlib.util.find_spec("ogb") is None:
        return Availability(False, "needs ogb: pip install graphnetz[ogb]")
    if describe is None:
        return Availability(None, f"{target} does not say where its files are")
    sources = describe(**entry.loader_kwargs)
    data_dir = Path(data_dir) if data_dir else None
    mirror = Path(mirror) if mirror else None
    if data_dir is not None and all(_holds(data_dir / local, f) for _, local, f in sources):
        return Availability(True, "data dir")
    if mirror is not None and all(_holds(mirror / remote, f) for remote, _, f in sources):
        return Availability(True, "mirror")
    if not has_download(sources):  # the raw files go into the mirror or data dir by hand
        return Availability(False, "mirror only")
    return Availability(False, "download")
