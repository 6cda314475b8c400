"""Create the peer libraries' virtual environments that the benchmarks compare skdp with.

One venv per peer (diffprivlib 0.6.6 with scikit-learn < 1.8; Opacus 1.6 with CPU torch
2.13.0; and for the table queries, OpenDP 0.16.0 with its polars 1.36.1, PipelineDP 0.3.1,
and Tumult Analytics 0.21.0 with pyspark 3.5, which needs Java 17), in
``$SKDP_BENCH_PEERS_DIR`` or else ``~/.cache/skdp-bench-peers``; an existing one is kept.
See benchmarks/_peers.py. Usage::

    python benchmarks/setup_peers.py                  # all five
    python benchmarks/setup_peers.py diffprivlib      # one
    python benchmarks/setup_peers.py opendp pipeline-dp tumult
    SKDP_BENCH_PEERS_DIR=/some/folder python benchmarks/setup_peers.py
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peers  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peers", nargs="*", metavar="PEER",
                        help=f"which peers, of {', '.join(_peers.ALL_PEER_REQUIREMENTS)} "
                             "(default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.peers) - set(_peers.ALL_PEER_REQUIREMENTS))
    if unknown:
        parser.error(f"unknown peers {unknown}; choose from {sorted(_peers.ALL_PEER_REQUIREMENTS)}")
    print(f"peer venvs in {_peers.peers_dir()} (set {_peers.PEERS_DIR_VARIABLE} to change)")
    names = args.peers or list(_peers.ALL_PEER_REQUIREMENTS)
    for name, python in _peers.setup_peers(names).items():
        print(f"{name}: {python}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
