"""Code written for the reference package (graphnetz 0.2.0) runs through our API: its
``run_benchmark`` arguments, ``ModelSpec`` and factory forms, ``unregister_task``,
``BENCHMARK_TASKS`` and the report methods of its quick start; what has no equivalent here
is refused with an error naming what to use instead."""

from __future__ import annotations

import contextlib
import io
import json
import math

import matplotlib.pyplot as plt
import pytest
import torch
from report_fixtures import VALUES, make_records
from scipy import stats
from torch_geometric.data import Data

from graphnetz import GCN, BenchmarkReport, run_benchmark
from graphnetz.api.benchmark import accelerator_settings
from graphnetz.benchmark import (
    BENCHMARK_TASKS,
    ModelSpec,
    SearchSpace,
    Task,
    iter_benchmark_tasks,
    plot_benchmark,
    register_task,
    unregister_task,
)


def masked_graph(root=None, n: int = 24) -> Data:
    """Two feature clusters with train/val/test masks (the reference's node_cls data)."""
    g = torch.Generator().manual_seed(0)
    y = torch.arange(n) % 2
    x = torch.randn(n, 4, generator=g) + 2.0 * y[:, None]
    src = torch.randint(0, n, (4 * n,), generator=g)
    dst = (src + 2 * torch.randint(1, n // 2, (4 * n,), generator=g)) % n
    i = torch.arange(n)
    return Data(
        x=x,
        edge_index=torch.stack([src, dst]),
        y=y,
        train_mask=i < n // 2,
        val_mask=(i >= n // 2) & (i < 3 * n // 4),
        test_mask=i >= 3 * n // 4,
    )


@pytest.fixture(scope="module")
def reference_call(tmp_path_factory, data_dir):
    """One call in the reference's form: root positional and every reference keyword."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    roots, factory_calls, printed = [], [], io.StringIO()

    def club(root):
        roots.append(root)
        return masked_graph()

    def factory(in_channels, hidden_channels, out_channels, *, task_type):
        factory_calls.append(task_type)
        return GCN(in_channels, hidden_channels, out_channels)

    spec = ModelSpec(cls=GCN, task_type=frozenset({"node_cls"}), factory=factory)
    out = tmp_path_factory.mktemp("reference_call")
    tasks = [
        Task("club", "node_cls", club, epochs=30),
        Task("other", "node_cls", masked_graph, epochs=30),
        Task("links", "link_pred", masked_graph, epochs=30),
    ]
    with contextlib.redirect_stdout(printed):
        report = run_benchmark(
            "mycat",
            {"Mine": spec},
            str(data_dir),
            hidden_channels=8,
            epochs=1,
            only=["club", "links"],
            verbose=False,
            seeds=3,
            task_type="node_cls",
            tasks=tasks,
            device="cpu",
            out_dir=out,
        )
    torch.set_num_threads(threads)
    [record] = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    return {
        "report": report,
        "record": record,
        "roots": roots,
        "factory_calls": factory_calls,
        "printed": printed.getvalue(),
        "data_dir": data_dir,
    }


# ---------------------------------------------------------------- run_benchmark
def test_root_hidden_channels_epochs_and_device_reach_the_run_config(reference_call):
    config = reference_call["record"]["config"]
    assert config["paths"]["data_dir"] == str(reference_call["data_dir"])
    assert config["model"]["hidden_channels"] == 8
    assert config["trainer"]["max_epochs"] == 1
    assert config["trainer"]["accelerator"] == "cpu"


def test_verbose_false_silences_the_progress_lines(reference_call):
    assert reference_call["printed"] == ""


def test_only_and_task_type_select_the_tasks_as_the_reference_does(reference_call):
    # "other" is not in only=; "links" is in only= but of another type than task_type
    assert reference_call["report"].tasks == ["club/node_cls"]


def test_an_int_seeds_is_that_one_seed(reference_call):
    assert set(reference_call["report"].data["seed"]) == {3}


def test_a_factory_taking_task_type_is_called_with_the_runs_task_type(reference_call):
    assert reference_call["factory_calls"] == ["node_cls"]


def test_a_category_with_tasks_puts_their_data_under_root_category(reference_call):
    assert reference_call["roots"] == [str(reference_call["data_dir"] / "mycat" / "club")]


def test_seed_is_the_one_seed_and_verbose_prints_progress(data_dir, one_thread, capsys):
    report = run_benchmark(
        models={"Mine": (GCN, "node_cls")},
        root=data_dir,
        tasks=[Task("club", "node_cls", masked_graph)],
        epochs=1,
        seed=1,
        verbose=True,
        device="cpu",
    )
    assert set(report.data["seed"]) == {1}
    assert "[1/1]" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"seeds": [0, 1], "seed": 2}, r"seeds= or seed=, not both"),
        ({"verbose": False, "progress": True}, r"progress= or verbose=, not both"),
        ({"hidden_channels": 8, "model.hidden_channels": 16}, r"hidden_channels= or the"),
        ({"device": "cpu", "trainer.accelerator": "gpu"}, r"device= or the trainer"),
    ],
)
def test_an_argument_given_twice_is_refused(arguments, message):
    task = Task("club", "node_cls", masked_graph)
    with pytest.raises(ValueError, match=message):
        run_benchmark(models={"Mine": (GCN, "node_cls")}, tasks=[task], **arguments)


@pytest.mark.parametrize(
    ("device", "settings"),
    [
        (None, {"trainer.accelerator": "auto"}),
        ("auto", {"trainer.accelerator": "auto"}),
        ("cpu", {"trainer.accelerator": "cpu"}),
        (torch.device("cpu"), {"trainer.accelerator": "cpu"}),
        ("cuda", {"trainer.accelerator": "gpu"}),
        ("cuda:1", {"trainer.accelerator": "gpu", "trainer.devices": [1]}),
        ("mps", {"trainer.accelerator": "mps"}),
    ],
)
def test_device_becomes_the_trainers_accelerator(device, settings):
    assert accelerator_settings(device) == settings


def test_a_device_the_trainer_has_no_accelerator_for_is_refused():
    with pytest.raises(ValueError, match=r"device='nonsense' is not a device"):
        accelerator_settings("nonsense")


def test_search_is_refused_naming_the_tune_command():
    with pytest.raises(NotImplementedError, match=r"search=.*python -m graphnetz tune"):
        run_benchmark("social", {"GCN": GCN}, search=object())


def test_search_space_and_plot_benchmark_import_and_refuse_on_use():
    with pytest.raises(NotImplementedError, match=r"python -m graphnetz tune"):
        SearchSpace(lr=(1e-2, 1e-3))
    with pytest.raises(NotImplementedError, match=r"report\.plot\(directory\)"):
        plot_benchmark(None)


# ---------------------------------------------------------------- models and tasks
def test_model_spec_in_the_reference_forms():
    by_keyword = ModelSpec(cls=GCN, task_type=frozenset({"node_cls"}))
    positional = ModelSpec(GCN, {"node_cls"})
    assert by_keyword == positional
    assert (by_keyword.name, by_keyword.cls) == ("GCN", GCN)
    assert by_keyword.task_type == by_keyword.task_types == frozenset({"node_cls"})


def test_model_spec_mixes_positional_and_keyword_arguments_in_either_order():
    def factory(i, h, o):
        return GCN(i, h, o)

    node = frozenset({"node_cls"})
    forms = [
        ModelSpec(GCN, "node_cls", factory),
        ModelSpec(GCN, "node_cls", factory=factory),
        ModelSpec(GCN, task_type="node_cls", factory=factory),
        ModelSpec(GCN, task_types=node, factory=factory),
        ModelSpec("GCN", GCN, node, factory),
        ModelSpec(name="GCN", cls=GCN, task_types=node, factory=factory),
    ]
    assert all(spec == forms[0] for spec in forms)
    assert (forms[0].name, forms[0].task_types, forms[0].factory) == ("GCN", node, factory)
    with pytest.raises(TypeError, match="takes 3 positional arguments, got 4"):
        ModelSpec(GCN, "node_cls", factory, factory)
    with pytest.raises(TypeError, match="got factory= twice"):
        ModelSpec(GCN, "node_cls", factory, factory=factory)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['heads'\]"):
        ModelSpec(GCN, "node_cls", heads=8)


def test_model_spec_without_task_types_is_refused_naming_the_ways_to_give_them():
    with pytest.raises(ValueError, match=r"task_types= \(or task_type=\)"):
        ModelSpec(cls=torch.nn.Linear)


def test_unregister_an_unknown_task_returns_none():
    assert unregister_task("custom", "nope") is None


def test_benchmark_tasks_is_category_task_type_tasks_of_the_catalogue():
    expected = {}
    for task in iter_benchmark_tasks():
        expected.setdefault(task.category, {}).setdefault(task.task_type, []).append(task.key)
    got = {
        c: {t: [x.key for x in ts] for t, ts in per.items()} for c, per in BENCHMARK_TASKS.items()
    }
    assert got == expected
    assert "karate" in [t.name for t in BENCHMARK_TASKS["social"]["node_cls"]]


def test_benchmark_tasks_shows_registered_tasks():
    register_task("toys", Task("path", "node_cls", masked_graph))
    try:
        assert [t.name for t in BENCHMARK_TASKS["toys"]["node_cls"]] == ["path"]
    finally:
        unregister_task("toys", "path")
    assert "toys" not in BENCHMARK_TASKS


# ---------------------------------------------------------------- the report
@pytest.fixture
def report():
    return BenchmarkReport.from_records(make_records())


def test_summary_ci_is_the_confidence_level(report):
    assert report.summary(ci=0.95).equals(report.summary())
    row = report.summary(ci=0.90).iloc[0]  # cora/node_cls, gcn
    values = VALUES[("cora/node_cls", "accuracy", "max")]["gcn"]
    sd = stats.tstd(values)
    h = stats.t.ppf(0.95, df=len(values) - 1) * sd / math.sqrt(len(values))
    assert (row["task"], row["model"]) == ("cora/node_cls", "gcn")
    assert row["half_width"] == pytest.approx(h)


def test_summary_ci_outside_zero_one_is_refused(report):
    with pytest.raises(ValueError, match=r"ci=95: a confidence level lies in \(0, 1\)"):
        report.summary(ci=95)


def test_pairwise_alpha_sets_the_level_of_significant(report):
    for pairwise in (report.pairwise(alpha=0.001), report.pairwise(0.001, "t")):
        assert list(pairwise["significant"]) == list(pairwise["t_p_holm"] < 0.001)
    assert not report.pairwise(alpha=0.001)["significant"].equals(report.pairwise()["significant"])


def test_friedman_alpha_sets_the_level_of_rejects(report):
    p = report.friedman().friedman.pvalue
    assert report.friedman(alpha=min(0.99, 2 * p)).rejects is True
    assert report.friedman(alpha=p / 2).rejects is False


def test_plot_critical_difference_returns_our_cd_diagram(report):
    fig, ax = report.plot_critical_difference(title="CD")
    try:
        assert ax.get_title() == "CD"
        labels = {t.get_text().split(" ")[0] for t in ax.texts}
        assert {"gcn", "gat", "sage"} <= labels
        assert any(t.get_text().startswith("CD = ") for t in ax.texts)
    finally:
        plt.close(fig)


def test_plot_critical_difference_with_one_task_is_refused_with_the_reason():
    one_task = [r for r in make_records() if r["task"] == "cora/node_cls"]
    with pytest.raises(ValueError, match=r"no critical-difference diagram: needs at least 2"):
        BenchmarkReport.from_records(one_task).plot_critical_difference()
