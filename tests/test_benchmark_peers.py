"""The benchmarks run anywhere: their peer venvs are found through one documented setting,
and no file of the repository names a path of one machine."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Home and workspace folders of one machine (split so that this file does not match itself).
MACHINE_PREFIXES = ["/" + "work/", "/" + "root/", "/" + "home/", "/" + "Users/"]


def _load_peers():
    spec = importlib.util.spec_from_file_location("_bench_peers", ROOT / "benchmarks" / "_peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peer_venvs_follow_the_environment_variable(monkeypatch, tmp_path):
    peers = _load_peers()
    monkeypatch.setenv("SKDP_BENCH_PEERS_DIR", str(tmp_path))
    assert peers.peers_dir() == str(tmp_path)
    python = Path(peers.peer_python("diffprivlib"))
    assert python.parts[: len(tmp_path.parts) + 1] == (*tmp_path.parts, "diffprivlib")
    # a missing peer venv is skipped with a note, not an error
    assert peers.run_peer("print(1)", {"a": [1]}) is None


def test_default_peer_folder_is_the_users_cache(monkeypatch, tmp_path):
    peers = _load_peers()
    monkeypatch.delenv("SKDP_BENCH_PEERS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert peers.peers_dir() == str(tmp_path / "skdp-bench-peers")
    assert set(peers.PEER_REQUIREMENTS) == {"diffprivlib", "opacus"}


def _tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.stdout.decode().split("\0") if name]


def test_no_file_names_a_machine_path():
    found = []
    for path in _tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary data
        for number, line in enumerate(text.splitlines(), 1):
            if any(prefix in line for prefix in MACHINE_PREFIXES):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "machine paths in the repository:\n" + "\n".join(found)


def test_setup_script_refuses_an_unknown_peer():
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "setup_peers.py"), "nopeer"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "unknown peers" in res.stderr
