"""The block-drawn Bernoulli masks equal torch's own draws, value for value and stream."""

import pytest
import torch
import torch.nn.functional as F

from graphnetz.models import bernoulli
from graphnetz.models.bernoulli import BLOCK, MIN_ELEMENTS, bernoulli_, dropout


def _both(make, draw, seed=7):
    """``draw`` applied to ``make()`` under torch's kernel and ours, plus the next draw."""
    results = []
    for ours in (False, True):
        torch.manual_seed(seed)
        t = make()
        out = draw(t, ours)
        results.append((out, torch.rand(5)))  # the stream after the draw
    return results


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("numel", [MIN_ELEMENTS, 3 * BLOCK + 5, 5 * MIN_ELEMENTS + 123])
@pytest.mark.parametrize("keep", [0.5, 0.2, 0.9])
def test_same_values_and_stream_as_torch(dtype, numel, keep):
    (native, after_native), (ours, after_ours) = _both(
        lambda: torch.empty(numel, dtype=dtype),
        lambda t, fast: bernoulli_(t, keep) if fast else t.bernoulli_(keep),
    )
    assert torch.equal(native, ours)
    assert torch.equal(after_native, after_ours)
    assert 0 < ours.mean() < 1


def test_transposed_and_generator_draws_in_memory_order():
    shape = (300, 11, 64)  # a layout dropout_rows builds: stack-major memory, permuted view
    gens = [torch.Generator().manual_seed(3) for _ in range(2)]
    native = torch.empty(64, 300, 11).permute(1, 2, 0).bernoulli_(0.5, generator=gens[0])
    ours = bernoulli_(torch.empty(64, 300, 11).permute(1, 2, 0), 0.5, generator=gens[1])
    assert ours.shape == shape and ours.stride() == native.stride()
    assert torch.equal(native, ours)
    assert torch.equal(gens[0].get_state(), gens[1].get_state())


def test_gapped_views_fall_back_to_torch():
    view = torch.empty(400, 400)[:, :300]  # rows with gaps between them: no dense memory order
    (native, after_native), (ours, after_ours) = _both(
        lambda: torch.empty(400, 400)[:, :300],
        lambda t, fast: bernoulli_(t, 0.5) if fast else t.bernoulli_(0.5),
    )
    assert bernoulli._memory_order(view) is None
    assert torch.equal(native, ours) and torch.equal(after_native, after_ours)


@pytest.mark.parametrize("p", [0.5, 0.2, 0.7])
@pytest.mark.parametrize("transpose", [False, True])
def test_dropout_equals_f_dropout_with_gradients(p, transpose):
    def make():
        x = torch.randn(2000, 96, dtype=torch.float32)
        x = x.t().contiguous().t() if transpose else x
        return x.requires_grad_()

    def draw(x, fast):
        y = dropout(x, p) if fast else F.dropout(x, p, True)
        y.pow(2).sum().backward()
        return torch.cat([y.detach().reshape(-1), x.grad.reshape(-1)])

    (native, after_native), (ours, after_ours) = _both(make, draw)
    assert torch.equal(native, ours)
    assert torch.equal(after_native, after_ours)


def test_dropout_off_and_bad_probabilities():
    x = torch.randn(MIN_ELEMENTS)
    assert torch.equal(dropout(x, 0.5, training=False), x)
    assert torch.equal(dropout(x, 1.0), x * 0.0)
    with pytest.raises(ValueError, match="1.5"):
        dropout(x, 1.5)
    with pytest.raises(ValueError, match="-0.1"):
        bernoulli_(torch.empty(MIN_ELEMENTS), -0.1)


def test_a_build_whose_kernels_differ_gets_torch_draws(monkeypatch):
    def wrong_fill(out, keep, generator):
        out.fill_(1.0)

    monkeypatch.setattr(bernoulli, "_same_draws", None)
    monkeypatch.setattr(bernoulli, "_fill", wrong_fill)
    assert not bernoulli._draws_match()
    (native, _), (ours, _) = _both(
        lambda: torch.empty(MIN_ELEMENTS),
        lambda t, fast: bernoulli_(t, 0.5) if fast else t.bernoulli_(0.5),
    )
    assert torch.equal(native, ours)
