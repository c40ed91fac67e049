"""Maintenance of a graph's storage: garbage collection."""
