"""How a Proxmox controller gets its config file without the token ever entering a rendered object.

Each controller names its own credentials Secret (keys `url`, `token_id`, `token_secret`, `region`).
An init container reads the mounted Secret and writes the config into a memory-backed emptyDir; the
rendered Deployment carries only the Secret's name. The script is one constant for every cluster:
what differs (`insecure`, the `features` block) arrives as environment values the script prints
with `printf '%s'`, so no tenant-controlled text is ever parsed by the shell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tenantctl.credentials.keys import CONTROLLER_KEYS
from tenantctl.render.controllers import container
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.yaml_text import to_yaml

__all__ = [
    "CONFIG_FILE",
    "CONFIG_SCRIPT",
    "CONFIG_VOLUME",
    "CREDENTIALS_VOLUME",
    "CREDENTIAL_KEYS",
    "config_init_container",
    "config_volumes",
]

CREDENTIALS_VOLUME = "proxmox-credentials"
CONFIG_VOLUME = "proxmox-config"
_CREDENTIALS_DIR = "/proxmox-credentials"
CONFIG_DIR = "/etc/proxmox"
CONFIG_FILE = f"{CONFIG_DIR}/config.yaml"
CREDENTIAL_KEYS = CONTROLLER_KEYS

# Values are emitted as YAML single-quoted scalars (' doubled), so any one-line value is data, never
# structure; a multi-line value is refused because it cannot be one scalar on one line.
CONFIG_SCRIPT = r"""set -eu
umask 077
case "$PVE_INSECURE" in
  true|false) ;;
  *) echo "PVE_INSECURE must be true or false" >&2; exit 1 ;;
esac
field() {
  file="/proxmox-credentials/$1"
  if [ ! -s "$file" ]; then
    echo "the credentials Secret has no key '$1'; it needs url, token_id, token_secret and region" >&2
    exit 1
  fi
  if ! awk 'END { exit NR > 1 }' "$file"; then
    echo "the credentials Secret's key '$1' spans several lines" >&2
    exit 1
  fi
  tr -d '\n' < "$file" | sed "s/'/''/g"
}
url=$(field url)
token_id=$(field token_id)
token_secret=$(field token_secret)
region=$(field region)
{
  printf 'clusters:\n'
  printf "  - url: '%s'\n" "$url"
  printf '    insecure: %s\n' "$PVE_INSECURE"
  printf "    token_id: '%s'\n" "$token_id"
  printf "    token_secret: '%s'\n" "$token_secret"
  printf "    region: '%s'\n" "$region"
  printf '%s\n' "$PVE_FEATURES"
} > /etc/proxmox/config.yaml
"""


def config_volumes(credentials_secret_name: str) -> list[dict[str, Any]]:
    """The Secret (read only by the init container) and the tmpfs the config file lives in."""
    return [
        {"name": CREDENTIALS_VOLUME, "secret": {"secretName": credentials_secret_name}},
        {"name": CONFIG_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}},
    ]


def config_init_container(insecure: bool, features: Mapping[str, Any], images: ImagesSpec) -> dict[str, Any]:
    """`features` becomes the config's `features:` block verbatim (capmox mode, controllerVmID)."""
    features_yaml = to_yaml({"features": dict(features)}, sort_keys=True)
    return container(
        "compose-config",
        str(images.ref("config-init")),
        ["-c", CONFIG_SCRIPT],
        [(CREDENTIALS_VOLUME, _CREDENTIALS_DIR), (CONFIG_VOLUME, CONFIG_DIR)],
        command=["sh"],
        writable=[CONFIG_VOLUME],
        env=[
            {"name": "PVE_INSECURE", "value": "true" if insecure else "false"},
            {"name": "PVE_FEATURES", "value": features_yaml.rstrip("\n")},
        ],
    )
