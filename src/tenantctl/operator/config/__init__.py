"""What the operator is told: settings, shard layout and the tunables read from flags and environment.

Plain data and parsers; imports no other operator layer.
"""
