"""plan + provider -> measurements in the store: run a campaign.

- `campaign`    create a campaign (plan it, record it) and run or resume it; registers the observers
- `runner`      the step loop: build/rebuild topologies, servers, clients behind a start barrier,
                timeouts, retries, one transaction per step, clean teardown on Ctrl-C
- `background`  a pattern's background flows beside each of its steps
"""
