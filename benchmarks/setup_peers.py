"""Create the peer libraries' virtual environments that the benchmarks compare skdp with.

One venv per peer (diffprivlib 0.6.6 with scikit-learn < 1.8; Opacus 1.6 with CPU torch
2.13.0), in ``$SKDP_BENCH_PEERS_DIR`` or else ``~/.cache/skdp-bench-peers``; an existing one
is kept. See benchmarks/_peers.py. Usage::

    python benchmarks/setup_peers.py                  # both
    python benchmarks/setup_peers.py diffprivlib      # one
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
                        help=f"which peers, of {', '.join(_peers.PEER_REQUIREMENTS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.peers) - set(_peers.PEER_REQUIREMENTS))
    if unknown:
        parser.error(f"unknown peers {unknown}; choose from {sorted(_peers.PEER_REQUIREMENTS)}")
    print(f"peer venvs in {_peers.peers_dir()} (set {_peers.PEERS_DIR_VARIABLE} to change)")
    for name, python in _peers.setup_peers(args.peers or None).items():
        print(f"{name}: {python}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
