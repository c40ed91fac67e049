"""Merge requests: the review workflow above the merge engine (see workflow.py)."""
