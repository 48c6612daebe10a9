//! Quantities written by people: seconds, bit rates, packet rates, durations with units, loss
//! ratios, addresses. The command line's value parsers and the delay CDF's points use them; each error
//! names the value and gives an example of a good one.

use std::net::{IpAddr, SocketAddr};

/// Parse seconds (decimal) into ns; must be > 0.
pub fn parse_secs(s: &str) -> Result<u64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a number of seconds: {s:?} (plain seconds, e.g. 5 or 0.25)"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e7 {
        return Err(format!("seconds must be > 0 and at most 10000000: {s:?}"));
    }
    Ok((v * 1e9).round() as u64)
}

/// Parse a bit rate with an optional SI suffix (k, M, G, T; powers of 1000), e.g. "100M".
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('t' | 'T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "not a bit rate: {s:?} (bits/s, optionally with k, M, G or T = 10^3..10^12, \
                 e.g. 100M, 2.5G, 64000)"
        )
    })?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("bit rate must be > 0: {s:?}"));
    }
    Ok(v * mult)
}

/// Parse a packet rate (decimal allowed) in (0, 1e9].
pub fn parse_pps(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a packet rate: {s:?}"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e9 {
        return Err(format!("packet rate must be in (0, 1e9]: {s:?}"));
    }
    Ok(v)
}

/// Parse `ADDR:PORT` (an IP address, not a host name: nothing is resolved), e.g. "127.0.0.1:5000".
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    Err(match t.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => format!("no port: give {ip}:PORT, e.g. {ip}:5000"),
        Ok(IpAddr::V6(ip)) => format!("no port: give [{ip}]:PORT, e.g. [{ip}]:5000"),
        Err(_) => format!(
            "not an IP address and port: {s:?} (e.g. 127.0.0.1:5000 or [::1]:5000; host names \
             are not resolved)"
        ),
    })
}

/// Parse a destination `ADDR:PORT`: as [`parse_addr`], and port 0 (no receiver has it) refused.
pub fn parse_dst(s: &str) -> Result<SocketAddr, String> {
    let a = parse_addr(s)?;
    if a.port() == 0 {
        return Err(format!(
            "port 0 is no destination: give the port the receiver is bound to, e.g. {}",
            SocketAddr::new(a.ip(), 5000)
        ));
    }
    Ok(a)
}

/// Parse a duration: a number with a unit (ns, us, ms, s) or plain seconds, e.g. "50ms", "0.05".
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {s:?} (e.g. 50ms, 250us, 0.05)"))?;
    if !v.is_finite() || v < 0.0 || v * mult > 1e12 {
        return Err(format!("duration must be in [0, 1000 s]: {s:?}"));
    }
    Ok((v * mult).round() as u64)
}

/// Parse a loss ratio: "0.01" or "1%".
pub fn parse_ratio(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, div) = match t.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (t, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a ratio: {s:?} (e.g. 0.01 or 1%)"))?;
    let v = v / div;
    if !(0.0..1.0).contains(&v) {
        return Err(format!("loss must be in [0, 1): {s:?}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100M").unwrap(), 100e6);
        assert_eq!(parse_rate("2.5G").unwrap(), 2.5e9);
        assert_eq!(parse_rate("64000").unwrap(), 64000.0);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("-1M").is_err());
    }

    #[test]
    fn secs() {
        assert_eq!(parse_secs("1.5").unwrap(), 1_500_000_000);
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("nan").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("50ms").unwrap(), 50_000_000);
        assert_eq!(parse_duration_ns("250us").unwrap(), 250_000);
        assert_eq!(parse_duration_ns("0.05").unwrap(), 50_000_000);
        assert_eq!(parse_duration_ns("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("10ns").unwrap(), 10);
        assert!(parse_duration_ns("-1ms").is_err());
        assert!(parse_duration_ns("soon").is_err());
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(parse_dst("[::1]:9").unwrap().port(), 9);
        assert!(parse_addr("127.0.0.1")
            .unwrap_err()
            .contains("127.0.0.1:PORT"));
        assert!(parse_addr("::1").unwrap_err().contains("[::1]:PORT"));
        assert!(parse_addr("localhost:5000")
            .unwrap_err()
            .contains("not resolved"));
        assert!(parse_dst("127.0.0.1:0")
            .unwrap_err()
            .contains("127.0.0.1:5000"));
    }

    #[test]
    fn ratios() {
        assert_eq!(parse_ratio("1%").unwrap(), 0.01);
        assert_eq!(parse_ratio("0.02").unwrap(), 0.02);
        assert!(parse_ratio("100%").is_err());
        assert!(parse_ratio("x").is_err());
    }
}
