"""A ``task.*`` key the task type does not take is refused, naming every setting it has."""

from __future__ import annotations

import re

import pytest
import yaml

from graphnetz.cli.list import dataset_table
from graphnetz.config_dir import CONF_DIR
from graphnetz.training.resolve import ConfigError, resolve_run

TASK_TYPES = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml"))


def refusal(make_cfg, *overrides: str) -> str:
    with pytest.raises(ConfigError) as err:
        resolve_run(make_cfg(*overrides))
    return str(err.value)


def listed_settings(message: str) -> set[str]:
    return set(re.findall(r"'(\w+)'", message.split("its settings are ")[1]))


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_the_settings_named_include_every_key_its_task_config_sets(make_cfg, task_type):
    # the task's own YAML is the independent list: each key it sets is a setting
    dataset = dataset_table(task=task_type).iloc[0]["config"]
    message = refusal(make_cfg, f"dataset={dataset}", f"task={task_type}", "+task.zzz=1")
    yaml_keys = set(yaml.safe_load((CONF_DIR / "task" / f"{task_type}.yaml").read_text()))
    assert yaml_keys - {"_target_", "type"} <= listed_settings(message)


def test_a_misspelt_setting_is_answered_with_the_closest_one(make_cfg):
    message = refusal(make_cfg, "dataset=karate", "+task.lrr=0.1")
    assert message.startswith("task.lrr does not apply to task type 'node_cls'")
    assert "did you mean task.lr?" in message
    assert "encoder_dropout" in listed_settings(message)


def test_a_key_like_no_setting_gets_no_guess(make_cfg):
    assert "did you mean" not in refusal(make_cfg, "dataset=karate", "+task.zzz=1")
