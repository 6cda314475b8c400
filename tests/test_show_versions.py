"""skdp.show_versions(): what a bug report needs."""

import importlib.metadata
import platform
import sys

import skdp
from skdp import _show_versions


def test_show_versions_prints_system_and_every_dependency(capsys):
    skdp.show_versions()
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
             for line in out.splitlines() if line.startswith("    ") and ":" in line}
    assert lines["skdp"] == skdp.__version__
    assert lines["python"] == sys.version.replace("\n", " ")
    assert lines["machine"] == platform.platform()
    assert lines["executable"] == sys.executable
    for name in ("scikit-learn", "numpy", "scipy", "joblib", "threadpoolctl"):
        assert lines[name] == importlib.metadata.version(name), name
    for name in ("pandas", "matplotlib", "dask", "distributed"):
        assert name in lines, name
    assert out.index("Python dependencies:") < out.index("Optional dependencies:")


def test_missing_optional_dependency_is_none(capsys, monkeypatch):
    monkeypatch.setattr(_show_versions, "_OPTIONAL", ("no-such-distribution-skdp",))
    skdp.show_versions()
    out = capsys.readouterr().out
    assert "no-such-distribution-skdp: None" in out


def test_threadpool_section_lists_numpy_blas(capsys):
    from threadpoolctl import threadpool_info

    skdp.show_versions()
    out = capsys.readouterr().out
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    if blas:
        assert "Threadpool libraries:" in out
        assert f"{blas[0]['num_threads']} threads" in out
