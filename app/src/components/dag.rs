//! A task DAG drawn as an SVG picture: one column per depth (a task sits one column
//! right of the latest task it waits for), one box per task coloured by its state,
//! and an arrow for every dependency. States come from a signal, so a live job's
//! picture recolours itself as tasks finish.

use std::collections::HashMap;

use api_types::TaskState;
use domain::plan::TaskDag;
use leptos::prelude::*;

// Whole pixels: the picture's numbers are written as integers, which is much cheaper
// than formatting floats to a precision (a large job's picture has thousands of them).
const BOX_W: usize = 168;
const BOX_H: usize = 30;
const GAP_X: usize = 44;
const GAP_Y: usize = 10;
const PAD: usize = 8;

/// Where each task's box goes.
struct Placement {
    /// (column, row) per task, by task id.
    cells: Vec<(usize, usize)>,
    columns: usize,
    rows: usize,
}

fn place(dag: &TaskDag) -> Placement {
    let tasks = dag.tasks();
    let mut depth = vec![0usize; tasks.len()];
    // Tasks only wait for earlier tasks, so one pass in id order settles depths.
    for task in tasks {
        let own = task
            .after
            .iter()
            .filter_map(|before| depth.get(before.index()).map(|depth| depth + 1))
            .max()
            .unwrap_or(0);
        if let Some(slot) = depth.get_mut(task.id.index()) {
            *slot = own;
        }
    }
    let mut filled: HashMap<usize, usize> = HashMap::new();
    let cells: Vec<(usize, usize)> = depth
        .iter()
        .map(|&column| {
            let row = filled.entry(column).or_insert(0);
            let cell = (column, *row);
            *row += 1;
            cell
        })
        .collect();
    Placement {
        columns: depth.iter().max().map_or(0, |max| max + 1),
        rows: filled.values().copied().max().unwrap_or(0),
        cells,
    }
}

fn origin((column, row): (usize, usize)) -> (usize, usize) {
    (PAD + column * (BOX_W + GAP_X), PAD + row * (BOX_H + GAP_Y))
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The picture. `states` maps task numbers to their state; tasks without an entry
/// are drawn as planned.
#[component]
pub fn DagPicture(
    dag: TaskDag,
    #[prop(into)] states: Signal<HashMap<u32, TaskState>>,
    /// Node numbers to hostnames, for the labels.
    #[prop(optional)]
    hostnames: HashMap<u32, String>,
) -> impl IntoView {
    let placement = place(&dag);
    // An empty plan is a picture of no size.
    let width = (PAD * 2 + placement.columns * (BOX_W + GAP_X)).saturating_sub(GAP_X);
    let height = (PAD * 2 + placement.rows * (BOX_H + GAP_Y)).saturating_sub(GAP_Y);
    let tasks = dag.tasks().to_vec();
    let cells = &placement.cells;
    let edges = tasks
        .iter()
        .flat_map(|task| {
            let to = cells[task.id.index()];
            task.after
                .iter()
                .filter_map(move |before| cells.get(before.index()).map(|from| (*from, to)))
        })
        .map(|(from, to)| {
            let (x1, y1) = origin(from);
            let (x2, y2) = origin(to);
            let (x1, y1, x2, y2) = (x1 + BOX_W, y1 + BOX_H / 2, x2, y2 + BOX_H / 2);
            let bend = GAP_X / 2;
            let path = format!(
                "M{x1},{y1} C{},{y1} {},{y2} {x2},{y2}",
                x1 + bend,
                x2.saturating_sub(bend)
            );
            view! { <path class="dag-edge" d=path marker-end="url(#dag-arrow)"/> }
        })
        .collect_view();
    let boxes = tasks
        .into_iter()
        .map(|task| {
            let (x, y) = origin(placement.cells[task.id.index()]);
            let number = task.id.0;
            let node = hostnames
                .get(&task.node)
                .cloned()
                .unwrap_or_else(|| format!("node {}", task.node));
            let what = match &task.service {
                Some(service) => format!("{} {service}", task.action),
                None => task.action.to_string(),
            };
            let title = format!("#{number} {what} on {node}");
            let label = short(&what, 22);
            let sub = short(&node, 24);
            let state = move || {
                states.with(|states| {
                    states
                        .get(&number)
                        .map_or("planned", |state| state.as_str())
                })
            };
            view! {
                <g class=move || format!("dag-task dag-{}", state()) data-task=number>
                    <title>{title} " — " {state}</title>
                    <rect x=x y=y width=BOX_W height=BOX_H rx="5"/>
                    <text x=x + 8 y=y + 13 class="dag-label">{label}</text>
                    <text x=x + 8 y=y + 25 class="dag-sub">{sub}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <div class="dag-scroll">
            <svg class="dag" role="img" aria-label="Task graph"
                width=width height=height
                viewBox=format!("0 0 {width} {height}")>
                <defs>
                    <marker id="dag-arrow" viewBox="0 0 10 10" refX="10" refY="5"
                        markerWidth="6" markerHeight="6" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z"/>
                    </marker>
                </defs>
                {edges}
                {boxes}
            </svg>
        </div>
    }
}
