//! `/metrics` pages read back with a parser of Prometheus's text format, and sums of
//! their samples by label.

use openmetrics_parser::{MetricsExposition, PrometheusType, PrometheusValue};

/// A parsed metrics page.
pub struct Page(MetricsExposition<PrometheusType, PrometheusValue>);

/// Parses `text`, failing the test with the parser's reason if it is not valid.
pub fn parse(text: &str) -> Page {
    match openmetrics_parser::prometheus::parse_prometheus(text) {
        Ok(page) => Page(page),
        Err(error) => panic!("not Prometheus's text format ({error:?}):\n{text}"),
    }
}

impl Page {
    /// The sum of `name`'s samples whose labels include `labels`: their values, or
    /// their counts for a histogram. Zero when none matches.
    pub fn total(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let Some(family) = self.0.families.get(name) else {
            return 0.0;
        };
        family
            .iter_samples()
            .filter(|sample| {
                let set = sample.get_labelset().unwrap();
                labels
                    .iter()
                    .all(|(key, value)| set.get_label_value(key) == Some(*value))
            })
            .map(|sample| match &sample.value {
                PrometheusValue::Counter(counter) => counter.value.as_f64(),
                PrometheusValue::Gauge(value) | PrometheusValue::Unknown(value) => value.as_f64(),
                PrometheusValue::Histogram(histogram) => histogram.count.unwrap_or(0) as f64,
                PrometheusValue::Summary(summary) => summary.count.unwrap_or(0) as f64,
            })
            .fold(0.0, |sum, value| sum + value)
    }

    /// Whether `name` has a sample whose labels include `labels`.
    pub fn has(&self, name: &str, labels: &[(&str, &str)]) -> bool {
        self.0.families.get(name).is_some_and(|family| {
            family.iter_samples().any(|sample| {
                let set = sample.get_labelset().unwrap();
                labels
                    .iter()
                    .all(|(key, value)| set.get_label_value(key) == Some(*value))
            })
        })
    }

    /// Every label set of `name`, for failure messages.
    pub fn label_sets(&self, name: &str) -> Vec<String> {
        self.0.families.get(name).map_or_else(Vec::new, |family| {
            family
                .iter_samples()
                .map(|sample| {
                    let set = sample.get_labelset().unwrap();
                    set.iter()
                        .map(|(key, value)| format!("{key}={value:?}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect()
        })
    }
}
