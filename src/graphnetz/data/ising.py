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
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch_geometric.data import Data

CRITICAL_TEMPERATURE = 2.0 / np.log(1.0 + np.sqrt(2.0))


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
) -> Data:
    """Ising lattice: ``side`` x ``side`` nodes, lattice edges, x = spins [N, 1] (±1).

    Also carries ``pos`` (row, col) and the lattice's ``magnetisation`` (mean spin) and
    ``energy`` per site (-Σ_<ij> s_i s_j / N), the physics of the drawn state.
    """
    if isinstance(side, bool) or not isinstance(side, int) or side < 2:
        raise ValueError(f"side must be an integer >= 2, got {side!r}")
    if not isinstance(temperature, int | float) or temperature <= 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if isinstance(sweeps, bool) or not isinstance(sweeps, int) or sweeps < 0:
        raise ValueError(f"sweeps must be an integer >= 0, got {sweeps!r}")
    spins = metropolis_spins(side, float(temperature), sweeps, np.random.default_rng(seed))
    energy = -float((spins * neighbour_sum(spins)).sum() / 2) / spins.size
    rows, cols = np.indices((side, side))
    return Data(
        x=torch.from_numpy(spins.reshape(-1, 1)).float(),
        edge_index=lattice_edges(side),
        pos=torch.from_numpy(np.stack([rows.ravel(), cols.ravel()], 1)).float(),
        num_nodes=side * side,
        magnetisation=float(spins.mean()),
        energy=energy,
    )
