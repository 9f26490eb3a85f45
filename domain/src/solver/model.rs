//! Stages 1 and 2 of docs/coopr-format.md §4, compiled into bit masks.
//!
//! Services joined by `mustcoexist` groups always travel together, so they are
//! merged into *units*; a node's service set is then a set of units (a `u64` mask)
//! plus every unconstrained service. `cantcoexist` groups become forbidden unit
//! masks, and whitelists become masks over the candidate types. Every subset of a
//! valid set is valid, which is what makes the counting in [`super::pack`] work.

use std::collections::{BTreeMap, BTreeSet};

use super::error::{Reason, TypeKind};
use super::problem::{LayoutProblem, TypeCandidates, Unusable};
use crate::names::ServiceName;

/// Counts at or above this mean "no maximum".
pub(crate) const UNBOUNDED: u32 = u32::MAX;
/// Units, hardware types and image types are `u64` bit masks.
pub(crate) const MAX_BITS: usize = 64;

/// Services that always share nodes.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// Sorted; the first one orders units (Coopr's service-name tie-break).
    pub members: Vec<ServiceName>,
    pub lo: u32,
    /// The member whose minimum sets `lo` (the first member when none does).
    pub lo_from: usize,
    pub hi: u32,
    /// Allowed hardware and image names (`None` = any), to check fixed nodes.
    pub hardware_names: Option<BTreeSet<String>>,
    pub image_names: Option<BTreeSet<String>>,
    pub hw_mask: u64,
    pub img_mask: u64,
}

impl Unit {
    pub fn weight(&self) -> u32 {
        u32::try_from(self.members.len()).unwrap_or(u32::MAX)
    }

    pub fn allows_hardware(&self, name: &str) -> bool {
        self.hardware_names
            .as_ref()
            .is_none_or(|names| names.contains(name))
    }

    pub fn allows_image(&self, name: &str) -> bool {
        self.image_names
            .as_ref()
            .is_none_or(|names| names.contains(name))
    }
}

/// One phase's view of a problem: which types are candidates, and the units.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub unconstrained: Vec<ServiceName>,
    pub units: Vec<Unit>,
    /// `cantcoexist` groups as unit masks, each with at least two units.
    pub forbidden: Vec<u64>,
    /// Per unit: units it can never share a node with.
    pub pair_conflicts: Vec<u64>,
    /// The `forbidden` groups of three or more units (pairs are in `pair_conflicts`).
    pub wide_forbidden: Vec<u64>,
    /// Units whose whitelists exclude some candidate type.
    pub typed: u64,
    pub hardware: Vec<String>,
    pub images: Vec<String>,
    /// Layout order: bands of (hardware rank, image rank), each band walked whole
    /// before the next.
    pub bands: Vec<Vec<(u32, u32)>>,
    /// A node may carry only the unconstrained services.
    pub empty_allowed: bool,
}

/// Which candidate types a phase may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Only the preferred types (Coopr's candidates).
    Preferred,
    /// Every usable type, preferred ones first.
    All,
}

impl Model {
    pub fn build(problem: &LayoutProblem, phase: Phase) -> Result<Model, Vec<Reason>> {
        let mut reasons = Vec::new();
        let services: BTreeSet<&ServiceName> = problem.services.iter().collect();
        if services.is_empty() {
            return Err(vec![Reason::NoServices]);
        }
        let hardware = phase_candidates(&problem.hardware, phase);
        let images = phase_candidates(&problem.images, phase);
        if hardware.is_empty() {
            reasons.push(Reason::NoHardware {
                detail: unusable_detail(&problem.hardware),
            });
        }
        if images.is_empty() {
            reasons.push(Reason::NoImages {
                detail: unusable_detail(&problem.images),
            });
        }
        for (what, count) in [
            ("hardware types", hardware.len()),
            ("image types", images.len()),
        ] {
            if count > MAX_BITS {
                reasons.push(too_large(what, count));
            }
        }
        if !reasons.is_empty() {
            return Err(reasons);
        }

        let constrained: BTreeSet<&ServiceName> = services
            .iter()
            .copied()
            .filter(|service| {
                problem.service_constraints.contains_key(*service)
                    || problem
                        .layout
                        .must_coexist
                        .iter()
                        .chain(&problem.layout.cant_coexist)
                        .any(|group| group.contains(service))
            })
            .collect();
        let unconstrained: Vec<ServiceName> = services
            .iter()
            .filter(|service| !constrained.contains(*service))
            .map(|service| (*service).clone())
            .collect();

        let groups = merge_must_groups(problem, &constrained);
        if groups.len() > MAX_BITS {
            return Err(vec![too_large("constrained service groups", groups.len())]);
        }
        let mut units = Vec::with_capacity(groups.len());
        for members in groups {
            match build_unit(problem, members, &hardware, &images) {
                Ok(unit) => units.push(unit),
                Err(mut unit_reasons) => reasons.append(&mut unit_reasons),
            }
        }
        if !reasons.is_empty() {
            return Err(reasons);
        }

        let unit_of: BTreeMap<&ServiceName, usize> = units
            .iter()
            .enumerate()
            .flat_map(|(index, unit)| unit.members.iter().map(move |member| (member, index)))
            .collect();
        let mut forbidden: Vec<u64> = Vec::new();
        for group in &problem.layout.cant_coexist {
            // A member missing from the cluster can never complete the group.
            let Some(indices) = group
                .iter()
                .map(|service| unit_of.get(service).copied())
                .collect::<Option<Vec<usize>>>()
            else {
                continue;
            };
            let mask = indices.iter().fold(0u64, |mask, index| mask | bit(*index));
            if mask.count_ones() == 1 {
                let unit = &units[indices[0]];
                reasons.push(Reason::GroupContradiction {
                    must: unit.members.clone(),
                    cant: group.clone(),
                });
            } else if !forbidden.contains(&mask) {
                forbidden.push(mask);
            }
        }
        if !reasons.is_empty() {
            return Err(reasons);
        }
        // A group containing another adds nothing.
        let minimal: Vec<u64> = forbidden
            .iter()
            .copied()
            .filter(|mask| {
                !forbidden
                    .iter()
                    .any(|other| other != mask && other & mask == *other)
            })
            .collect();

        let pair_conflicts = units
            .iter()
            .enumerate()
            .map(|(index, unit)| {
                units
                    .iter()
                    .enumerate()
                    .filter(|(other_index, other)| {
                        *other_index != index
                            && (unit.hw_mask & other.hw_mask == 0
                                || unit.img_mask & other.img_mask == 0
                                || minimal
                                    .iter()
                                    .any(|mask| *mask == bit(index) | bit(*other_index)))
                    })
                    .fold(0u64, |mask, (other_index, _)| mask | bit(other_index))
            })
            .collect();

        let bands = bands(problem, phase, hardware.len(), images.len());
        let wide_forbidden = minimal
            .iter()
            .copied()
            .filter(|m| m.count_ones() >= 3)
            .collect();
        let (all_hw, all_img) = (low_bits(hardware.len()), low_bits(images.len()));
        let typed = units
            .iter()
            .enumerate()
            .filter(|(_, unit)| unit.hw_mask != all_hw || unit.img_mask != all_img)
            .fold(0u64, |mask, (index, _)| mask | bit(index));
        Ok(Model {
            wide_forbidden,
            typed,
            empty_allowed: !unconstrained.is_empty(),
            unconstrained,
            units,
            forbidden: minimal,
            pair_conflicts,
            hardware,
            images,
            bands,
        })
    }

    pub fn all_hardware(&self) -> u64 {
        low_bits(self.hardware.len())
    }

    pub fn all_images(&self) -> u64 {
        low_bits(self.images.len())
    }

    /// Whether unit `index` can join the valid set `set`.
    pub fn can_add(&self, set: u64, index: usize) -> bool {
        let unit = bit(index);
        let with = set | unit;
        self.pair_conflicts[index] & set == 0
            && !self
                .wide_forbidden
                .iter()
                .any(|mask| mask & unit != 0 && mask & with == *mask)
            && self.types_agree(with)
    }

    /// Whether the units of `set` share a hardware and an image type. Pairs are
    /// covered by `pair_conflicts`, so only three or more typed units need the masks.
    fn types_agree(&self, set: u64) -> bool {
        if (set & self.typed).count_ones() < 3 {
            return true;
        }
        let (hw, img) = self.type_masks(set & self.typed);
        hw != 0 && img != 0
    }

    /// Hardware and image types every unit of `set` allows.
    pub fn type_masks(&self, set: u64) -> (u64, u64) {
        units_of(set).fold(
            (self.all_hardware(), self.all_images()),
            |(hw, img), index| {
                (
                    hw & self.units[index].hw_mask,
                    img & self.units[index].img_mask,
                )
            },
        )
    }

    /// Services of a node carrying `set`, sorted.
    pub fn services_of(&self, set: u64) -> BTreeSet<ServiceName> {
        units_of(set)
            .flat_map(|index| self.units[index].members.iter().cloned())
            .chain(self.unconstrained.iter().cloned())
            .collect()
    }

    pub fn weight_of(&self, set: u64) -> u32 {
        units_of(set).map(|index| self.units[index].weight()).sum()
    }
}

pub(crate) fn bit(index: usize) -> u64 {
    1u64 << index
}

pub(crate) fn low_bits(count: usize) -> u64 {
    if count >= MAX_BITS {
        u64::MAX
    } else {
        (1u64 << count) - 1
    }
}

/// Indices of the set bits of `mask`, ascending.
pub(crate) fn units_of(mask: u64) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let index = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        Some(index)
    })
}

fn too_large(what: &str, count: usize) -> Reason {
    Reason::TooLarge {
        what: what.to_owned(),
        count,
        limit: MAX_BITS,
    }
}

fn phase_candidates<T: AsRef<str>>(types: &TypeCandidates<T>, phase: Phase) -> Vec<String> {
    let all = types.candidates.iter().map(|name| name.as_ref().to_owned());
    match (&types.preferred, phase) {
        (Some(preferred), Phase::Preferred) => types
            .candidates
            .iter()
            .filter(|name| name.as_ref() == preferred.as_ref())
            .map(|name| name.as_ref().to_owned())
            .take(1)
            .collect(),
        _ => {
            // The preferred type goes first whatever order the caller used.
            let mut ordered: Vec<String> = all.collect();
            if let Some(preferred) = &types.preferred {
                if let Some(position) = ordered.iter().position(|n| n == preferred.as_ref()) {
                    let name = ordered.remove(position);
                    ordered.insert(0, name);
                }
            }
            ordered
        }
    }
}

fn unusable_detail<T: AsRef<str>>(types: &TypeCandidates<T>) -> String {
    if types.unusable.is_empty() {
        return "none are compatible".to_owned();
    }
    let parts: Vec<String> = types
        .unusable
        .iter()
        .map(|entry| format!("{} {}", entry.name.as_ref(), describe(&entry.why)))
        .collect();
    parts.join(", ")
}

pub(crate) fn describe(why: &Unusable) -> String {
    match why {
        Unusable::NotCompatible => "is not in the template's compatibility list".to_owned(),
        Unusable::NotOnProvider(provider) => format!("has no mapping for provider {provider}"),
        Unusable::Unknown => "does not exist".to_owned(),
    }
}

/// `mustcoexist` groups cut down to cluster services, chained through shared members.
fn merge_must_groups(
    problem: &LayoutProblem,
    constrained: &BTreeSet<&ServiceName>,
) -> Vec<Vec<ServiceName>> {
    let names: Vec<&ServiceName> = constrained.iter().copied().collect();
    let index_of: BTreeMap<&ServiceName, usize> = names
        .iter()
        .enumerate()
        .map(|(index, name)| (*name, index))
        .collect();
    let mut parent: Vec<usize> = (0..names.len()).collect();
    fn root(parent: &mut [usize], mut node: usize) -> usize {
        while parent[node] != node {
            parent[node] = parent[parent[node]];
            node = parent[node];
        }
        node
    }
    for group in &problem.layout.must_coexist {
        let members: Vec<usize> = group
            .iter()
            .filter_map(|service| index_of.get(service).copied())
            .collect();
        for pair in members.windows(2) {
            let (a, b) = (root(&mut parent, pair[0]), root(&mut parent, pair[1]));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<ServiceName>> = BTreeMap::new();
    for (index, name) in names.iter().enumerate() {
        let group_root = root(&mut parent, index);
        groups.entry(group_root).or_default().push((*name).clone());
    }
    // Names were visited in order, so each group is sorted and groups are ordered
    // by their smallest member.
    groups.into_values().collect()
}

fn build_unit(
    problem: &LayoutProblem,
    members: Vec<ServiceName>,
    hardware: &[String],
    images: &[String],
) -> Result<Unit, Vec<Reason>> {
    let mut reasons = Vec::new();
    let mut lo = 1u32;
    let mut lo_from = 0usize;
    let mut hi = UNBOUNDED;
    let mut hardware_names: Option<BTreeSet<String>> = None;
    let mut image_names: Option<BTreeSet<String>> = None;
    for (position, member) in members.iter().enumerate() {
        let Some(constraint) = problem.service_constraints.get(member) else {
            continue;
        };
        let max = constraint.max.unwrap_or(UNBOUNDED);
        if constraint.min > max {
            reasons.push(Reason::QuantityRange {
                service: member.clone(),
                min: constraint.min,
                max: constraint.max,
            });
        }
        if constraint.min > lo {
            lo = constraint.min;
            lo_from = position;
        }
        hi = hi.min(max);
        if !constraint.hardware.is_empty() {
            let allowed: BTreeSet<String> = constraint
                .hardware
                .iter()
                .map(|h| h.as_str().to_owned())
                .collect();
            if !hardware.iter().any(|name| allowed.contains(name)) {
                reasons.push(Reason::HardwareWhitelist {
                    service: member.clone(),
                    allowed: constraint.hardware.clone(),
                    detail: whitelist_detail(&problem.hardware, &allowed),
                });
            }
            hardware_names = Some(intersect(hardware_names, allowed));
        }
        if !constraint.images.is_empty() {
            let allowed: BTreeSet<String> = constraint
                .images
                .iter()
                .map(|i| i.as_str().to_owned())
                .collect();
            if !images.iter().any(|name| allowed.contains(name)) {
                reasons.push(Reason::ImageWhitelist {
                    service: member.clone(),
                    allowed: constraint.images.clone(),
                    detail: whitelist_detail(&problem.images, &allowed),
                });
            }
            image_names = Some(intersect(image_names, allowed));
        }
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    if lo > hi {
        reasons.push(Reason::GroupQuantities {
            group: members.clone(),
        });
    }
    let hw_mask = type_mask(hardware, hardware_names.as_ref());
    let img_mask = type_mask(images, image_names.as_ref());
    if hw_mask == 0 {
        reasons.push(Reason::GroupTypes {
            group: members.clone(),
            kind: TypeKind::Hardware,
        });
    }
    if img_mask == 0 {
        reasons.push(Reason::GroupTypes {
            group: members.clone(),
            kind: TypeKind::Image,
        });
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    Ok(Unit {
        members,
        lo,
        lo_from,
        hi,
        hardware_names,
        image_names,
        hw_mask,
        img_mask,
    })
}

fn intersect(current: Option<BTreeSet<String>>, allowed: BTreeSet<String>) -> BTreeSet<String> {
    match current {
        None => allowed,
        Some(current) => current.intersection(&allowed).cloned().collect(),
    }
}

fn type_mask(candidates: &[String], allowed: Option<&BTreeSet<String>>) -> u64 {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, name)| allowed.is_none_or(|allowed| allowed.contains(*name)))
        .fold(0u64, |mask, (index, _)| mask | bit(index))
}

fn whitelist_detail<T: AsRef<str>>(
    types: &TypeCandidates<T>,
    allowed: &BTreeSet<String>,
) -> String {
    let parts: Vec<String> = types
        .unusable
        .iter()
        .filter(|entry| allowed.contains(entry.name.as_ref()))
        .map(|entry| format!("{} {}", entry.name.as_ref(), describe(&entry.why)))
        .collect();
    parts.join(", ")
}

/// The (hardware rank, image rank) bands of the layout order. With a preferred type
/// in the wider phase, layouts on the preferred types come first so as many nodes as
/// possible keep the template's defaults.
fn bands(
    problem: &LayoutProblem,
    phase: Phase,
    hardware: usize,
    images: usize,
) -> Vec<Vec<(u32, u32)>> {
    let pairs = (0..hardware).flat_map(|hr| (0..images).map(move |ir| (rank(hr), rank(ir))));
    let hw_pref = problem.hardware.preferred.is_some();
    let img_pref = problem.images.preferred.is_some();
    if phase == Phase::Preferred || !(hw_pref || img_pref) {
        return vec![pairs.collect()];
    }
    let (preferred, rest): (RankPairs, RankPairs) =
        pairs.partition(|(hr, ir)| (!hw_pref || *hr == 0) && (!img_pref || *ir == 0));
    vec![preferred, rest]
}

type RankPairs = Vec<(u32, u32)>;

fn rank(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}
