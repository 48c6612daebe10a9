"""`python -m vnetbench`: the same command line as the `vnetbench` entry point."""

from vnetbench.cli import main

main()
