"""Train one run, or sweep with -m. See README.md and conf/config.yaml."""

from graphnetz.cli.quick_exit import exit_after
from graphnetz.cli.train import main

if __name__ == "__main__":
    exit_after(main, __file__)
