"""Sizes of the KubeVirt common instancetypes a pool may name, as data.

From kubevirt/common-instancetypes v1.7.0 (`instancetypes/{u,o,cx,m,n}/1/sizes.yaml`): the guest vCPUs
and memory of each VirtualMachineClusterInstancetype. The autoscaler needs a node's size before any
node of the pool exists (scale from zero), and a machine template publishes none.
"""

from __future__ import annotations

__all__ = ["INSTANCETYPE_SIZES"]

# name -> (guest vCPUs, guest memory)
INSTANCETYPE_SIZES: dict[str, tuple[int, str]] = {
    "u1.nano": (1, "512Mi"),
    "u1.micro": (1, "1Gi"),
    "u1.small": (1, "2Gi"),
    "u1.medium": (1, "4Gi"),
    "u1.2xmedium": (2, "4Gi"),
    "u1.large": (2, "8Gi"),
    "u1.xlarge": (4, "16Gi"),
    "u1.2xlarge": (8, "32Gi"),
    "u1.4xlarge": (16, "64Gi"),
    "u1.8xlarge": (32, "128Gi"),
    "o1.nano": (1, "512Mi"),
    "o1.micro": (1, "1Gi"),
    "o1.small": (1, "2Gi"),
    "o1.medium": (1, "4Gi"),
    "o1.large": (2, "8Gi"),
    "o1.xlarge": (4, "16Gi"),
    "o1.2xlarge": (8, "32Gi"),
    "o1.4xlarge": (16, "64Gi"),
    "o1.8xlarge": (32, "128Gi"),
    "cx1.medium": (1, "2Gi"),
    "cx1.large": (2, "4Gi"),
    "cx1.xlarge": (4, "8Gi"),
    "cx1.2xlarge": (8, "16Gi"),
    "cx1.4xlarge": (16, "32Gi"),
    "cx1.8xlarge": (32, "64Gi"),
    "m1.large": (2, "16Gi"),
    "m1.xlarge": (4, "32Gi"),
    "m1.2xlarge": (8, "64Gi"),
    "m1.4xlarge": (16, "128Gi"),
    "m1.8xlarge": (32, "256Gi"),
    "n1.medium": (4, "4Gi"),
    "n1.large": (4, "8Gi"),
    "n1.xlarge": (8, "16Gi"),
    "n1.2xlarge": (16, "32Gi"),
    "n1.4xlarge": (32, "64Gi"),
    "n1.8xlarge": (64, "128Gi"),
}
