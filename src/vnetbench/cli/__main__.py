"""`python -m vnetbench.cli`: the same command line as the `vnetbench` entry point."""

from vnetbench.cli import main

main()
