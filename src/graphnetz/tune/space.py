"""A search space: ``conf/hparams_search/<name>.yaml``, checked before anything trains.

Each entry of ``params`` maps a config path (``task.lr``) to a distribution:
``{type: float, low, high, log}``, ``{type: int, low, high, log}`` or
``{type: categorical, choices: [...]}``. ``budget`` (trials), ``inner_seeds``,
``sampler_seed`` and ``n_startup_trials`` are the study's defaults.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from graphnetz.config_dir import CONF_DIR

SPACE_DIR = CONF_DIR / "hparams_search"
TYPES = ("float", "int", "categorical")
#: what a categorical choice may be (what Optuna stores and compares)
CHOICE_TYPES = (str, int, float, bool, type(None))


class SpaceError(ValueError):
    """A search space that cannot be searched; the message says what and where."""


@dataclass(frozen=True)
class SearchSpace:
    name: str
    params: dict[str, dict[str, Any]]
    budget: int
    inner_seeds: tuple[int, ...]
    sampler_seed: int
    n_startup_trials: int

    def suggest(self, trial: Any) -> dict[str, Any]:
        """The trial's point: config path -> value (Optuna's suggest_* per entry)."""
        point = {}
        for key, dist in self.params.items():
            if dist["type"] == "categorical":
                point[key] = trial.suggest_categorical(key, list(dist["choices"]))
            else:
                suggest = trial.suggest_float if dist["type"] == "float" else trial.suggest_int
                point[key] = suggest(key, dist["low"], dist["high"], log=bool(dist.get("log")))
        return point


def available_spaces() -> list[str]:
    return sorted(p.stem for p in SPACE_DIR.glob("*.yaml"))


def load_space(name_or_path: str) -> SearchSpace:
    """The space named ``name`` in conf/hparams_search/, or the YAML file at a path."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = SPACE_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise SpaceError(
            f"search space {name_or_path!r} not found; available: {available_spaces()} "
            "(or give the path of a YAML file)"
        )
    try:
        raw = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except (yaml.YAMLError, OmegaConfBaseException, UnicodeDecodeError) as err:
        reason = " ".join(str(err).split())  # YAML's messages span lines
        raise SpaceError(
            f"search space {path} cannot be read: {type(err).__name__}: {reason}; a space "
            "file is a YAML mapping with 'params' (config path -> {type: float|int|"
            "categorical, ...}) and optional budget, inner_seeds, sampler_seed, "
            "n_startup_trials (docs/tuning.md)"
        ) from None
    return parse_space(path.stem, raw)


#: the keys of a space file, and of each distribution by type
SPACE_KEYS = ("params", "budget", "inner_seeds", "sampler_seed", "n_startup_trials")
DISTRIBUTION_KEYS = {
    "float": ("type", "low", "high", "log"),
    "int": ("type", "low", "high", "log"),
    "categorical": ("type", "choices"),
}
#: a seed is an integer in [0, SEED_LIMIT) (what numpy's and torch's seeding accept)
SEED_LIMIT = 2**32


def bad_seeds(seeds: Any) -> list[Any]:
    """The entries of ``seeds`` that are not integers in ``[0, 2**32)``."""
    return [s for s in seeds if not _is_int(s) or not 0 <= s < SEED_LIMIT]


def inner_seeds_arg(text: str) -> list[int]:
    """The ``--inner-seeds`` argument type: comma-separated integers >= 0 (below 2**32),
    distinct; a bad one is refused naming it."""
    parts = [x.strip() for x in text.split(",")]
    seeds: list[Any] = []
    for part in parts:
        try:
            seeds.append(int(part))
        except ValueError:
            seeds.append(part)
    bad = bad_seeds(seeds)
    if not text.strip() or bad:
        shown = ", ".join(map(repr, bad)) if bad else repr(text)
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers >= 0 (below 2**32), got {shown} in {text!r}"
        )
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"the inner seeds repeat a seed: {text!r}")
    return seeds


#: inner seeds of a space that names none: apart from a seed sweep's seed='range(10)'
DEFAULT_INNER_SEEDS = [100, 101, 102]


def parse_space(name: str, raw: Any) -> SearchSpace:
    if not isinstance(raw, dict) or not isinstance(raw.get("params"), dict) or not raw["params"]:
        raise SpaceError(f"search space {name!r} needs a non-empty mapping 'params'")
    unknown = [k for k in raw if k not in SPACE_KEYS]
    if unknown:
        raise SpaceError(f"{name}: unknown key(s) {unknown}; a space has {list(SPACE_KEYS)}")
    params = {str(k): _checked(name, str(k), v) for k, v in raw["params"].items()}
    seeds = raw.get("inner_seeds", DEFAULT_INNER_SEEDS)
    if not isinstance(seeds, list) or not seeds or bad_seeds(seeds):
        raise SpaceError(
            f"{name}: inner_seeds must be a non-empty list of integers >= 0 (below 2**32), "
            f"got {seeds!r}"
        )
    if len(set(seeds)) != len(seeds):
        raise SpaceError(f"{name}: inner_seeds repeat a seed: {seeds!r}")
    return SearchSpace(
        name=name,
        params=params,
        budget=_positive(name, "budget", raw.get("budget", 20)),
        inner_seeds=tuple(seeds),
        sampler_seed=_whole(name, "sampler_seed", raw.get("sampler_seed", 0)),
        n_startup_trials=_whole(name, "n_startup_trials", raw.get("n_startup_trials", 5)),
    )


def _checked(name: str, key: str, dist: Any) -> dict[str, Any]:
    where = f"{name}: params.{key}"
    if not isinstance(dist, dict) or dist.get("type") not in TYPES:
        got = dist.get("type") if isinstance(dist, dict) else dist
        raise SpaceError(f"{where}: type {got!r} is not one of {list(TYPES)}")
    unknown = [k for k in dist if k not in DISTRIBUTION_KEYS[dist["type"]]]
    if unknown:
        valid = list(DISTRIBUTION_KEYS[dist["type"]])
        raise SpaceError(f"{where}: unknown key(s) {unknown}; a {dist['type']} has {valid}")
    if dist["type"] == "categorical":
        choices = dist.get("choices")
        if not isinstance(choices, list) or not choices:
            raise SpaceError(f"{where}: categorical needs a non-empty list 'choices'")
        bad = [c for c in choices if not isinstance(c, CHOICE_TYPES)]
        if bad:
            raise SpaceError(
                f"{where}: choice {bad[0]!r} is not a single value; a choice is a string, "
                "number, boolean or null (a list or mapping cannot be one)"
            )
        return dist
    if not isinstance(dist.get("log", False), bool):
        raise SpaceError(f"{where}: log must be true or false, got {dist['log']!r}")
    low, high = dist.get("low"), dist.get("high")
    number = int if dist["type"] == "int" else (int, float)
    if not all(isinstance(v, number) and not isinstance(v, bool) for v in (low, high)):
        raise SpaceError(f"{where}: low and high must be {dist['type']}s, got {low!r}, {high!r}")
    if not low < high or (dist.get("log") and low <= 0):
        raise SpaceError(f"{where}: needs low < high (and low > 0 with log), got {low!r}, {high!r}")
    return dist


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _whole(name: str, key: str, value: Any) -> int:
    if not _is_int(value) or value < 0:
        raise SpaceError(f"{name}: {key} must be an integer >= 0, got {value!r}")
    return value


def _positive(name: str, key: str, value: Any) -> int:
    if not _is_int(value) or value < 1:
        raise SpaceError(f"{name}: {key} must be a positive integer, got {value!r}")
    return value
