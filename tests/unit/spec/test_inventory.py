"""The inventory: validation with located errors, defaults, placement labels, --inventory merging."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from vnetbench.spec.inventory import load_inventory, parse_inventory_data
from vnetbench.spec.loader import SpecInvalid, load_spec

BASE = {
    "defaults": {"user": "bench", "port": 2200, "key": "~/.ssh/id_test"},
    "hosts": [
        {"name": "bastion", "address": "203.0.113.10", "port": 22},
        {"name": "vm1", "address": "10.0.0.11", "jump": "bastion", "site": "ams", "physical_host": "r1"},
        {"name": "vm2", "address": "vm2.example", "data_address": "10.1.0.12", "site": "hou", "sudo": True},
    ],
    "nodes": {"client": "vm1"},
}

CAMPAIGN = {
    "name": "c",
    "topology": {
        "switches": [{"name": "lan"}],
        "nodes": [{"name": "client"}, {"name": "vm2"}],
        "links": [{"endpoints": ["client", "lan"]}, {"endpoints": ["vm2", "lan"]}],
    },
    "measurements": [{"name": "rtt", "kind": "rtt", "count": 2}],
    "patterns": [{"kind": "pairs", "pairs": [["client", "vm2"]], "measurements": ["rtt"]}],
}


def test_defaults_fill_in_and_nodes_map_to_hosts() -> None:
    inv = parse_inventory_data(BASE)
    vm1 = inv.resolved(inv.host_of("client"))  # type: ignore[arg-type]
    assert (vm1.user, vm1.port, vm1.jump, vm1.data_address) == ("bench", 2200, "bastion", "10.0.0.11")
    assert vm1.key == str(Path("~/.ssh/id_test").expanduser())
    vm2 = inv.resolved(inv.host_of("vm2"))  # type: ignore[arg-type]
    assert (vm2.data_address, vm2.sudo, vm2.site, vm2.physical_host) == ("10.1.0.12", True, "hou", None)
    assert inv.resolved(inv.host("bastion")).port == 22
    assert inv.host_of("nobody") is None
    assert not inv.insecure_accept_new_host_keys  # host keys are verified unless asked otherwise


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hosts": [*BASE["hosts"], {"name": "vm1", "address": "10.0.0.99"}]}, "appears twice"),
        ({"hosts": [{"name": "a", "address": "1.2.3.4", "jump": "zz"}]}, "not in the inventory"),
        (
            {
                "hosts": [
                    {"name": "a", "address": "h", "jump": "b"},
                    {"name": "b", "address": "h", "jump": "a"},
                ]
            },
            "cycle",
        ),
        ({"nodes": {"client": "vm9"}}, "not an inventory host"),
        ({"hosts": [{"name": "a", "address": "1.2.3.4; touch /tmp/x"}]}, "is not an IP address"),
        ({"hosts": [{"name": "a", "address": "$(reboot)"}]}, "is not an IP address"),
        ({"hosts": [{"name": "a", "address": "h", "data_address": "-f"}]}, "is not an IP address"),
        (
            {"hosts": [{"name": "a", "address": "h", "data_address": "10.0.0.1 -c 99"}]},
            "is not an IP address",
        ),
        ({"hosts": [{"name": "a\nb", "address": "h"}]}, "control characters"),
        (
            {
                "hosts": [
                    {"name": "a", "address": "h", "site": "x", "physical_host": "p"},
                    {"name": "b", "address": "h", "site": "y", "physical_host": "p"},
                ]
            },
            "is in site 'x' already",
        ),
        ({"hosts": []}, "at least 1"),
        ({"passwords": {"vm1": "secret"}}, "Extra inputs"),
    ],
)
def test_bad_inventories_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_inventory_data({**BASE, **change})


def test_an_inventory_file_error_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("hosts:\n  - name: a\n    address: 10.0.0.1\n    prot: 22\n")
    with pytest.raises(SpecInvalid) as err:
        load_inventory(path)
    assert str(err.value).startswith(f"{path}:4: inventory.hosts[0].prot: unknown key 'prot'")
    assert "port" in str(err.value)  # the accepted keys are listed


def test_an_impossible_date_or_a_number_key_in_an_inventory_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("hosts:\n  - {name: a, address: 10.0.0.1, user: 2026-02-30}\n")  # was a traceback
    with pytest.raises(SpecInvalid) as err:
        load_inventory(path)
    assert str(err.value) == (
        f"{path}:2: hosts[0].user: YAML reads 2026-02-30 as a date, which does not exist (day is out of "
        "range for month); write a real date, or quote it ('2026-02-30') if it is text"
    )
    path.write_text("hosts:\n  - {name: a, address: 10.0.0.1}\nnodes:\n  1: a\n")
    with pytest.raises(SpecInvalid) as err:
        load_inventory(path)
    assert str(err.value) == (
        f"{path}:4: inventory.nodes: the key 1 is a number; keys here are names: quote it ('1') if it is one"
    )


def test_the_cli_reports_a_bad_inventory_in_one_line_and_exits_2(tmp_path: Path) -> None:
    spec, inv = tmp_path / "c.yaml", tmp_path / "inv.yaml"
    spec.write_text(yaml.safe_dump(CAMPAIGN))
    inv.write_text("hosts:\n  - {name: a, address: 'x;y'}\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "vnetbench.cli",
            "run",
            str(spec),
            "--inventory",
            str(inv),
            "--db",
            str(tmp_path / "d"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert f"{inv}:2: inventory.hosts[0].address" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_inventory_file_is_appended_to_the_stored_campaign(tmp_path: Path) -> None:
    spec, inv = tmp_path / "c.yaml", tmp_path / "inv.yaml"
    spec.write_text(yaml.safe_dump(CAMPAIGN))
    inv.write_text(yaml.safe_dump({"inventory": BASE}))
    merged = load_spec(spec, inventory=inv)
    assert merged.campaign.inventory is not None
    assert [h.name for h in merged.campaign.inventory.hosts] == ["bastion", "vm1", "vm2"]
    assert "inventory:" in merged.text  # what is stored: resume finds the hosts again
    again = tmp_path / "merged.yaml"
    again.write_text(merged.text)
    with pytest.raises(SpecInvalid) as refused:
        load_spec(again, inventory=inv)
    line = 1 + merged.text.splitlines().index("inventory:")  # the line to delete, named
    assert str(refused.value) == (
        f"{again}:{line}: inventory: the campaign has an inventory and --inventory was given; keep one"
    )


def test_set_reaches_the_appended_inventory(tmp_path: Path) -> None:
    """--set is applied after the inventory is appended: an inventory field can be overridden (it was
    applied to the text before the inventory was there: "names no field")."""
    spec, inv = tmp_path / "c.yaml", tmp_path / "inv.yaml"
    spec.write_text(yaml.safe_dump(CAMPAIGN))
    inv.write_text(yaml.safe_dump({"inventory": BASE}))
    merged = load_spec(spec, overrides={"inventory.defaults.user": "ops"}, inventory=inv)
    assert merged.campaign.inventory is not None
    vm1 = merged.campaign.inventory.resolved(merged.campaign.inventory.host("vm1"))
    assert vm1.user == "ops"
    assert "--set inventory.defaults.user" in merged.text  # the stored text says what ran


def test_what_existing_hosts_cannot_do_is_refused_before_the_campaign_is_stored(tmp_path: Path) -> None:
    """Loss, delay, a VXLAN overlay or a CPU quota on an SSH campaign, or a node without a host: refused
    with the file's lines and nothing stored. (It was refused at build, after the campaign was stored,
    with "fix the above and run `vnetbench resume ID`" — which runs the stored spec and failed the same.)"""
    campaign = {
        **CAMPAIGN,
        "topology": {
            "hosts": [{"name": "h1", "cpu": 0.5}],
            "nodes": [
                {"name": "client", "host": "h1"},
                {"name": "vm2", "host": "h1"},
                {"name": "z", "host": "h1"},
            ],
            "links": [
                {"endpoints": ["client", "vm2"], "rate": "20mbit", "loss": 0.05, "delay": "10ms"},
                {"endpoints": ["vm2", "z"], "rate": "1gbit"},
            ],
        },
    }
    spec, inv, db = tmp_path / "c.yaml", tmp_path / "inv.yaml", tmp_path / "d.db"
    spec.write_text(yaml.safe_dump(campaign, sort_keys=False))
    inv.write_text(yaml.safe_dump(BASE))
    argv = [sys.executable, "-m", "vnetbench.cli", "run", str(spec), "--inventory", str(inv), "--db", str(db)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    lines = yaml.safe_dump(campaign, sort_keys=False).splitlines()
    loss_line = 1 + next(i for i, ln in enumerate(lines) if ln.strip().startswith("loss:"))
    expected = [
        "node 'z' has no inventory host: name a host 'z' or map it under inventory.nodes (z: HOST)",
        "topology.links[0].delay: cannot be emulated on existing hosts over SSH",
        "topology.links[0].loss: cannot be emulated on existing hosts over SSH",
        "topology.hosts[0].cpu: CPU quotas are not applied on existing hosts over SSH; remove it",
    ]
    for text in expected:
        assert text in run.stderr
    assert f"{spec}:{loss_line}: topology.links[0].loss" in run.stderr  # the line to fix
    assert "topology.links[1]" not in run.stderr  # a rate is kept as the nominal capacity
    assert "resume" not in run.stderr
    checked = subprocess.run([*argv[:3], "validate", *argv[4:7]], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 2, checked.stderr  # validate --inventory refuses what run refuses
    for text in expected:
        assert text in checked.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", "campaigns", "--db", str(db)], capture_output=True, text=True
    )
    assert "holds no campaign" in listed.stdout + listed.stderr
