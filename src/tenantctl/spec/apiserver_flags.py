"""The kube-apiserver flags a user may not pass through `spec.controlPlane.apiServer.extraArgs`.

Kamaji builds the apiserver's command line itself (clastix/kamaji 26.3.6-edge, the version Cozystack
runs: `internal/builders/controlplane/deployment.go` `buildKubeAPIServerCommand`, and the konnectivity
addon in `konnectivity_server.go`). In that version user extraArgs are merged last and replace Kamaji's
value (`utilities.MergeMaps(current, desired, extra)`): an `--etcd-servers` from the spec would point
the tenant at another datastore, a `--tls-cert-file` at a certificate that is not mounted. Later Kamaji
drops such duplicates silently instead. Either way the flag cannot do what the user meant, so it is
refused with the component that owns it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["FLAG_NAME", "OWNED_APISERVER_FLAGS"]

# A flag as a map key: lower-case words joined by single dashes, without the leading `--`.
FLAG_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

_TCP = "Kamaji, from the TenantControlPlane tenantctl renders"
_DATASTORE = "Kamaji, from the DataStore (spec.controlPlane.dataStoreName)"
_KONNECTIVITY = "Kamaji's konnectivity addon"

OWNED_APISERVER_FLAGS: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "advertise-address",
            "allow-privileged",
            "authorization-mode",
            "client-ca-file",
            "enable-admission-plugins",
            "enable-bootstrap-token-auth",
            "kubelet-client-certificate",
            "kubelet-client-key",
            "kubelet-preferred-address-types",
            "proxy-client-cert-file",
            "proxy-client-key-file",
            "requestheader-allowed-names",
            "requestheader-client-ca-file",
            "requestheader-extra-headers-prefix",
            "requestheader-group-headers",
            "requestheader-username-headers",
            "secure-port",
            "service-account-issuer",
            "service-account-key-file",
            "service-account-signing-key-file",
            "service-cluster-ip-range",
            "tls-cert-file",
            "tls-private-key-file",
        ),
        _TCP,
    ),
    **dict.fromkeys(
        (
            "etcd-cafile",
            "etcd-certfile",
            "etcd-compaction-interval",
            "etcd-keyfile",
            "etcd-prefix",
            "etcd-servers",
            "etcd-servers-overrides",
        ),
        _DATASTORE,
    ),
    "egress-selector-config-file": _KONNECTIVITY,
}
