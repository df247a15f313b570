"""The Proxmox credentials Secrets: their keys (one table), the input checks, the per-tenant capmox Secret.

Pure functions only: the operator and the doctor read a Secret and hand its data here.
"""
