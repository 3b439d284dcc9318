"""Train one run, or sweep with -m. See README.md and conf/config.yaml."""

from graphnetz.cli.train import main

if __name__ == "__main__":
    main()
