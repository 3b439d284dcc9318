"""Aggregation kernels of the multi-label sweep: each fast path against the per-edge (or
per-slot) reference it replaced, timed in the same process on the same inputs.

Default graph: BlogCatalog's size (10 312 nodes, 333 983 undirected edges, random),
width 256 as in ``experiment=ml_real``; ``--mirror`` uses the real BlogCatalog graph.
One forward + backward per timing; the median of ``--repeats`` is reported, and the
outputs of both paths are checked to agree before anything is timed.

    python benchmarks/multilabel_kernels.py [--mirror ../shared/data] [--repeats 5] [--threads 1]

Ratios are reference / fast path (higher = faster); the sweep's per-epoch time follows
from how often each model calls the kernel. The last three rows time whole models
(for whole epochs against an older tree see ``benchmarks/multilabel_epochs.py``):
LANC and H2GCN training steps on the train rows only (60 %) against all rows then
sliced, and H2GCN's evaluation by propagated scores against the concatenation.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import Tensor
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphnetz.models.encoders import GCN
from graphnetz.models.gat_conv import SortedGATConv
from graphnetz.models.multilabel import H2GCN, LANC
from graphnetz.models.multilabel._graph import propagate
from graphnetz.models.multilabel.h2gcn import hop_operators
from graphnetz.models.multilabel.lanc import conv_along_stack, neighbour_stack, stacked_conv
from graphnetz.models.sparse_products import WeightedAdjacency


def random_graph(num_nodes: int, num_pairs: int, seed: int) -> Tensor:
    gen = torch.Generator().manual_seed(seed)
    pairs = torch.randint(0, num_nodes, (2, num_pairs), generator=gen)
    return coalesce(to_undirected(remove_self_loops(pairs)[0], num_nodes=num_nodes))


def blogcatalog_graph(mirror: str) -> tuple[Tensor, int]:
    import tempfile

    from graphnetz.data.multilabel import load_blogcatalog

    with tempfile.TemporaryDirectory() as root:
        data = load_blogcatalog(root, mirror=mirror)
    return data.edge_index, data.num_nodes


def median_seconds(step: Callable[[], Tensor], repeats: int) -> float:
    step()  # warm-up: builds cached layouts, allocator pools
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fwd_bwd(fn: Callable[[], Tensor], leaves: list[Tensor]) -> Callable[[], Tensor]:
    def step() -> Tensor:
        for leaf in leaves:
            leaf.grad = None
        out = fn()
        out.square().mean().backward()
        return out

    return step


def gcn_case(edge_index: Tensor, n: int, width: int):
    x = torch.randn(n, width)
    model = GCN(width, width, width, num_layers=1, dropout=0.0)

    def run(sparse: bool) -> Callable[[], Tensor]:
        def fn() -> Tensor:
            model.sparse_aggregation = sparse
            return model(x, edge_index)

        return fwd_bwd(fn, list(model.parameters()))

    return "GCN layer (per-edge scatter -> CSR product)", run(False), run(True)


def gat_case(edge_index: Tensor, n: int, width: int):
    from torch_geometric.nn import GATConv

    x = torch.randn(n, width)
    heads = 8
    layers = []
    for cls in (GATConv, SortedGATConv):
        torch.manual_seed(0)  # same parameters; dropout off so both outputs compare
        layers.append(cls(width, width // heads, heads=heads, dropout=0.0))
    reference, fast = (fwd_bwd(lambda m=m: m(x, edge_index), list(m.parameters())) for m in layers)
    return "GAT layer, 8 heads (per-edge scatter -> sorted CSR)", reference, fast


def weighted_case(edge_index: Tensor, n: int, width: int):
    gen = torch.Generator().manual_seed(1)
    coef = torch.rand(edge_index.size(1), generator=gen).requires_grad_()
    h = torch.randn(n, width, generator=gen).requires_grad_()
    layout = WeightedAdjacency(edge_index, n)
    reference = fwd_bwd(lambda: propagate(edge_index, coef, h), [coef, h])
    fast = fwd_bwd(lambda: layout(coef, h), [coef, h])
    return "GCN-LPA weighted product (scatter -> sorted CSR)", reference, fast


def lanc_case(edge_index: Tensor, n: int, width: int):
    conv = torch.nn.Conv1d(width, width, 3, padding=1)
    h = torch.randn(n, width).requires_grad_()
    stack = neighbour_stack(edge_index, n, 10, torch.Generator().manual_seed(0))
    reference = fwd_bwd(
        lambda: conv(h[stack].transpose(1, 2)).transpose(1, 2), [h, *conv.parameters()]
    )
    fast = fwd_bwd(lambda: stacked_conv(conv, h, stack), [h, *conv.parameters()])
    return "LANC first convolution (per slot -> per node)", reference, fast


def lanc_later_conv_case(edge_index: Tensor, n: int, width: int):
    conv = torch.nn.Conv1d(width, width, 3, padding=1)
    u = torch.randn(n, 11, width).requires_grad_()  # [n, k + 1, H], stack-major
    reference = fwd_bwd(lambda: conv(u.transpose(1, 2)).transpose(1, 2), [u, *conv.parameters()])
    fast = fwd_bwd(lambda: conv_along_stack(conv, u), [u, *conv.parameters()])
    return "LANC later convolution (Conv1d -> channels-last)", reference, fast


def train_rows(n: int) -> Tensor:
    """A 60 % training split, as in the seeded 60/20/20 splits."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(2))[: int(0.6 * n)].sort()[0]


def lanc_rows_case(edge_index: Tensor, n: int, width: int):
    x, rows = torch.randn(n, 32), train_rows(n)
    model = LANC(32, width, 39).train()
    reference = fwd_bwd(lambda: model(x, edge_index)[rows], list(model.parameters()))
    fast = fwd_bwd(lambda: model(x, edge_index, output_nodes=rows), list(model.parameters()))
    return "LANC training step (all rows -> train rows)", reference, fast


def h2gcn_rows_case(edge_index: Tensor, n: int, width: int):
    x, rows = torch.randn(n, width), train_rows(n)
    model = H2GCN(width, width, 39).train()
    reference = fwd_bwd(lambda: model(x, edge_index)[rows], list(model.parameters()))
    fast = fwd_bwd(lambda: model(x, edge_index, output_nodes=rows), list(model.parameters()))
    return "H2GCN training step (all rows -> train rows)", reference, fast


def h2gcn_eval_case(edge_index: Tensor, n: int, width: int):
    x = torch.randn(n, width)
    model = H2GCN(width, width, 39).eval()
    hops = hop_operators(edge_index, n)

    @torch.no_grad()
    def reference() -> Tensor:  # the concatenation [r0 || r1 || r2], then the classifier
        reps = [torch.relu(model.ego(x))]
        for _ in range(model.num_layers):
            reps.append(torch.cat([op(reps[-1]) for op in hops], dim=-1))
        return model.classifier(torch.cat(reps, dim=-1))

    @torch.no_grad()
    def fast() -> Tensor:
        return model(x, edge_index)

    return "H2GCN evaluation (concatenation -> scores)", reference, fast


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=None, help="use the real BlogCatalog graph")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.mirror:
        edge_index, n = blogcatalog_graph(args.mirror)
        where = "BlogCatalog (mirror)"
    else:
        n = 10_312
        edge_index, where = random_graph(n, 333_983, seed=0), "random, BlogCatalog-sized"
    print(
        f"graph: {where}, {n} nodes, {edge_index.size(1)} directed edges; width {args.width}; "
        f"{torch.get_num_threads()} thread(s); median of {args.repeats}"
    )
    print(f"{'kernel':50s} {'reference s':>12s} {'fast s':>9s} {'ratio':>7s}")
    for case in (
        gcn_case,
        gat_case,
        weighted_case,
        lanc_case,
        lanc_later_conv_case,
        lanc_rows_case,
        h2gcn_rows_case,
        h2gcn_eval_case,
    ):
        name, reference, fast = case(edge_index, n, args.width)
        torch.manual_seed(0)
        ref_out = reference()
        torch.manual_seed(0)
        fast_out = fast()
        if not torch.allclose(ref_out, fast_out, rtol=1e-4, atol=1e-4):
            raise SystemExit(f"{name}: the two paths disagree; not timing them")
        t_ref, t_fast = median_seconds(reference, args.repeats), median_seconds(fast, args.repeats)
        print(f"{name:50s} {t_ref:12.3f} {t_fast:9.3f} {t_ref / t_fast:6.1f}x", flush=True)


if __name__ == "__main__":
    main()
