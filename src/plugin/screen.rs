//! The status screen drawn as a tree (`kubectl rds status`), pure: a [`View`] in, the text out;
//! with colour on a terminal.

use std::fmt::Write;

use rds_operator::database::health::HealthStatus;

use crate::status::View;

/// A line of the tree, and the lines under it.
struct Node {
    label: String,
    children: Vec<Node>,
}

impl Node {
    fn leaf(label: String) -> Node {
        Node {
            label,
            children: Vec::new(),
        }
    }

    /// A branch of one leaf per line (None: no lines).
    fn list(label: &str, lines: &[String]) -> Option<Node> {
        Node::branch(label, lines.iter().cloned().map(Node::leaf).collect())
    }

    fn branch(label: &str, children: Vec<Node>) -> Option<Node> {
        (!children.is_empty()).then(|| Node {
            label: label.into(),
            children,
        })
    }
}

/// The screen as a tree; with `color`, states in colour (green: well, yellow: under way, red:
/// failed or False).
pub fn render(view: &View, color: bool) -> String {
    let paint = |text: &str| paint(text, color);
    let state = view.state.as_deref().unwrap_or("unknown");
    let title = format!(
        "{} {}/{} ({}) {}",
        view.kind,
        view.namespace,
        view.name,
        view.identifier.as_deref().unwrap_or("no identifier yet"),
        paint(state)
    );
    let mut top = topology(view, &paint);
    top.extend(operations(view, &paint));
    let mut out = format!("{title}\n");
    draw(&mut out, &top, "");
    out
}

/// A state in colour, with `color` (green: well, yellow: under way, red: failed or False).
fn paint(text: &str, color: bool) -> String {
    let code = match text {
        "True" | "available" | "AVAILABLE" | "OK" | "SWITCHOVER_COMPLETED" => "32",
        "False" | "failed" | "ALARM" | "SWITCHOVER_FAILED" | "INVALID_CONFIGURATION" => "31",
        _ => "33",
    };
    match color {
        true => format!("\x1b[{code}m{text}\x1b[0m"),
        false => text.to_owned(),
    }
}

/// What the database is and where it stands: conditions, endpoints, its cluster or members, its
/// source or replicas.
fn topology(view: &View, paint: &dyn Fn(&str) -> String) -> Vec<Node> {
    let mut top: Vec<Node> = Vec::new();
    top.extend(Node::branch(
        "conditions",
        (view.conditions.iter())
            .map(|c| {
                let line = format!(
                    "{} {} {}: {}",
                    c.type_,
                    paint(&c.status),
                    c.reason,
                    c.message
                );
                Node::leaf(line)
            })
            .collect(),
    ));
    if let Some(e) = &view.endpoint {
        let version = view.engine_version.as_deref().unwrap_or("?");
        top.push(Node::leaf(format!("endpoint {e} (engine {version})")));
    }
    if let Some(e) = &view.reader_endpoint {
        top.push(Node::leaf(format!("reader endpoint {e}")));
    }
    if let Some(a) = &view.activation {
        top.push(Node::leaf(format!("activation {a}")));
    }
    if let Some(c) = &view.cluster {
        top.push(Node::leaf(format!("member of DBCluster {c}")));
    }
    top.extend(Node::branch(
        "members",
        (view.members.iter())
            .map(|m| {
                let object = m
                    .object
                    .as_deref()
                    .map_or(String::new(), |o| format!(" (DBInstance {o})"));
                Node::leaf(format!("{} {}{object}", m.role, m.identifier))
            })
            .collect(),
    ));
    if let Some(s) = &view.source {
        top.push(Node::leaf(format!("replica of {s}")));
    }
    top.extend(Node::list("replicas", &view.replicas));
    top
}

/// What is under way or kept of it: blue/green, the global database, snapshots, proxies,
/// maintenance, drift, health, alarms, advisories, the Secret's keys.
fn operations(view: &View, paint: &dyn Fn(&str) -> String) -> Vec<Node> {
    let mut top: Vec<Node> = Vec::new();
    if let Some(b) = &view.blue_green {
        let mut lines = vec![Node::leaf(format!("status {}", paint(&b.status)))];
        lines.extend(b.green.as_ref().map(|g| Node::leaf(format!("green {g}"))));
        lines.extend(b.old.as_ref().map(|o| Node::leaf(format!("old {o}"))));
        top.extend(Node::branch(&format!("blue/green {}", b.deployment), lines));
    }
    if let Some(g) = &view.global {
        let members = (g.members.iter())
            .map(|(c, region, role)| Node::leaf(format!("{role} {c} in {region}")))
            .collect();
        let label = format!(
            "global database {} (writer {})",
            g.name,
            g.writer.as_deref().unwrap_or("?")
        );
        top.extend(Node::branch(&label, members));
    }
    top.extend(Node::branch(
        "snapshots",
        (view.snapshots.iter())
            .map(|s| {
                let state = s.state.as_deref().unwrap_or("pending");
                let when = s
                    .created
                    .as_deref()
                    .map_or(String::new(), |c| format!(" {c}"));
                let every = s
                    .schedule
                    .as_deref()
                    .map_or(String::new(), |c| format!(" schedule \"{c}\""));
                Node::leaf(format!("{} {}{when}{every}", s.name, paint(state)))
            })
            .collect(),
    ));
    top.extend(Node::list("proxies", &view.proxies));
    top.extend(Node::list("pending maintenance", &view.maintenance));
    if let Some(d) = &view.last_drift {
        top.push(Node::leaf(format!("last drift {d}")));
    }
    top.extend(view.health.as_ref().map(|h| Node::leaf(health(h))));
    top.extend(Node::branch(
        "alarms",
        (view.alarms.iter())
            .map(|a| {
                let (metric, state) = a.split_once(' ').unwrap_or((a, ""));
                Node::leaf(format!("{metric} {}", paint(state)))
            })
            .collect(),
    ));
    top.extend(Node::list("advisories", &view.advisories));
    top.extend(Node::list("users", &view.users));
    if let Some(s) = &view.secret {
        top.push(Node::leaf(format!(
            "Secret {}: {}",
            s.name,
            s.keys.join(", ")
        )));
    }
    top
}

/// The health figures on one line.
fn health(h: &HealthStatus) -> String {
    let figure = |name: &str, v: Option<i64>, unit: &str| v.map(|v| format!("{name} {v}{unit}"));
    let figures: Vec<String> = [
        figure("lag", h.replica_lag_seconds, " s"),
        figure("free", h.free_storage_mib, " MiB"),
        figure("headroom", h.storage_headroom_percent, " %"),
        figure("cpu", h.cpu_percent, " %"),
        figure("connections", h.connections, ""),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!("health {}", figures.join(", "))
}

fn draw(out: &mut String, nodes: &[Node], prefix: &str) {
    for (i, node) in nodes.iter().enumerate() {
        let last = i + 1 == nodes.len();
        let (branch, next) = match last {
            true => ("└─ ", "   "),
            false => ("├─ ", "│  "),
        };
        let _ = writeln!(out, "{prefix}{branch}{}", node.label);
        draw(out, &node.children, &format!("{prefix}{next}"));
    }
}
