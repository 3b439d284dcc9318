"""graphnetz's Hydra launchers (Hydra instantiates launchers from ``hydra_plugins`` only)."""
