"""The intra-object rules of `spec.checks`, as CEL the API server runs at `kubectl apply`.

Keys name where a rule is attached: a model (`ProxmoxPoolSpec`, `self` is that object), a field
(`Model.fieldAlias`, `self` is the field's value), a list's items (`ITEM_RULES`, `self` is one item), a
kind's root (`ROOT_RULES`, `self` is the whole object, the only place `metadata.name` is visible). The
generator refuses a key that names nothing, so a renamed field cannot silently drop its rule.

Messages say what `validate` says, naming the fields; `fieldPath` points at the field a rule is about.
Every string and list these rules read has a maxLength/maxItems in the models: the API server
estimates a rule's cost from those bounds and refuses a CRD whose rules could exceed its budget.
Tables (versions, resource ceilings, name limits) are read from the modules that own them.
"""

from __future__ import annotations

import json

from tenantctl.spec import syntax
from tenantctl.spec.compat import KUBERNETES_DOWNGRADE, KUBERNETES_SKIP, TALOS_DOWNGRADE
from tenantctl.spec.exposure import EXPOSE_FIELDS, default_expose_type
from tenantctl.spec.names import LABEL_MAX, MACHINE_SUFFIX_LEN
from tenantctl.spec.versions import KUBERNETES_PATCHES, TALOS_KUBERNETES_WINDOW, minor_number

__all__ = ["FIELD_RULES", "IMMUTABLE", "ITEM_RULES", "MODEL_RULES", "RESOURCE_CEILINGS", "ROOT_RULES"]

Rule = dict[str, str]

# The largest VM either substrate can be asked for, as quantities (spec.checks holds the same ceilings).
RESOURCE_CEILINGS = {"cpu": ("1024", "1024 cores"), "memory": ("16Ti", "16Ti")}

IMMUTABLE: dict[str, str] = {
    "TenantClusterSpec.substrate": "workers cannot move between Proxmox and KubeVirt; create a new cluster",
    "TenantClusterSpec.network": (
        "the pod and service networks and the cluster domain are baked into every node, Service and "
        "certificate of a live cluster"
    ),
    "NodePoolSpec.cluster": "a pool's machines have joined their cluster; create a pool in the other cluster",
}
"""Fields a live object cannot change (a transition rule `self == oldSelf`), and why."""


def _cel(value: object) -> str:
    """A CEL literal of a JSON-able value (CEL's map, list and string literals read as JSON does)."""
    return json.dumps(value, sort_keys=True)


def _q(text: str) -> str:
    """`'<expr>'` quoted for a message: CEL string concatenation around an expression."""
    return f"\"'\" + {text} + \"'\""


_KUBE_MINORS = _cel({m: minor_number(m) for m in KUBERNETES_PATCHES})
_TALOS_WINDOWS = _cel({t: [minor_number(lo), minor_number(hi)] for t, (lo, hi) in TALOS_KUBERNETES_WINDOW.items()})
_TALOS_SHOWN = _cel({t: f"{lo}…{hi}" for t, (lo, hi) in TALOS_KUBERNETES_WINDOW.items()})
_KUBE_MINOR = f"self.version.find('{syntax.MINOR_PREFIX}')"
_TALOS_MINOR = f"self.talos.version.find('{syntax.MINOR_PREFIX}')"
_OLD_KUBE_MINOR = f"oldSelf.version.find('{syntax.MINOR_PREFIX}')"
_OLD_TALOS_MINOR = f"oldSelf.talos.version.find('{syntax.MINOR_PREFIX}')"
_TALOS_MINORS = _cel({t: minor_number(t) for t in TALOS_KUBERNETES_WINDOW})


def _cel_format(template: str, **exprs: str) -> str:
    """A CEL string expression of a `str.format` template whose fields are CEL expressions."""
    out, rest = [], template
    while "{" in rest:
        text, _, tail = rest.partition("{")
        name, _, rest = tail.partition("}")
        out += [json.dumps(text, ensure_ascii=False), exprs[name]] if text else [exprs[name]]
    if rest:
        out.append(json.dumps(rest, ensure_ascii=False))
    return " + ".join(out)


def _both_known(minors: str, new: str, old: str) -> str:
    return f"{new} in {minors} && {old} in {minors}"


# Transition rules: what Kamaji's webhook (tcp_version.go OnUpdate) refuses, said as `check_version_change` says it.
_VERSION_CHANGE_RULES: tuple[Rule, ...] = (
    {
        "rule": f"!({_both_known(_KUBE_MINORS, _KUBE_MINOR, _OLD_KUBE_MINOR)}) || "
        f"{_KUBE_MINORS}[{_KUBE_MINOR}] >= {_KUBE_MINORS}[{_OLD_KUBE_MINOR}]",
        "messageExpression": "'spec.version: ' + "
        + _cel_format(KUBERNETES_DOWNGRADE, new="self.version", old="oldSelf.version"),
        "fieldPath": ".version",
    },
    {
        "rule": f"!({_both_known(_KUBE_MINORS, _KUBE_MINOR, _OLD_KUBE_MINOR)}) || "
        f"{_KUBE_MINORS}[{_KUBE_MINOR}] - {_KUBE_MINORS}[{_OLD_KUBE_MINOR}] <= 1",
        "messageExpression": "'spec.version: ' + "
        + _cel_format(KUBERNETES_SKIP, new="self.version", old="oldSelf.version"),
        "fieldPath": ".version",
    },
    {
        "rule": f"!({_both_known(_TALOS_MINORS, _TALOS_MINOR, _OLD_TALOS_MINOR)}) || "
        f"{_TALOS_MINORS}[{_TALOS_MINOR}] >= {_TALOS_MINORS}[{_OLD_TALOS_MINOR}]",
        "messageExpression": "'spec.talos.version: ' + "
        + _cel_format(TALOS_DOWNGRADE, new="self.talos.version", old="oldSelf.talos.version"),
        "fieldPath": ".talos.version",
    },
)
_ON_PROXMOX = "self.substrate != 'proxmox' || !has(self.proxmox) || "


def _proxmox_needs(field: str, present: str, why: str) -> Rule:
    return {
        "rule": _ON_PROXMOX + present,
        "message": f"spec.proxmox.{field}: {why}",
        "fieldPath": f".proxmox.{field}",
        "reason": "FieldValueRequired",
    }


def _quantity(field: str) -> Rule:
    ceiling, shown = RESOURCE_CEILINGS[field]
    limit = f"quantity('{ceiling}')"
    return {
        "rule": (
            f"type(self) == string ? (isQuantity(self) && quantity(self).isGreaterThan(quantity('0')) && "
            f"!quantity(self).isGreaterThan({limit})) : (int(self) > 0 && "
            f"!quantity(string(self)).isGreaterThan({limit}))"
        ),
        "messageExpression": (
            f"type(self) == string && !isQuantity(self) ? {_q('self')} + ' is not a Kubernetes quantity "
            f"(e.g. 1500m, 2, 8G, 8Gi)' : {_q('string(self)')} + ' must be positive and at most {shown} "
            f"(spec.resources.{field})'"
        ),
    }


def _positive_quantity() -> Rule:
    return {
        "rule": (
            "type(self) == string ? (isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))) : int(self) > 0"
        ),
        "messageExpression": (
            f"type(self) == string && !isQuantity(self) ? {_q('self')} + ' is not a Kubernetes quantity' : "
            f"{_q('string(self)')} + ' must be positive'"
        ),
    }


def _limit_not_below_request(resource: str) -> Rule:
    request, limit = f"self.requests.{resource}", f"self.limits.{resource}"
    both = f"has(self.requests) && has(self.limits) && has({request}) && has({limit})"
    parse = f"isQuantity(string({request})) && isQuantity(string({limit}))"
    return {
        "rule": f"!({both}) || !({parse}) || !quantity(string({request})).isGreaterThan(quantity(string({limit})))",
        "messageExpression": f"'limit ' + {_q(f'string({limit})')} + ' is below the request ' + "
        f"{_q(f'string({request})')}",
        "fieldPath": f".limits.{resource}",
    }


def _names_any(amounts: str) -> str:
    return f"(has(self.{amounts}) && (has(self.{amounts}.cpu) || has(self.{amounts}.memory)))"


_COMPONENT_RULES: tuple[Rule, ...] = (
    {
        "rule": "!has(self.preset) || (!has(self.requests) && !has(self.limits))",
        "message": "a preset and explicit requests/limits are exclusive; give one",
        "fieldPath": ".preset",
    },
    {
        "rule": (
            f"has(self.preset) || !(has(self.requests) || has(self.limits)) || {_names_any('requests')} || "
            f"{_names_any('limits')}"
        ),
        "message": "requests/limits name no cpu or memory: the container would run BestEffort",
    },
    _limit_not_below_request("cpu"),
    _limit_not_below_request("memory"),
)


def _immutable(key: str) -> Rule:
    field = key.split(".", 1)[1]
    return {"rule": "self == oldSelf", "message": f"{field} is immutable: {IMMUTABLE[key]}"}


_IPV4 = "isIP({0}) && ip({0}).family() == 4"
# `string(int)` has no size bound in the API server's cost estimate, so one inside a rule run per list item
# makes the rule cost unbounded (the CRD is refused: "estimated rule cost exceeds budget"). The prefix is
# 0-32 (checked first): its text is read from a literal list, whose strings have a known size.
_PREFIX_TEXT = "[" + ", ".join(f"'{n}'" for n in range(33)) + "][self.prefix]"
_SUBNET = f"cidr(self.gateway + '/' + {_PREFIX_TEXT})"


def _entry_parses(e: str) -> str:
    """An `addresses` entry `e` is an IPv4 address, an IPv4 CIDR or an `a-b` range of them."""
    return (
        f"({e}.contains('-') ? (size({e}.split('-')) == 2 && {e}.split('-').all(p, {_IPV4.format('p.trim()')}))"
        f" : {e}.contains('/') ? (isCIDR({e}) && cidr({e}).ip().family() == 4) : ({_IPV4.format(e)}))"
    )


def _entry_in_subnet(e: str) -> str:
    return (
        f"({e}.contains('-') ? {e}.split('-').all(p, {_SUBNET}.containsIP(p.trim()))"
        f" : {e}.contains('/') ? {_SUBNET}.containsCIDR(cidr({e}).masked()) : {_SUBNET}.containsIP({e}))"
    )


_EXPOSE_TYPE = (
    "(has(self.expose.type) ? self.expose.type : (self.substrate == 'proxmox' ? "
    f"'{default_expose_type('proxmox')}' : '{default_expose_type('kubevirt')}'))"
)
_EXPOSE_LISTS = {"loadBalancerSourceRanges"}


def _expose_field_applies(wire: str) -> Rule:
    kinds = [kind for kind, fields in EXPOSE_FIELDS.items() if wire in {w for w, _ in fields}]
    present = f"has(self.expose.{wire})" + (f" && size(self.expose.{wire}) > 0" if wire in _EXPOSE_LISTS else "")
    return {
        "rule": f"!has(self.expose) || !({present}) || {_EXPOSE_TYPE} in {_cel(kinds)}",
        "messageExpression": f"'spec.expose.{wire} does not apply to type ' + {_EXPOSE_TYPE}",
        "fieldPath": f".expose.{wire}",
        "reason": "FieldValueForbidden",
    }


_EXPOSE_RULES: tuple[Rule, ...] = (
    {
        "rule": f"!has(self.expose) || self.substrate != 'proxmox' || {_EXPOSE_TYPE} != 'ClusterIP'",
        "message": (
            "spec.expose.type: ClusterIP is refused on substrate proxmox: the workers cannot reach a ClusterIP "
            "of the management cluster (use LoadBalancer or Ingress)"
        ),
        "fieldPath": ".expose.type",
    },
    {
        "rule": f"!has(self.expose) || {_EXPOSE_TYPE} != 'Ingress' || has(self.expose.hostname)",
        "message": "spec.expose.hostname: required for type Ingress: the Ingress routes on this host name",
        "fieldPath": ".expose.hostname",
        "reason": "FieldValueRequired",
    },
    *(_expose_field_applies(wire) for wire in sorted({w for fields in EXPOSE_FIELDS.values() for w, _ in fields})),
)



ROOT_RULES: dict[str, tuple[Rule, ...]] = {
    "TenantCluster": (
        {
            "rule": f"size(self.metadata.name) <= {LABEL_MAX} && self.metadata.name.matches('{syntax.DNS_LABEL}')",
            "messageExpression": (
                f"'metadata.name ' + {_q('self.metadata.name')} + ' must be a DNS label (lower-case a-z, 0-9, "
                f"\\'-\\'; ≤{LABEL_MAX})'"
            ),
            "fieldPath": ".metadata.name",
        },
    ),
    "NodePool": (
        {
            "rule": f"size(self.metadata.name) <= {LABEL_MAX} && self.metadata.name.matches('{syntax.DNS_LABEL}')",
            "messageExpression": (
                f"'metadata.name ' + {_q('self.metadata.name')} + ' must be a DNS label (lower-case a-z, 0-9, "
                f"\\'-\\'; ≤{LABEL_MAX})'"
            ),
            "fieldPath": ".metadata.name",
        },
        {
            "rule": f"size(self.spec.cluster) + 1 + size(self.metadata.name) + {MACHINE_SUFFIX_LEN} <= {LABEL_MAX}",
            "messageExpression": (
                f"'cluster ' + {_q('self.spec.cluster')} + ' + pool ' + {_q('self.metadata.name')} + ' give "
                f"Machine names (<cluster>-<pool>-xxxxx-xxxxx: both names + {MACHINE_SUFFIX_LEN + 1} characters) "
                f"over the {LABEL_MAX}-character label limit (metadata.name, spec.cluster)'"
            ),
            "fieldPath": ".metadata.name",
        },
    ),
}

MODEL_RULES: dict[str, tuple[Rule, ...]] = {
    "VmIdRangeSpec": (
        {
            "rule": "self.end >= self.start",
            "message": "end is before start",
            "fieldPath": ".end",
        },
    ),
    "AdditionalDeviceSpec": (
        {
            "rule": "has(self.ipv4) || has(self.ipv6)",
            "message": (
                "needs ipv4 and/or ipv6 addresses: capmox v0.7.7 gives a further NIC its address only from a pool"
            ),
        },
    ),
    "TenantClusterSpec": (
        {
            "rule": "self.substrate != 'proxmox' || has(self.proxmox)",
            "message": (
                "spec.proxmox: required on substrate proxmox "
                "(credentialsSecretName, allowedNodes, dnsServers, ipv4Config)"
            ),
            "fieldPath": ".proxmox",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "self.substrate != 'proxmox' || !has(self.osImage)",
            "message": (
                "spec.osImage is refused on substrate proxmox: the worker disk comes from the Proxmox template; "
                "spec.talos.version and spec.talos.schematicID are what set the installer image there"
            ),
            "fieldPath": ".osImage",
            "reason": "FieldValueForbidden",
        },
        _proxmox_needs("credentialsSecretName", "has(self.proxmox.credentialsSecretName)",
                       "required on substrate proxmox (capmox)"),
        _proxmox_needs("allowedNodes", "size(self.proxmox.allowedNodes) > 0",
                       "required on substrate proxmox: at least one Proxmox node"),
        _proxmox_needs("dnsServers", "size(self.proxmox.dnsServers) > 0",
                       "required on substrate proxmox: a Proxmox worker cannot reach the management cluster's DNS"),
        _proxmox_needs("ipv4Config", "has(self.proxmox.ipv4Config)",
                       "required on substrate proxmox: capmox has no DHCP mode"),
        _proxmox_needs("ccm.credentialsSecretName", "has(self.proxmox.ccm.credentialsSecretName)",
                       "required on substrate proxmox: without the cloud-controller-manager every node keeps "
                       "the uninitialized taint and nothing schedules"),
        _proxmox_needs("csi.credentialsSecretName",
                       "!self.proxmox.csi.enabled || has(self.proxmox.csi.credentialsSecretName)",
                       "required while spec.proxmox.csi.enabled is true (set enabled: false to run without "
                       "storage)"),
        {
            "rule": f"{_KUBE_MINOR} == '' || {_KUBE_MINOR} in {_KUBE_MINORS}",
            "messageExpression": (
                f"'spec.version: unknown Kubernetes minor ' + {_q(_KUBE_MINOR)} + "
                f"' (known: {', '.join(KUBERNETES_PATCHES)})'"
            ),
            "fieldPath": ".version",
        },
        {
            "rule": f"{_TALOS_MINOR} == '' || {_TALOS_MINOR} in {_TALOS_WINDOWS}",
            "messageExpression": (
                f"'spec.talos.version: unknown Talos minor ' + {_q(_TALOS_MINOR)} + "
                f"' (known: {', '.join(TALOS_KUBERNETES_WINDOW)})'"
            ),
            "fieldPath": ".talos.version",
        },
        {
            "rule": (
                f"!({_KUBE_MINOR} in {_KUBE_MINORS}) || !({_TALOS_MINOR} in {_TALOS_WINDOWS}) || "
                f"({_KUBE_MINORS}[{_KUBE_MINOR}] >= {_TALOS_WINDOWS}[{_TALOS_MINOR}][0] && "
                f"{_KUBE_MINORS}[{_KUBE_MINOR}] <= {_TALOS_WINDOWS}[{_TALOS_MINOR}][1])"
            ),
            "messageExpression": (
                f"'spec.version: Kubernetes ' + {_KUBE_MINOR} + ' is outside the support window of Talos ' + "
                f"{_TALOS_MINOR} + ' (' + {_TALOS_SHOWN}[{_TALOS_MINOR}] + '; spec.talos.version is ' + "
                f"{_q('self.talos.version')} + ')'"
            ),
            "fieldPath": ".version",
        },
        *_EXPOSE_RULES,
        *_VERSION_CHANGE_RULES,
    ),
    "NetworkSpec": (
        {
            "rule": (
                "!isCIDR(self.podCIDR) || !isCIDR(self.serviceCIDR) || "
                "cidr(self.podCIDR).ip().family() != cidr(self.serviceCIDR).ip().family() || "
                "!(cidr(self.podCIDR).containsCIDR(cidr(self.serviceCIDR).masked()) || "
                "cidr(self.serviceCIDR).containsCIDR(cidr(self.podCIDR).masked()))"
            ),
            "messageExpression": (
                "'spec.network: podCIDR ' + self.podCIDR + ' and serviceCIDR ' + self.serviceCIDR + ' overlap'"
            ),
        },
    ),
    "IPv4ConfigSpec": (
        {
            "rule": (
                "self.prefix < 0 || self.prefix > 32 || !(" + _IPV4.format("self.gateway") + ") || "
                f"self.addresses.all(e, !{_entry_parses('e')} || {_entry_in_subnet('e')})"
            ),
            "messageExpression": (
                # Naming the entries outside (filter + join) costs too much for the API server's budget;
                # `tenantctl validate` and the webhook name them.
                f"'gateway ' + self.gateway + ' is outside the /' + {_PREFIX_TEXT} + ' of an addresses entry "
                "(spec.proxmox.ipv4Config.gateway, .prefix, .addresses)'"
            ),
            "fieldPath": ".gateway",
        },
    ),
    "CSISpec": (
        {
            "rule": "self.storageClasses.filter(c, c.default).size() <= 1",
            "message": "spec.proxmox.csi.storageClasses: more than one default StorageClass",
            "fieldPath": ".storageClasses",
        },
    ),
    "NodePoolSpec": (
        {
            "rule": "!has(self.autoscaling) || has(self.minReplicas) || has(self.maxReplicas)",
            "message": (
                "spec.autoscaling applies only to an autoscaled pool (minReplicas/maxReplicas); this pool has a "
                "fixed size"
            ),
            "fieldPath": ".autoscaling",
        },
        {
            "rule": "!has(self.replicas) || (!has(self.minReplicas) && !has(self.maxReplicas))",
            "message": (
                "spec.replicas and spec.minReplicas/maxReplicas are exclusive: an autoscaled pool leaves replicas to "
                "the autoscaler"
            ),
            "fieldPath": ".replicas",
        },
        {
            "rule": "!has(self.minReplicas) || has(self.maxReplicas)",
            "message": "spec.maxReplicas: an autoscaled pool needs both minReplicas and maxReplicas",
            "fieldPath": ".maxReplicas",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "!has(self.maxReplicas) || has(self.minReplicas)",
            "message": "spec.minReplicas: an autoscaled pool needs both minReplicas and maxReplicas",
            "fieldPath": ".minReplicas",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
            "message": "minReplicas is greater than maxReplicas",
            "fieldPath": ".minReplicas",
        },
    ),
    "ProxmoxPoolSpec": (
        {
            "rule": "!has(self.perNodeTemplates) || !self.perNodeTemplates || "
            "(has(self.placement) && self.placement == 'spread' && has(self.templateTags))",
            "message": (
                "spec.proxmox.perNodeTemplates applies to placement: spread with templateTags only (each node "
                "group clones its own node's template)"
            ),
            "fieldPath": ".perNodeTemplates",
        },
        {
            "rule": "has(self.templateTags) != has(self.templateID)",
            "messageExpression": (
                "has(self.templateTags) ? 'spec.proxmox.templateTags and spec.proxmox.templateID are exclusive; "
                "give one' : 'spec.proxmox: give exactly one of templateTags or templateID to select the Talos "
                "template'"
            ),
            "fieldPath": ".templateTags",
        },
        *(
            {
                "rule": f"self.full || !has(self.{field})",
                "messageExpression": (
                    f"'{field} ' + {_q(f'self.{field}')} + ' needs full: true; with full: false (a linked clone) "
                    "the disk lives on the template\\'s storage in the template\\'s format "
                    f"(spec.proxmox.{field}, spec.proxmox.full)'"
                ),
                "fieldPath": f".{field}",
                "reason": "FieldValueForbidden",
            }
            for field in ("storage", "format")
        ),
    ),
    "ComponentResourcesSpec": _COMPONENT_RULES,
    "RollingUpdateSpec": (
        {
            "rule": "self.maxSurge > 0 || self.maxUnavailable > 0",
            "message": (
                "spec.rollingUpdate: maxSurge and maxUnavailable cannot both be 0: a rollout could never make "
                "progress"
            ),
        },
    ),
}

def _duration_at_least(floor: str, why: str) -> Rule:
    """Positive (or at least `floor`); a value the pattern refuses is left to the pattern's message."""
    bound = f"duration(self) >= duration('{floor}')" if floor else "duration(self) > duration('0s')"
    shown = f"is under {floor}" if floor else "must be a positive duration"
    return {
        "rule": f"!self.matches('{syntax.GO_DURATION}') || {bound}",
        "messageExpression": f"{_q('self')} + ' {shown}, {why}'",
    }


_NOT_EMPTY: tuple[Rule, ...] = ({"rule": "self.trim() != ''", "message": "must not be empty"},)
_NETWORK_CIDR: tuple[Rule, ...] = (
    {
        "rule": "isCIDR(self) && cidr(self) == cidr(self).masked()",
        "messageExpression": _q("self") + " + ' is not a network CIDR (an address, prefix length; no host bits)'",
    },
)

# capmox v0.7.7's ProxmoxMachine webhook (validateNetworkDeviceMTU) and CRD, as `pool_placement` says it.
_MTU: tuple[Rule, ...] = (
    {
        "rule": "self == 1 || (self >= 1280 && self <= 65520)",
        "message": "is not an MTU capmox accepts: 1 (virtio: inherit the bridge's MTU) or 1280–65520",
    },
)

FIELD_RULES: dict[str, tuple[Rule, ...]] = {
    **{key: (_immutable(key),) for key in IMMUTABLE},
    "NetworkSpec.podCIDR": _NETWORK_CIDR,
    "NetworkSpec.serviceCIDR": (
        *_NETWORK_CIDR,
        {
            "rule": (
                "!isCIDR(self) || cidr(self).prefixLength() <= (cidr(self).ip().family() == 4 ? 28 : 124)"
            ),
            "messageExpression": _q("self") + " + ' is too small: the cluster DNS takes its 10th address'",
        },
    ),
    "IPv4ConfigSpec.gateway": (
        {"rule": _IPV4.format("self"), "messageExpression": _q("self") + " + ' is not an IPv4 address'"},
    ),
    "ResourcesSpec.cpu": (_quantity("cpu"),),
    "ResourcesSpec.memory": (_quantity("memory"),),
    "HealthCheckSpec.nodeStartupTimeout": (
        _duration_at_least("30s", "which the Cluster API MachineHealthCheck webhook refuses"),
    ),
    "HealthCheckSpec.readyUnknownTimeout": (_duration_at_least("", "a zero timeout remediates every new worker"),),
    "HealthCheckSpec.readyFalseTimeout": (_duration_at_least("", "a zero timeout remediates every new worker"),),
    "HealthCheckSpec.maxUnhealthy": (
        {
            "rule": "type(self) == int || !self.matches('^[0-9]+%$') || int(self.replace('%', '')) <= 100",
            "messageExpression": _q("string(self)") + " + ' is more than 100%'",
        },
    ),
    # No rule on TaintSpec.key: run once per taint of an unbounded list, the reserved-domain check costs
    # more than the API server's budget allows (the CRD is refused). The webhook refuses it
    # (parse_tenant_documents, as `validate` does), as it does a label key's.
    "AutoscalingSpec.maxNodeProvisionTime": (
        _duration_at_least("", "a zero timeout gives up on every worker before it boots"),
    ),
    "ExposeSpec.hostname": (
        {"rule": "!isIP(self)", "messageExpression": _q("self") + " + ' is not a DNS name (an IP goes in address)'"},
    ),
    "ExposeSpec.address": (
        {"rule": _IPV4.format("self"), "messageExpression": _q("self") + " + ' is not an IPv4 address literal'"},
    ),
    "ResourceAmountsSpec.cpu": (_positive_quantity(),),
    "ResourceAmountsSpec.memory": (_positive_quantity(),),
    "ProxmoxPoolSpec.sourceNode": _NOT_EMPTY,
    "ProxmoxPoolSpec.pool": _NOT_EMPTY,
    "ProxmoxNetworkSpec.bridge": _NOT_EMPTY,
    "ProxmoxNetworkSpec.mtu": _MTU,
    "AdditionalDeviceSpec.mtu": _MTU,
    "AdditionalDeviceSpec.bridge": _NOT_EMPTY,
    "IPv6ConfigSpec.gateway": (
        {
            "rule": "isIP(self) && ip(self).family() == 6",
            "messageExpression": _q("self") + " + ' is not an IPv6 address'",
        },
    ),
}

ITEM_RULES: dict[str, tuple[Rule, ...]] = {
    "ExposeSpec.loadBalancerSourceRanges": _NETWORK_CIDR,
    "ProxmoxClusterSpec.dnsServers": (
        {"rule": "isIP(self)", "messageExpression": _q("self") + " + ' is not a literal IPv4 or IPv6 address'"},
    ),
    "IPv4ConfigSpec.addresses": (
        {
            "rule": _entry_parses("self"),
            "messageExpression": _q("self") + " + ' is not an IPv4 address, CIDR or a-b range'",
        },
    ),
}
