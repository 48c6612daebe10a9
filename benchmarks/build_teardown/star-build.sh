#!/bin/bash
set -e
ip netns add vnbbench-a5446a-n-n1
ip netns add vnbbench-a5446a-n-n2
ip netns add vnbbench-a5446a-n-n3
ip netns add vnbbench-a5446a-n-n4
ip netns add vnbbench-a5446a-n-n5
ip netns add vnbbench-a5446a-n-n6
ip netns add vnbbench-a5446a-n-n7
ip netns add vnbbench-a5446a-n-n8
ip netns add vnbbench-a5446a-n-n9
ip netns add vnbbench-a5446a-n-n10
ip netns add vnbbench-a5446a-n-n11
ip netns add vnbbench-a5446a-n-n12
ip netns add vnbbench-a5446a-n-n13
ip netns add vnbbench-a5446a-n-n14
ip netns add vnbbench-a5446a-n-n15
ip netns add vnbbench-a5446a-n-n16
ip netns add vnbbench-a5446a-n-n17
ip netns add vnbbench-a5446a-n-n18
ip netns add vnbbench-a5446a-n-n19
ip netns add vnbbench-a5446a-n-n20
ip netns add vnbbench-a5446a-n-n21
ip netns add vnbbench-a5446a-n-n22
ip netns add vnbbench-a5446a-n-n23
ip netns add vnbbench-a5446a-n-n24
ip netns add vnbbench-a5446a-n-n25
ip netns add vnbbench-a5446a-n-n26
ip netns add vnbbench-a5446a-n-n27
ip netns add vnbbench-a5446a-n-n28
ip netns add vnbbench-a5446a-n-n29
ip netns add vnbbench-a5446a-n-n30
ip netns add vnbbench-a5446a-n-n31
ip netns add vnbbench-a5446a-n-n32
ip netns add vnbbench-a5446a-n-n33
ip netns add vnbbench-a5446a-n-n34
ip netns add vnbbench-a5446a-n-n35
ip netns add vnbbench-a5446a-n-n36
ip netns add vnbbench-a5446a-n-n37
ip netns add vnbbench-a5446a-n-n38
ip netns add vnbbench-a5446a-n-n39
ip netns add vnbbench-a5446a-n-n40
ip netns add vnbbench-a5446a-n-n41
ip netns add vnbbench-a5446a-n-n42
ip netns add vnbbench-a5446a-n-n43
ip netns add vnbbench-a5446a-n-n44
ip netns add vnbbench-a5446a-n-n45
ip netns add vnbbench-a5446a-n-n46
ip netns add vnbbench-a5446a-n-n47
ip netns add vnbbench-a5446a-n-n48
ip netns add vnbbench-a5446a-n-n49
ip netns add vnbbench-a5446a-n-n50
ip netns add vnbbench-a5446a-h-host
ip -n vnbbench-a5446a-n-n1 link set lo up
ip -n vnbbench-a5446a-n-n2 link set lo up
ip -n vnbbench-a5446a-n-n3 link set lo up
ip -n vnbbench-a5446a-n-n4 link set lo up
ip -n vnbbench-a5446a-n-n5 link set lo up
ip -n vnbbench-a5446a-n-n6 link set lo up
ip -n vnbbench-a5446a-n-n7 link set lo up
ip -n vnbbench-a5446a-n-n8 link set lo up
ip -n vnbbench-a5446a-n-n9 link set lo up
ip -n vnbbench-a5446a-n-n10 link set lo up
ip -n vnbbench-a5446a-n-n11 link set lo up
ip -n vnbbench-a5446a-n-n12 link set lo up
ip -n vnbbench-a5446a-n-n13 link set lo up
ip -n vnbbench-a5446a-n-n14 link set lo up
ip -n vnbbench-a5446a-n-n15 link set lo up
ip -n vnbbench-a5446a-n-n16 link set lo up
ip -n vnbbench-a5446a-n-n17 link set lo up
ip -n vnbbench-a5446a-n-n18 link set lo up
ip -n vnbbench-a5446a-n-n19 link set lo up
ip -n vnbbench-a5446a-n-n20 link set lo up
ip -n vnbbench-a5446a-n-n21 link set lo up
ip -n vnbbench-a5446a-n-n22 link set lo up
ip -n vnbbench-a5446a-n-n23 link set lo up
ip -n vnbbench-a5446a-n-n24 link set lo up
ip -n vnbbench-a5446a-n-n25 link set lo up
ip -n vnbbench-a5446a-n-n26 link set lo up
ip -n vnbbench-a5446a-n-n27 link set lo up
ip -n vnbbench-a5446a-n-n28 link set lo up
ip -n vnbbench-a5446a-n-n29 link set lo up
ip -n vnbbench-a5446a-n-n30 link set lo up
ip -n vnbbench-a5446a-n-n31 link set lo up
ip -n vnbbench-a5446a-n-n32 link set lo up
ip -n vnbbench-a5446a-n-n33 link set lo up
ip -n vnbbench-a5446a-n-n34 link set lo up
ip -n vnbbench-a5446a-n-n35 link set lo up
ip -n vnbbench-a5446a-n-n36 link set lo up
ip -n vnbbench-a5446a-n-n37 link set lo up
ip -n vnbbench-a5446a-n-n38 link set lo up
ip -n vnbbench-a5446a-n-n39 link set lo up
ip -n vnbbench-a5446a-n-n40 link set lo up
ip -n vnbbench-a5446a-n-n41 link set lo up
ip -n vnbbench-a5446a-n-n42 link set lo up
ip -n vnbbench-a5446a-n-n43 link set lo up
ip -n vnbbench-a5446a-n-n44 link set lo up
ip -n vnbbench-a5446a-n-n45 link set lo up
ip -n vnbbench-a5446a-n-n46 link set lo up
ip -n vnbbench-a5446a-n-n47 link set lo up
ip -n vnbbench-a5446a-n-n48 link set lo up
ip -n vnbbench-a5446a-n-n49 link set lo up
ip -n vnbbench-a5446a-n-n50 link set lo up
ip -n vnbbench-a5446a-h-host link set lo up
ip -n vnbbench-a5446a-h-host link add sw0 mtu 1500 type bridge
ip -n vnbbench-a5446a-h-host link set sw0 up
ip -n vnbbench-a5446a-h-host link add p0x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n1
ip -n vnbbench-a5446a-h-host link set p0x0 master sw0 up
ip -n vnbbench-a5446a-n-n1 addr add 198.18.0.1/24 dev eth0
ip -n vnbbench-a5446a-n-n1 link set eth0 up
tc -n vnbbench-a5446a-n-n1 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p0x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p1x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n2
ip -n vnbbench-a5446a-h-host link set p1x0 master sw0 up
ip -n vnbbench-a5446a-n-n2 addr add 198.18.0.2/24 dev eth0
ip -n vnbbench-a5446a-n-n2 link set eth0 up
tc -n vnbbench-a5446a-n-n2 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p1x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p2x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n3
ip -n vnbbench-a5446a-h-host link set p2x0 master sw0 up
ip -n vnbbench-a5446a-n-n3 addr add 198.18.0.3/24 dev eth0
ip -n vnbbench-a5446a-n-n3 link set eth0 up
tc -n vnbbench-a5446a-n-n3 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p2x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p3x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n4
ip -n vnbbench-a5446a-h-host link set p3x0 master sw0 up
ip -n vnbbench-a5446a-n-n4 addr add 198.18.0.4/24 dev eth0
ip -n vnbbench-a5446a-n-n4 link set eth0 up
tc -n vnbbench-a5446a-n-n4 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p3x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p4x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n5
ip -n vnbbench-a5446a-h-host link set p4x0 master sw0 up
ip -n vnbbench-a5446a-n-n5 addr add 198.18.0.5/24 dev eth0
ip -n vnbbench-a5446a-n-n5 link set eth0 up
tc -n vnbbench-a5446a-n-n5 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p4x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p5x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n6
ip -n vnbbench-a5446a-h-host link set p5x0 master sw0 up
ip -n vnbbench-a5446a-n-n6 addr add 198.18.0.6/24 dev eth0
ip -n vnbbench-a5446a-n-n6 link set eth0 up
tc -n vnbbench-a5446a-n-n6 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p5x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p6x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n7
ip -n vnbbench-a5446a-h-host link set p6x0 master sw0 up
ip -n vnbbench-a5446a-n-n7 addr add 198.18.0.7/24 dev eth0
ip -n vnbbench-a5446a-n-n7 link set eth0 up
tc -n vnbbench-a5446a-n-n7 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p6x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p7x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n8
ip -n vnbbench-a5446a-h-host link set p7x0 master sw0 up
ip -n vnbbench-a5446a-n-n8 addr add 198.18.0.8/24 dev eth0
ip -n vnbbench-a5446a-n-n8 link set eth0 up
tc -n vnbbench-a5446a-n-n8 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p7x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p8x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n9
ip -n vnbbench-a5446a-h-host link set p8x0 master sw0 up
ip -n vnbbench-a5446a-n-n9 addr add 198.18.0.9/24 dev eth0
ip -n vnbbench-a5446a-n-n9 link set eth0 up
tc -n vnbbench-a5446a-n-n9 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p8x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p9x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n10
ip -n vnbbench-a5446a-h-host link set p9x0 master sw0 up
ip -n vnbbench-a5446a-n-n10 addr add 198.18.0.10/24 dev eth0
ip -n vnbbench-a5446a-n-n10 link set eth0 up
tc -n vnbbench-a5446a-n-n10 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p9x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p10x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n11
ip -n vnbbench-a5446a-h-host link set p10x0 master sw0 up
ip -n vnbbench-a5446a-n-n11 addr add 198.18.0.11/24 dev eth0
ip -n vnbbench-a5446a-n-n11 link set eth0 up
tc -n vnbbench-a5446a-n-n11 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p10x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p11x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n12
ip -n vnbbench-a5446a-h-host link set p11x0 master sw0 up
ip -n vnbbench-a5446a-n-n12 addr add 198.18.0.12/24 dev eth0
ip -n vnbbench-a5446a-n-n12 link set eth0 up
tc -n vnbbench-a5446a-n-n12 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p11x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p12x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n13
ip -n vnbbench-a5446a-h-host link set p12x0 master sw0 up
ip -n vnbbench-a5446a-n-n13 addr add 198.18.0.13/24 dev eth0
ip -n vnbbench-a5446a-n-n13 link set eth0 up
tc -n vnbbench-a5446a-n-n13 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p12x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p13x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n14
ip -n vnbbench-a5446a-h-host link set p13x0 master sw0 up
ip -n vnbbench-a5446a-n-n14 addr add 198.18.0.14/24 dev eth0
ip -n vnbbench-a5446a-n-n14 link set eth0 up
tc -n vnbbench-a5446a-n-n14 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p13x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p14x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n15
ip -n vnbbench-a5446a-h-host link set p14x0 master sw0 up
ip -n vnbbench-a5446a-n-n15 addr add 198.18.0.15/24 dev eth0
ip -n vnbbench-a5446a-n-n15 link set eth0 up
tc -n vnbbench-a5446a-n-n15 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p14x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p15x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n16
ip -n vnbbench-a5446a-h-host link set p15x0 master sw0 up
ip -n vnbbench-a5446a-n-n16 addr add 198.18.0.16/24 dev eth0
ip -n vnbbench-a5446a-n-n16 link set eth0 up
tc -n vnbbench-a5446a-n-n16 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p15x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p16x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n17
ip -n vnbbench-a5446a-h-host link set p16x0 master sw0 up
ip -n vnbbench-a5446a-n-n17 addr add 198.18.0.17/24 dev eth0
ip -n vnbbench-a5446a-n-n17 link set eth0 up
tc -n vnbbench-a5446a-n-n17 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p16x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p17x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n18
ip -n vnbbench-a5446a-h-host link set p17x0 master sw0 up
ip -n vnbbench-a5446a-n-n18 addr add 198.18.0.18/24 dev eth0
ip -n vnbbench-a5446a-n-n18 link set eth0 up
tc -n vnbbench-a5446a-n-n18 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p17x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p18x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n19
ip -n vnbbench-a5446a-h-host link set p18x0 master sw0 up
ip -n vnbbench-a5446a-n-n19 addr add 198.18.0.19/24 dev eth0
ip -n vnbbench-a5446a-n-n19 link set eth0 up
tc -n vnbbench-a5446a-n-n19 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p18x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p19x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n20
ip -n vnbbench-a5446a-h-host link set p19x0 master sw0 up
ip -n vnbbench-a5446a-n-n20 addr add 198.18.0.20/24 dev eth0
ip -n vnbbench-a5446a-n-n20 link set eth0 up
tc -n vnbbench-a5446a-n-n20 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p19x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p20x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n21
ip -n vnbbench-a5446a-h-host link set p20x0 master sw0 up
ip -n vnbbench-a5446a-n-n21 addr add 198.18.0.21/24 dev eth0
ip -n vnbbench-a5446a-n-n21 link set eth0 up
tc -n vnbbench-a5446a-n-n21 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p20x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p21x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n22
ip -n vnbbench-a5446a-h-host link set p21x0 master sw0 up
ip -n vnbbench-a5446a-n-n22 addr add 198.18.0.22/24 dev eth0
ip -n vnbbench-a5446a-n-n22 link set eth0 up
tc -n vnbbench-a5446a-n-n22 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p21x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p22x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n23
ip -n vnbbench-a5446a-h-host link set p22x0 master sw0 up
ip -n vnbbench-a5446a-n-n23 addr add 198.18.0.23/24 dev eth0
ip -n vnbbench-a5446a-n-n23 link set eth0 up
tc -n vnbbench-a5446a-n-n23 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p22x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p23x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n24
ip -n vnbbench-a5446a-h-host link set p23x0 master sw0 up
ip -n vnbbench-a5446a-n-n24 addr add 198.18.0.24/24 dev eth0
ip -n vnbbench-a5446a-n-n24 link set eth0 up
tc -n vnbbench-a5446a-n-n24 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p23x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p24x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n25
ip -n vnbbench-a5446a-h-host link set p24x0 master sw0 up
ip -n vnbbench-a5446a-n-n25 addr add 198.18.0.25/24 dev eth0
ip -n vnbbench-a5446a-n-n25 link set eth0 up
tc -n vnbbench-a5446a-n-n25 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p24x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p25x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n26
ip -n vnbbench-a5446a-h-host link set p25x0 master sw0 up
ip -n vnbbench-a5446a-n-n26 addr add 198.18.0.26/24 dev eth0
ip -n vnbbench-a5446a-n-n26 link set eth0 up
tc -n vnbbench-a5446a-n-n26 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p25x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p26x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n27
ip -n vnbbench-a5446a-h-host link set p26x0 master sw0 up
ip -n vnbbench-a5446a-n-n27 addr add 198.18.0.27/24 dev eth0
ip -n vnbbench-a5446a-n-n27 link set eth0 up
tc -n vnbbench-a5446a-n-n27 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p26x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p27x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n28
ip -n vnbbench-a5446a-h-host link set p27x0 master sw0 up
ip -n vnbbench-a5446a-n-n28 addr add 198.18.0.28/24 dev eth0
ip -n vnbbench-a5446a-n-n28 link set eth0 up
tc -n vnbbench-a5446a-n-n28 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p27x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p28x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n29
ip -n vnbbench-a5446a-h-host link set p28x0 master sw0 up
ip -n vnbbench-a5446a-n-n29 addr add 198.18.0.29/24 dev eth0
ip -n vnbbench-a5446a-n-n29 link set eth0 up
tc -n vnbbench-a5446a-n-n29 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p28x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p29x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n30
ip -n vnbbench-a5446a-h-host link set p29x0 master sw0 up
ip -n vnbbench-a5446a-n-n30 addr add 198.18.0.30/24 dev eth0
ip -n vnbbench-a5446a-n-n30 link set eth0 up
tc -n vnbbench-a5446a-n-n30 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p29x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p30x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n31
ip -n vnbbench-a5446a-h-host link set p30x0 master sw0 up
ip -n vnbbench-a5446a-n-n31 addr add 198.18.0.31/24 dev eth0
ip -n vnbbench-a5446a-n-n31 link set eth0 up
tc -n vnbbench-a5446a-n-n31 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p30x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p31x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n32
ip -n vnbbench-a5446a-h-host link set p31x0 master sw0 up
ip -n vnbbench-a5446a-n-n32 addr add 198.18.0.32/24 dev eth0
ip -n vnbbench-a5446a-n-n32 link set eth0 up
tc -n vnbbench-a5446a-n-n32 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p31x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p32x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n33
ip -n vnbbench-a5446a-h-host link set p32x0 master sw0 up
ip -n vnbbench-a5446a-n-n33 addr add 198.18.0.33/24 dev eth0
ip -n vnbbench-a5446a-n-n33 link set eth0 up
tc -n vnbbench-a5446a-n-n33 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p32x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p33x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n34
ip -n vnbbench-a5446a-h-host link set p33x0 master sw0 up
ip -n vnbbench-a5446a-n-n34 addr add 198.18.0.34/24 dev eth0
ip -n vnbbench-a5446a-n-n34 link set eth0 up
tc -n vnbbench-a5446a-n-n34 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p33x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p34x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n35
ip -n vnbbench-a5446a-h-host link set p34x0 master sw0 up
ip -n vnbbench-a5446a-n-n35 addr add 198.18.0.35/24 dev eth0
ip -n vnbbench-a5446a-n-n35 link set eth0 up
tc -n vnbbench-a5446a-n-n35 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p34x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p35x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n36
ip -n vnbbench-a5446a-h-host link set p35x0 master sw0 up
ip -n vnbbench-a5446a-n-n36 addr add 198.18.0.36/24 dev eth0
ip -n vnbbench-a5446a-n-n36 link set eth0 up
tc -n vnbbench-a5446a-n-n36 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p35x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p36x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n37
ip -n vnbbench-a5446a-h-host link set p36x0 master sw0 up
ip -n vnbbench-a5446a-n-n37 addr add 198.18.0.37/24 dev eth0
ip -n vnbbench-a5446a-n-n37 link set eth0 up
tc -n vnbbench-a5446a-n-n37 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p36x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p37x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n38
ip -n vnbbench-a5446a-h-host link set p37x0 master sw0 up
ip -n vnbbench-a5446a-n-n38 addr add 198.18.0.38/24 dev eth0
ip -n vnbbench-a5446a-n-n38 link set eth0 up
tc -n vnbbench-a5446a-n-n38 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p37x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p38x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n39
ip -n vnbbench-a5446a-h-host link set p38x0 master sw0 up
ip -n vnbbench-a5446a-n-n39 addr add 198.18.0.39/24 dev eth0
ip -n vnbbench-a5446a-n-n39 link set eth0 up
tc -n vnbbench-a5446a-n-n39 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p38x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p39x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n40
ip -n vnbbench-a5446a-h-host link set p39x0 master sw0 up
ip -n vnbbench-a5446a-n-n40 addr add 198.18.0.40/24 dev eth0
ip -n vnbbench-a5446a-n-n40 link set eth0 up
tc -n vnbbench-a5446a-n-n40 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p39x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p40x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n41
ip -n vnbbench-a5446a-h-host link set p40x0 master sw0 up
ip -n vnbbench-a5446a-n-n41 addr add 198.18.0.41/24 dev eth0
ip -n vnbbench-a5446a-n-n41 link set eth0 up
tc -n vnbbench-a5446a-n-n41 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p40x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p41x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n42
ip -n vnbbench-a5446a-h-host link set p41x0 master sw0 up
ip -n vnbbench-a5446a-n-n42 addr add 198.18.0.42/24 dev eth0
ip -n vnbbench-a5446a-n-n42 link set eth0 up
tc -n vnbbench-a5446a-n-n42 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p41x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p42x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n43
ip -n vnbbench-a5446a-h-host link set p42x0 master sw0 up
ip -n vnbbench-a5446a-n-n43 addr add 198.18.0.43/24 dev eth0
ip -n vnbbench-a5446a-n-n43 link set eth0 up
tc -n vnbbench-a5446a-n-n43 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p42x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p43x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n44
ip -n vnbbench-a5446a-h-host link set p43x0 master sw0 up
ip -n vnbbench-a5446a-n-n44 addr add 198.18.0.44/24 dev eth0
ip -n vnbbench-a5446a-n-n44 link set eth0 up
tc -n vnbbench-a5446a-n-n44 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p43x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p44x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n45
ip -n vnbbench-a5446a-h-host link set p44x0 master sw0 up
ip -n vnbbench-a5446a-n-n45 addr add 198.18.0.45/24 dev eth0
ip -n vnbbench-a5446a-n-n45 link set eth0 up
tc -n vnbbench-a5446a-n-n45 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p44x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p45x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n46
ip -n vnbbench-a5446a-h-host link set p45x0 master sw0 up
ip -n vnbbench-a5446a-n-n46 addr add 198.18.0.46/24 dev eth0
ip -n vnbbench-a5446a-n-n46 link set eth0 up
tc -n vnbbench-a5446a-n-n46 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p45x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p46x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n47
ip -n vnbbench-a5446a-h-host link set p46x0 master sw0 up
ip -n vnbbench-a5446a-n-n47 addr add 198.18.0.47/24 dev eth0
ip -n vnbbench-a5446a-n-n47 link set eth0 up
tc -n vnbbench-a5446a-n-n47 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p46x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p47x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n48
ip -n vnbbench-a5446a-h-host link set p47x0 master sw0 up
ip -n vnbbench-a5446a-n-n48 addr add 198.18.0.48/24 dev eth0
ip -n vnbbench-a5446a-n-n48 link set eth0 up
tc -n vnbbench-a5446a-n-n48 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p47x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p48x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n49
ip -n vnbbench-a5446a-h-host link set p48x0 master sw0 up
ip -n vnbbench-a5446a-n-n49 addr add 198.18.0.49/24 dev eth0
ip -n vnbbench-a5446a-n-n49 link set eth0 up
tc -n vnbbench-a5446a-n-n49 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p48x0 root tbf rate 100000000bit burst 12500 limit 625000
ip -n vnbbench-a5446a-h-host link add p49x0 mtu 1500 type veth peer name eth0 mtu 1500 netns vnbbench-a5446a-n-n50
ip -n vnbbench-a5446a-h-host link set p49x0 master sw0 up
ip -n vnbbench-a5446a-n-n50 addr add 198.18.0.50/24 dev eth0
ip -n vnbbench-a5446a-n-n50 link set eth0 up
tc -n vnbbench-a5446a-n-n50 qdisc add dev eth0 root tbf rate 100000000bit burst 12500 limit 625000
tc -n vnbbench-a5446a-h-host qdisc add dev p49x0 root tbf rate 100000000bit burst 12500 limit 625000
