"""Sweep job configs composed once per group choice equal Hydra's own composition."""

from __future__ import annotations

import pickle

import pytest
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.utils import create_config_search_path
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import OmegaConf

from graphnetz.config_dir import CONF_DIR
from graphnetz.sweep.composition import CachedComposition


def _loader_and_master(*overrides: str):
    loader = ConfigLoaderImpl(config_search_path=create_config_search_path(str(CONF_DIR)))
    master = loader.load_configuration("config", list(overrides), run_mode=RunMode.MULTIRUN)
    return loader, master


def _container(config):
    return OmegaConf.to_container(config, resolve=False)


@pytest.mark.parametrize(
    ("sweep", "warm", "job"),
    [
        (
            ["model=gcn,gat", "seed=range(3)"],
            ["model=gcn", "dataset=karate", "seed=0"],
            ["model=gcn", "dataset=karate", "seed=2"],
        ),
        (
            ["experiment=ml_real"],
            ["dataset=humloc", "model=lanc", "seed=0"],
            ["dataset=humloc", "model=lanc", "seed=1", "task.lr=0.001", "+extra=3"],
        ),
        (
            ["task=link_pred"],
            ["dataset=cora", "model.hidden_channels=16"],
            ["model.hidden_channels=32", "dataset=cora", "trainer.max_epochs=2"],
        ),
    ],
)
def test_a_cached_job_config_equals_hydras_composition(sweep, warm, job):
    loader, master = _loader_and_master(*sweep)
    cached = CachedComposition(loader)
    cached.load_sweep_config(master, warm)  # fills the cache for these group choices
    ours = cached.load_sweep_config(master, job)
    assert _container(ours) == _container(loader.load_sweep_config(master, job))
    assert list(ours.hydra.overrides.task) == job


def test_group_choices_are_composed_once_and_copies_stay_independent():
    loader, master = _loader_and_master()
    cached = CachedComposition(loader)
    first = cached.load_sweep_config(master, ["model=gcn", "seed=0"])
    second = cached.load_sweep_config(master, ["model=gcn", "seed=1"])
    cached.load_sweep_config(master, ["model=gat", "seed=0"])
    assert len(cached._composed) == 2  # gcn and gat, whatever the seed
    assert (first.seed, second.seed) == (0, 1)


def test_a_bad_value_override_fails_as_in_hydra():
    loader, master = _loader_and_master()
    job = ["model=gcn", "model.no_such_key=3"]
    with pytest.raises(ConfigCompositionException) as hydras:
        loader.load_sweep_config(master, job)
    with pytest.raises(ConfigCompositionException) as ours:
        CachedComposition(loader).load_sweep_config(master, job)
    assert str(ours.value) == str(hydras.value)


def test_a_job_composed_ahead_is_launched_with_that_config_once():
    loader, master = _loader_and_master()
    cached = CachedComposition(loader)
    job = ["model=gcn", "seed=3"]
    cached.compose_ahead(master, job)  # the sweeper's check of the batch
    ready = cached._ready[(id(master), tuple(job))]
    assert cached.load_sweep_config(master, job) is ready  # the launch takes it
    again = cached.load_sweep_config(master, job)  # a second launch composes its own
    assert again is not ready and _container(again) == _container(ready)
    with pytest.raises(ConfigCompositionException):  # a bad job fails at the check
        cached.compose_ahead(master, ["model=gcn", "model.no_such_key=3"])


def test_the_cached_loader_pickles_for_worker_processes():
    loader, master = _loader_and_master()
    cached = CachedComposition(loader)
    cached.load_sweep_config(master, ["seed=0"])
    cached.compose_ahead(master, ["seed=1"])
    copy = pickle.loads(pickle.dumps(cached))
    assert copy._composed == {} and copy._ready == {}
    assert copy.load_sweep_config(master, ["seed=4"]).seed == 4


def test_a_group_found_only_on_the_searchpath_is_composed_as_a_group(tmp_path):
    # a tuning study's config root: +tuned=X must select the group, not set `tuned: X`
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "mine.yaml").write_text("# @package _global_\ntask:\n  lr: 0.123\n")
    searchpath = f"hydra.searchpath=[file://{tmp_path}]"
    loader, master = _loader_and_master("seed=0,1", searchpath)
    cached = CachedComposition(loader)
    job = ["+tuned=mine", "seed=1"]
    cached.load_sweep_config(master, ["+tuned=mine", "seed=0"])
    ours = cached.load_sweep_config(master, job)
    assert ours.task.lr == 0.123 and "tuned" not in ours
    assert _container(ours) == _container(loader.load_sweep_config(master, job))
