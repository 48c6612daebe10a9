"""The inventory: existing hosts a campaign runs on over SSH (VMs, servers, testbed slivers).

Written as a top-level `inventory:` in a campaign, or as its own YAML file given with
`--inventory` (then it is copied into the stored campaign, so `resume` finds it again).

    inventory:
      defaults: {user: root, key: ~/.ssh/id_ed25519}
      known_hosts: ~/.ssh/known_hosts
      hosts:
        - {name: bastion, address: 203.0.113.10}
        - {name: vm1, address: 10.0.0.11, jump: bastion, site: ams, physical_host: rack1-a}
        - {name: vm2, address: 10.0.0.12, jump: bastion, site: hou, data_address: 10.1.0.12}
      nodes: {client: vm1, server: vm2}   # campaign node -> inventory host (default: same name)

Nothing here ever becomes part of a shell command: names and labels are data, addresses go to
asyncssh as connection parameters, a data address reaches a tool only as one quoted argv item.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from vnetbench.spec.errors import SpecError, SpecInvalid, load_yaml, pydantic_errors
from vnetbench.spec.units import DurationNs

# Never starts with '-': a tool would read it as an option (argument injection, not only shell).
_ADDRESS = re.compile(r"^[A-Za-z0-9:][A-Za-z0-9.:_%-]{0,252}$")
ADDRESS_HELP = "an IP address or DNS name (letters, digits, '.', ':', '-', '_', '%'; not starting with '-')"


def _no_control(value: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("must not contain control characters (newline, tab, ...)")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HostDefaults(_Strict):
    port: int = Field(22, ge=1, le=65535)
    user: str | None = Field(None, description="login name (default: the current user)")
    key: str | None = Field(None, description="private key file; absent: the SSH agent and ~/.ssh defaults")
    sudo: bool = Field(False, description="run tools with `sudo -n` (when the user is not root)")


class InventoryHost(_Strict):
    name: str = Field(min_length=1, max_length=200, description="how the campaign and reports call it")
    address: str = Field(description="where to reach sshd: " + ADDRESS_HELP)
    port: int | None = Field(None, ge=1, le=65535)
    user: str | None = None
    key: str | None = None
    sudo: bool | None = None
    jump: str | None = Field(None, description="name of another inventory host to tunnel through (bastion)")
    data_address: str | None = Field(
        None, description="address measured to (the test network); default: the SSH address"
    )
    site: str | None = Field(None, max_length=200, description="site label (same-site / cross-site)")
    physical_host: str | None = Field(
        None, max_length=200, description="the machine under the VM (same-host placement)"
    )
    tools: dict[str, str] = Field(
        default_factory=dict, description="tool -> path on this host, where it is not on PATH"
    )

    @field_validator("name", "site", "physical_host", "user", "key")
    @classmethod
    def _text(cls, value: str | None) -> str | None:
        return value if value is None else _no_control(value)

    @field_validator("address", "data_address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and not _ADDRESS.match(value):
            raise ValueError(f"{value!r} is not {ADDRESS_HELP}")
        return value


class Inventory(_Strict):
    hosts: list[InventoryHost] = Field(min_length=1)
    nodes: dict[str, str] = Field(
        default_factory=dict, description="campaign node -> inventory host (default: the same name)"
    )
    defaults: HostDefaults = Field(default_factory=HostDefaults)
    known_hosts: str | None = Field(
        None, description="known_hosts file host keys are checked against (default: ~/.ssh/known_hosts)"
    )
    insecure_accept_new_host_keys: bool = Field(
        False,
        description="INSECURE: trust a host key seen for the first time and append it to known_hosts "
        "(a changed key is still refused)",
    )
    concurrency: int = Field(16, ge=1, le=1024, description="SSH operations in flight at once")
    max_sessions: int = Field(
        10, ge=1, le=1000, description="channels per connection (the hosts' sshd MaxSessions; default 10)"
    )
    connect_timeout: DurationNs = Field(5 * 10**9, description="give up connecting after this long")
    keepalive: DurationNs = Field(
        5 * 10**9, description="SSH keepalive interval (a dead connection is noticed in ~3 of these)"
    )

    @model_validator(mode="after")
    def _references(self) -> Inventory:
        names = [h.name for h in self.hosts]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"host name {dup[0]!r} appears twice; names must be unique")
        known = set(names)
        for host in self.hosts:
            if host.jump is not None and host.jump not in known:
                raise ValueError(f"host {host.name!r}: jump host {host.jump!r} is not in the inventory")
        for host in self.hosts:  # no jump cycles
            seen, cur = {host.name}, host
            while cur.jump is not None:
                if cur.jump in seen:
                    raise ValueError(f"host {host.name!r}: jump hosts form a cycle through {cur.jump!r}")
                seen.add(cur.jump)
                cur = self.host(cur.jump)
        site_of: dict[str, str | None] = {}
        for host in self.hosts:
            if host.physical_host is None:
                continue
            if site_of.setdefault(host.physical_host, host.site) != host.site:
                raise ValueError(
                    f"host {host.name!r}: physical host {host.physical_host!r} is in site "
                    f"{site_of[host.physical_host]!r} already, not {host.site!r}"
                )
        for node, host_name in self.nodes.items():
            if host_name not in known:
                raise ValueError(f"nodes.{node}: {host_name!r} is not an inventory host")
        return self

    def host(self, name: str) -> InventoryHost:
        return next(h for h in self.hosts if h.name == name)

    def host_of(self, node: str) -> InventoryHost | None:
        name = self.nodes.get(node, node)
        return next((h for h in self.hosts if h.name == name), None)

    def resolved(self, host: InventoryHost) -> ResolvedHost:
        d = self.defaults
        return ResolvedHost(
            name=host.name,
            address=host.address,
            port=host.port or d.port,
            user=host.user or d.user,
            key=_expand(host.key or d.key),
            sudo=d.sudo if host.sudo is None else host.sudo,
            jump=host.jump,
            data_address=host.data_address or host.address,
            site=host.site,
            physical_host=host.physical_host,
            tools=dict(host.tools),
        )

    def known_hosts_path(self) -> str:
        return _expand(self.known_hosts) or str(Path("~/.ssh/known_hosts").expanduser())


class ResolvedHost(_Strict):
    """An inventory host with the defaults filled in (what the provider connects with)."""

    name: str
    address: str
    port: int
    user: str | None
    key: str | None
    sudo: bool
    jump: str | None
    data_address: str
    site: str | None
    physical_host: str | None
    tools: dict[str, str]

    def tool(self, name: str) -> str:
        return self.tools.get(name, name)


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None


def parse_inventory_data(data: Any) -> Inventory:
    """Validate plain data (raises pydantic.ValidationError)."""
    if isinstance(data, dict) and "inventory" in data and "hosts" not in data:
        data = data["inventory"]
    return Inventory.model_validate(data)


def load_inventory(path: Path | str) -> Inventory:
    """Load an inventory file; raise SpecInvalid with file:line: field: message on any problem."""
    source = str(path)
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:  # a binary file was a UnicodeDecodeError traceback
        why = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else err.strerror
        fix = "give the path of an inventory YAML file (docs/ssh-provider.md)"
        raise SpecInvalid([SpecError(source, 0, "", f"cannot read the inventory ({why}); {fix}")]) from None
    data, lines = load_yaml(text, source)
    if isinstance(data, dict) and "inventory" in data and "hosts" not in data:
        data, prefix = data["inventory"], ("inventory",)
    else:
        prefix = ()
    if not isinstance(data, dict):
        raise SpecInvalid([SpecError(source, 1, "", "an inventory is a mapping with a `hosts:` list")])

    class _File(_Strict):  # error locations then start with `inventory`, as inside a campaign
        inventory: Inventory

    try:
        return _File.model_validate({"inventory": data}).inventory
    except ValidationError as err:
        errors = pydantic_errors(
            err, {"inventory": data}, source, lambda loc: lines.line((*prefix, *loc[1:])), _File
        )
        raise SpecInvalid(errors) from None


def inventory_text(path: Path | str) -> str:
    """The inventory file as a top-level `inventory:` block to append to a campaign's text."""
    data = yaml.safe_load(Path(path).read_text())
    if isinstance(data, dict) and "inventory" in data and "hosts" not in data:
        data = data["inventory"]
    return yaml.safe_dump({"inventory": data}, sort_keys=False)
