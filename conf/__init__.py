"""GraphNetz's Hydra configs, one folder per swappable group.

A data package, installed as ``graphnetz.conf`` (``pkg://graphnetz.conf`` for Hydra);
see ``graphnetz.config_dir`` for how entry points find it.
"""
