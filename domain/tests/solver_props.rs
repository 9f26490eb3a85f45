//! Property tests for the solver against an independent brute force.
//!
//! The brute force is a direct transcription of docs/coopr-format.md §4 with Corral's
//! changes: enumerate every valid service set, give each its preferred types, sort
//! layouts by the preference comparator on sorted name lists, and walk count vectors
//! in decreasing lexicographic order for the first that meets every quantity (every
//! service at least once). It shares no code with the solver, so agreement on random
//! small problems checks the solver's answers, not just their validity.

use std::collections::{BTreeMap, BTreeSet};

use domain::layout::Layout;
use domain::names::{HardwareTypeName, ImageTypeName, ServiceName, TemplateName};
use domain::solver::{
    solve, solve_with_existing, Existing, LayoutGroups, LayoutProblem, ServiceConstraint,
    SizeBounds, TypeCandidates,
};
use proptest::prelude::*;

const SERVICES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
const HARDWARE: [&str; 3] = ["h0", "h1", "h2"];
const IMAGES: [&str; 2] = ["i0", "i1"];

fn svc(name: &str) -> ServiceName {
    ServiceName::parse(name).expect("valid")
}

fn pick<T: Clone>(pool: &[T], mask: u32) -> Vec<T> {
    pool.iter()
        .enumerate()
        .filter(|(index, _)| mask & (1 << index) != 0)
        .map(|(_, item)| item.clone())
        .collect()
}

prop_compose! {
    fn constraint()(
        min in 0u32..3,
        max in prop::option::of(1u32..4),
        hw in 0u32..8,
        img in 0u32..4,
        whitelist in any::<bool>(),
    ) -> ServiceConstraint {
        ServiceConstraint {
            min,
            max,
            hardware: if whitelist { pick(&HARDWARE, hw).iter().map(|h| HardwareTypeName::parse(*h).expect("valid")).collect() } else { Vec::new() },
            images: if whitelist { pick(&IMAGES, img).iter().map(|i| ImageTypeName::parse(*i).expect("valid")).collect() } else { Vec::new() },
        }
    }
}

prop_compose! {
    fn problem(max_services: usize, max_size: u32)(
        count in 1..=max_services,
        size in 1..=max_size,
        groups in prop::collection::vec((any::<bool>(), 1u32..64), 0..4),
        constraints in prop::collection::vec(prop::option::of(constraint()), 6),
        hw_mask in 1u32..8,
        img_mask in 1u32..4,
        hw_pref in any::<bool>(),
        img_pref in any::<bool>(),
    ) -> LayoutProblem {
        let services: Vec<ServiceName> = SERVICES[..count].iter().map(|s| svc(s)).collect();
        let mut layout = LayoutGroups::default();
        for (must, mask) in groups {
            // Groups may name services outside the cluster, as real templates do.
            let group: Vec<ServiceName> = pick(&SERVICES, mask).iter().map(|s| svc(s)).collect();
            if group.len() < 2 { continue; }
            if must { layout.must_coexist.push(group) } else { layout.cant_coexist.push(group) }
        }
        let service_constraints: BTreeMap<ServiceName, ServiceConstraint> = SERVICES
            .iter()
            .zip(constraints)
            .filter_map(|(name, constraint)| constraint.map(|c| (svc(name), c)))
            .collect();
        let hardware: Vec<HardwareTypeName> = pick(&HARDWARE, hw_mask).iter().map(|h| HardwareTypeName::parse(*h).expect("valid")).collect();
        let images: Vec<ImageTypeName> = pick(&IMAGES, img_mask).iter().map(|i| ImageTypeName::parse(*i).expect("valid")).collect();
        LayoutProblem {
            template: TemplateName::parse("t").expect("valid"),
            size,
            size_bounds: SizeBounds::default(),
            services,
            hardware: TypeCandidates { preferred: hw_pref.then(|| hardware[0].clone()), candidates: hardware, unusable: Vec::new() },
            images: TypeCandidates { preferred: img_pref.then(|| images[0].clone()), candidates: images, unusable: Vec::new() },
            layout,
            service_constraints,
        }
    }
}

/// One brute-force node layout.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BruteLayout {
    band: u8,
    services: Vec<String>,
    hardware: usize,
    image: usize,
}

fn constrained(problem: &LayoutProblem, service: &ServiceName) -> bool {
    problem.service_constraints.contains_key(service)
        || problem
            .layout
            .must_coexist
            .iter()
            .chain(&problem.layout.cant_coexist)
            .any(|group| group.contains(service))
}

fn allows<T: AsRef<str>>(list: &[T], name: &str) -> bool {
    list.is_empty() || list.iter().any(|item| item.as_ref() == name)
}

fn owned<T: AsRef<str>>(names: &[T]) -> Vec<String> {
    names.iter().map(|name| name.as_ref().to_owned()).collect()
}

/// Every valid layout of one phase, in preference order.
fn brute_layouts(problem: &LayoutProblem, wide: bool) -> Vec<BruteLayout> {
    let cluster: Vec<&ServiceName> = problem.services.iter().collect();
    let (cons, free): (Vec<&ServiceName>, Vec<&ServiceName>) =
        cluster.iter().partition(|s| constrained(problem, s));
    let hw = owned(&problem.hardware.candidates);
    let im = owned(&problem.images.candidates);
    let hw: Vec<String> = if wide || problem.hardware.preferred.is_none() {
        hw
    } else {
        hw[..1].to_vec()
    };
    let im: Vec<String> = if wide || problem.images.preferred.is_none() {
        im
    } else {
        im[..1].to_vec()
    };
    let mut layouts = Vec::new();
    for mask in 0u32..(1 << cons.len()) {
        let set: BTreeSet<&ServiceName> = pick(&cons, mask).into_iter().collect();
        if set.is_empty() && free.is_empty() {
            continue;
        }
        let in_cluster = |s: &ServiceName| cluster.contains(&s);
        let cant_ok = problem
            .layout
            .cant_coexist
            .iter()
            .all(|g| !g.iter().all(|s| set.contains(s)));
        let must_ok = problem.layout.must_coexist.iter().all(|g| {
            let members: Vec<&ServiceName> = g.iter().filter(|s| in_cluster(s)).collect();
            members.iter().all(|s| set.contains(*s)) || members.iter().all(|s| !set.contains(*s))
        });
        if !cant_ok || !must_ok {
            continue;
        }
        let constraint_of = |s: &ServiceName| problem.service_constraints.get(s);
        let hw_ok = |h: &String| {
            set.iter()
                .all(|s| constraint_of(s).is_none_or(|c| allows(&c.hardware, h)))
        };
        let im_ok = |i: &String| {
            set.iter()
                .all(|s| constraint_of(s).is_none_or(|c| allows(&c.images, i)))
        };
        let (Some(hardware), Some(image)) = (hw.iter().position(hw_ok), im.iter().position(im_ok))
        else {
            continue;
        };
        let mut services: Vec<String> = set
            .iter()
            .chain(free.iter())
            .map(|s| s.as_str().to_owned())
            .collect();
        services.sort();
        let off_hw = problem.hardware.preferred.is_some() && hardware != 0;
        let off_im = problem.images.preferred.is_some() && image != 0;
        layouts.push(BruteLayout {
            band: u8::from(off_hw || off_im),
            services,
            hardware,
            image,
        });
    }
    layouts.sort_by(|x, y| {
        x.band
            .cmp(&y.band)
            .then(y.services.len().cmp(&x.services.len()))
            .then(x.hardware.cmp(&y.hardware))
            .then(x.image.cmp(&y.image))
            .then(x.services.cmp(&y.services))
    });
    layouts
}

fn bounds_of(problem: &LayoutProblem, service: &ServiceName) -> (u32, u32) {
    let c = problem.service_constraints.get(service);
    (
        c.map_or(0, |c| c.min).max(1),
        c.and_then(|c| c.max).unwrap_or(u32::MAX),
    )
}

/// Coopr's walk: count vectors in decreasing lexicographic order, first that fits.
fn walk(
    problem: &LayoutProblem,
    existing: &BTreeMap<String, u32>,
    layouts: &[BruteLayout],
    index: usize,
    left: u32,
    counts: &mut Vec<u32>,
) -> bool {
    // Nodes carrying `service`: those already placed and those the counts so far add.
    let placed = |service: &ServiceName, counts: &[u32]| -> u32 {
        let carries = |layout: &BruteLayout| layout.services.iter().any(|s| s == service.as_str());
        let added: u32 = layouts
            .iter()
            .zip(counts)
            .filter(|(layout, _)| carries(layout))
            .map(|(_, count)| *count)
            .sum();
        added + existing.get(service.as_str()).copied().unwrap_or(0)
    };
    if index == layouts.len() {
        if left != 0 {
            return false;
        }
        return problem.services.iter().all(|service| {
            let (min, max) = bounds_of(problem, service);
            let on = placed(service, counts);
            on >= min && on <= max
        });
    }
    for count in (0..=left).rev() {
        counts.push(count);
        let over = problem
            .services
            .iter()
            .any(|service| placed(service, counts) > bounds_of(problem, service).1);
        if !over && walk(problem, existing, layouts, index + 1, left - count, counts) {
            return true;
        }
        counts.pop();
    }
    false
}

/// The brute-force answer as (hardware, image, services) per node.
fn brute(problem: &LayoutProblem) -> Option<Vec<(String, String, Vec<String>)>> {
    brute_adding(problem, &BTreeMap::new(), problem.size)
}

/// The brute-force choice of `new_nodes` more nodes when `existing` counts of
/// each service are already placed.
fn brute_adding(
    problem: &LayoutProblem,
    existing: &BTreeMap<String, u32>,
    new_nodes: u32,
) -> Option<Vec<(String, String, Vec<String>)>> {
    let wides: Vec<bool> =
        if problem.hardware.preferred.is_some() || problem.images.preferred.is_some() {
            vec![false, true]
        } else {
            vec![true]
        };
    for wide in wides {
        let layouts = brute_layouts(problem, wide);
        let mut counts = Vec::new();
        if walk(problem, existing, &layouts, 0, new_nodes, &mut counts) {
            let mut nodes = Vec::new();
            for (layout, count) in layouts.iter().zip(&counts) {
                for _ in 0..*count {
                    nodes.push((
                        problem.hardware.candidates[layout.hardware]
                            .as_str()
                            .to_owned(),
                        problem.images.candidates[layout.image].as_str().to_owned(),
                        layout.services.clone(),
                    ));
                }
            }
            return Some(nodes);
        }
    }
    None
}

fn shape(layout: &Layout) -> Vec<(String, String, Vec<String>)> {
    layout
        .nodes
        .iter()
        .map(|node| {
            (
                node.hardwaretype.as_str().to_owned(),
                node.imagetype.as_str().to_owned(),
                node.services
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// Independent check of every constraint on a layout.
fn check(problem: &LayoutProblem, layout: &Layout) -> Result<(), String> {
    if layout.nodes.len() != problem.size as usize {
        return Err(format!(
            "{} nodes, asked {}",
            layout.nodes.len(),
            problem.size
        ));
    }
    for (offset, node) in layout.nodes.iter().enumerate() {
        if node.number != 1000 + offset as u32 {
            return Err(format!("node {offset} numbered {}", node.number));
        }
    }
    check_nodes(problem, layout)
}

/// Every layout and quantity constraint, whatever the size and numbering.
fn check_nodes(problem: &LayoutProblem, layout: &Layout) -> Result<(), String> {
    for node in &layout.nodes {
        if !problem.hardware.candidates.contains(&node.hardwaretype)
            || !problem.images.candidates.contains(&node.imagetype)
        {
            return Err(format!(
                "node {} uses a type that is not a candidate",
                node.number
            ));
        }
        for group in &problem.layout.cant_coexist {
            if group.iter().all(|s| node.services.contains(s)) {
                return Err(format!(
                    "node {} holds cantcoexist group {group:?}",
                    node.number
                ));
            }
        }
        for group in &problem.layout.must_coexist {
            let members: Vec<&ServiceName> = group
                .iter()
                .filter(|s| problem.services.contains(s))
                .collect();
            let held = members
                .iter()
                .filter(|s| node.services.contains(**s))
                .count();
            if held != 0 && held != members.len() {
                return Err(format!(
                    "node {} splits mustcoexist group {group:?}",
                    node.number
                ));
            }
        }
        for service in &node.services {
            if !problem.services.contains(service) {
                return Err(format!("node {} holds unrequested {service}", node.number));
            }
            if let Some(c) = problem.service_constraints.get(service) {
                if !c.hardware.is_empty() && !c.hardware.contains(&node.hardwaretype) {
                    return Err(format!("{service} on disallowed hardware"));
                }
                if !c.images.is_empty() && !c.images.contains(&node.imagetype) {
                    return Err(format!("{service} on disallowed image"));
                }
            }
        }
        for service in &problem.services {
            if !constrained(problem, service) && !node.services.contains(service) {
                return Err(format!(
                    "unconstrained {service} missing from node {}",
                    node.number
                ));
            }
        }
    }
    for service in &problem.services {
        let (min, max) = bounds_of(problem, service);
        let on = layout.nodes_with(service).count() as u32;
        if on < min || on > max {
            return Err(format!("{service} on {on} nodes, allowed [{min}, {max}]"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn agrees_with_brute_force(problem in problem(5, 5)) {
        let expected = brute(&problem);
        match (solve(&problem), expected) {
            (Ok(layout), Some(nodes)) => {
                prop_assert_eq!(shape(&layout), nodes);
                prop_assert_eq!(check(&problem, &layout), Ok(()));
            }
            (Err(_), None) => {}
            (Ok(layout), None) => prop_assert!(false, "brute force finds nothing, solver gave {:?}", shape(&layout)),
            (Err(err), Some(nodes)) => prop_assert!(false, "solver says {} but {:?} works", err, nodes),
        }
    }

    #[test]
    fn nearest_sizes_are_the_closest_that_work(problem in problem(4, 6)) {
        if let Err(err) = solve(&problem) {
            let works = |size: u32| solve(&LayoutProblem { size, ..problem.clone() }).is_ok();
            if let Some(above) = err.nearest.above {
                prop_assert!(above > problem.size && works(above), "{err}");
                for size in problem.size + 1..above { prop_assert!(!works(size), "{size} works, {err}"); }
            }
            if let Some(below) = err.nearest.below {
                prop_assert!(below < problem.size && works(below), "{err}");
                for size in below + 1..problem.size { prop_assert!(!works(size), "{size} works, {err}"); }
            }
            if err.nearest.above.is_none() {
                for size in problem.size + 1..problem.size + 8 { prop_assert!(!works(size), "{size} works, {err}"); }
            }
            prop_assert!(!err.reasons.is_empty());
            prop_assert!(!err.to_string().is_empty());
        }
    }

    #[test]
    fn larger_problems_are_valid_and_deterministic(problem in problem(6, 40)) {
        let first = solve(&problem);
        let second = solve(&problem);
        prop_assert_eq!(&first, &second);
        if let Ok(layout) = first {
            prop_assert_eq!(check(&problem, &layout), Ok(()));
        }
    }

    #[test]
    fn adding_nodes_keeps_existing_ones(problem in problem(5, 8), extra in 1u32..5) {
        if let Ok(layout) = solve(&problem) {
            let grown_problem = LayoutProblem { size: problem.size + extra, ..problem.clone() };
            let existing = Existing { nodes: layout.nodes.clone(), extend_nodes: false, grow_up_to: None };
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            for node in &layout.nodes {
                for service in &node.services {
                    *counts.entry(service.as_str().to_owned()).or_default() += 1;
                }
            }
            let expected = brute_adding(&grown_problem, &counts, extra);
            match (solve_with_existing(&grown_problem, &existing), expected) {
                (Ok(grown), Some(new_nodes)) => {
                    prop_assert_eq!(&grown.nodes[..layout.nodes.len()], &layout.nodes[..]);
                    prop_assert_eq!(check(&grown_problem, &grown), Ok(()));
                    let added = Layout { template: grown.template.clone(), nodes: grown.nodes[layout.nodes.len()..].to_vec() };
                    prop_assert_eq!(shape(&added), new_nodes);
                }
                (Err(err), None) => {
                    if let Some(above) = err.nearest.above {
                        let bigger = LayoutProblem { size: above, ..problem.clone() };
                        prop_assert!(solve_with_existing(&bigger, &existing).is_ok(), "{err}");
                    }
                }
                (Ok(grown), None) => prop_assert!(false, "brute force finds nothing, solver gave {:?}", shape(&grown)),
                (Err(err), Some(nodes)) => prop_assert!(false, "solver says {} but {:?} works", err, nodes),
            }
        }
    }

    #[test]
    fn adding_services_keeps_existing_nodes(problem in problem(5, 8), added in 1usize..3) {
        let keep = problem.services.len().saturating_sub(added).max(1);
        let smaller = LayoutProblem { services: problem.services[..keep].to_vec(), ..problem.clone() };
        if let Ok(layout) = solve(&smaller) {
            let existing = Existing { nodes: layout.nodes.clone(), extend_nodes: true, grow_up_to: Some(problem.size + 4) };
            if let Ok(result) = solve_with_existing(&problem, &existing) {
                for (old, new) in layout.nodes.iter().zip(&result.nodes) {
                    prop_assert_eq!(old.number, new.number);
                    prop_assert_eq!(&old.hardwaretype, &new.hardwaretype);
                    prop_assert!(old.services.is_subset(&new.services));
                }
                for service in &problem.services {
                    prop_assert!(result.nodes_with(service).count() >= 1, "{} not placed", service);
                }
                prop_assert_eq!(check_nodes(&problem, &result), Ok(()));
                let numbers: Vec<u32> = result.nodes.iter().map(|n| n.number).collect();
                let expected: Vec<u32> = (1000..1000 + numbers.len() as u32).collect();
                prop_assert_eq!(numbers, expected);
            }
        }
    }
}

#[test]
fn coopr_greedy_counterexample() {
    let mut constraints = BTreeMap::new();
    for name in ["a", "b"] {
        constraints.insert(
            svc(name),
            ServiceConstraint {
                min: 0,
                max: Some(1),
                ..Default::default()
            },
        );
    }
    let problem = LayoutProblem {
        template: TemplateName::parse("t").expect("valid"),
        size: 2,
        size_bounds: SizeBounds::default(),
        services: vec![svc("a"), svc("b")],
        hardware: TypeCandidates::any_of(vec![HardwareTypeName::parse("h0").expect("valid")]),
        images: TypeCandidates::any_of(vec![ImageTypeName::parse("i0").expect("valid")]),
        layout: LayoutGroups::default(),
        service_constraints: constraints,
    };
    let layout = solve(&problem).expect("{a},{b} works");
    assert_eq!(brute(&problem).expect("brute force agrees"), shape(&layout));
}

mod coopr_catalog {
    //! `LayoutProblem::from_catalog` on Coopr's published catalog.

    use std::fs;
    use std::path::Path;

    use domain::catalog::coopr::import_files;
    use domain::catalog::{Catalog, ClusterTemplate};
    use domain::names::{HardwareTypeName, ProviderName, TemplateName};
    use domain::solver::{solve, LayoutProblem, Reason, SolveRequest};

    use super::{check, shape};

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/coopr-catalog");

    fn catalog() -> Catalog {
        let mut files = Vec::new();
        for kind in fs::read_dir(ROOT).expect("catalog present") {
            let kind = kind.expect("readable").path();
            if !kind.is_dir() {
                continue;
            }
            for file in fs::read_dir(&kind).expect("readable") {
                let path = file.expect("readable").path();
                let relative = path.strip_prefix(Path::new(ROOT)).expect("under root");
                let text = fs::read_to_string(&path).expect("readable");
                files.push((relative.to_string_lossy().into_owned(), text));
            }
        }
        files.sort();
        import_files(&files).expect("Coopr's catalog imports")
    }

    fn template(catalog: &Catalog, name: &str) -> ClusterTemplate {
        catalog
            .resolved_template(&TemplateName::parse(name).expect("valid"))
            .expect("resolvable")
    }

    fn request(size: u32, services: &[&str]) -> SolveRequest {
        SolveRequest {
            services: Some(services.iter().map(|s| s.to_string()).collect()),
            ..SolveRequest::of_size(size)
        }
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hadoop_distributed_defaults() {
        let catalog = catalog();
        let hadoop = template(&catalog, "hadoop-distributed");
        let problem = LayoutProblem::from_catalog(&catalog, &hadoop, &SolveRequest::of_size(5))
            .expect("defaults pass the pre-checks");
        let layout = solve(&problem).expect("solvable");
        check(&problem, &layout).expect("valid");
        let master = strings(&[
            "base",
            "hadoop-hdfs-namenode",
            "hadoop-yarn-resourcemanager",
            "hbase-master",
            "zookeeper-server",
        ]);
        let worker = strings(&[
            "base",
            "hadoop-hdfs-datanode",
            "hadoop-yarn-nodemanager",
            "hbase-regionserver",
        ]);
        let large = ("standard-large".to_owned(), "ubuntu12".to_owned());
        let mut expected = vec![(large.0.clone(), large.1.clone(), master)];
        expected.extend((0..4).map(|_| (large.0.clone(), large.1.clone(), worker.clone())));
        assert_eq!(shape(&layout), expected);
    }

    #[test]
    fn every_template_solves_at_its_minimum_or_names_its_defect() {
        let catalog = catalog();
        for name in catalog.clustertemplates.keys() {
            let template = template(&catalog, name.as_str());
            let size = template.size().min_nodes();
            match LayoutProblem::from_catalog(&catalog, &template, &SolveRequest::of_size(size)) {
                Ok(problem) => {
                    let layout = solve(&problem).unwrap_or_else(|err| panic!("{name}: {err}"));
                    check(&problem, &layout).unwrap_or_else(|err| panic!("{name}: {err}"));
                }
                Err(err) => assert!(
                    err.reasons
                        .iter()
                        .all(|r| matches!(r, Reason::UnknownService { .. })),
                    "{name}: {err}"
                ),
            }
        }
    }

    #[test]
    fn missing_requirements_are_named() {
        let catalog = catalog();
        let hadoop = template(&catalog, "hadoop-distributed");
        let err =
            LayoutProblem::from_catalog(&catalog, &hadoop, &request(3, &["base", "hbase-master"]))
                .expect_err("hbase-master needs HDFS and ZooKeeper");
        let missing: Vec<String> = err
            .reasons
            .iter()
            .filter_map(|reason| match reason {
                Reason::MissingRequirement { service, requires }
                    if service.as_str() == "hbase-master" =>
                {
                    Some(requires.to_string())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            missing,
            strings(&[
                "hadoop-hdfs-datanode",
                "hadoop-hdfs-namenode",
                "zookeeper-server"
            ])
        );
    }

    #[test]
    fn conflicts_incompatible_and_unknown_names_are_reported() {
        let catalog = catalog();
        let mut open = template(&catalog, "base");
        open.compatibility.services.clear();
        let err = LayoutProblem::from_catalog(
            &catalog,
            &open,
            &request(1, &["cdap-sandbox-docker", "cdap", "nope"]),
        )
        .expect_err("cdap conflicts with the sandbox");
        assert!(
            err.reasons
                .iter()
                .any(|r| matches!(r, Reason::Conflict { .. })),
            "{err}"
        );
        assert!(
            err.reasons
                .iter()
                .any(|r| matches!(r, Reason::UnknownService { service } if service == "nope")),
            "{err}"
        );

        let hadoop = template(&catalog, "hadoop-distributed");
        let err = LayoutProblem::from_catalog(&catalog, &hadoop, &request(3, &["base", "nginx"]))
            .expect_err("nginx is not compatible");
        assert!(
            matches!(&err.reasons[0], Reason::IncompatibleService { service } if service.as_str() == "nginx"),
            "{err}"
        );
    }

    #[test]
    fn aliases_resolve_to_a_providing_service() {
        let catalog = catalog();
        let lamp = template(&catalog, "lamp");
        let problem =
            LayoutProblem::from_catalog(&catalog, &lamp, &request(1, &["base", "web-server"]))
                .expect("web-server is apache-httpd's alias");
        assert!(problem
            .services
            .iter()
            .any(|s| s.as_str() == "apache-httpd"));
    }

    #[test]
    fn provider_and_requested_types_are_checked() {
        let catalog = catalog();
        let hadoop = template(&catalog, "hadoop-distributed");
        let nowhere = SolveRequest {
            provider: Some(ProviderName::parse("nowhere").expect("valid")),
            ..SolveRequest::of_size(3)
        };
        let err =
            LayoutProblem::from_catalog(&catalog, &hadoop, &nowhere).expect_err("unknown provider");
        assert!(
            matches!(err.reasons[0], Reason::UnknownProvider { .. }),
            "{err}"
        );

        let small = SolveRequest {
            hardwaretype: Some(HardwareTypeName::parse("standard-small").expect("valid")),
            ..SolveRequest::of_size(3)
        };
        let err = LayoutProblem::from_catalog(&catalog, &hadoop, &small)
            .expect_err("small is not compatible");
        assert!(
            err.to_string()
                .contains("standard-small is not in the template's compatibility list"),
            "{err}"
        );
    }

    #[test]
    fn default_hardware_yields_to_a_whitelist() {
        let catalog = catalog();
        let mut hadoop = template(&catalog, "hadoop-distributed");
        let constraints = hadoop.constraints.as_mut().expect("has constraints");
        let master = constraints
            .services
            .get_mut("hbase-master")
            .expect("hbase-master constrained");
        master.hardwaretypes = vec![HardwareTypeName::parse("standard-xlarge").expect("valid")];
        let problem = LayoutProblem::from_catalog(&catalog, &hadoop, &SolveRequest::of_size(4))
            .expect("pre-checks pass");
        let layout = solve(&problem).expect("xlarge is compatible");
        check(&problem, &layout).expect("valid");
        let types: Vec<&str> = layout
            .nodes
            .iter()
            .map(|n| n.hardwaretype.as_str())
            .collect();
        // Workers keep the default; the master group moves to the type its whitelist names.
        assert_eq!(
            types,
            vec![
                "standard-large",
                "standard-large",
                "standard-large",
                "standard-xlarge"
            ]
        );
    }

    #[test]
    fn missing_flavors_and_images_are_named() {
        let catalog = catalog();
        let hadoop = template(&catalog, "hadoop-distributed");
        let aws = ProviderName::parse("aws-us-east-1").expect("valid");
        let big_on_aws = SolveRequest {
            provider: Some(aws.clone()),
            hardwaretype: Some(HardwareTypeName::parse("standard-2xlarge").expect("valid")),
            ..SolveRequest::of_size(3)
        };
        let err = LayoutProblem::from_catalog(&catalog, &hadoop, &big_on_aws)
            .expect_err("no 2xlarge on AWS");
        assert!(
            err.to_string()
                .contains("standard-2xlarge has no mapping for provider aws-us-east-1"),
            "{err}"
        );

        // The master's whitelist names only a type AWS lacks.
        let mut pinned = hadoop.clone();
        let constraints = pinned.constraints.as_mut().expect("has constraints");
        constraints
            .services
            .get_mut("hbase-master")
            .expect("constrained")
            .hardwaretypes = vec![HardwareTypeName::parse("standard-2xlarge").expect("valid")];
        let on_aws = SolveRequest {
            provider: Some(aws),
            ..SolveRequest::of_size(3)
        };
        let problem =
            LayoutProblem::from_catalog(&catalog, &pinned, &on_aws).expect("pre-checks pass");
        let err = solve(&problem).expect_err("hbase-master has nowhere to go");
        assert!(
            matches!(&err.reasons[0], Reason::HardwareWhitelist { service, detail, .. }
                if service.as_str() == "hbase-master" && detail.contains("no mapping for provider aws-us-east-1")),
            "{err}"
        );
    }
}
