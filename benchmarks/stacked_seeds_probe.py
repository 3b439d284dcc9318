"""Probe for training several seeds of one cell together: is it exact, and does it pay?

A bare two-layer GCN loop on Karate (one-hot ids, hidden 16, dropout 0.5 on the input and
the hidden layer, Adam 1e-2 / 5e-4, evaluation every epoch), run for each seed alone and
then for all seeds at once: parameters stacked along a leading seed axis (``bmm`` for
the linear maps, one sparse product of ``[N, seeds x width]`` for the propagation, one
Adam step over the stacked tensors) and every seed drawing its initialisation and
dropout masks from its own generator, in the order it would alone. The script first
checks that each stacked seed's final parameters and accuracy history equal its run
alone bit for bit, also with a different set of seeds beside it (a seed's result must
not depend on who ran with it), and only then prints the timing ratio.

It was the groundwork for the framework's stacked-seed training (``graphnetz.training.
stacked``; ``benchmarks/stacked_seeds.py`` measures that): what it shows holds for this
loop on this build, one thread. One pitfall it found: a bias gradient summed over a permuted (strided) view
differs from the run alone by 1 ulp, so every stacked activation is kept contiguous.

    python benchmarks/stacked_seeds_probe.py [--seeds 10] [--epochs 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
import torch.nn.functional as F
from torch_geometric.datasets import KarateClub

HIDDEN, P_DROP, LR, WEIGHT_DECAY = 16, 0.5, 0.01, 5e-4


def karate():
    data = KarateClub()[0]  # ships with PyG: no download
    n = data.num_nodes
    loops = torch.arange(n)
    edges = torch.cat([data.edge_index, torch.stack([loops, loops])], 1)
    deg = torch.bincount(edges[1], minlength=n).float()
    weight = deg[edges[0]].rsqrt() * deg[edges[1]].rsqrt()
    with warnings.catch_warnings():  # torch flags its sparse layouts as beta
        warnings.simplefilter("ignore", UserWarning)
        adj = torch.sparse_coo_tensor(torch.stack([edges[1], edges[0]]), weight, (n, n))
        adj = adj.coalesce().to_sparse_csr()
    train = torch.zeros(n, dtype=torch.bool)
    train[::2] = True
    return adj, torch.eye(n), data.y, train


def init(seed: int, n: int, classes: int):
    gen = torch.Generator().manual_seed(seed)
    w1 = torch.empty(n, HIDDEN).uniform_(-1, 1, generator=gen) * (6 / (n + HIDDEN)) ** 0.5
    w2 = torch.empty(HIDDEN, classes).uniform_(-1, 1, generator=gen)
    w2 = w2 * (6 / (HIDDEN + classes)) ** 0.5
    return [w1, torch.zeros(HIDDEN), w2, torch.zeros(classes)], gen


def keep_mask(shape, gen: torch.Generator) -> torch.Tensor:
    return torch.rand(shape, generator=gen) >= P_DROP


def alone(graph, seed: int, epochs: int):
    adj, x, y, train = graph
    params, gen = init(seed, x.size(0), int(y.max()) + 1)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=LR, weight_decay=WEIGHT_DECAY, foreach=True)
    history = []
    for _ in range(epochs):
        w1, b1, w2, b2 = params
        h = adj @ ((x * keep_mask(x.shape, gen) / (1 - P_DROP)) @ w1) + b1
        h = F.relu(h)
        h = h * keep_mask(h.shape, gen) / (1 - P_DROP)
        out = adj @ (h @ w2) + b2
        loss = F.cross_entropy(out[train], y[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            out = adj @ (F.relu(adj @ (x @ w1) + b1) @ w2) + b2
            history.append((out.argmax(1) == y).float().mean())
    return [p.detach() for p in params], torch.stack(history)


def stacked(graph, seeds: list[int], epochs: int):
    adj, x, y, train = graph
    k, n = len(seeds), x.size(0)
    inits = [init(s, n, int(y.max()) + 1) for s in seeds]
    gens = [gen for _, gen in inits]
    params = [torch.stack([p[i] for p, _ in inits]).requires_grad_(True) for i in range(4)]
    opt = torch.optim.Adam(params, lr=LR, weight_decay=WEIGHT_DECAY, foreach=True)

    def propagate(h):  # [K, N, F] -> per seed adj @ h, as one product, kept contiguous
        _, rows, width = h.shape
        wide = adj @ h.permute(1, 0, 2).reshape(rows, k * width)
        return wide.view(rows, k, width).permute(1, 0, 2).contiguous()

    history = []
    for _ in range(epochs):
        w1, b1, w2, b2 = params
        xd = torch.stack([x * keep_mask(x.shape, g) / (1 - P_DROP) for g in gens])
        h = F.relu(propagate(torch.bmm(xd, w1)) + b1.unsqueeze(1))
        masks = torch.stack([keep_mask(h.shape[1:], g) for g in gens])
        h = h * masks / (1 - P_DROP)
        out = propagate(torch.bmm(h, w2)) + b2.unsqueeze(1)
        losses = [F.cross_entropy(out[i][train], y[train]) for i in range(k)]
        opt.zero_grad()
        torch.stack(losses).sum().backward()
        opt.step()
        with torch.no_grad():
            h = F.relu(propagate(torch.bmm(x.expand(k, n, n), w1)) + b1.unsqueeze(1))
            out = propagate(torch.bmm(h, w2)) + b2.unsqueeze(1)
            history.append((out.argmax(2) == y).float().mean(1))
    return [p.detach() for p in params], torch.stack(history, 1)


def equal_to_alone(graph, seeds: list[int], epochs: int, reference: dict) -> bool:
    params, history = stacked(graph, seeds, epochs)
    return all(
        torch.equal(history[i], reference[s][1])
        and all(torch.equal(params[j][i], reference[s][0][j]) for j in range(4))
        for i, s in enumerate(seeds)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.seeds < 2 or args.epochs < 1 or args.repeats < 1:
        parser.error("need --seeds >= 2, --epochs >= 1 and --repeats >= 1")
    torch.set_num_threads(1)
    graph = karate()
    seeds = list(range(args.seeds))
    reference = {s: alone(graph, s, args.epochs) for s in seeds}
    exact = equal_to_alone(graph, seeds, args.epochs, reference)
    exact_other = equal_to_alone(graph, seeds[1::2][::-1], args.epochs, reference)
    print(f"stacked seeds equal their runs alone bit for bit: {exact}")
    print(f"... with other seeds beside them (odd seeds, reversed): {exact_other}")
    if not (exact and exact_other):
        raise SystemExit("not exact on this build: no timing printed")
    one, together = [], []
    for _ in range(args.repeats):  # alternating, medians: the machine is shared
        start = time.perf_counter()
        for s in seeds:
            alone(graph, s, args.epochs)
        one.append(time.perf_counter() - start)
        start = time.perf_counter()
        stacked(graph, seeds, args.epochs)
        together.append(time.perf_counter() - start)
    a, b = statistics.median(one), statistics.median(together)
    print(
        f"{args.seeds} seeds x {args.epochs} epochs: one at a time {a:.3f} s, "
        f"stacked {b:.3f} s: {a / b:.2f}x"
    )


if __name__ == "__main__":
    main()
