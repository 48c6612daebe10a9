"""Kernel counter totals of a flow as loss localization reads them, made up for a known loss."""

from __future__ import annotations

from vnetbench.layout.flowpath import FlowPath


def _totals(path: FlowPath, sent: int, at_qdisc: int, at_socket: int, k: int = 1, retrans: int = 0) -> dict:
    """Counter totals of a flow losing at_qdisc at the second tx hop and at_socket at the socket.
    retrans: TCP segments the sender retransmitted, which Linux counts in Ip.OutRequests and
    Tcp.RetransSegs but not in Tcp.OutSegs (tcp_output.c; RFC 1213's tcpOutSegs)."""
    tcp = 12
    out: dict = {
        f"snmp:{path.src_ns}": {
            "Udp.OutDatagrams": sent,
            "Ip.OutRequests": sent + tcp + retrans,
            "Tcp.OutSegs": tcp,
            "Tcp.RetransSegs": retrans,
        },
    }
    tcp += retrans  # on the wire and at the receiver, a retransmitted segment is a segment
    frames = sent * k + tcp
    seen_tx = 0
    for hop in path.hops:
        if hop.direction == "fwd":
            continue
        if hop.direction == "tx":
            seen_tx += 1
            if seen_tx == 2:
                frames -= at_qdisc * k
                out[f"qdisc:{hop.ns}/{hop.name}/tbf:1"] = {"drops": at_qdisc * k}
        out.setdefault(f"if:{hop.ns}/{hop.name}", {})[
            "tx_packets" if hop.direction == "tx" else "rx_packets"
        ] = frames
    arrived = sent - at_qdisc
    out[f"snmp:{path.dst_ns}"] = {
        "Ip.InDelivers": arrived + tcp,
        "Tcp.InSegs": tcp,
        "Udp.InErrors": at_socket,
        "Udp.RcvbufErrors": at_socket,
        "Udp.InDatagrams": arrived - at_socket,
    }
    return out
