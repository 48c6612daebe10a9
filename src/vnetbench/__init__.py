"""vnetbench: measure what a virtualized network really delivers."""

__version__ = "0.1.0"
