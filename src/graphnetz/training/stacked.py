"""Several seeds of one cell trained together in one process, each with its own result.

A cell is one dataset x task x model x settings; its runs differ only in the seed. On a
small graph a step's cost is its dispatch, which a stack of seeds shares
(:class:`graphnetz.models.stacked.StackedEncoder`). :func:`train_stacked` builds every
seed's run exactly as the run alone does (:func:`graphnetz.training.pipeline.build_run`:
seeding, split, initialisation), then trains the stack through the lean loop's sequence of
calls and random draws: each seed's draws (the loaders' base seeds, every dropout mask)
come from its own generator, continuing the global state its run alone had after being
built. So each seed's history, selected epoch and metrics equal those of its run alone,
bit for bit, whichever seeds run beside it (``tests/test_stacked_seeds.py``), and its
record is the one its run alone would write, with ``stacked`` saying which seeds shared
the process and ``wall_time_s`` its share of their time. A seed that stops early keeps
its history from that epoch and leaves the stack, which goes on with the others. Each seed
saves the periodic checkpoint its run alone would save (same content, its own random
state): a stack that is killed resumes seed by seed, each alone, to the same result.

What stacks (:func:`stack_refusal` says why a run does not): full-batch node
classification (single- and multi-label) with a GCN, GraphSAGE, GAT, GraphTransformer or
MLP encoder, and graph-level tasks with GIN or a pooled GCN, GraphSAGE or MLP (trained on
the union of the seeds' mini-batches, :mod:`graphnetz.training.stacked_graphs`), without
DGI pre-training, an optimiser whose update is element-wise (Adam,
AdamW, SGD), a trainer the lean loop runs, and no checkpoint to resume (a seed with one
resumes alone). ``stack_seeds=false`` trains every run alone.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from hydra.utils import get_class

from graphnetz.data.loading import accepts_seed
from graphnetz.models.stacked import STACKABLE_ENCODERS, SeedStreams, StackedEncoder, StackRefused
from graphnetz.tasks.selection import evaluated_epoch
from graphnetz.training.build import incompatibility
from graphnetz.training.checkpoint import STATE_KEY, checkpointing, rng_state
from graphnetz.training.lean_loop import LEAN_CHECKPOINT_KEY, lean_trainer_refusal, set_determinism
from graphnetz.training.nan_fill import FillUntilFirstEvaluation
from graphnetz.training.pipeline import Built, Trained, build_run, trained_result
from graphnetz.training.resolve import RunSpec, result_config
from graphnetz.training.stacked_graphs import (
    GRAPH_STACKABLE_MODELS,
    GRAPH_TASK_TYPES,
    check_graph_stack,
    continued_optimizer,
    end_epoch,
    fit_graph_stack,
    optimizer_step,
)
from graphnetz.training.threads import default_threads

log = logging.getLogger("graphnetz")

#: Task types whose runs stack: full-batch node tasks, and graph-level tasks (the union
#: of the seeds' mini-batches, :mod:`graphnetz.training.stacked_graphs`).
NODE_TASK_TYPES = ("node_cls", "ml_node_cls")
STACKABLE_TASK_TYPES = NODE_TASK_TYPES + GRAPH_TASK_TYPES
#: Optimisers whose update is element-wise: a stacked tensor's step is each seed's step.
ELEMENTWISE_OPTIMIZERS = (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD)
#: Most seeds trained in one stack.
MAX_STACK = 16
#: Seeds whose widest activation (nodes x widest layer) holds more floats than this train
#: alone: their arithmetic, not dispatch, sets the time, and a stack's wider products and
#: layout copies cost more than it saves. Measured, 10 seeds x 50-100 epochs, one thread:
#: Karate GCN (34 x 64) 3.6x faster stacked, hospital contacts (75 x 64) 2.6x, high-school
#: contacts (327 x 64) 1.55x, but Cora GCN (2 708 x 64) 0.73x and HumLoc GCN (3 106 x 256)
#: 0.92x.
MAX_STACK_SEED_FLOATS = 1 << 16
#: Largest stacked activation, in floats (256 MiB), that a stack may need.
MAX_STACK_ELEMENTS = 1 << 26


@dataclass(frozen=True)
class StackedTrained:
    """A seed's result from a stack: what its run alone returns, and the stack's facts."""

    trained: Trained
    seeds: list[int]
    wall_time_s: float


def stack_refusal(spec: RunSpec) -> str | None:
    """Why this run trains alone (from its config, before anything is built), or None."""
    config = spec.config
    if not config.get("stack_seeds", True):
        return "stack_seeds=false"
    if spec.task_type not in STACKABLE_TASK_TYPES:
        return f"task type {spec.task_type} (stacked: {', '.join(STACKABLE_TASK_TYPES)})"
    if config.get("fit_loop", "auto") != "auto":
        return f"fit_loop={config.get('fit_loop')}"
    if config["task"].get("dgi_pretrain_epochs"):
        return "DGI pre-training"
    if accepts_seed(config["dataset"]["loader"]):
        return "the dataset is drawn per seed (each seed has its own graph)"
    refusal = lean_trainer_refusal(config["trainer"])  # the stack runs the lean loop's calls
    if refusal is not None:
        return refusal
    try:
        model_cls = get_class(config["model"]["_target_"])
    except Exception as err:  # the run alone will say what is wrong
        return f"model class: {err}"
    graph_level = spec.task_type in GRAPH_TASK_TYPES
    if model_cls not in (GRAPH_STACKABLE_MODELS if graph_level else STACKABLE_ENCODERS):
        return f"model {model_cls.__name__} is not stacked for {spec.task_type}"
    optimizer = config["task"].get("optimizer", {}).get("_target_", "")
    try:
        optimizer_cls = get_class(optimizer)
    except Exception as err:
        return f"optimizer: {err}"
    if optimizer_cls not in ELEMENTWISE_OPTIMIZERS:
        return f"optimizer {optimizer} (stacked: Adam, AdamW, SGD)"
    if incompatibility(config["model"], spec.task_type, None) is not None:
        return "the model does not serve the task"
    return None


def stack_key(spec: RunSpec) -> str:
    """Runs with equal keys differ only in their seed: they may stack."""
    config = {k: v for k, v in result_config(spec.config).items() if k != "seed"}
    return json.dumps(config, sort_keys=True, default=str)


class _SeedLoop:
    """One seed's view of the stack's fit loop: what its task and its checkpoint callback
    read, and the checkpoint its run alone would save (so a stack that is killed resumes
    seed by seed, each alone, to the same result)."""

    sanity_checking = False
    is_last_batch = True

    def __init__(self, spec: RunSpec, built: Built, callbacks: list, rng: dict) -> None:
        trainer_cfg = spec.config["trainer"]
        self.max_epochs = int(trainer_cfg["max_epochs"])
        self.check_val_every_n_epoch = int(trainer_cfg.get("check_val_every_n_epoch", 1))
        self.train_dataloader = built.data.train_loader
        self.module = built.module
        self.callbacks = callbacks
        self.rng = rng  # numpy's and Python's state after the build (training draws neither)
        self.current_epoch = 0
        self.global_step = 0
        self.should_stop = False
        self.generator: torch.Generator | None = None
        self.optimizer: torch.optim.Optimizer | None = None  # the stack's, while it trains

    def epoch_end(self, epoch: int) -> None:
        self.current_epoch, self.global_step = epoch, epoch + 1
        for callback in self.callbacks:
            callback.on_train_epoch_end(self, self.module)

    def save_checkpoint(self, path) -> None:
        """The lean loop's checkpoint of this seed's run alone at this epoch's end."""
        checkpoint = {
            LEAN_CHECKPOINT_KEY: 1,
            "epoch": self.current_epoch,
            "global_step": self.global_step,
            "state_dict": self.module.state_dict(),
            "optimizer_states": [
                _seed_optimizer_state(self.optimizer, list(self.module.parameters()))
            ],
        }
        for callback in self.callbacks:
            callback.on_save_checkpoint(self, self.module, checkpoint)
        checkpoint[STATE_KEY]["rng"] = {**self.rng, "torch": self.generator.get_state()}
        torch.save(checkpoint, path)


def train_stacked(
    specs: Sequence[RunSpec], run_dirs: Sequence[Path | None] | None = None
) -> list[StackedTrained]:
    """Train the runs ``specs`` (one cell, distinct seeds) as one stack; with ``run_dirs``
    each seed saves the periodic checkpoint of its run alone there.

    Raises :class:`StackRefused` (nothing trained; train them alone) when they cannot
    stack; any other error is the error each of these runs would have had.
    """
    if len(specs) < 2:
        raise StackRefused("a stack needs at least two seeds")
    if len({stack_key(s) for s in specs}) != 1 or len({s.seed for s in specs}) != len(specs):
        raise StackRefused("the runs are not the seeds of one cell")
    for spec in specs:
        reason = stack_refusal(spec)
        if reason is not None:
            raise StackRefused(reason)
    graph_level = specs[0].task_type in GRAPH_TASK_TYPES
    start = time.perf_counter()
    run_dirs = list(run_dirs) if run_dirs is not None else [None] * len(specs)
    builts, states, loops = [], [], []
    for spec, run_dir in zip(specs, run_dirs, strict=True):
        ckpt = checkpointing(spec, run_dir, start)
        if ckpt.resume_from is not None:
            raise StackRefused(f"{spec.label} resumes from its checkpoint")
        built = build_run(spec)
        rng = rng_state()  # where its run alone goes on drawing
        states.append(rng["torch"])
        builts.append(built)
        loops.append(_SeedLoop(spec, built, list(ckpt.callbacks or []), rng))
        built.module.trainer = loops[-1]
        if len(builts) == 1 and not graph_level:
            _check_size(built, len(specs))
    if graph_level:
        check_graph_stack(builts)
    else:
        _check_same_graph(builts)
    trainer_cfg = specs[0].config["trainer"]
    set_determinism(trainer_cfg.get("deterministic"))
    torch.set_num_threads(_threads(specs[0], builts[0]))
    for loop, generator in zip(loops, SeedStreams.from_states(states).generators, strict=True):
        loop.generator = generator
    fit = fit_graph_stack if graph_level else _fit
    with FillUntilFirstEvaluation() as nan_fill:
        fit(builts, loops, int(trainer_cfg.get("max_epochs")), nan_fill.epoch_ended)
    wall = (time.perf_counter() - start) / len(specs)
    seeds = [s.seed for s in specs]
    return [
        StackedTrained(trained_result(spec, built), seeds, wall)
        for spec, built in zip(specs, builts, strict=True)
    ]


def _threads(spec: RunSpec, built: Built) -> int:
    return int(spec.config.get("num_threads") or default_threads(built.data))


def _check_size(built: Built, seeds: int) -> None:
    """Stack where it pays and fits: a seed's widest activation (nodes x widest layer) up
    to ``MAX_STACK_SEED_FLOATS`` (larger ones cost their arithmetic, not their dispatch,
    so a stack gains little), and stacked activations (nodes or edges x seeds x width) up
    to ``MAX_STACK_ELEMENTS`` floats."""
    graph = built.data.graph
    nodes, edges = int(graph.num_nodes), int(graph.edge_index.size(1))
    widths = [p.shape[0] for p in built.model.parameters() if p.dim() >= 2]
    per_seed = nodes * max(widths, default=1)
    if per_seed > MAX_STACK_SEED_FLOATS:
        raise StackRefused(
            f"{nodes} nodes x width {max(widths, default=1)}: above "
            f"{MAX_STACK_SEED_FLOATS} floats a seed, a stack gains little"
        )
    heads = max((getattr(layer, "heads", 1) for layer in built.model.modules()), default=1)
    largest = max(nodes * max(widths, default=1), edges * heads) * seeds
    if largest > MAX_STACK_ELEMENTS:
        raise StackRefused(
            f"{seeds} seeds stacked need tensors of {largest} floats "
            f"(above {MAX_STACK_ELEMENTS}); fewer seeds a stack, or one at a time"
        )


def _check_same_graph(builts: list[Built]) -> None:
    first = builts[0].data.graph
    for built in builts[1:]:
        graph = built.data.graph
        if not (torch.equal(graph.x, first.x) and torch.equal(graph.edge_index, first.edge_index)):
            raise StackRefused("the seeds' graphs differ (features or edges)")


def _fit(builts: list[Built], loops: list[_SeedLoop], max_epochs: int, epoch_ended) -> None:
    """The lean loop's calls for every seed at once (training/lean_loop.py). When seeds
    stop early the stack shrinks to the seeds still training (their parameters, optimiser
    states and generators carry over), so a stopped seed costs nothing more.
    ``epoch_ended(evaluated)`` after each epoch."""
    modules = [b.module for b in builts]
    first = modules[0]
    factory = partial(first.optimizer_factory, **first._multi_tensor_update())
    graphs = [b.data.graph for b in builts]
    x, edge_index = graphs[0].x, graphs[0].edge_index
    masks = [g.train_mask for g in graphs]
    targets = [g.y[m] for g, m in zip(graphs, masks, strict=True)]
    splits = [_split_rows(g) for g in graphs]
    active = list(range(len(modules)))
    encoder, streams = _stack_of(active, builts, loops, factory)
    for epoch in range(max_epochs):
        streams.loader_seed()  # the epoch's training iterator
        with torch.enable_grad():
            out = encoder(x, edge_index, streams)
            losses = [modules[s].loss(out[i][masks[s]], targets[s]) for i, s in enumerate(active)]
            optimizer_step(loops[active[0]].optimizer, losses, [modules[s] for s in active])
        evaluated = evaluated_epoch(epoch, loops[0].check_val_every_n_epoch, max_epochs)
        if evaluated:
            _evaluate(encoder, x, edge_index, splits, modules, loops, streams, active, epoch)
        epoch_ended(evaluated)
        training = end_epoch(loops, active, epoch)
        if not training:
            break
        if len(training) < len(active):
            encoder, streams = _stack_of(training, builts, loops, factory)
        active = training


def _stack_of(seeds: list[int], builts: list[Built], loops: list[_SeedLoop], factory):
    """The stacked encoder and streams of ``seeds``, with a new optimiser over their
    parameters that continues each parameter's state from the previous one."""
    encoder = StackedEncoder([builts[s].model for s in seeds]).train()
    streams = SeedStreams([loops[s].generator for s in seeds])
    previous = loops[seeds[0]].optimizer
    continued_optimizer(factory, encoder.seed_parameters(), previous, loops, seeds)
    return encoder, streams


def _seed_optimizer_state(optimizer: torch.optim.Optimizer, params: list) -> dict:
    """A seed's part of the stack's optimiser state, numbered as the optimiser of its run
    alone numbers it (its parameters, in its model's order)."""
    groups = [
        {**{k: v for k, v in group.items() if k != "params"}, "params": list(range(len(params)))}
        for group in optimizer.state_dict()["param_groups"]
    ]
    state = {i: optimizer.state[p] for i, p in enumerate(params) if p in optimizer.state}
    return {"state": state, "param_groups": groups}


def _evaluate(encoder, x, edge_index, splits, modules, loops, streams, active, epoch) -> None:
    """Every split of every active seed, in eval mode without gradients, then its row."""
    streams.loader_seed()  # the evaluation loader's iterator
    encoder.eval()
    try:
        with torch.inference_mode():
            out = encoder(x, edge_index)
            for i, s in enumerate(active):
                module = modules[s]
                for split, (rows, targets) in splits[s].items():
                    module._eval_outputs[split].append((out[i].index_select(0, rows), targets))
                loops[s].current_epoch = epoch
                module._record_epoch()
    finally:
        encoder.train()


def _split_rows(graph) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Per split, its node rows and their labels (what ``out[mask], y[mask]`` select)."""
    rows = {}
    for split in ("train", "val", "test"):
        index = graph[f"{split}_mask"].nonzero().view(-1)
        rows[split] = (index, graph.y.index_select(0, index))
    return rows


# ---------------------------------------------------------------- hand-over to the runs
#: Results of a stack waiting for their runs' record writers, by run identity.
_WAITING: dict[str, StackedTrained] = {}


def offer(specs: Sequence[RunSpec], results: Sequence[StackedTrained]) -> None:
    """Keep each seed's stacked result for its run (:func:`take`)."""
    for spec, result in zip(specs, results, strict=True):
        _WAITING[spec.identity] = result


def take(spec: RunSpec) -> StackedTrained | None:
    """The stacked result waiting for this run, once (None: train it alone)."""
    return _WAITING.pop(spec.identity, None)


def discard_waiting() -> None:
    _WAITING.clear()


def train_ahead(specs: Sequence[RunSpec], run_dirs: Sequence[Path | None]) -> bool:
    """Train ``specs`` (a cell's seeds that are still to run) stacked and keep each seed's
    result for its run (:func:`take`); False, with nothing kept, when they train alone."""
    if len(specs) < 2:
        return False
    try:
        results = train_stacked(specs, run_dirs)
    except StackRefused as why:
        log.info("%s: seeds trained one at a time (%s)", _cell_label(specs[0]), why)
        return False
    except Exception as err:  # each run alone will meet it and record it
        log.warning("%s: stacked training failed (%s); seeds run alone", _cell_label(specs[0]), err)
        return False
    offer(specs, results)
    seeds = ",".join(str(s.seed) for s in specs)
    log.info(
        "%s: seeds %s trained stacked (%.1f s each)",
        _cell_label(specs[0]),
        seeds,
        results[0].wall_time_s,
    )
    return True


def _cell_label(spec: RunSpec) -> str:
    return f"{spec.task_key} {spec.model}"


__all__ = [
    "MAX_STACK",
    "StackRefused",
    "StackedTrained",
    "discard_waiting",
    "offer",
    "stack_key",
    "stack_refusal",
    "take",
    "train_ahead",
    "train_stacked",
]
