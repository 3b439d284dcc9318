"""LANC's fast kernels against the model written out plainly, with the same random draws.

The reference gathers the stack and runs every ``Conv1d`` per slot; its dropout masks are
drawn with plain ``F.dropout`` on all nodes, in the memory layout the model has always
used (stack-major after the first convolution, channel-major after later ones), so the
same seed must give the same logits and gradients up to float rounding, and leave the
global random stream at the same place.
"""

import pytest
import torch
import torch.nn.functional as F

from graphnetz.models.multilabel import LANC, neighbour_stack
from graphnetz.models.multilabel.lanc import conv_along_stack, stacked_conv


def _graph(n: int = 60, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    upper = torch.triu(torch.rand(n, n, generator=gen) < 0.08, diagonal=1)
    i, j = upper.nonzero().t()
    x = torch.randn(n, 7, generator=gen)
    return x, torch.cat([torch.stack([i, j]), torch.stack([j, i])], 1)


def _reference_lanc(model: LANC, x, edge_index):
    p, train = model.dropout, model.training
    gen = None if train else torch.Generator().manual_seed(model.eval_seed)
    stack = neighbour_stack(edge_index, x.size(0), model.num_neighbors, gen)
    h = F.relu(model.project(F.dropout(x, p, train)))
    u = F.dropout(h, p, train)[stack].transpose(1, 2)  # [N, H, L]
    for i, conv in enumerate(model.convs):
        if i == 1:  # the first convolution's output is stored stack-major
            u = u.transpose(1, 2).contiguous().transpose(1, 2)
        u = F.relu(conv(u if i == 0 else F.dropout(u, p, train)))
    u = u.transpose(1, 2)  # [N, L, H]
    alpha = torch.einsum("nlh,ch->ncl", u, model.label_embedding)
    alpha = alpha.div(u.size(-1) ** 0.5).softmax(-1)
    z = torch.einsum("ncl,nlh->nch", alpha, u)
    return ((z + h.unsqueeze(1)) * model.label_out).sum(-1) + model.label_bias


def _run(fn, model, seed: int):
    model.zero_grad()
    torch.manual_seed(seed)
    out = fn()
    after = torch.rand(3)  # where the global stream was left
    out.square().sum().backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()], after


@pytest.mark.parametrize("num_layers", [1, 2, 3])
@pytest.mark.parametrize("train", [True, False])
def test_lanc_equals_the_plain_conv1d_model_with_the_same_seed(num_layers, train):
    x, ei = _graph()
    torch.manual_seed(1)
    model = LANC(7, 8, 4, num_layers=num_layers, num_neighbors=5, dropout=0.3)
    model.train(train)
    rows = torch.arange(0, x.size(0), 3)
    fast, fast_grads, fast_after = _run(lambda: model(x, ei, output_nodes=rows), model, 7)
    ref, ref_grads, ref_after = _run(lambda: _reference_lanc(model, x, ei)[rows], model, 7)
    torch.testing.assert_close(fast, ref, rtol=1e-5, atol=1e-6)
    for a, b in zip(fast_grads, ref_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    assert torch.equal(fast_after, ref_after)


@pytest.mark.parametrize("contiguous", [True, False])
def test_conv_along_stack_is_conv1d_on_the_transpose_for_either_layout(contiguous):
    gen = torch.Generator().manual_seed(2)
    conv = torch.nn.Conv1d(5, 3, 3, padding=1).double()
    u = torch.randn(4, 6, 5, dtype=torch.float64, generator=gen)
    if not contiguous:
        u = u.transpose(1, 2).contiguous().transpose(1, 2)
    u.requires_grad_()
    expected = conv(u.transpose(1, 2)).transpose(1, 2)
    torch.testing.assert_close(conv_along_stack(conv, u), expected)
    assert torch.autograd.gradcheck(lambda v: conv_along_stack(conv, v), (u,))


def _values_and_grads(fn, inputs):
    out = fn()
    grads = torch.autograd.grad(out, inputs, grad_outputs=torch.randn_like(out))
    return out.detach(), grads, out.grad_fn


@pytest.mark.parametrize("which", ["stacked_conv", "conv_along_stack"])
def test_relu_in_place_gives_the_values_and_gradients_of_an_out_of_place_relu(which):
    gen = torch.Generator().manual_seed(4)
    conv = torch.nn.Conv1d(6, 5, 3, padding=1)
    stack = torch.randint(0, 9, (9, 4), generator=gen)
    x = torch.randn(9, 6, generator=gen) if which == "stacked_conv" else torch.randn(9, 4, 6)
    x.requires_grad_()

    def call(relu):
        if which == "stacked_conv":
            return stacked_conv(conv, x, stack, relu=relu)
        return conv_along_stack(conv, x, relu=relu)

    inputs = (x, *conv.parameters())
    torch.manual_seed(0)
    fused, fused_grads, fused_fn = _values_and_grads(lambda: call(True), inputs)
    torch.manual_seed(0)
    plain, plain_grads, _ = _values_and_grads(lambda: F.relu(call(False)), inputs)
    assert torch.equal(fused, plain)
    for a, b in zip(fused_grads, plain_grads, strict=True):
        assert torch.equal(a, b)
    # written into the kernel's own output, not a view of it: autograd would otherwise
    # clone the base's whole gradient in the backward pass (CopySlices)
    assert "CopySlices" not in _backward_nodes(fused_fn)
    # a ReLU in place on the returned view would clone: the check can tell
    assert "CopySlices" in _backward_nodes(call(False).relu_().grad_fn)


def _backward_nodes(fn, depth: int = 6) -> set[str]:
    names, frontier = set(), [fn]
    for _ in range(depth):
        frontier = [f for f in frontier if f is not None]
        names |= {type(f).__name__ for f in frontier}
        frontier = [nxt for f in frontier for nxt, _ in f.next_functions]
    return names
