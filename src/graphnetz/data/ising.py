"""Seed-aware 2-D Ising lattice: link prediction on a square lattice with spin features.

One ``side`` x ``side`` square lattice with open boundaries (each node joined to its up to
four horizontal / vertical neighbours); node features are its ±1 spins, sampled at
temperature ``temperature`` (J = k_B = 1; T_c = 2/ln(1+√2) ≈ 2.269) by Metropolis
sweeps from a random start. A sweep updates the two checkerboard sublattices in turn: the
nodes of one colour have no neighbour of that colour, so they are updated together in one
array operation and the chain is the same as a site-by-site Metropolis sweep in that order.
The run seed draws the start and every acceptance test (its own generator), so the same
seed gives the same spins. The reference package draws independent Bernoulli spins (not an
equilibrium state); these are Metropolis samples near criticality.

``lattice="reference"`` and ``spins="bernoulli"`` give the reference package's task
instead: its graph is PyG's ``grid(side, side)``, which joins every node to its up to
eight neighbours (diagonals included) and to itself, and its spins are +1 with
probability (1 + tanh(1/T)) / 2, independently, from a torch generator seeded with the
run seed. The spin model (Metropolis, energy) stays the nearest-neighbour one; the
lattice only chooses the graph the task sees.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch_geometric.data import Data

CRITICAL_TEMPERATURE = 2.0 / np.log(1.0 + np.sqrt(2.0))


LATTICES = ("square", "reference")
SPIN_SAMPLERS = ("metropolis", "bernoulli")


def reference_grid(side: int) -> torch.Tensor:
    """The reference package's lattice: PyG's ``grid`` (8 neighbours and a self-loop)."""
    from torch_geometric.utils import grid

    return grid(side, side)[0]


def bernoulli_spins(side: int, temperature: float, seed: int) -> np.ndarray:
    """The reference package's spins: +1 with probability (1 + tanh(1/T)) / 2, each
    independently, drawn as it draws them (a torch generator seeded with ``seed``)."""
    gen = torch.Generator().manual_seed(seed)
    bias = torch.tanh(torch.tensor(1.0 / temperature)) / 2 + 0.5
    spins = (torch.rand((side * side, 1), generator=gen) < bias).float() * 2 - 1
    return spins.numpy().reshape(side, side).astype(np.float64)


def lattice_edges(side: int) -> torch.Tensor:
    """The open-boundary square lattice on ``side``² nodes (node = row * side + col),
    both directions of every edge."""
    ids = np.arange(side * side).reshape(side, side)
    right = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    pairs = np.concatenate([right, down], axis=1)
    edge_index = np.concatenate([pairs, pairs[::-1]], axis=1)
    order = np.lexsort((edge_index[1], edge_index[0]))
    return torch.from_numpy(edge_index[:, order].copy())


def neighbour_sum(spins: np.ndarray) -> np.ndarray:
    """Sum of the (open-boundary) four neighbours' spins at every site."""
    total = np.zeros_like(spins)
    total[1:, :] += spins[:-1, :]
    total[:-1, :] += spins[1:, :]
    total[:, 1:] += spins[:, :-1]
    total[:, :-1] += spins[:, 1:]
    return total


def metropolis_spins(
    side: int, temperature: float, sweeps: int, rng: np.random.Generator
) -> np.ndarray:
    """±1 spins after ``sweeps`` checkerboard Metropolis sweeps from a random start."""
    spins = rng.choice(np.array([-1.0, 1.0]), size=(side, side))
    rows, cols = np.indices((side, side))
    colours = [(rows + cols) % 2 == c for c in (0, 1)]
    for _ in range(sweeps):
        for colour in colours:
            delta = 2.0 * spins * neighbour_sum(spins)  # energy change of flipping each site
            accept = rng.random((side, side)) < np.exp(-np.clip(delta, 0, None) / temperature)
            spins = np.where(colour & accept, -spins, spins)
    return spins


def load_ising(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    side: int = 20,
    temperature: float = 2.27,
    sweeps: int = 500,
    lattice: str = "square",
    spins: str = "metropolis",
) -> Data:
    """Ising lattice: ``side`` x ``side`` nodes, lattice edges, x = spins [N, 1] (±1).

    Also carries ``pos`` (row, col) and the lattice's ``magnetisation`` (mean spin) and
    ``energy`` per site (-Σ_<ij> s_i s_j / N over nearest neighbours), the physics of the
    drawn state. ``lattice`` / ``spins``: ``square`` / ``metropolis`` (ours) or
    ``reference`` / ``bernoulli`` (the reference package's; see the module docstring).
    """
    if lattice not in LATTICES:
        raise ValueError(f"lattice must be one of {LATTICES}, got {lattice!r}")
    if spins not in SPIN_SAMPLERS:
        raise ValueError(f"spins must be one of {SPIN_SAMPLERS}, got {spins!r}")
    if isinstance(side, bool) or not isinstance(side, int) or side < 2:
        raise ValueError(f"side must be an integer >= 2, got {side!r}")
    if not isinstance(temperature, int | float) or temperature <= 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if isinstance(sweeps, bool) or not isinstance(sweeps, int) or sweeps < 0:
        raise ValueError(f"sweeps must be an integer >= 0, got {sweeps!r}")
    if spins == "metropolis":
        state = metropolis_spins(side, float(temperature), sweeps, np.random.default_rng(seed))
    else:
        state = bernoulli_spins(side, float(temperature), seed)
    energy = -float((state * neighbour_sum(state)).sum() / 2) / state.size
    rows, cols = np.indices((side, side))
    return Data(
        x=torch.from_numpy(state.reshape(-1, 1)).float(),
        edge_index=lattice_edges(side) if lattice == "square" else reference_grid(side),
        pos=torch.from_numpy(np.stack([rows.ravel(), cols.ravel()], 1)).float(),
        num_nodes=side * side,
        magnetisation=float(state.mean()),
        energy=energy,
    )
