"""``skdp.show_versions()``: the versions a bug report needs."""

import sys

from ._version import __version__

__all__ = ["show_versions"]

# The runtime dependencies of pyproject.toml, then the optional ones: the
# extras (pandas, plot) and the joblib backends that the tests exercise.
_RUNTIME = ("scikit-learn", "numpy", "scipy", "joblib", "threadpoolctl")
_OPTIONAL = ("pandas", "matplotlib", "dask", "distributed")


def _system_info():
    import platform

    return {
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
    }


def _version(distribution):
    """The installed version of a distribution, or None when it is not installed."""
    import importlib.metadata  # here: it takes a fifth of import skdp

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _deps_info():
    runtime = {"skdp": __version__}
    runtime.update((name, _version(name)) for name in _RUNTIME)
    optional = {name: _version(name) for name in _OPTIONAL}
    return runtime, optional


def _threadpool_info():
    """BLAS and OpenMP libraries loaded by numpy and scipy, with their thread counts."""
    try:
        import numpy  # noqa: F401  (loads its BLAS)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return threadpool_info()


def _section(title, items):
    width = max(len(key) for key in items)
    lines = [f"{title}:"]
    lines += [f"{key:>{width + 4}}: {value}" for key, value in items.items()]
    return "\n".join(lines)


def show_versions() -> None:
    """Print the system, the versions of skdp and its dependencies, and the BLAS threads.

    For bug reports, as ``sklearn.show_versions()``: the Python version and
    platform, skdp's version, the installed version of each runtime
    dependency (scikit-learn, numpy, scipy, joblib, threadpoolctl) and of the
    optional ones (pandas, matplotlib, dask, distributed; ``None`` when not
    installed), then the BLAS and OpenMP libraries that numpy and scipy load,
    with their number of threads. Versions are read from the installed
    distributions' metadata. Nothing printed depends on any data.

    Examples
    --------
    >>> import skdp
    >>> skdp.show_versions()
    System:
    ...
    Python dependencies:
              skdp: ...
      scikit-learn: ...
    ...
    Optional dependencies:
    ...
    """
    runtime, optional = _deps_info()
    parts = [
        _section("System", _system_info()),
        _section("Python dependencies", runtime),
        _section("Optional dependencies", optional),
    ]
    libraries = _threadpool_info()
    if libraries:
        lines = ["Threadpool libraries:"]
        for lib in libraries:
            lines.append(
                f"    {lib.get('internal_api')} {lib.get('version')}: "
                f"{lib.get('num_threads')} threads ({lib.get('filepath')})"
            )
        parts.append("\n".join(lines))
    print("\n\n".join(parts))
