"""The operator: the API door, the phases over it, the kopf runtime that drives them, day-two readers, install.

Layers, high to low: `runtime` (kopf) → `install` | `daytwo` → `phases` → `kube` → `config`;
no layer imports one above it (import-linter holds it).
"""
