"""A run's identity: a stable hash of the part of its resolved config that decides its result.

Two runs with the same identity compute the same thing: same dataset with the same options,
same task with every hyperparameter, same model, same seed, same result-bearing trainer
settings. Left out (:data:`RESULT_NEUTRAL_KEYS`, :data:`TRAINER_NEUTRAL_KEYS`): where data
and outputs live (``paths``), resume and checkpoint settings, the torch thread count and the
trainer's display settings. Job numbers, start times and launchers are never in a run's
config, so they are never in its identity either.

The thread count is left out on purpose: it changes floating-point sums in their last digits
(results are bit-identical only for equal thread counts) but not what was run, and a sweep
resumed with ``hydra/launcher=joblib`` (one thread per job) must still find the runs it made
sequentially. The record stores the count it ran with (``RunRecord.num_threads``).

The identity is the SHA-256 of the canonical JSON (sorted keys, no spaces) of that part; the
run directory carries its first :data:`SHORT_LENGTH` hex digits.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

#: Top-level settings that change how a run executes but not its result (resume an earlier
#: sweep with resume=true, another thread count or from another folder with another mirror,
#: and its complete runs still count): where data and outputs live is not what was run.
RESULT_NEUTRAL_KEYS = (
    "resume",
    "num_threads",
    "checkpoint_every_s",
    "fit_loop",
    "stack_seeds",
    "paths",
    "hydra",
)
#: Trainer settings that only change what is displayed or logged.
TRAINER_NEUTRAL_KEYS = ("enable_progress_bar", "enable_model_summary", "logger")
#: Hex digits of the identity in a run directory's name (48 bits: collisions between
#: the runs of one sweep are negligible up to millions of runs).
SHORT_LENGTH = 12
#: A run directory named by identity ends with ``_<SHORT_LENGTH hex digits>``.
SHORT_SUFFIX = re.compile(rf"_([0-9a-f]{{{SHORT_LENGTH}}})$")


def result_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a stored config that decides a run's result (what resume compares):
    without the neutral keys, and without an empty ``local`` group (present only on
    machines with a ``conf/local/default.yaml``)."""
    kept = {
        k: v
        for k, v in config.items()
        if k not in RESULT_NEUTRAL_KEYS and not (k == "local" and not v)
    }
    trainer = kept.get("trainer")
    if isinstance(trainer, Mapping):
        kept["trainer"] = {k: v for k, v in trainer.items() if k not in TRAINER_NEUTRAL_KEYS}
    return kept


def config_identity(config: Mapping[str, Any]) -> str:
    """The identity (64 hex digits) of a run's config; the same for ``config`` and for
    ``result_config(config)``."""
    canonical = json.dumps(
        result_config(config), sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def short_identity(identity: str) -> str:
    return identity[:SHORT_LENGTH]


def run_dir_name(dataset: Any, task_type: Any, model: Any, seed: Any, identity: str) -> str:
    """``<dataset>_<task type>_<model>_s<seed>_<short identity>``: readable, and unique per
    identity (characters other than letters, digits, ``.``, ``_`` and ``-`` become ``-``)."""
    parts = [str(p) for p in (dataset, task_type, model, f"s{seed}")]
    readable = "_".join(re.sub(r"[^A-Za-z0-9._-]+", "-", p) for p in parts)
    return f"{readable}_{short_identity(identity)}"


def identity_in_name(name: str) -> str | None:
    """The short identity a run directory's name ends with, or None (an older job-number
    directory such as ``3_karate_gcn_s0``)."""
    match = SHORT_SUFFIX.search(name)
    return match.group(1) if match else None


def config_value(config: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted key of a plain config (None where absent)."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
