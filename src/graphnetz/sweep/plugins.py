"""graphnetz's Hydra plugins (``src/hydra_plugins``), discoverable in an editable install.

Hydra finds plugin classes by walking the ``hydra_plugins`` namespace package; setuptools'
editable install maps our folder there through an import hook that this walk does not
see, so ``hydra/sweeper=graphnetz`` and ``hydra/launcher=slurm`` would be "unknown plugin
class". A wheel puts ``hydra_plugins`` beside ``graphnetz`` on the path already.
"""

from __future__ import annotations

import sys
from pathlib import Path


def expose_hydra_plugins() -> None:
    """Put the folder that holds our ``hydra_plugins`` on ``sys.path`` (at the end, so it
    shadows nothing) unless it is there already."""
    folder = Path(__file__).resolve().parents[2]
    if (folder / "hydra_plugins" / "graphnetz_launchers").is_dir() and str(folder) not in sys.path:
        sys.path.append(str(folder))
