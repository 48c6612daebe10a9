"""Analysis of a campaign's results, in the form of Jain's "The Art of Computer Systems Performance Analysis".

One module per job, all pure functions over pandas frames (no store, no root):

- `descriptive`      per-connection tables and the competition verdict (ExoGENI form)
- `inputs`           checks on a table before any model is fitted (`DataError` names the field and the fix)
- `one_factor`       one-factor ANOVA in the textbook form (ch. 20), effects and their intervals
- `contrasts`        intervals of contrasts Σh_jα_j, successive differences (ONL Table 5 form)
- `two_k_r`          2^k r factorial designs (ch. 18): sign table, effects, allocation of variation
- `full_factorial`   ANOVA of a general full-factorial design (multi-level factors)
- `diagnostics`      residuals vs predicted, normal QQ data, truncated models
- `fairness`         Jain's fairness index per group of simultaneous flows, its spread over replications
- `udp`              effective throughput (1 − loss) × rate
- `transient`        drop the warm-up of every measurement
- `outliers`         an explicit outlier policy that records what it excluded and why
- `capacity`         recommended maximum level: loss threshold and first significant increase
- `reproducibility`  rebuilt topologies against the first build (ExoGENI Table 20)
- `placement`        same-host / same-site / cross-site compared (GENI Table 1)
- `periodic`         hour-of-day and day-of-week profiles of long campaigns
- `stats_cli`        `vnetbench stats FILE.csv ...` on any CSV

Import the module you need; this package imports nothing itself so `descriptive` stays cheap to load.
"""
