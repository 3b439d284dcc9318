"""``python -m graphnetz list datasets|models|tasks``."""

from graphnetz.cli.list import main

if __name__ == "__main__":
    main()
