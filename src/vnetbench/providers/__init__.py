"""Providers build a topology somewhere and run commands on its nodes."""
