"""Helpers of the integration and e2e tests: they build real namespaces, start sshd or run the CLI
as root. Unit tests never import these."""
