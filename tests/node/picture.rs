//! A picture of the Grafana dashboard as it looks on a running operator: each panel where its
//! gridPos puts it, with the series its queries returned from the node test's Prometheus drawn as
//! lines (Grafana's frontend cannot be built here). Written as SVG to the path in
//! RDS_OPERATOR_DASHBOARD_PICTURE (docs/dashboard.svg is one).

use std::fmt::Write;

use serde_json::Value;

/// One query's series: (legend, [(time, value)]).
pub type Series = Vec<(String, Vec<(f64, f64)>)>;

const COLUMN: f64 = 50.0;
const ROW: f64 = 30.0;
const COLOURS: [&str; 8] = [
    "#73bf69", "#f2cc0c", "#5794f2", "#ff780a", "#b877d9", "#f2495c", "#8ab8ff", "#96d98d",
];

fn escape(text: &str) -> String {
    (text.replace('&', "&amp;").replace('<', "&lt;")).replace('>', "&gt;")
}

/// The legend of a series: the target's legendFormat with the series' labels filled in.
pub fn legend(format: &str, metric: &Value) -> String {
    let mut out = format.to_owned();
    if let Some(labels) = metric.as_object() {
        for (k, v) in labels {
            out = out.replace(&format!("{{{{{k}}}}}"), v.as_str().unwrap_or_default());
        }
    }
    // A label the series does not have reads as empty, as in Grafana.
    while let Some(start) = out.find("{{") {
        let end = out[start..].find("}}").map_or(out.len(), |e| start + e + 2);
        out.replace_range(start..end, "");
    }
    out.trim().to_owned()
}

/// The SVG of the dashboard; `data` has each non-row panel's series, in panel order.
pub fn svg(dashboard: &Value, data: &[Series]) -> String {
    let panels = dashboard["panels"].as_array().cloned().unwrap_or_default();
    let bottom = (panels.iter())
        .map(|p| {
            p["gridPos"]["y"].as_f64().unwrap_or(0.0) + p["gridPos"]["h"].as_f64().unwrap_or(0.0)
        })
        .fold(0.0, f64::max);
    let (width, height) = (24.0 * COLUMN, bottom * ROW + 40.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"Inter, Helvetica, Arial, sans-serif\" font-size=\"12\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#111217\"/>\
         <text x=\"12\" y=\"26\" fill=\"#ccccdc\" font-size=\"18\">{}</text>",
        escape(dashboard["title"].as_str().unwrap_or_default())
    );
    let mut series = data.iter();
    for p in &panels {
        let g = &p["gridPos"];
        let num = |k: &str| g[k].as_f64().unwrap_or(0.0);
        let (x, y) = (num("x") * COLUMN, num("y") * ROW + 40.0);
        let (w, h) = (num("w") * COLUMN, num("h") * ROW);
        let title = escape(p["title"].as_str().unwrap_or_default());
        if p["type"] == "row" {
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" fill=\"#ccccdc\" font-size=\"14\">{title}</text>",
                x + 8.0,
                y + 20.0
            );
            continue;
        }
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"#181b1f\" \
             stroke=\"#2c3235\"/><text x=\"{}\" y=\"{}\" fill=\"#ccccdc\">{title}</text>",
            x + 4.0,
            y + 4.0,
            w - 8.0,
            h - 8.0,
            x + 12.0,
            y + 22.0
        );
        if let Some(lines) = series.next() {
            plot(&mut out, lines, (x + 12.0, y + 32.0, w - 24.0, h - 70.0));
        }
    }
    out.push_str("</svg>\n");
    out
}

/// The lines of one panel in the box (x, y, w, h), with its value range and legend.
fn plot(out: &mut String, lines: &Series, (x, y, w, h): (f64, f64, f64, f64)) {
    let points = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut t0, mut t1, mut v0, mut v1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (t, v) in points.filter(|(_, v)| v.is_finite()) {
        (t0, t1, v0, v1) = (t0.min(*t), t1.max(*t), v0.min(*v), v1.max(*v));
    }
    if t0 > t1 {
        return;
    }
    if (v1 - v0).abs() < 1e-9 {
        (v0, v1) = (v0 - 1.0, v1 + 1.0);
    }
    let sx = |t: f64| x + 40.0 + (t - t0) / (t1 - t0).max(1.0) * (w - 40.0);
    let sy = |v: f64| y + h - (v - v0) / (v1 - v0) * h;
    let _ = write!(
        out,
        "<text x=\"{x}\" y=\"{}\" fill=\"#8e8e8e\" font-size=\"10\">{}</text>\
         <text x=\"{x}\" y=\"{}\" fill=\"#8e8e8e\" font-size=\"10\">{}</text>",
        y + 8.0,
        short(v1),
        y + h,
        short(v0)
    );
    for (i, (name, p)) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = (p.iter())
            .filter(|(_, v)| v.is_finite())
            .map(|(t, v)| format!("{:.1},{:.1}", sx(*t), sy(*v)))
            .collect();
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
            path.join(" ")
        );
        if i < 4 {
            let (lx, ly) = (
                x + (i as f64 % 2.0) * w / 2.0,
                y + h + 18.0 + (i / 2) as f64 * 14.0,
            );
            let _ = write!(
                out,
                "<rect x=\"{lx}\" y=\"{}\" width=\"10\" height=\"3\" fill=\"{colour}\"/>\
                 <text x=\"{}\" y=\"{ly}\" fill=\"#ccccdc\" font-size=\"10\">{}</text>",
                ly - 4.0,
                lx + 14.0,
                escape(
                    &name
                        .chars()
                        .take((w / 2.0 / 6.5) as usize)
                        .collect::<String>()
                )
            );
        }
    }
}

fn short(v: f64) -> String {
    match v.abs() {
        a if a >= 1000.0 => format!("{:.0}", v),
        a if a >= 10.0 => format!("{:.1}", v),
        _ => format!("{:.3}", v),
    }
}
