"""The kopf runtime: handlers, triggers, finalizers across shards, flags, metrics, logs, admission, the run loop.

The only operator layer that imports kopf; it may import every layer below it.
"""
