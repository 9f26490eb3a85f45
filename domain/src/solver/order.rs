//! Coopr's node-layout preference order, walked lazily.
//!
//! Layouts are ordered by band (preferred types first, see [`super::model`]), then
//! more services first, then hardware rank, image rank, then sorted service names.
//! For two sets with the same number of services, comparing sorted name lists comes
//! down to "the set holding the smallest name of their symmetric difference comes
//! first", i.e. lexicographic order on unit bits (units ordered by first name) with
//! a present unit before an absent one. So each (band, weight, ranks) slice is walked
//! by a depth-first search that tries "include" before "exclude"; there can be
//! exponentially many layouts, and only the ones the count search asks for are built.

use super::model::{bit, units_of, Model};

/// A layout and where it sits in the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub band: usize,
    /// Constrained services on the node (unconstrained ones are on every node).
    pub weight: u32,
    /// Index into the band's (hardware rank, image rank) pairs.
    pub pair: usize,
    pub units: u64,
}

impl Position {
    pub fn ranks(&self, model: &Model) -> (u32, u32) {
        model.bands[self.band][self.pair]
    }
}

/// The first layout strictly after `after` (or the first of all) that uses only
/// units in `available`, includes every unit in `required` and at least one unit
/// of each mask in `hitting`.
pub(crate) fn next_layout(
    model: &Model,
    after: Option<&Position>,
    available: u64,
    required: u64,
    hitting: &[u64],
) -> Option<Position> {
    if required & !available != 0 {
        return None;
    }
    let start_band = after.map_or(0, |position| position.band);
    for band in start_band..model.bands.len() {
        let same_band = after.filter(|position| position.band == band);
        let top = model.weight_of(available);
        let top = same_band.map_or(top, |position| position.weight.min(top));
        for weight in (0..=top).rev() {
            let same_weight = same_band.filter(|position| position.weight == weight);
            let first_pair = same_weight.map_or(0, |position| position.pair);
            for pair in first_pair..model.bands[band].len() {
                let bound = same_weight.filter(|position| position.pair == pair);
                let (hr, ir) = model.bands[band][pair];
                let walk = Walk {
                    model,
                    weight,
                    hr,
                    ir,
                    available,
                    required,
                    hitting,
                    after: bound.map(|position| position.units),
                };
                if let Some(units) = walk.first() {
                    return Some(Position {
                        band,
                        weight,
                        pair,
                        units,
                    });
                }
            }
        }
    }
    None
}

/// One (weight, ranks) slice of the order.
struct Walk<'m> {
    model: &'m Model,
    weight: u32,
    hr: u32,
    ir: u32,
    available: u64,
    required: u64,
    hitting: &'m [u64],
    /// Only sets strictly after this one in the slice count.
    after: Option<u64>,
}

impl Walk<'_> {
    fn first(&self) -> Option<u64> {
        if self.weight == 0 {
            let eligible = self.model.empty_allowed
                && self.required == 0
                && self.hitting.is_empty()
                && self.after.is_none()
                && (self.hr, self.ir) == (0, 0);
            return eligible.then_some(0);
        }
        let usable = units_of(self.available)
            .filter(|index| {
                let unit = &self.model.units[*index];
                unit.hw_mask & bit(self.hr as usize) != 0
                    && unit.img_mask & bit(self.ir as usize) != 0
            })
            .fold(0u64, |mask, index| mask | bit(index));
        if self.required & !usable != 0 {
            return None;
        }
        self.search(0, 0, 0, usable, self.after.is_some())
    }

    fn search(&self, from: usize, set: u64, weight: u32, usable: u64, tight: bool) -> Option<u64> {
        let after = self.after.unwrap_or(0);
        if weight == self.weight {
            if self.required & !set != 0 || self.hitting.iter().any(|mask| mask & set == 0) {
                return None;
            }
            // Excluding everything from here: equal to `after` only if it has no
            // more units either.
            if tight && after & usable_from(from) == 0 {
                return None;
            }
            return self.ranks_match(set).then_some(set);
        }
        // Units still addable: usable, not yet decided, not excluded by a pair.
        let conflicts =
            units_of(set).fold(0u64, |mask, index| mask | self.model.pair_conflicts[index]);
        let open = usable & usable_from(from) & !conflicts;
        if weight + self.model.weight_of(open) < self.weight
            || self
                .hitting
                .iter()
                .any(|mask| mask & set == 0 && mask & open == 0)
        {
            return None;
        }
        let index = open.trailing_zeros() as usize;
        if index >= 64 {
            return None;
        }
        // Units skipped between `from` and `index` are excluded.
        let skipped = usable_from(from) & !usable_from(index);
        if self.required & skipped != 0 {
            return None;
        }
        let mut tight = tight;
        if tight && after & skipped != 0 {
            tight = false;
        }
        let unit = bit(index);
        let unit_weight = self.model.units[index].weight();
        let may_include = (!tight || after & unit != 0)
            && weight + unit_weight <= self.weight
            && self.model.can_add(set, index);
        if may_include {
            if let Some(found) =
                self.search(index + 1, set | unit, weight + unit_weight, usable, tight)
            {
                return Some(found);
            }
        }
        if self.required & unit != 0 {
            return None;
        }
        let tight_after_exclude = tight && after & unit == 0;
        self.search(index + 1, set, weight, usable, tight_after_exclude)
    }

    fn ranks_match(&self, set: u64) -> bool {
        let (hw, img) = self.model.type_masks(set);
        hw.trailing_zeros() == self.hr && img.trailing_zeros() == self.ir
    }
}

/// Units with index `from` or above.
fn usable_from(from: usize) -> u64 {
    if from >= 64 {
        0
    } else {
        u64::MAX << from
    }
}
