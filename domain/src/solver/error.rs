//! Why a request has no layout, in terms of the constraint that cannot be met.
//!
//! Coopr only says "Layout solving failed"; Corral names the constraint(s) and the
//! nearest cluster sizes that would work, so a user can fix the request themselves.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::names::{HardwareTypeName, ImageTypeName, ServiceName};

/// A request the solver cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct Unsatisfiable {
    /// At least one; each names a constraint that cannot be met.
    pub reasons: Vec<Reason>,
    /// The closest sizes within the template's size bounds that can be satisfied with
    /// everything else unchanged (both `None` when no size works, or when the failure
    /// does not depend on the size).
    pub nearest: NearestSizes,
}

/// Closest satisfiable node counts below and above the requested one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NearestSizes {
    pub below: Option<u32>,
    pub above: Option<u32>,
}

impl Unsatisfiable {
    pub fn new(reasons: Vec<Reason>) -> Self {
        Self {
            reasons,
            nearest: NearestSizes::default(),
        }
    }

    pub fn one(reason: Reason) -> Self {
        Self::new(vec![reason])
    }
}

impl fmt::Display for Unsatisfiable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no layout satisfies the request: ")?;
        for (index, reason) in self.reasons.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{reason}")?;
        }
        match (self.nearest.below, self.nearest.above) {
            (Some(below), Some(above)) => {
                write!(f, " (nearest sizes that work: {below} and {above})")
            }
            (Some(size), None) | (None, Some(size)) => {
                write!(f, " (nearest size that works: {size})")
            }
            (None, None) => Ok(()),
        }
    }
}

/// One constraint that cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Reason {
    #[error("no services requested")]
    NoServices,
    #[error("size {size} is outside the template's bounds {}", bounds(*min, *max))]
    SizeOutOfBounds {
        size: u32,
        min: u32,
        max: Option<u32>,
    },
    #[error("size {size} is not allowed: the template takes {min}, {}, {}, ... nodes (every {step})", min + step, min + 2 * step)]
    SizeOffStep { size: u32, min: u32, step: u32 },
    #[error("no provider: the request names none and the template has no default")]
    NoProvider,
    #[error("provider {provider:?} does not exist")]
    UnknownProvider { provider: String },
    #[error("service {service:?} is not a known service or alias")]
    UnknownService { service: String },
    #[error("service {service} is not allowed by the template's compatibility list")]
    IncompatibleService { service: ServiceName },
    #[error("service {service} requires {requires}, which is not on the cluster")]
    MissingRequirement {
        service: ServiceName,
        requires: ServiceName,
    },
    #[error("services {service} and {other} conflict and cannot be on one cluster")]
    Conflict {
        service: ServiceName,
        other: ServiceName,
    },
    #[error("no hardware types are available: {detail}")]
    NoHardware { detail: String },
    #[error("no image types are available: {detail}")]
    NoImages { detail: String },
    #[error(
        "service {service} may only run on hardware {}, none of which is available{}",
        list(allowed),
        detail_suffix(detail)
    )]
    HardwareWhitelist {
        service: ServiceName,
        allowed: Vec<HardwareTypeName>,
        detail: String,
    },
    #[error(
        "service {service} may only run on images {}, none of which is available{}",
        list(allowed),
        detail_suffix(detail)
    )]
    ImageWhitelist {
        service: ServiceName,
        allowed: Vec<ImageTypeName>,
        detail: String,
    },
    #[error(
        "services {} must coexist but their allowed {kind} types have nothing in common",
        list(group)
    )]
    GroupTypes {
        group: Vec<ServiceName>,
        kind: TypeKind,
    },
    #[error(
        "services {} must coexist but their quantities have no count in common",
        list(group)
    )]
    GroupQuantities { group: Vec<ServiceName> },
    #[error(
        "services {} must coexist, but cantcoexist group {} forbids them on one node",
        list(must),
        list(cant)
    )]
    GroupContradiction {
        must: Vec<ServiceName>,
        cant: Vec<ServiceName>,
    },
    #[error("service {service} needs between {min} and {} nodes", max.map_or("unbounded".to_owned(), |m| m.to_string()))]
    QuantityRange {
        service: ServiceName,
        min: u32,
        max: Option<u32>,
    },
    #[error("service {service} needs at least {min} nodes, more than the {size} requested")]
    QuantityTooHigh {
        service: ServiceName,
        min: u32,
        size: u32,
    },
    #[error("services {} may not share a node (layout groups or hardware/image whitelists) and together need at least {needed} nodes, more than the {size} requested", list(services))]
    Separation {
        services: Vec<ServiceName>,
        needed: u32,
        size: u32,
    },
    #[error("the layout constraints need at least {needed} nodes, more than the {size} requested")]
    TooFewNodes { needed: u32, size: u32 },
    #[error("every node needs a service with a maximum quantity ({}), which allows at most {at_most} nodes, fewer than the {size} requested", list(services))]
    TooManyNodes {
        services: Vec<ServiceName>,
        at_most: u32,
        size: u32,
    },
    #[error("service {service} already runs on {count} nodes, more than its maximum {max}")]
    ExistingOverMax {
        service: ServiceName,
        count: u32,
        max: u32,
    },
    #[error("existing node {number} cannot carry its services under the template's constraints: {detail}")]
    ExistingNodeInvalid { number: u32, detail: String },
    #[error("the new services cannot be placed on the existing nodes{}", growth(*grow_up_to))]
    CannotPlaceOnExisting { grow_up_to: Option<u32> },
    #[error("removing all {size} nodes leaves no cluster: delete it instead")]
    RemovesEveryNode { size: u32 },
    #[error(
        "service {service} would be left on {remaining} node(s), fewer than its minimum {min}"
    )]
    RemovalBelowMinimum {
        service: ServiceName,
        remaining: u32,
        min: u32,
    },
    #[error("{count} node(s) cannot go without leaving a service below its minimum quantity: at most {most} can (services at their minimum: {})", list(services))]
    CannotRemoveNodes {
        count: u32,
        most: u32,
        services: Vec<ServiceName>,
    },
    #[error("the request needs more than {limit} search steps; simplify the layout constraints")]
    SearchLimit { limit: u64 },
    #[error("too many {what} ({count}); at most {limit} are supported")]
    TooLarge {
        what: String,
        count: usize,
        limit: usize,
    },
}

/// Which kind of type a group or whitelist reason is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypeKind {
    Hardware,
    Image,
}

impl fmt::Display for TypeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TypeKind::Hardware => "hardware",
            TypeKind::Image => "image",
        })
    }
}

fn bounds(min: u32, max: Option<u32>) -> String {
    match max {
        Some(max) => format!("[{min}, {max}]"),
        None => format!("[{min}, unbounded]"),
    }
}

fn list<T: fmt::Display>(items: &[T]) -> String {
    let names: Vec<String> = items.iter().map(ToString::to_string).collect();
    format!("[{}]", names.join(", "))
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

fn growth(grow_up_to: Option<u32>) -> String {
    match grow_up_to {
        Some(limit) => format!(" even growing the cluster to {limit} nodes"),
        None => " without adding nodes".to_owned(),
    }
}
