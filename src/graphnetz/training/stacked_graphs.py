"""The fit loop of a stack of graph-level seeds (graph classification, multi-label graph
classification, graph regression).

Each seed's run alone, per epoch (``training/lean_loop.py`` with a mini-batch task):
creates the epoch's loader iterator, shuffles its training split with a sampler seeded
from the global generator, takes one optimiser step per mini-batch, then creates the
three evaluation loaders' iterators and evaluates every split. Here every seed does the
same, with each random draw made from its own stream by the very code its run alone runs
(:func:`graphnetz.models.stacked_graphs.seed_stream`); but each step is one forward and
one backward pass over the union of the seeds' batches
(:class:`graphnetz.models.stacked_graphs.GraphStack`) and one optimiser step over every
seed's parameters, and each evaluation one forward pass per evaluation batch for all seeds.
"""

from __future__ import annotations

from functools import cached_property, partial
from types import SimpleNamespace

import torch
from torch.utils.data import DataLoader as IndexLoader
from torch_geometric.data import Batch

from graphnetz.models.gin import GIN
from graphnetz.models.stacked import StackRefused
from graphnetz.models.stacked_graphs import STACKABLE_POOLED, GraphStack, seed_stream
from graphnetz.tasks.base import SPLITS
from graphnetz.tasks.graph_batching import SplitBatcher
from graphnetz.tasks.graph_tasks import EVAL_BATCH_SIZE
from graphnetz.tasks.selection import evaluated_epoch

#: Task types whose runs stack as graph-level stacks.
GRAPH_TASK_TYPES = ("graph_cls", "ml_graph_cls", "graph_reg")
#: Model classes (``model._target_``) whose graph-level runs stack.
GRAPH_STACKABLE_MODELS = (*STACKABLE_POOLED, GIN)
#: Mini-batches above this many nodes (on average) cost their arithmetic, not their
#: dispatch: a stack gains little (MUTAG's ~575-node batches gain 1.2-1.6x).
MAX_BATCH_NODES = 4096
#: Most feature values the seeds' training splits may hold together (each seed's split is
#: collated once, side by side): 256 MiB of floats.
MAX_UNION_ELEMENTS = 1 << 26


def _split(loader) -> list:
    """The graphs a full-split loader hands over (its one item), drawing nothing."""
    return list(loader.dataset[0])


class _Union:
    """The seeds' splits collated once, one after another, and cut into union batches."""

    def __init__(self, splits: list[list]) -> None:
        sizes = {len(graphs) for graphs in splits}
        if len(sizes) != 1:
            raise StackRefused("the seeds' splits differ in size")
        self.size = sizes.pop()
        if not splits[0] or not SplitBatcher._gatherable(splits[0]):
            raise StackRefused("graphs with attributes besides x, edge_index, edge_attr, y")
        nodes = sum(int(g.num_nodes) for g in splits[0])
        values = nodes * int(splits[0][0].x.size(-1)) * len(splits)
        if values > MAX_UNION_ELEMENTS:
            raise StackRefused(
                f"{len(splits)} seeds' training splits hold {values} feature values "
                f"(above {MAX_UNION_ELEMENTS}); fewer seeds a stack, or one at a time"
            )
        self.nodes_per_graph = nodes / self.size
        self.splits = splits

    @cached_property
    def batcher(self) -> SplitBatcher:
        """Every seed's split collated once, one after another."""
        return SplitBatcher([g for graphs in self.splits for g in graphs], 1)

    def batch(self, seeds: list[int], orders: list[torch.Tensor]):
        """Seed ``seeds[i]``'s graphs ``orders[i]`` (positions in its split), all seeds'
        as one batch; with the node and graph offsets of each seed."""
        index = torch.cat([order + s * self.size for s, order in zip(seeds, orders, strict=True)])
        batch = self.batcher.gather(index)
        graph_ptr = [0]
        for order in orders:
            graph_ptr.append(graph_ptr[-1] + order.numel())
        node_ptr = batch.ptr[graph_ptr].tolist()
        return batch, node_ptr, graph_ptr


def check_graph_stack(builts) -> None:
    """Raise :class:`StackRefused` unless these runs' splits and models stack."""
    GraphStack([b.model for b in builts])
    for built in builts:
        if built.data.eval_loaders is None or len(built.data.eval_loaders) != len(SPLITS):
            raise StackRefused("the task does not evaluate train, val and test splits")
    union = _Union([_split(b.data.train_loader) for b in builts])
    batch_nodes = union.nodes_per_graph * builts[0].module.batch_size
    if batch_nodes > MAX_BATCH_NODES:
        raise StackRefused(
            f"mini-batches of about {batch_nodes:.0f} nodes: above {MAX_BATCH_NODES}, "
            "a stack gains little"
        )


def fit_graph_stack(builts, loops, max_epochs: int, epoch_ended) -> None:
    """Every seed's lean-loop training (per-seed early stopping; a stopped seed leaves);
    ``epoch_ended(evaluated)`` after each epoch."""
    modules = [b.module for b in builts]
    batch_size = modules[0].batch_size
    train = _Union([_split(b.data.train_loader) for b in builts])
    evaluation = _EvaluationBatches([b.data.eval_loaders for b in builts])
    first = modules[0]
    factory = partial(first.optimizer_factory, **first._multi_tensor_update())
    active = list(range(len(modules)))
    stack, optimizer = _stack_of(active, builts, loops, factory, None)
    for module in modules:
        module.train()
    for epoch in range(max_epochs):
        orders = []
        for s in active:
            with seed_stream(loops[s].generator):
                iter(builts[s].data.train_loader)  # the epoch's iterator draws its base seed
                orders.append(list(IndexLoader(range(train.size), batch_size, shuffle=True)))
        for step in range(len(orders[0])):
            batch, node_ptr, graph_ptr = train.batch(active, [o[step] for o in orders])
            with torch.enable_grad():
                outs = stack(
                    batch.x.float(),
                    batch.edge_index,
                    batch.batch,
                    node_ptr,
                    graph_ptr,
                    [loops[s].generator for s in active],
                )
                losses = [
                    modules[s].loss(outs[i], _targets(modules[s], batch.y, graph_ptr, i))
                    for i, s in enumerate(active)
                ]
                optimizer_step(optimizer, losses, [modules[s] for s in active])
        evaluated = evaluated_epoch(epoch, loops[0].check_val_every_n_epoch, max_epochs)
        if evaluated:
            evaluation.run(stack, modules, loops, active, epoch)
        epoch_ended(evaluated)
        training = end_epoch(loops, active, epoch)
        if not training:
            break
        if len(training) < len(active):
            stack, optimizer = _stack_of(training, builts, loops, factory, optimizer)
        active = training


def _targets(module, y: torch.Tensor, graph_ptr: list[int], i: int) -> torch.Tensor:
    part = y[graph_ptr[i] : graph_ptr[i + 1]]
    return module.targets(SimpleNamespace(y=part, num_graphs=part.size(0)))


def optimizer_step(optimizer, losses: list[torch.Tensor], modules: list) -> None:
    """One step of every seed (``losses[i]`` is ``modules[i]``'s): their sum's backward
    gives each seed's parameters the gradient of its own loss; each module keeps its loss."""
    optimizer.zero_grad()
    torch.stack(losses).sum().backward()
    optimizer.step()
    for module, loss in zip(modules, losses, strict=True):
        module._train_losses.append(loss.detach())


def end_epoch(loops, active: list[int], epoch: int) -> list[int]:
    """Every active seed's end of ``epoch`` (its checkpoint); the seeds still training."""
    for s in active:
        loops[s].epoch_end(epoch)
    return [s for s in active if not loops[s].should_stop]


def continued_optimizer(factory, params: list, previous, loops, seeds: list[int]):
    """A new optimiser over ``params`` (the stack's seeds' parameters) that continues each
    parameter's state from ``previous`` (None: a fresh one); the seeds' loops hold it."""
    optimizer = factory(params)
    if previous is not None:
        for p in params:
            if p in previous.state:
                optimizer.state[p] = previous.state[p]
    for s in seeds:
        loops[s].optimizer = optimizer
    return optimizer


def _stack_of(seeds, builts, loops, factory, previous):
    """The stack of ``seeds`` and its optimiser, continuing ``previous``."""
    params = [p for s in seeds for p in builts[s].module.parameters()]
    stack = GraphStack([builts[s].model for s in seeds])
    return stack, continued_optimizer(factory, params, previous, loops, seeds)


class _EvaluationBatches:
    """Per split, the union of the seeds' evaluation batches (collated once: they are the
    same every epoch), as each run alone cuts its split (``EVAL_BATCH_SIZE`` graphs)."""

    def __init__(self, eval_loaders) -> None:
        self.loaders = eval_loaders
        self.splits = [[_split(loaders[i]) for loaders in eval_loaders] for i in range(len(SPLITS))]
        self._cache: dict[tuple[int, ...], list] = {}

    def _batches(self, seeds: tuple[int, ...]) -> list:
        """Per split, per batch: (union batch, node_ptr, graph_ptr)."""
        cached = self._cache.get(seeds)
        if cached is not None:
            return cached
        per_split = []
        for graphs in self.splits:
            chunks = [
                [
                    graphs[s][i : i + EVAL_BATCH_SIZE]
                    for i in range(0, len(graphs[s]), EVAL_BATCH_SIZE)
                ]
                for s in seeds
            ]
            if len({len(c) for c in chunks}) != 1:
                raise StackRefused("the seeds' evaluation splits differ in size")
            batches = []
            for j in range(len(chunks[0])):
                parts = [chunk[j] for chunk in chunks]
                union = Batch.from_data_list([g for part in parts for g in part])
                graph_ptr = [0]
                for part in parts:
                    graph_ptr.append(graph_ptr[-1] + len(part))
                batches.append((union, union.ptr[graph_ptr].tolist(), graph_ptr))
            per_split.append(batches)
        self._cache = {seeds: per_split}
        return per_split

    def run(self, stack, modules, loops, active, epoch) -> None:
        """Every split of every active seed, in eval mode without gradients, then its row."""
        for s in active:  # each run alone creates its evaluation loaders' iterators
            with seed_stream(loops[s].generator):
                for loader in self.loaders[s]:
                    iter(loader)
        stack.eval()
        try:
            with torch.inference_mode():
                for split, batches in zip(SPLITS, self._batches(tuple(active)), strict=True):
                    for union, node_ptr, graph_ptr in batches:
                        outs = stack(
                            union.x.float(),
                            union.edge_index,
                            union.batch,
                            node_ptr,
                            graph_ptr,
                            [loops[s].generator for s in active],
                        )
                        for i, s in enumerate(active):
                            target = _targets(modules[s], union.y, graph_ptr, i)
                            modules[s]._eval_outputs[split].append((outs[i], target))
        finally:
            stack.train()
        for s in active:
            loops[s].current_epoch = epoch
            modules[s]._record_epoch()


__all__ = [
    "GRAPH_STACKABLE_MODELS",
    "GRAPH_TASK_TYPES",
    "check_graph_stack",
    "continued_optimizer",
    "end_epoch",
    "fit_graph_stack",
    "optimizer_step",
]
