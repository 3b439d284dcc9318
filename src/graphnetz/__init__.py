"""GraphNetz: benchmarking graph neural networks honestly."""
__version__ = "0.1.0"
