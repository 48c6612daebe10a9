"""vnetbench: measure what a virtualized network really delivers."""

from importlib.metadata import PackageNotFoundError, version

try:  # the installed package's version (pyproject.toml): `vnetbench --version` and each stored campaign
    __version__ = version("vnetbench")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
