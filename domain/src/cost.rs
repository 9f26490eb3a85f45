//! Prices, cost estimates, budgets and showback (docs/cost.md), as pure functions.
//!
//! Money is kept in micro-units ([`Micros`], millionths of the one currency's unit) so
//! sums and comparisons are exact; it becomes a decimal number only at the edges (the
//! API's `f64`s, rounded to cents for display). A hardware type's `price_per_hour`
//! (a provider mapping's own `price_per_hour` overrides it) prices each node of a
//! layout; a month is 730 hours for estimates, and a calendar month (UTC) for budgets
//! and showback, which sum priced intervals clipped to the month.

use serde_json::Value;

use crate::catalog::{Catalog, HardwareType};
use crate::layout::Layout;

/// Money in millionths of the currency's unit.
pub type Micros = i64;

/// One unit of money in [`Micros`].
pub const MICROS_PER_UNIT: Micros = 1_000_000;

/// The hours in a month, for estimates (365 × 24 / 12).
pub const HOURS_PER_MONTH: i64 = 730;

/// The field that carries a price, on a hardware type and on its provider mappings.
pub const PRICE_FIELD: &str = "price_per_hour";

const MS_PER_HOUR: i64 = 3_600_000;

/// A price as written in a catalog: a non-negative finite number.
pub fn price_of_value(value: &Value) -> Result<Micros, String> {
    match value.as_f64() {
        Some(number) => amount_of_units(number)
            .map_err(|why| format!("must be a price per hour: {why}, not {value}")),
        None => Err(format!(
            "must be a price per hour (a non-negative number), not {value}"
        )),
    }
}

/// An amount given as a decimal number of units (`0.25`), in micro-units.
pub fn amount_of_units(number: f64) -> Result<Micros, String> {
    if !number.is_finite() {
        return Err("a finite number".to_owned());
    }
    if number < 0.0 {
        return Err("a non-negative number".to_owned());
    }
    // A trillion units is far past any price or budget; bounding keeps the cast exact.
    if number > 1e12 {
        return Err("at most 1000000000000".to_owned());
    }
    Ok((number * MICROS_PER_UNIT as f64).round() as Micros)
}

/// An amount as typed (`--cost-above 250`, a budget of `1000.50`), in micro-units.
pub fn parse_amount(text: &str) -> Result<Micros, String> {
    let number: f64 = text.trim().parse().map_err(|_| {
        format!("{text:?} is not an amount (a non-negative number like 250 or 0.25)")
    })?;
    amount_of_units(number).map_err(|why| format!("{text:?} is not an amount: it must be {why}"))
}

/// Micro-units as a decimal number of units (for the API).
pub fn units(micros: Micros) -> f64 {
    micros as f64 / MICROS_PER_UNIT as f64
}

/// Micro-units rounded to cents, for people: `12.35`.
pub fn format_amount(micros: Micros) -> String {
    let cents = (micros + micros.signum() * 5_000) / 10_000;
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.abs();
    format!("{sign}{}.{:02}", cents / 100, cents % 100)
}

/// The price of one node of `hardware` on `provider`: the provider mapping's price,
/// else the hardware type's; `None` when neither is set (or one does not read: the
/// catalog's validation refuses that).
pub fn hardware_price(hardware: &HardwareType, provider: &str) -> Option<Micros> {
    let mapped = hardware
        .providermap
        .get(provider)
        .and_then(|settings| settings.get(PRICE_FIELD));
    mapped
        .or_else(|| hardware.extra.get(PRICE_FIELD))
        .and_then(|value| price_of_value(value).ok())
}

/// What a layout costs to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    pub per_hour: Micros,
    /// Nodes whose hardware type has a price on the provider.
    pub priced_nodes: u32,
    /// Nodes without one (they count as free).
    pub unpriced_nodes: u32,
}

impl Estimate {
    /// At [`HOURS_PER_MONTH`] hours.
    pub fn per_month(&self) -> Micros {
        self.per_hour.saturating_mul(HOURS_PER_MONTH)
    }

    /// Whether any node has a price: without one, "no prices set" says more than 0.
    pub fn is_priced(&self) -> bool {
        self.priced_nodes > 0
    }
}

/// The estimate of `layout` on `provider`, its nodes priced from `catalog` (the
/// cluster's snapshot).
pub fn estimate(catalog: &Catalog, provider: &str, layout: &Layout) -> Estimate {
    let mut estimate = Estimate::default();
    for node in &layout.nodes {
        match catalog
            .hardwaretype(node.hardwaretype.as_str())
            .and_then(|hardware| hardware_price(hardware, provider))
        {
            Some(price) => {
                estimate.per_hour = estimate.per_hour.saturating_add(price);
                estimate.priced_nodes += 1;
            }
            None => estimate.unpriced_nodes += 1,
        }
    }
    estimate
}

/// What running at `per_hour` from `start_ms` to `end_ms` costs (nothing for an empty
/// or reversed span).
pub fn cost_between(per_hour: Micros, start_ms: i64, end_ms: i64) -> Micros {
    let span = i128::from(end_ms.saturating_sub(start_ms).max(0));
    let cost = i128::from(per_hour) * span / i128::from(MS_PER_HOUR);
    Micros::try_from(cost).unwrap_or(Micros::MAX)
}

/// A stretch of time a cluster ran at one hourly rate; `end_ms` is `None` while it
/// runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    pub per_hour: Micros,
    pub start_ms: i64,
    pub end_ms: Option<i64>,
}

impl Interval {
    /// Its cost between `from_ms` and `to_ms` (an open interval runs until `to_ms`).
    pub fn cost_within(&self, from_ms: i64, to_ms: i64) -> Micros {
        let start = self.start_ms.max(from_ms);
        let end = self.end_ms.unwrap_or(to_ms).min(to_ms);
        cost_between(self.per_hour, start, end)
    }
}

/// A calendar month (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Month {
    pub year: i32,
    /// 1 to 12.
    pub month: u32,
}

impl Month {
    /// `YYYY-MM`, naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("month must be written YYYY-MM (like 2026-11), not {text:?}");
        let (year, month) = text.trim().split_once('-').ok_or_else(bad)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(bad());
        }
        let year: i32 = year.parse().map_err(|_| bad())?;
        let month: u32 = month.parse().map_err(|_| bad())?;
        if !(1..=12).contains(&month) || year < 1970 {
            return Err(bad());
        }
        Ok(Self { year, month })
    }

    /// The month `at_ms` falls in.
    pub fn of_ms(at_ms: i64) -> Self {
        let days = at_ms.div_euclid(86_400_000);
        let (year, month, _) = civil_from_days(days);
        Self { year, month }
    }

    pub fn next(self) -> Self {
        if self.month == 12 {
            Self {
                year: self.year + 1,
                month: 1,
            }
        } else {
            Self {
                year: self.year,
                month: self.month + 1,
            }
        }
    }

    /// Its first millisecond.
    pub fn start_ms(self) -> i64 {
        days_from_civil(self.year, self.month, 1) * 86_400_000
    }

    /// The first millisecond of the next month.
    pub fn end_ms(self) -> i64 {
        self.next().start_ms()
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

/// Days since 1970-01-01 of a date (H. Hinnant's algorithm).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let month = i64::from(month);
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

/// A tenant's month as a budget sees it: what it has cost so far, and what its live
/// clusters (at the rates they would have after the request) cost until the month
/// ends.
pub fn projected_month(spent_so_far: Micros, live_per_hour: Micros, now_ms: i64) -> Micros {
    let end = Month::of_ms(now_ms).end_ms();
    spent_so_far.saturating_add(cost_between(live_per_hour, now_ms, end))
}

/// Why a request does not fit a monthly budget, if it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverBudget {
    pub budget: Micros,
    pub projected: Micros,
    /// The request's own share of the projection (what it adds per month).
    pub request_per_month: Micros,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the tenant's monthly budget is {} and this month would come to {} with this \
             request (it adds {} per month at 730 hours)",
            format_amount(self.budget),
            format_amount(self.projected),
            format_amount(self.request_per_month),
        )
    }
}

/// Checks a request that raises the tenant's hourly rate by `added_per_hour`: over
/// `budget` when the projected month exceeds it. A request that adds nothing to the
/// rate is never refused (shrinking must stay possible over budget).
pub fn check_budget(
    budget: Micros,
    spent_so_far: Micros,
    live_per_hour_after: Micros,
    added_per_hour: Micros,
    now_ms: i64,
) -> Result<(), OverBudget> {
    if added_per_hour <= 0 {
        return Ok(());
    }
    let projected = projected_month(spent_so_far, live_per_hour_after, now_ms);
    if projected > budget {
        Err(OverBudget {
            budget,
            projected,
            request_per_month: added_per_hour.saturating_mul(HOURS_PER_MONTH),
        })
    } else {
        Ok(())
    }
}

/// One priced interval as showback reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub owner: String,
    pub template: String,
    pub interval: Interval,
}

/// A showback line: who (or which template) and what it cost in the month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowbackLine {
    pub key: String,
    pub cost: Micros,
}

/// A month's showback: per owner and per template (each sorted by key, lines that
/// cost nothing in the month left out), and the total. Open intervals run until
/// `now_ms`, so the current month shows the cost so far.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Showback {
    pub per_user: Vec<ShowbackLine>,
    pub per_template: Vec<ShowbackLine>,
    pub total: Micros,
}

pub fn showback(entries: &[LedgerEntry], month: Month, now_ms: i64) -> Showback {
    use std::collections::BTreeMap;
    let from = month.start_ms();
    let to = month.end_ms().min(now_ms);
    let mut users: BTreeMap<&str, Micros> = BTreeMap::new();
    let mut templates: BTreeMap<&str, Micros> = BTreeMap::new();
    let mut total: Micros = 0;
    for entry in entries {
        let cost = entry.interval.cost_within(from, to);
        if cost == 0 {
            continue;
        }
        *users.entry(&entry.owner).or_default() += cost;
        *templates.entry(&entry.template).or_default() += cost;
        total += cost;
    }
    let lines = |map: BTreeMap<&str, Micros>| {
        map.into_iter()
            .map(|(key, cost)| ShowbackLine {
                key: key.to_owned(),
                cost,
            })
            .collect()
    };
    Showback {
        per_user: lines(users),
        per_template: lines(templates),
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::coopr::import_bundle;

    const HOUR: i64 = MS_PER_HOUR;

    fn catalog() -> Catalog {
        import_bundle(
            r#"{
            "providers": [{"name": "docker", "providertype": "docker"},
                          {"name": "ec2", "providertype": "ec2"}],
            "hardwaretypes": [
                {"name": "small", "price_per_hour": 0.25,
                 "providermap": {"docker": {"flavor": "s", "price_per_hour": 0.1},
                                 "ec2": {"flavor": "t3.small"}}},
                {"name": "free", "providermap": {"docker": {"flavor": "f"}}}
            ]}"#,
        )
        .expect("catalog")
    }

    fn layout(hardware: &[&str]) -> Layout {
        let nodes = hardware
            .iter()
            .enumerate()
            .map(|(index, name)| crate::layout::NodeLayout {
                number: 1000 + index as u32,
                hardwaretype: name.parse().expect("name"),
                imagetype: "debian".parse().expect("name"),
                services: Default::default(),
            })
            .collect();
        Layout {
            template: "web".parse().expect("name"),
            nodes,
        }
    }

    #[test]
    fn estimates_price_each_node_by_its_providers_mapping_then_its_type() {
        let catalog = catalog();
        let cases: [(&str, &[&str], Micros, u32, u32); 6] = [
            ("docker", &["small"], 100_000, 1, 0),
            ("ec2", &["small", "small"], 500_000, 2, 0),
            ("docker", &["small", "free"], 100_000, 1, 1),
            ("docker", &["free", "free"], 0, 0, 2),
            ("docker", &["gone"], 0, 0, 1),
            ("docker", &[], 0, 0, 0),
        ];
        for (provider, hardware, per_hour, priced, unpriced) in cases {
            let got = estimate(&catalog, provider, &layout(hardware));
            assert_eq!(
                got,
                Estimate {
                    per_hour,
                    priced_nodes: priced,
                    unpriced_nodes: unpriced
                },
                "{provider} {hardware:?}"
            );
            assert_eq!(got.per_month(), per_hour * 730);
        }
    }

    #[test]
    fn prices_and_amounts_read_only_non_negative_finite_numbers() {
        let cases: [(Value, Option<Micros>); 6] = [
            (serde_json::json!(0.25), Some(250_000)),
            (serde_json::json!(0), Some(0)),
            (serde_json::json!(3), Some(3_000_000)),
            (serde_json::json!(-1), None),
            (serde_json::json!("0.25"), None),
            (serde_json::json!(null), None),
        ];
        for (value, want) in cases {
            assert_eq!(price_of_value(&value).ok(), want, "{value}");
        }
        let typed: [(&str, Option<Micros>); 6] = [
            ("250", Some(250_000_000)),
            (" 0.5 ", Some(500_000)),
            ("-3", None),
            ("NaN", None),
            ("inf", None),
            ("ten", None),
        ];
        for (text, want) in typed {
            assert_eq!(parse_amount(text).ok(), want, "{text}");
        }
        assert_eq!(format_amount(12_345_000), "12.35");
        assert_eq!(format_amount(4_999), "0.00");
        assert_eq!(format_amount(0), "0.00");
        assert_eq!(format_amount(182_500_000), "182.50");
    }

    #[test]
    fn months_read_and_bound_calendar_months_in_utc() {
        let cases: [(&str, i64, i64); 4] = [
            ("1970-01", 0, 31 * 24 * HOUR),
            ("2024-02", 1_706_745_600_000, 1_709_251_200_000),
            ("2026-11", 1_793_491_200_000, 1_796_083_200_000),
            ("2026-12", 1_796_083_200_000, 1_798_761_600_000),
        ];
        for (text, start, end) in cases {
            let month = Month::parse(text).expect("month");
            assert_eq!(month.to_string(), text);
            assert_eq!((month.start_ms(), month.end_ms()), (start, end), "{text}");
            assert_eq!(Month::of_ms(start), month);
            assert_eq!(Month::of_ms(end - 1), month);
        }
        for bad in ["2026-13", "2026-00", "26-11", "2026/11", "", "2026-1"] {
            assert!(Month::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn budgets_refuse_requests_whose_projected_month_exceeds_them() {
        // 2026-11-16 00:00 UTC: 15 days (360 hours) left in November.
        let now = Month::parse("2026-11").expect("month").start_ms() + 15 * 24 * HOUR;
        let unit = MICROS_PER_UNIT;
        // (budget, spent, rate after, added, refused)
        let cases: [(Micros, Micros, Micros, Micros, bool); 5] = [
            (100 * unit, 0, unit / 4, unit / 4, false), // 90 projected
            (100 * unit, 20 * unit, unit / 4, unit / 4, true), // 110
            (110 * unit, 20 * unit, unit / 4, unit / 4, false), // exactly the budget
            (10 * unit, 50 * unit, unit, 0, false),     // adds nothing: shrinking stays possible
            (0, 0, 1, 1, true),
        ];
        for (budget, spent, after, added, refused) in cases {
            let checked = check_budget(budget, spent, after, added, now);
            assert_eq!(
                checked.is_err(),
                refused,
                "{budget} {spent} {after}: {checked:?}"
            );
            if let Err(over) = checked {
                assert_eq!(over.budget, budget);
                assert_eq!(over.projected, spent + after * 360);
                assert_eq!(over.request_per_month, added * 730);
                assert!(over.to_string().contains("monthly budget is"), "{over}");
            }
        }
    }

    #[test]
    fn showback_sums_intervals_clipped_to_the_month_per_user_and_template() {
        let nov = Month::parse("2026-11").expect("month");
        let start = nov.start_ms();
        let end = nov.end_ms();
        let unit = MICROS_PER_UNIT;
        let entry = |owner: &str, template: &str, per_hour, from, to| LedgerEntry {
            owner: owner.to_owned(),
            template: template.to_owned(),
            interval: Interval {
                per_hour,
                start_ms: from,
                end_ms: to,
            },
        };
        let entries = [
            // Begun in October: only its November hours count (10 h).
            entry(
                "alice",
                "web",
                unit,
                start - 5 * HOUR,
                Some(start + 10 * HOUR),
            ),
            // Inside November: 2 h at 0.5.
            entry("bob", "web", unit / 2, start + HOUR, Some(start + 3 * HOUR)),
            // Still open: runs until now (4 h before the month's end).
            entry("alice", "kv", 2 * unit, end - 10 * HOUR, None),
            // All of it in December.
            entry("carol", "kv", unit, end, Some(end + HOUR)),
            // Unpriced: left out.
            entry("dave", "kv", 0, start, None),
        ];
        let now = end - 4 * HOUR;
        let cases: [(Month, i64, Showback); 2] = [
            (
                nov,
                now,
                Showback {
                    per_user: vec![
                        ShowbackLine {
                            key: "alice".into(),
                            cost: 22 * unit,
                        },
                        ShowbackLine {
                            key: "bob".into(),
                            cost: unit,
                        },
                    ],
                    per_template: vec![
                        ShowbackLine {
                            key: "kv".into(),
                            cost: 12 * unit,
                        },
                        ShowbackLine {
                            key: "web".into(),
                            cost: 11 * unit,
                        },
                    ],
                    total: 23 * unit,
                },
            ),
            (
                nov.next(),
                end + 2 * HOUR,
                Showback {
                    per_user: vec![
                        ShowbackLine {
                            key: "alice".into(),
                            cost: 4 * unit,
                        },
                        ShowbackLine {
                            key: "carol".into(),
                            cost: unit,
                        },
                    ],
                    per_template: vec![ShowbackLine {
                        key: "kv".into(),
                        cost: 5 * unit,
                    }],
                    total: 5 * unit,
                },
            ),
        ];
        for (month, now, want) in cases {
            assert_eq!(showback(&entries, month, now), want, "{month}");
        }
    }
}
