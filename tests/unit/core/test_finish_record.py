"""How the runner turns what a flow's tools left into a record (run/runner.py finish_record): a
result, a failure, or a setup failure that re-runs the step. Real iperf3 3.12 outputs
(tests/data/tool_output/iperf3/*.meta.json say how each was captured)."""

from __future__ import annotations

from tests.helpers.capture import iperf3_capture
from vnetbench.drivers import iperf3
from vnetbench.providers.base import Finished
from vnetbench.run.runner import SETUP_FAILED, finish_record
from vnetbench.store.records import MeasurementRecord


def _record() -> MeasurementRecord:
    return MeasurementRecord(
        campaign_id="c0ffee00", key="k", step_key="s", seq=1, repetition=1, pattern="p",
        pattern_kind="pairs", group_kind="alone", group_size=1, measurement="udp", kind="udp",
        src="a", dst="b", placement="same-host",
    )  # fmt: skip


def _finish(name: str, timed_out: bool = False, setup_failure: str | None = None) -> MeasurementRecord:
    client, server, meta = iperf3_capture(name)
    rc = None if timed_out else meta["client_returncode"]
    fin_c = Finished(rc, client.stdout, client.stderr, 1, 2, timed_out=timed_out)
    fin_s = Finished(0, server.stdout, server.stderr, 1, 2) if server else None
    rec = _record()
    finish_record(rec, iperf3.Iperf3Driver(), fin_c, fin_s, 50.0, setup_failure)
    return rec


def test_a_results_exchange_the_path_lost_is_a_setup_failure_after_the_timeout() -> None:
    rec = _finish("error_results_exchange_lost", timed_out=True)
    assert rec.status == SETUP_FAILED
    assert rec.reason is not None and rec.reason.startswith("timed out after 50 s")
    assert "iperf3 server: error - unable to receive results: Bad file descriptor" in rec.reason
    assert [e.kind for e in rec.events if e.kind == "setup_failed"] == ["setup_failed"]
    assert rec.raw[("server", "stdout")]  # every byte kept with the attempt


def test_a_server_that_lost_the_parameters_is_a_setup_failure_after_the_timeout() -> None:
    rec = _finish("error_params_lost", timed_out=True)
    assert rec.status == SETUP_FAILED
    assert rec.reason is not None and rec.reason.startswith("timed out after 50 s")
    assert "iperf3 server: error - unable to receive parameters from client" in rec.reason
    assert [e.kind for e in rec.events if e.kind == "setup_failed"] == ["setup_failed"]
    assert rec.raw[("server", "stdout")]  # the attempt is kept, with the server's words


def test_a_timeout_without_a_lost_exchange_stays_a_failure() -> None:
    rec = _finish("error_client_killed", timed_out=True)
    assert rec.status == "failed" and rec.reason is not None and rec.reason.startswith("timed out after 50 s")


def test_the_watchdogs_verdict_turns_a_complete_run_into_a_setup_failure() -> None:
    assert _finish("udp_loss").status == "ok"
    rec = _finish("udp_loss", setup_failure="iperf3 started sending 0.93 s after its stream socket opened")
    assert rec.status == SETUP_FAILED and rec.reason.startswith("iperf3 started sending 0.93 s")
    assert rec.summary["loss_ratio"] is not None  # what it measured is kept with the attempt
