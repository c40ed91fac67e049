"""Crash recovery: records of publications in flight, their recovery, and `fsck`."""
