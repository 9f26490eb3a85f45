//! Unit tests for the solver on hand-made problems.

use std::collections::BTreeMap;

use super::*;
use crate::names::{ServiceName, TemplateName};

fn svc(name: &str) -> ServiceName {
    ServiceName::parse(name).expect("valid name")
}

fn names(list: &[&str]) -> Vec<ServiceName> {
    list.iter().map(|name| svc(name)).collect()
}

fn hw(name: &str) -> HardwareTypeName {
    HardwareTypeName::parse(name).expect("valid name")
}

fn img(name: &str) -> ImageTypeName {
    ImageTypeName::parse(name).expect("valid name")
}

fn problem(services: &[&str], size: u32) -> LayoutProblem {
    LayoutProblem {
        template: TemplateName::parse("t").expect("valid name"),
        size,
        size_bounds: SizeBounds::default(),
        services: names(services),
        hardware: TypeCandidates::any_of(vec![hw("small")]),
        images: TypeCandidates::any_of(vec![img("debian")]),
        layout: LayoutGroups::default(),
        service_constraints: BTreeMap::new(),
    }
}

fn quantity(problem: &mut LayoutProblem, service: &str, min: u32, max: Option<u32>) {
    let entry = problem.service_constraints.entry(svc(service)).or_default();
    entry.min = min;
    entry.max = max;
}

fn node_services(layout: &Layout) -> Vec<Vec<String>> {
    layout
        .nodes
        .iter()
        .map(|node| {
            node.services
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect()
        })
        .collect()
}

fn hadoop(size: u32) -> LayoutProblem {
    let mut p = problem(
        &[
            "base",
            "namenode",
            "datanode",
            "resourcemanager",
            "nodemanager",
            "zookeeper",
            "hbase-master",
            "regionserver",
        ],
        size,
    );
    p.size_bounds.min = 3;
    p.layout.must_coexist = vec![
        names(&["datanode", "nodemanager", "regionserver"]),
        names(&[
            "namenode",
            "resourcemanager",
            "historyserver",
            "hbase-master",
            "zookeeper",
        ]),
    ];
    p.layout.cant_coexist = vec![
        names(&["resourcemanager", "nodemanager"]),
        names(&["namenode", "datanode"]),
        names(&["hbase-master", "regionserver"]),
    ];
    for master in ["namenode", "resourcemanager", "zookeeper", "hbase-master"] {
        quantity(&mut p, master, 1, Some(1));
    }
    quantity(&mut p, "datanode", 2, None);
    p
}

#[test]
fn hadoop_gets_one_master_and_workers() {
    let layout = solve(&hadoop(5)).expect("solvable");
    let nodes = node_services(&layout);
    assert_eq!(nodes.len(), 5);
    assert_eq!(
        nodes[0],
        vec![
            "base",
            "hbase-master",
            "namenode",
            "resourcemanager",
            "zookeeper"
        ]
    );
    for worker in &nodes[1..] {
        assert_eq!(
            worker,
            &vec!["base", "datanode", "nodemanager", "regionserver"]
        );
    }
    let numbers: Vec<u32> = layout.nodes.iter().map(|node| node.number).collect();
    assert_eq!(numbers, vec![1000, 1001, 1002, 1003, 1004]);
}

#[test]
fn hadoop_below_minimum_names_size_and_nearest() {
    let err = solve(&hadoop(2)).expect_err("too small");
    assert!(
        err.reasons
            .iter()
            .any(|r| matches!(r, Reason::SizeOutOfBounds { .. })),
        "{err}"
    );
    assert_eq!(err.nearest.above, Some(3));
    assert_eq!(err.nearest.below, None);
}

#[test]
fn coopr_greedy_counterexample_succeeds() {
    let mut p = problem(&["a", "b"], 2);
    quantity(&mut p, "a", 0, Some(1));
    quantity(&mut p, "b", 0, Some(1));
    let layout = solve(&p).expect("feasible: {a} and {b}");
    assert_eq!(node_services(&layout), vec![vec!["a"], vec!["b"]]);
}

#[test]
fn greedy_start_takes_the_big_layout_when_it_fits() {
    let mut p = problem(&["a", "b"], 1);
    quantity(&mut p, "a", 0, Some(1));
    quantity(&mut p, "b", 0, Some(1));
    let layout = solve(&p).expect("feasible");
    assert_eq!(node_services(&layout), vec![vec!["a", "b"]]);
}

#[test]
fn min_zero_and_group_only_services_are_still_placed() {
    let mut p = problem(&["a", "b", "c"], 2);
    quantity(&mut p, "a", 0, None);
    p.layout.cant_coexist = vec![names(&["a", "b"]), names(&["a", "c"])];
    let layout = solve(&p).expect("feasible");
    let services = layout.services();
    for name in ["a", "b", "c"] {
        assert!(
            services.contains(&svc(name)),
            "{name} missing from {layout:?}"
        );
    }
}

#[test]
fn unconstrained_services_run_everywhere() {
    let mut p = problem(&["base", "db"], 3);
    quantity(&mut p, "db", 1, Some(1));
    let layout = solve(&p).expect("feasible");
    assert_eq!(
        node_services(&layout),
        vec![vec!["base", "db"], vec!["base"], vec!["base"]]
    );
}

#[test]
fn default_hardware_is_a_preference() {
    let mut p = problem(&["base", "gpu-job"], 3);
    p.hardware = TypeCandidates {
        candidates: vec![hw("small"), hw("gpu")],
        preferred: Some(hw("small")),
        unusable: Vec::new(),
    };
    let entry = p.service_constraints.entry(svc("gpu-job")).or_default();
    entry.max = Some(1);
    entry.hardware = vec![hw("gpu")];
    let layout = solve(&p).expect("gpu is a compatible type");
    let types: Vec<&str> = layout
        .nodes
        .iter()
        .map(|n| n.hardwaretype.as_str())
        .collect();
    assert_eq!(types, vec!["small", "small", "gpu"]);
    assert_eq!(node_services(&layout)[2], vec!["base", "gpu-job"]);
}

#[test]
fn requested_hardware_is_binding() {
    let mut p = problem(&["base", "gpu-job"], 2);
    p.hardware = TypeCandidates {
        candidates: vec![hw("small")],
        preferred: None,
        unusable: vec![UnusableType {
            name: hw("gpu"),
            why: Unusable::NotCompatible,
        }],
    };
    p.service_constraints
        .entry(svc("gpu-job"))
        .or_default()
        .hardware = vec![hw("gpu")];
    let err = solve(&p).expect_err("gpu excluded by the request");
    assert!(
        matches!(&err.reasons[0], Reason::HardwareWhitelist { service, .. } if service.as_str() == "gpu-job"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("gpu is not in the template's compatibility list"),
        "{err}"
    );
}

#[test]
fn preferred_types_alone_give_coopr_answer() {
    // Both types fit every service: the preferred one is used throughout.
    let mut p = problem(&["a", "b"], 2);
    p.hardware = TypeCandidates {
        candidates: vec![hw("medium"), hw("large")],
        preferred: Some(hw("medium")),
        unusable: Vec::new(),
    };
    quantity(&mut p, "a", 1, Some(1));
    let layout = solve(&p).expect("feasible");
    assert!(layout
        .nodes
        .iter()
        .all(|n| n.hardwaretype.as_str() == "medium"));
}

#[test]
fn quantity_above_size_is_named() {
    let mut p = problem(&["a", "b"], 3);
    quantity(&mut p, "a", 5, None);
    let err = solve(&p).expect_err("a needs 5");
    assert_eq!(
        err.reasons,
        vec![Reason::QuantityTooHigh {
            service: svc("a"),
            min: 5,
            size: 3
        }]
    );
    assert_eq!(
        err.nearest,
        NearestSizes {
            below: None,
            above: Some(5)
        }
    );
}

#[test]
fn separated_services_name_the_group() {
    let mut p = problem(&["a", "b", "c"], 2);
    p.layout.cant_coexist = vec![names(&["a", "b"]), names(&["b", "c"]), names(&["a", "c"])];
    let err = solve(&p).expect_err("three pairwise apart services need three nodes");
    assert_eq!(
        err.reasons,
        vec![Reason::Separation {
            services: names(&["a", "b", "c"]),
            needed: 3,
            size: 2
        }]
    );
    assert_eq!(err.nearest.above, Some(3));
}

#[test]
fn too_many_nodes_for_bounded_services() {
    let mut p = problem(&["a", "b"], 4);
    quantity(&mut p, "a", 1, Some(1));
    quantity(&mut p, "b", 1, Some(2));
    let err = solve(&p).expect_err("at most 3 nodes");
    assert!(
        matches!(err.reasons[0], Reason::TooManyNodes { at_most: 3, .. }),
        "{err}"
    );
    assert_eq!(
        err.nearest,
        NearestSizes {
            below: Some(3),
            above: None
        }
    );
}

#[test]
fn cant_inside_must_is_a_contradiction() {
    let mut p = problem(&["a", "b"], 2);
    p.layout.must_coexist = vec![names(&["a", "b"])];
    p.layout.cant_coexist = vec![names(&["a", "b"])];
    let err = solve(&p).expect_err("contradiction");
    assert!(
        matches!(err.reasons[0], Reason::GroupContradiction { .. }),
        "{err}"
    );
}

#[test]
fn must_coexist_chains() {
    let mut p = problem(&["a", "b", "c", "d"], 2);
    p.layout.must_coexist = vec![names(&["a", "b"]), names(&["b", "c"])];
    p.layout.cant_coexist = vec![names(&["a", "d"])];
    let layout = solve(&p).expect("feasible");
    assert_eq!(node_services(&layout), vec![vec!["a", "b", "c"], vec!["d"]]);
}

#[test]
fn add_nodes_numbers_after_highest() {
    let base = solve(&hadoop(3)).expect("solvable");
    let mut p = hadoop(5);
    p.size = 5;
    let existing = Existing {
        nodes: base.nodes.clone(),
        extend_nodes: false,
        grow_up_to: None,
    };
    let grown = solve_with_existing(&p, &existing).expect("solvable");
    assert_eq!(grown.nodes[..3], base.nodes[..]);
    let numbers: Vec<u32> = grown.nodes.iter().map(|n| n.number).collect();
    assert_eq!(numbers, vec![1000, 1001, 1002, 1003, 1004]);
    for worker in &node_services(&grown)[3..] {
        assert_eq!(
            worker,
            &vec!["base", "datanode", "nodemanager", "regionserver"]
        );
    }
}

#[test]
fn add_services_places_on_existing_nodes() {
    let base = solve(&hadoop(4)).expect("solvable");
    let mut p = hadoop(4);
    p.services.push(svc("historyserver"));
    p.services.push(svc("metrics"));
    let existing = Existing {
        nodes: base.nodes.clone(),
        extend_nodes: true,
        grow_up_to: None,
    };
    let layout = solve_with_existing(&p, &existing).expect("solvable");
    assert_eq!(layout.nodes.len(), 4);
    // historyserver must coexist with the master; metrics is unconstrained.
    assert!(layout.nodes[0].services.contains(&svc("historyserver")));
    assert!(layout
        .nodes
        .iter()
        .all(|n| n.services.contains(&svc("metrics"))));
    for (old, new) in base.nodes.iter().zip(&layout.nodes) {
        assert_eq!(old.number, new.number);
        assert_eq!(old.hardwaretype, new.hardwaretype);
        assert!(old.services.is_subset(&new.services));
    }
}

#[test]
fn add_services_grows_only_when_allowed() {
    let mut p = problem(&["a"], 2);
    quantity(&mut p, "a", 1, None);
    let base = solve(&p).expect("solvable");
    p.services.push(svc("loner"));
    p.layout.cant_coexist = vec![names(&["a", "loner"])];
    let fixed = Existing {
        nodes: base.nodes.clone(),
        extend_nodes: true,
        grow_up_to: None,
    };
    let err = solve_with_existing(&p, &fixed).expect_err("no room for loner");
    assert!(
        matches!(err.reasons[0], Reason::CannotPlaceOnExisting { .. }),
        "{err}"
    );
    let growing = Existing {
        grow_up_to: Some(5),
        ..fixed
    };
    let layout = solve_with_existing(&p, &growing).expect("one more node");
    assert_eq!(layout.nodes.len(), 3);
    assert_eq!(layout.nodes[2].number, 1002);
    assert_eq!(node_services(&layout)[2], vec!["loner"]);
}

#[test]
fn existing_over_maximum_is_named() {
    let mut p = problem(&["a"], 3);
    let base = solve(&p).expect("solvable");
    quantity(&mut p, "a", 1, Some(2));
    let existing = Existing {
        nodes: base.nodes,
        extend_nodes: false,
        grow_up_to: None,
    };
    let err = solve_with_existing(&p, &existing).expect_err("three a's");
    assert!(
        matches!(
            err.reasons[0],
            Reason::ExistingOverMax {
                count: 3,
                max: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn contract_json_has_size_and_nodes() {
    let layout = solve(&hadoop(3)).expect("solvable");
    let json = to_contract_json(&layout);
    assert_eq!(json["template"], "t");
    assert_eq!(json["size"], 3);
    assert_eq!(json["nodes"][0]["hardwaretype"], "small");
    assert_eq!(json["nodes"][1]["services"][0], "base");
    let parsed: ContractLayout = serde_json::from_value(json).expect("round trip");
    assert_eq!(Layout::from(parsed), layout);
}

#[test]
fn large_cluster_is_solved() {
    let layout = solve(&hadoop(1000)).expect("solvable");
    assert_eq!(layout.nodes.len(), 1000);
    assert_eq!(layout.nodes[999].number, 1999);
}

mod covering {
    //! The covering number against a dynamic programme over need vectors.

    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::super::model::{bit, Model, Phase};
    use super::super::pack::Packer;
    use super::*;

    /// Fewest valid unit sets covering `need`, by trying every valid set.
    fn brute_min(model: &Model, need: &[u32], memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
        if need.iter().all(|n| *n == 0) {
            return 0;
        }
        if let Some(known) = memo.get(need) {
            return *known;
        }
        let units = need.len();
        let mut best = u32::MAX;
        for set in 1u64..(1 << units) {
            let members: Vec<usize> = (0..units).filter(|i| set & bit(*i) != 0).collect();
            if members.iter().any(|i| need[*i] == 0) {
                continue;
            }
            let mut built = 0u64;
            let valid = members.iter().all(|i| {
                let ok = model.can_add(built, *i);
                built |= bit(*i);
                ok
            });
            if !valid {
                continue;
            }
            let child: Vec<u32> = need
                .iter()
                .enumerate()
                .map(|(i, n)| if set & bit(i) != 0 { n - 1 } else { *n })
                .collect();
            best = best.min(1 + brute_min(model, &child, memo));
        }
        memo.insert(need.to_vec(), best);
        best
    }

    prop_compose! {
        fn dense_problem()(
            mins in prop::collection::vec(0u32..4, 6),
            pairs in prop::collection::vec((0usize..6, 0usize..6), 0..12),
            triples in prop::collection::vec((0usize..6, 0usize..6, 0usize..6), 0..3),
            whitelists in prop::collection::vec(prop::option::of(1u32..4), 6),
        ) -> LayoutProblem {
            let all = ["a", "b", "c", "d", "e", "f"];
            let mut p = problem(&all, 1);
            p.hardware = TypeCandidates::any_of(vec![hw("h0"), hw("h1")]);
            for (index, min) in mins.iter().enumerate() {
                let entry = p.service_constraints.entry(svc(all[index])).or_default();
                entry.min = *min;
                if let Some(mask) = whitelists[index] {
                    entry.hardware = ["h0", "h1"]
                        .iter()
                        .enumerate()
                        .filter(|(bit, _)| mask & (1 << bit) != 0)
                        .map(|(_, name)| hw(name))
                        .collect();
                }
            }
            for (a, b) in pairs {
                if a != b {
                    p.layout.cant_coexist.push(names(&[all[a], all[b]]));
                }
            }
            for (a, b, c) in triples {
                if a != b && b != c && a != c {
                    p.layout.cant_coexist.push(names(&[all[a], all[b], all[c]]));
                }
            }
            p
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(250))]

        #[test]
        fn min_nodes_is_exact(problem in dense_problem()) {
            let Ok(model) = Model::build(&problem, Phase::All) else {
                return Ok(());
            };
            let need: Vec<u32> = model.units.iter().map(|unit| unit.lo).collect();
            let expected = brute_min(&model, &need, &mut HashMap::new());
            let mut packer = Packer::new(&model);
            prop_assert_eq!(packer.min_nodes(&need).expect("small search"), expected);
            let headroom = vec![u32::MAX; need.len()];
            for nodes in expected.saturating_sub(2)..expected + 2 {
                let mut fresh = Packer::new(&model);
                let fits = fresh.feasible(&need, &headroom, nodes).expect("small search");
                prop_assert_eq!(fits, nodes >= expected, "nodes {}", nodes);
            }
        }
    }
}

#[test]
fn quantity_reason_names_the_member_that_sets_the_minimum() {
    let mut p = problem(&["a", "b"], 2);
    p.layout.must_coexist = vec![names(&["a", "b"])];
    quantity(&mut p, "b", 4, None);
    let err = solve(&p).expect_err("b needs 4 nodes");
    assert_eq!(
        err.reasons,
        vec![Reason::QuantityTooHigh {
            service: svc("b"),
            min: 4,
            size: 2
        }]
    );
}

#[test]
fn huge_requests_are_refused_not_built() {
    let err = solve(&problem(&["a"], MAX_NODES + 1)).expect_err("too large");
    assert!(matches!(err.reasons[0], Reason::TooLarge { .. }), "{err}");
}

fn odd_sizes(size: u32) -> LayoutProblem {
    let mut p = problem(&["kv"], size);
    p.size_bounds = SizeBounds {
        min: 1,
        max: Some(7),
        step: 2,
    };
    p
}

#[test]
fn a_size_step_allows_only_its_sizes() {
    for size in [1, 3, 5, 7] {
        let layout = solve(&odd_sizes(size)).expect("an odd size");
        assert_eq!(layout.nodes.len(), size as usize);
    }
    let err = solve(&odd_sizes(4)).expect_err("even");
    assert_eq!(
        err.reasons,
        vec![Reason::SizeOffStep {
            size: 4,
            min: 1,
            step: 2
        }]
    );
    assert_eq!((err.nearest.below, err.nearest.above), (Some(3), Some(5)));
    assert_eq!(
        err.to_string(),
        "no layout satisfies the request: size 4 is not allowed: the template takes 1, 3, 5, ... \
         nodes (every 2) (nearest sizes that work: 3 and 5)"
    );
    let err = solve(&odd_sizes(9)).expect_err("too big");
    assert_eq!(err.nearest.below, Some(7));
}

#[test]
fn adding_nodes_keeps_to_the_size_step() {
    let three = solve(&odd_sizes(3)).expect("three");
    let existing = Existing {
        nodes: three.nodes.clone(),
        extend_nodes: false,
        grow_up_to: None,
    };
    let err = solve_with_existing(&odd_sizes(4), &existing).expect_err("four is even");
    assert!(
        matches!(err.reasons[..], [Reason::SizeOffStep { size: 4, .. }]),
        "{err}"
    );
    assert_eq!(err.nearest.above, Some(5));
    let five = solve_with_existing(&odd_sizes(5), &existing).expect("five");
    assert_eq!(five.nodes.len(), 5);
}

#[test]
fn size_bounds_step_up_and_down() {
    let bounds = SizeBounds {
        min: 1,
        max: Some(7),
        step: 2,
    };
    assert_eq!(bounds.step_up(4), Some(5));
    assert_eq!(bounds.step_up(8), None);
    assert_eq!(bounds.step_down(6), Some(5));
    assert_eq!(bounds.step_down(100), Some(7));
    assert_eq!(bounds.step_down(0), None);
    assert!(bounds.contains(3) && !bounds.contains(2) && !bounds.contains(9));
}

mod shrink {
    //! Scale-in: which nodes go, and why none can.

    use std::collections::BTreeSet;

    use super::*;

    fn nodes(list: &[(u32, &[&str])]) -> Vec<NodeLayout> {
        list.iter()
            .map(|(number, services)| NodeLayout {
                number: *number,
                hardwaretype: hw("small"),
                imagetype: img("debian"),
                services: services.iter().map(|name| svc(name)).collect(),
            })
            .collect()
    }

    fn left(layout: &Layout) -> Vec<u32> {
        layout.nodes.iter().map(|node| node.number).collect()
    }

    /// The demo's web stack at five nodes: one lb, one kv, memcached beside an app,
    /// and two more apps.
    fn web_stack() -> (LayoutProblem, Vec<NodeLayout>) {
        let mut p = problem(&["lb", "kv", "app", "memcached"], 5);
        p.size_bounds.min = 3;
        quantity(&mut p, "lb", 1, Some(1));
        quantity(&mut p, "kv", 1, Some(1));
        quantity(&mut p, "app", 1, None);
        quantity(&mut p, "memcached", 1, Some(1));
        let nodes = nodes(&[
            (1000, &["lb"]),
            (1001, &["kv"]),
            (1002, &["app", "memcached"]),
            (1003, &["app"]),
            (1004, &["app"]),
        ]);
        (p, nodes)
    }

    #[test]
    fn the_nodes_of_services_with_most_instances_go_newest_first() {
        let (p, nodes) = web_stack();
        let one = solve_removal(&p, &nodes, &NodesToRemove::Count(1)).unwrap();
        assert_eq!(left(&one), [1000, 1001, 1002, 1003]);
        let two = solve_removal(&p, &nodes, &NodesToRemove::Count(2)).unwrap();
        assert_eq!(left(&two), [1000, 1001, 1002]);
        // What stays is untouched.
        assert_eq!(two.nodes[..], nodes[..3]);
    }

    #[test]
    fn removals_below_a_minimum_or_the_size_bounds_are_refused_with_what_works() {
        let (p, nodes) = web_stack();
        let too_many = solve_removal(&p, &nodes, &NodesToRemove::Count(3)).unwrap_err();
        assert_eq!(
            too_many.reasons,
            [Reason::SizeOutOfBounds {
                size: 2,
                min: 3,
                max: None
            }]
        );
        assert_eq!(too_many.nearest.above, Some(3));
        let everything = solve_removal(&p, &nodes, &NodesToRemove::Count(5)).unwrap_err();
        assert_eq!(
            everything.to_string(),
            "no layout satisfies the request: removing all 5 nodes leaves no cluster: delete \
             it instead (nearest size that works: 3)"
        );
        let mut unbounded = p.clone();
        unbounded.size_bounds.min = 1;
        let below = solve_removal(&unbounded, &nodes, &NodesToRemove::Count(3)).unwrap_err();
        assert_eq!(
            below.reasons,
            [Reason::CannotRemoveNodes {
                count: 3,
                most: 2,
                services: names(&["kv", "lb", "memcached"]),
            }]
        );
        assert_eq!(below.nearest.above, Some(3));
    }

    #[test]
    fn named_nodes_go_when_every_minimum_holds() {
        let (p, nodes) = web_stack();
        let named = |numbers: &[u32]| NodesToRemove::Named(numbers.iter().copied().collect());
        let chosen = solve_removal(&p, &nodes, &named(&[1003])).unwrap();
        assert_eq!(left(&chosen), [1000, 1001, 1002, 1004]);
        let refused = solve_removal(&p, &nodes, &named(&[1001, 1004])).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "no layout satisfies the request: service kv would be left on 0 node(s), fewer \
             than its minimum 1"
        );
    }

    #[test]
    fn the_search_backtracks_when_the_first_choice_strands_a_service() {
        // The newest node carries both services; taking it first leaves a and b one
        // node each, so only 1002 can be the one that stays.
        let p = problem(&["a", "b"], 3);
        let nodes = nodes(&[(1000, &["a"]), (1001, &["b"]), (1002, &["a", "b"])]);
        let layout = solve_removal(&p, &nodes, &NodesToRemove::Count(2)).unwrap();
        assert_eq!(left(&layout), [1002]);
        assert!(layout.nodes[0].services == BTreeSet::from([svc("a"), svc("b")]));
    }

    #[test]
    fn a_stepped_template_shrinks_only_onto_its_steps() {
        let mut p = problem(&["kv"], 5);
        p.size_bounds.step = 2;
        let nodes = nodes(&[
            (1000, &["kv"]),
            (1001, &["kv"]),
            (1002, &["kv"]),
            (1003, &["kv"]),
            (1004, &["kv"]),
        ]);
        let off = solve_removal(&p, &nodes, &NodesToRemove::Count(1)).unwrap_err();
        assert!(matches!(
            off.reasons[0],
            Reason::SizeOffStep { size: 4, .. }
        ));
        assert_eq!((off.nearest.below, off.nearest.above), (Some(3), None));
        let two = solve_removal(&p, &nodes, &NodesToRemove::Count(2)).unwrap();
        assert_eq!(left(&two), [1000, 1001, 1002]);
    }
}
