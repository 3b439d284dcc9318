"""What the API checks of a user model before its numbers count: how its forward is called
and the width of its output."""

from __future__ import annotations

import pytest
from test_api_identity import ring
from torch import nn

from graphnetz import run_benchmark, task_from_dataset, wrap_encoder
from graphnetz.api.benchmark import BenchmarkFailed
from graphnetz.api.models import model_spec

pytestmark = pytest.mark.usefixtures("one_thread")


class Widened(nn.Module):
    """Returns ``out_channels + extra`` columns (a last layer sized by hand, wrongly)."""

    task_types = {"node_cls", "graph_cls"}
    extra = 5

    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels + self.extra)

    def forward(self, x, edge_index):
        return self.lin(x)


class OneColumn(Widened):
    """Returns one column whatever out_channels is (a regression head on a class task)."""

    def __init__(self, in_channels, hidden_channels, out_channels):
        nn.Module.__init__(self)
        self.lin = nn.Linear(in_channels, 1)


class Right(Widened):
    extra = 0


@pytest.mark.parametrize(("cls", "got"), [(Widened, 9), (OneColumn, 1)])
def test_a_wrong_output_width_names_the_model_and_both_widths(cls, got):
    graph = ring(12)
    model = model_spec("Mine", cls).model_factory({}).build(3, 16, 4)
    with pytest.raises(
        ValueError, match=rf"model 'Mine' \({cls.__name__}\).* width {got} .*expected 4"
    ):
        model(graph.x, graph.edge_index)


def test_the_right_width_passes_and_is_checked_once():
    graph = ring(12)
    model = model_spec("Mine", Right).model_factory({}).build(3, 16, 4)
    assert model(graph.x, graph.edge_index).shape == (12, 4)
    assert not model._forward_hooks  # later calls run without the check


def test_wrap_encoder_checks_the_encoder_it_wraps():
    graph = ring(12)
    model = wrap_encoder(Widened, "node_cls", in_channels=3, out_channels=2)
    with pytest.raises(ValueError, match=r"model 'Widened'.* width 7 .*expected 2"):
        model(graph.x, graph.edge_index)


def test_a_benchmark_run_of_a_too_wide_model_fails_with_the_widths(data_dir):
    task = task_from_dataset("ring", "node_cls", ring(12), split="random")
    with pytest.raises(BenchmarkFailed, match=r"model 'Wide' \(Widened\).* width 7 .*expected 2"):
        run_benchmark(
            models={"Wide": Widened},
            tasks=[task],
            seeds=[0],
            progress=False,
            **{
                "paths.data_dir": str(data_dir),
                "trainer.max_epochs": 1,
                "trainer.accelerator": "cpu",
            },
        )


class OnlyX(nn.Module):
    """``forward(self, x)``: one required argument, but named ``x``, so not a Data model."""

    task_types = {"node_cls"}

    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x):
        return self.lin(x)


class TakesGraph(OnlyX):
    """``forward(self, graph)``: one required argument not named ``x`` gets the Data."""

    def forward(self, graph):
        return self.lin(graph.x)


def test_a_forward_of_x_alone_is_refused_naming_the_calling_conventions():
    with pytest.raises(TypeError, match=r"model 'Mine' \(OnlyX\): forward\(x\) cannot be") as err:
        model_spec("Mine", OnlyX).model_factory({}).build(3, 16, 2)
    assert (
        "forward(data) when forward has exactly one required positional argument not named x"
        in str(err.value)
    )
    assert "forward(x, edge_index)" in str(err.value)


def test_one_required_argument_not_named_x_is_called_with_the_data():
    graph = ring(12)
    model = wrap_encoder(TakesGraph, "node_cls", in_channels=3, out_channels=2)
    assert model(graph.x, graph.edge_index).shape == (12, 2)
