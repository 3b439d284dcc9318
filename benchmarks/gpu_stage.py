"""Stage the GPU checks for a machine without network: the raw files they read and the
wheels of our pure-Python dependencies that a stock PyTorch image lacks.

Run where pip and the mirror are at hand; carry ``DEST`` (about 12 MB) to the GPU machine
and run there, from the repository root, the commands this prints (graphnetz from
``src``, the wheels into a private folder, nothing installed system-wide):

    python benchmarks/gpu_stage.py --mirror ../shared/data --dest .gpu_stage [--python 3.12]

Copied from the mirror, with its ``SHA256SUMS`` (loaders check the files against it):
Cora, MUTAG and WN18RR, and MLGNC's PCG, DBLP and BlogCatalog (``benchmarks/gpu_check.py``,
``benchmarks/multilabel_epochs.py``, ``benchmarks/sweep_speed.py --datasets cora``).
Wheels: Hydra and OmegaConf (with ANTLR's runtime, built here from its source archive,
which is all PyPI has of it) and Hydra's joblib launcher. torch, PyG, Lightning, numpy,
scipy, pandas, matplotlib, networkx, tqdm and filelock are expected in the image.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW = [
    "SHA256SUMS",
    "Planetoid/Cora",
    "TUDataset/MUTAG",
    "WordNet18RR",
    "MLGNC/pcg_removed_isolated_nodes",
    "MLGNC/pcg_removed_isolated_nodes_0.6",
    "MLGNC/dblp",
    "MLGNC/blogcatalog_0.6",
    "MLGNC/blogcatalog.mat",
]
#: pure-Python packages, pinned to what this environment runs
WHEELS = ["hydra-core", "omegaconf", "hydra-joblib-launcher"]
SOURCE_ONLY = ["antlr4-python3-runtime"]  # PyPI has an sdist only: built into a wheel here


def installed_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        raise SystemExit(
            f"{name} is not installed here; install graphnetz's requirements first "
            "(its wheels are pinned to the versions this environment runs)"
        ) from None


def copy_raw(mirror: Path, dest: Path) -> int:
    total = 0
    for rel in RAW:
        src, out = mirror / rel, dest / rel
        if not src.exists():
            raise SystemExit(f"{src} is missing from the mirror {mirror}")
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, out, dirs_exist_ok=True)
            total += sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
        else:
            shutil.copy2(src, out)
            total += out.stat().st_size
    return total


def fetch_wheels(dest: Path, python: str) -> list[str]:
    pins = [f"{name}=={installed_version(name)}" for name in WHEELS]
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run(
        [*pip, "download", "--no-deps", "--only-binary=:all:", "--python-version", python,
         "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
         "--platform", "manylinux2014_x86_64", "-d", str(dest), *pins],
        check=True,
    )  # fmt: skip
    built = [f"{name}=={installed_version(name)}" for name in SOURCE_ONLY]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dest), *built], check=True)
    return sorted(p.name for p in dest.glob("*.whl"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", required=True, help="raw-data mirror, e.g. ../shared/data")
    parser.add_argument("--dest", default=".gpu_stage", help="folder to fill (data/, wheels/)")
    parser.add_argument("--python", default="3.12", help="the GPU machine's Python version")
    args = parser.parse_args()
    dest = Path(args.dest).resolve()
    size = copy_raw(Path(args.mirror), dest / "data")
    wheels = fetch_wheels(dest / "wheels", args.python)
    print(f"{dest / 'data'}: {size / 2**20:.1f} MB of raw files; {dest / 'wheels'}: {wheels}")
    if dest.is_relative_to(ROOT):  # the commands below run from the repository root
        dest = dest.relative_to(ROOT)
    else:
        print(f"(carry {dest} to the same path on the GPU machine)")
    print("On the GPU machine, from the repository root:")
    print(
        f"  python3 -m pip install -q --no-index --no-deps --target /tmp/site {dest}/wheels/*.whl\n"
        f"  export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1\n"
        f"  python3 benchmarks/gpu_check.py --mirror {dest}/data\n"
        f"  python3 benchmarks/multilabel_epochs.py --mirror {dest}/data --device cuda --rounds 1\n"
        f"  python3 benchmarks/multilabel_epochs.py --mirror {dest}/data --rounds 1\n"
        f"  python3 benchmarks/sweep_speed.py --mirror {dest}/data --datasets cora --accelerator gpu"
    )


if __name__ == "__main__":
    main()
