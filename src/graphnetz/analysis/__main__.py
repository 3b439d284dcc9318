"""``python -m graphnetz.analysis dataset=<name> [paths.data_mirror=...] [out=<folder>] [edges=...]``.

Composes the project's Hydra config from ``conf/`` (any override works, e.g.
``dataset=ml_synthetic dataset.loader.alpha=8 seed=3``), loads the dataset through its
config's ``loader`` and writes ``statistics.csv/.md``, ``ccns.csv`` and the label-count
histogram and CCNS heatmap (PNG + PDF) to ``out`` (default
``<paths.output_dir>/analysis/<folder>/``, see :func:`default_folder`) with the loader
parameters (and seed) in ``loader.yaml``, printing the statistics row. ``dataset=`` is required and must name a multi-label
dataset (task type ``ml_node_cls``); anything else is refused before a file is written.

``edges=simple`` (default) describes the graph the models train on (simple, undirected);
``edges=as_released`` computes the edge columns on the edge file as released, the
multi-label study's convention (see :func:`graphnetz.analysis.statistics.dataset_statistics`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from graphnetz.analysis.statistics import EDGE_CONVENTIONS
from graphnetz.config_dir import CONF_DIR

CONF_ENV = "GRAPHNETZ_CONF_DIR"


def find_conf_dir() -> Path:
    """``$GRAPHNETZ_CONF_DIR``, else ``./conf``, else GraphNetz's own configs."""
    candidates = [os.environ.get(CONF_ENV), Path.cwd() / "conf", CONF_DIR]
    for c in candidates:
        if c and (Path(c) / "dataset").is_dir():
            return Path(c).resolve()
    raise FileNotFoundError(f"no conf/ folder with a dataset/ group found (tried {candidates})")


def multilabel_datasets(conf_dir: Path) -> list[str]:
    """The dataset configs of ``conf_dir`` whose task types include ``ml_node_cls``."""
    names = []
    for path in sorted((conf_dir / "dataset").glob("*.yaml")):
        task_types = OmegaConf.load(path).get("task_types") or []
        if "ml_node_cls" in task_types:
            names.append(path.stem)
    return names


def _dataset_name(conf_dir: Path, overrides: list[str]) -> str:
    """The ``dataset=`` argument; the analysis describes one multi-label dataset, so
    there is no default."""
    name = next((o.split("=", 1)[1] for o in overrides if o.startswith("dataset=")), None)
    if name is None:
        raise SystemExit(
            "usage: python -m graphnetz.analysis dataset=<name> [key=value ...]; "
            f"multi-label datasets: {multilabel_datasets(conf_dir)}"
        )
    return name


def _dataset_file(conf_dir: Path, overrides: list[str]) -> Path:
    """The ``dataset=`` config file; an unknown name is refused before anything is
    composed, naming the multi-label datasets."""
    name = _dataset_name(conf_dir, overrides)
    path = conf_dir / "dataset" / f"{name}.yaml"
    if not path.is_file():
        raise SystemExit(
            f"unknown dataset {name!r}; multi-label datasets: {multilabel_datasets(conf_dir)}"
        )
    return path


def _dataset_only(conf_dir: Path, overrides: list[str]) -> DictConfig:
    """Fallback without ``conf/config.yaml``: the dataset group file plus dotlist overrides."""
    path = _dataset_file(conf_dir, overrides)
    base = OmegaConf.create(
        {
            "seed": 0,
            "dataset": OmegaConf.load(path),
            "paths": {
                "data_dir": os.environ.get("GRAPHNETZ_DATA_DIR", "data"),
                "output_dir": os.environ.get("GRAPHNETZ_OUTPUT_DIR", "outputs"),
                "data_mirror": os.environ.get("GRAPHNETZ_DATA_MIRROR"),
            },
        }
    )
    rest = [o.lstrip("+") for o in overrides if not o.startswith("dataset=")]
    return OmegaConf.merge(base, OmegaConf.from_dotlist(rest))


def compose_config(overrides: Sequence[str]) -> DictConfig:
    """The project config (``conf/config.yaml``) with overrides, or the dataset-only fallback."""
    conf_dir = find_conf_dir()
    overrides = list(overrides)
    if not (conf_dir / "config.yaml").is_file():
        cfg = _dataset_only(conf_dir, overrides)
    else:
        from hydra import compose, initialize_config_dir

        _dataset_file(conf_dir, overrides)
        with initialize_config_dir(config_dir=str(conf_dir), version_base=None):
            cfg = compose("config", overrides=overrides)
    task_types = OmegaConf.select(cfg, "dataset.task_types", default=None)
    if task_types is not None and "ml_node_cls" not in task_types:
        raise SystemExit(
            f"dataset {cfg.dataset.name!r} is not multi-label (its task types: "
            f"{list(task_types)}); the analysis needs one of {multilabel_datasets(conf_dir)}"
        )
    return cfg


def _takes_seed(cfg: DictConfig) -> bool:
    from hydra.utils import get_method

    return "seed" in inspect.signature(get_method(cfg.dataset.loader._target_)).parameters


def load_from_config(cfg: DictConfig) -> Any:
    """Instantiate ``cfg.dataset.loader`` with root, mirror (and seed if it takes one)."""
    from hydra.utils import instantiate

    extra: dict[str, Any] = {
        "root": OmegaConf.select(cfg, "paths.data_dir", default="data"),
        "mirror": OmegaConf.select(cfg, "paths.data_mirror", default=None),
    }
    if _takes_seed(cfg):
        extra["seed"] = _seed(cfg)
    return instantiate(cfg.dataset.loader, **extra)


SAFE_FOLDER = re.compile(r"[A-Za-z0-9._=,+-]+")
MAX_FOLDER = 100


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(_text, value))
    return str(value)


def default_folder(cfg: DictConfig, conf_dir: Path) -> str:
    """The default output folder name: the dataset name, then each loader parameter that
    differs from the dataset's own config file (``key=value``, sorted by key), then
    ``seed=<n>`` when the loader draws the graph from the run seed; so analyses of
    different generator parameters or seeds never share a folder. A suffix that is too
    long or not filename-safe becomes ``params-<12 hex of its SHA-256>``."""
    name = str(cfg.dataset.name)
    given = OmegaConf.to_container(cfg.dataset.loader, resolve=True)
    path = conf_dir / "dataset" / f"{name}.yaml"
    default = OmegaConf.load(path).get("loader") if path.is_file() else None
    default = OmegaConf.to_container(default, resolve=False) if default is not None else {}
    parts = [
        f"{key}={_text(value)}"
        for key, value in sorted(given.items())
        if key != "_target_" and (key not in default or default[key] != value)
    ]
    if _takes_seed(cfg):
        parts.append(f"seed={_seed(cfg)}")
    if not parts:
        return name
    suffix = "_".join(parts)
    if len(suffix) > MAX_FOLDER or not SAFE_FOLDER.fullmatch(suffix):
        digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]
        suffix = f"params-{digest}"
    return f"{name}_{suffix}"


def _option(args: list[str], key: str) -> str | None:
    """The value of this CLI's own ``key=value`` argument (also ``+key=``), if given."""
    return next((a.split("=", 1)[1] for a in args if a.lstrip("+").startswith(f"{key}=")), None)


def _seed(cfg: DictConfig) -> int:
    """The run seed as an integer; anything else is refused naming the value."""
    value = OmegaConf.select(cfg, "seed", default=0)
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"seed={value!r} is not an integer") from None
    if isinstance(value, float | bool) or (isinstance(value, str) and str(seed) != value.strip()):
        raise ValueError(f"seed={value!r} is not an integer")
    return seed


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost ``__cause__`` (what a loader itself raised inside ``instantiate``)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _message(exc: BaseException) -> str:
    from hydra.errors import InstantiationException

    if isinstance(exc, InstantiationException) and exc.__cause__ is not None:
        exc = _root_cause(exc)
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: {str(exc.filename)!r}"
    return str(exc).strip() or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the analysis; bad input (an unknown or invalid override, loader parameters
    the loader refuses, a missing data mirror, an ``out`` that is a file) ends with
    ``error: <message>`` on stderr and exit status 2, before anything is written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(__doc__)
        raise SystemExit(0)
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from graphnetz.data.mirror import DatasetUnavailableError

    try:
        return _main(args)
    except (
        HydraException,
        OmegaConfBaseException,
        DatasetUnavailableError,
        ValueError,
        OSError,
    ) as exc:
        print(f"error: {_message(exc)}", file=sys.stderr)
        raise SystemExit(2) from None


def _main(args: list[str]) -> dict[str, Any]:
    own = {key: _option(args, key) for key in ("out", "edges")}
    out, edges = own["out"], own["edges"] or "simple"
    if edges not in EDGE_CONVENTIONS:
        raise SystemExit(f"edges={edges!r} is not one of {list(EDGE_CONVENTIONS)}")
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise ValueError(f"out={out!r} is a file, not a folder")
    overrides = [a for a in args if not a.lstrip("+").startswith(("out=", "edges="))]
    cfg = compose_config(overrides)
    name = cfg.dataset.name
    if edges == "as_released":
        from graphnetz.data.multilabel_released import READERS

        if name not in READERS:
            raise ValueError(
                f"no released edge list is known for dataset {name!r}; "
                f"edges=as_released is available for {sorted(READERS)}"
            )
    if _takes_seed(cfg):
        _seed(cfg)
    if out is None:
        output_dir = Path(OmegaConf.select(cfg, "paths.output_dir", default="outputs"))
        out = output_dir / "analysis" / default_folder(cfg, find_conf_dir())
        if out.exists() and not out.is_dir():
            raise ValueError(f"the output folder {str(out)!r} is a file, not a folder")
    data = load_from_config(cfg)
    released = None
    if edges == "as_released":
        from graphnetz.data.multilabel_released import released_edges

        released = released_edges(
            name,
            OmegaConf.select(cfg, "paths.data_dir", default="data"),
            OmegaConf.select(cfg, "paths.data_mirror", default=None),
        )

    from .report import analyse_dataset, statistics_table, table_markdown

    row = analyse_dataset(data, name, out, released)
    # the parameters the graph was drawn with, next to its statistics
    loader = {"loader": OmegaConf.to_container(cfg.dataset.loader, resolve=True)}
    if _takes_seed(cfg):
        loader["seed"] = _seed(cfg)
    OmegaConf.save(OmegaConf.create(loader), Path(out) / "loader.yaml")
    print(f"edges: {edges}" + (" (the edge file as released)" if released is not None else ""))
    print(table_markdown(statistics_table([row])), end="")
    print(f"features: {getattr(data, 'feature_note', '?')}")
    print(f"wrote {out}")
    return row


if __name__ == "__main__":
    main()
