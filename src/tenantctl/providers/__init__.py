"""Cluster API provider packages installed through cluster-api-operator, and their vendoring.

Layers, low to high: catalogue and patches (data) → platform and bundles (what a user asks for) →
contract, build, check, render, plan (pure decisions over bytes and dicts) → download, vendoring
(the network and the disk). The commands that drive them live in `tenantctl.cli.providers`, which
imports them lazily.
"""
