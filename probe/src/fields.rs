//! Documentation of every JSON field, shown by `--help` of each subcommand (and copied into
//! README.md). An integration test checks that every key a command prints is documented here.

/// Fields common to every report.
pub const COMMON: &str = "\
JSON OUTPUT (--json prints exactly one JSON object on stdout; units are in the names:
_ns nanoseconds, _bps bits/s, _pps packets/s, _bytes bytes, _packets packets, _ratio in [0,1];
every *_realtime_ns is CLOCK_REALTIME ns since the Unix epoch)
  tool                          \"vnb-probe\"
  version                       vnb-probe version
  command                       subcommand name
  clock.timestamps              \"CLOCK_REALTIME\": the clock of packet and *_realtime_ns stamps
  clock.durations               \"CLOCK_MONOTONIC\": the clock of durations and pacing
  clock.clocksource             kernel clocksource (tsc, kvm-clock, ...), null if unreadable
  clock.realtime_resolution_ns  CLOCK_REALTIME resolution, ns
  clock.monotonic_resolution_ns CLOCK_MONOTONIC resolution, ns
  clock.synchronized            kernel NTP/PTP sync flag (adjtimex), null if unknown
  clock.start_realtime_ns       CLOCK_REALTIME at command start, ns
  clock.start_monotonic_ns      CLOCK_MONOTONIC at command start, ns
A distribution object ({...}) has: count, min_ns, mean_ns, p50_ns (median), p90_ns, p99_ns,
p999_ns, max_ns, stddev_ns (unsigned, e.g. send_lateness, rtt) or count, min_ns, p1_ns, p50_ns,
p99_ns, max_ns, mean_ns, stddev_ns (signed, e.g. ipdv, owd); values are null when count is 0.
min and max are exact, percentiles are HdrHistogram values within 0.1 %.
EXIT CODES: 0 ok, 2 usage error, 1 runtime failure (one line on stderr).";

/// `send` fields.
pub const SEND: &str = "\
SEND FIELDS
  dst, src                      destination and local address:port
  stream_id                     stream id carried in packets >= 22 bytes and in the FIN
  payload_bytes                 UDP payload per packet (--size), bytes
  frame_bytes                   Ethernet frame per packet: 14 + IP (20/40) + 8 + payload + 4 FCS,
                                at least 64, bytes
  target_pps, target_bps        target packet rate (packets/s) and UDP payload bit rate (bits/s)
  duration_ns                   requested duration, ns
  slots_total_packets           slots in the schedule = round(target_pps x duration)
  sent_packets, sent_bytes      packets sent (= slots - missed) and their UDP payload bytes
  missed_slots_packets          slots skipped because they were overdue after a stall
  catch_up_max_packets          the --catch-up bound (overdue slots still sent after a stall)
  stall_threshold_ns            a slot later than this is overdue, ns (at least 2 quanta)
  pacing_quantum_ns             pacing quantum used, ns (0: each packet at its slot time)
  pacing_quantum_auto           true: the quantum was chosen from the rate (0 up to 20K pps, else
                                50 µs), not given with --pacing-quantum-us
  send_errors                   failed sendmmsg calls (e.g. ECONNREFUSED from ICMP unreachable)
  syscalls, mean_batch_packets  sendmmsg calls and mean packets per call
  gso                           true: --gso, UDP GSO (UDP_SEGMENT) carried several packets per
                                message (one skb until the kernel segments it)
  gso_segments                  packets per sendmmsg message at most (1 without --gso)
  sent_messages                 messages the kernel took (= sent_packets without --gso)
  mean_message_packets          sent_packets / sent_messages: packets per message (per skb)
  first_seq                     sequence number of the first packet
  start_at_realtime_ns          --start-at-ns value, null if not given
  start_lateness_ns             first send - start_at, ns (null without --start-at-ns)
  first_send_realtime_ns        send timestamp of the first packet
  last_send_realtime_ns         send timestamp of the last packet
  send_window_ns                last - first send, ns
  achieved_pps                  (sent_packets - 1) / send_window, packets/s
  achieved_bps                  achieved UDP payload bit rate, bits/s
  achieved_l2_bps               achieved rate as Ethernet frames (header + FCS), bits/s
  achieved_l1_bps               achieved rate on a physical link (+20 B preamble/SFD/IFG), bits/s
  achieved_to_target_ratio      achieved_pps / target_pps (1.0 = exact)
  send_lateness{...}            send time - slot time of every packet, ns (own timing error)
  fin_sent_packets              FIN datagrams sent
  sndbuf_bytes                  socket send buffer granted, bytes
  max_spin_ns                   bound on the busy-wait before each slot, ns
  spin_margin_ns                final busy-wait margin before each deadline, ns
  cpu_user_ns, cpu_system_ns    CPU time of the sender (getrusage), ns
  raw_iface, raw_dst_mac        --raw-iface: interface the frames were written on and their
                                destination MAC; null when sent through a UDP socket";

/// `recv` fields.
pub const RECV: &str = "\
RECV FIELDS
  bind                          bound address:port (READY <addr:port> went to stderr)
  stop_reason                   duration | idle_timeout | streams_done | signal
  elapsed_ns                    READY to stop, ns
  waiting_time_ns               RFC 7680 waiting time, ns
  rcvbuf_bytes                  socket receive buffer granted, bytes
  busy_poll                     --busy-poll given: the receiver polled without sleeping
  datagrams_received_packets    all datagrams read
  foreign_packets               datagrams that are not vnb-probe data/FIN (garbage, other tools)
  truncated_packets             datagrams larger than 64 KiB
  overflow_stream_packets       packets of streams beyond the 4096-stream limit
  kernel_drops_packets          datagrams the kernel dropped on this socket's full queue
                                (SO_RXQ_OVFL)
  cpu_user_ns, cpu_system_ns    CPU time of the receiver, ns
  totals.streams                number of streams
  totals.streams_with_fin       streams whose FIN arrived
  totals.expected_packets, totals.received_packets, totals.unique_packets,
  totals.duplicate_packets, totals.late_packets, totals.lost_packets, totals.reordered_packets,
  totals.received_bytes, totals.received_pps, totals.received_bps
                                sums of the stream fields of the same name
  totals.loss_ratio             lost / expected over all streams
  streams[]                     one per (source address:port, stream id):
    stream_id                   id from packets >= 22 bytes or the FIN; null if never seen
    source                      sender address:port
    fin_received, fin_packets   FIN seen; FIN datagrams received
    sent_packets                sender's count from the FIN (null without FIN)
    expected_packets            sent_packets, or max_seq - min_seq + 1 without FIN
    expected_source             \"fin\" (exact) or \"seq_range\" (estimate: tail loss unseen)
    first_seq                   FIN's first seq, else lowest seq seen
    max_seq_seen                highest seq seen
    received_packets            datagrams, duplicates included
    unique_packets              distinct sequence numbers
    duplicate_packets           extra copies (counted apart; never reduce loss)
    late_packets                distinct packets whose delay exceeded the stream's minimum
                                delay by more than the waiting time: counted as lost
    out_of_range_packets        distinct seqs outside the FIN's [first_seq, first_seq + sent)
    lost_packets                expected - (distinct in range - late), exact with FIN
    loss_ratio                  lost / expected
    reordered_packets           RFC 4737 reordered (seq below the next expected)
    reordered_ratio             reordered / unique
    reorder_extent_capped_packets reordered packets whose extent exceeded 65536 arrivals
    reorder_extent{count, min_packets, mean_packets, p50_packets, p99_packets, max_packets}
                                RFC 4737 reordering extent, packets
    received_bytes, unique_bytes UDP payload bytes, all and distinct
    first_rx_realtime_ns, last_rx_realtime_ns  kernel receive stamps (SO_TIMESTAMPNS)
    receive_window_ns           last - first receive, ns
    received_pps                (unique - 1) / receive window, packets/s
    received_bps                UDP payload bit rate over the window, bits/s
    received_l2_bps             the same as Ethernet frames (header + FCS, >= 64 B), bits/s
    jitter_rfc3550_ns           RFC 3550 interarrival jitter at the end (smoothed, 1/16), ns
    jitter_rfc3550_mean_ns      mean of the RFC 3550 estimator over the stream, ns
    ipdv{...}                   RFC 5481 IPDV, delay(seq+1) - delay(seq), signed, ns
    pdv{...}                    delay - minimum delay (clock offset cancels), ns
    owd{...}                    one-way delay = receive stamp - send stamp, ns; ONLY meaningful
                                when sender and receiver share a clock or are synchronised
  trace.bin_ns                  bin width, ns (0 = disabled)
  trace.origin_realtime_ns      start of bin 0 = first data packet's receive stamp
  trace.bytes[]                 UDP payload bytes per bin (all streams, duplicates included)
  trace.packets[]               data packets per bin
  trace.truncated               true if the run outlasted 3.6 M bins
  trace.before_origin_packets   packets stamped before the origin (put in bin 0)";

/// `rtt` fields.
pub const RTT: &str = "\
RTT FIELDS
  dst, src                      echo and local address:port
  payload_bytes                 probe UDP payload, bytes
  interval_ns                   probe interval, ns
  sent_packets                  probes sent
  received_packets              distinct replies
  lost_packets, loss_ratio      probes without reply by the end of --wait; lost / sent
  duplicate_packets             extra reply copies
  foreign_packets               datagrams that were not replies to our probes
  rtt{...}                      RTT minus the echo's processing time, ns
                                (p50_ns is the median)
  server_processing{...}        echo send - echo receive time, ns
  owd_up{...}, owd_down{...}    one-way delays per direction, ns (synchronised clocks only)
  send_lateness{...}            client send time - scheduled time, ns
  start_at_realtime_ns          --start-at-ns value, null if not given
  start_lateness_ns             first send - start_at, ns
  cpu_user_ns, cpu_system_ns    CPU time of the client, ns
  records[]                     one per probe (null with --no-records):
    seq, send_realtime_ns, send_lateness_ns, lost, rtt_ns, server_processing_ns, owd_up_ns,
    owd_down_ns, duplicates     (rtt/processing/owd null when lost)";

/// `echo` fields.
pub const ECHO: &str = "\
ECHO FIELDS (printed when echo stops: --duration or SIGINT/SIGTERM)
  bind                          bound address:port (READY <addr:port> went to stderr)
  stop_reason                   duration | signal
  elapsed_ns                    READY to stop, ns
  requests_packets              valid RTT requests
  replies_packets               replies sent
  foreign_packets               datagrams that were not RTT requests (never answered)
  send_errors                   replies the kernel refused
  clients                       distinct client address:port (counted up to 65536)
  cpu_user_ns, cpu_system_ns    CPU time of the echo, ns";

/// `cpushare` fields.
pub const CPUSHARE: &str = "\
CPUSHARE FIELDS
  wall_ns                       wall time of the loop, ns
  threshold_ns                  gaps above this count, ns
  pinned_cpu                    --cpu value, null if not pinned
  iterations                    clock reads
  mean_iteration_ns             wall / iterations, ns
  gaps_count, gaps_sum_ns       gaps above threshold and their total, ns
  gap{...}                      gap length distribution, ns
  gap_histogram[]               {ge_ns, lt_ns, count}: power-of-two buckets from the threshold
                                (lt_ns null for the last, open bucket)
  cpu_share_ratio               estimated share of time on CPU = 1 - gaps_sum / wall
  rusage_cpu_ratio              (user + system CPU time) / wall from getrusage
  steal.available               /proc/stat has a steal column
  steal.steal_delta_ns          steal time over the run, all CPUs, ns
  steal.total_delta_ns          total CPU time over the run, all CPUs, ns
  steal.steal_ratio             steal / total
  gaps[]                        {at_ns, gap_ns}: offset from the loop start and length of each
                                gap, first --max-gaps of them
  gaps_truncated                true if more gaps happened than listed";
