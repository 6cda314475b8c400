"""skdp's version: the package, the command line and show_versions read it from here."""

__version__ = "0.1.0.dev0"
