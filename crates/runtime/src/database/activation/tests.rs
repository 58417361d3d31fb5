//! Table tests of `decide`: the schedule's state and next boundary in a time zone (with daylight
//! saving time), the override annotation and its end, and what cannot be read.

use super::*;

/// Weekdays from 08:00 to 20:00 in Berlin (UTC+1 in December, UTC+2 from 29 March 2026).
fn weekdays() -> ActivationSchedule {
    ActivationSchedule {
        time_zone: Some("Europe/Berlin".into()),
        running: vec![RunningWindow {
            start: "0 8 * * 1-5".into(),
            stop: "0 20 * * 1-5".into(),
        }],
    }
}

fn over(activation: Activation, until: &str) -> OverrideStatus {
    OverrideStatus {
        activation,
        until: Some(until.into()),
    }
}

fn at(t: &str) -> Option<DateTime<Utc>> {
    Some(DateTime::parse_from_rfc3339(t).unwrap().to_utc())
}

struct Case {
    name: &'static str,
    activation: Option<Activation>,
    schedule: Option<ActivationSchedule>,
    annotation: Option<&'static str>,
    recorded: Option<OverrideStatus>,
    now: &'static str,
    want: Decision,
}

fn case(name: &'static str, now: &'static str, want: Decision) -> Case {
    Case {
        name,
        activation: None,
        schedule: Some(weekdays()),
        annotation: None,
        recorded: None,
        now,
        want,
    }
}

fn decision(wanted: Option<Activation>, next: Option<DateTime<Utc>>) -> Decision {
    Decision {
        wanted,
        next,
        ..Decision::default()
    }
}

use Activation::{Running, Stopped};

fn cases() -> Vec<Case> {
    let monday_night = "2026-12-07T20:30:00Z";
    let tuesday_open = "2026-12-08T07:00:00Z";
    vec![
        Case {
            activation: Some(Stopped),
            schedule: None,
            annotation: Some("Running"),
            ..case(
                "without a schedule the spec says, and the annotation is not read",
                monday_night,
                decision(Some(Stopped), None),
            )
        },
        Case {
            schedule: None,
            ..case(
                "left out: never stopped or started",
                monday_night,
                decision(None, None),
            )
        },
        case(
            "inside the window it runs, until the window closes (20:00 CET is 19:00 UTC)",
            "2026-12-07T09:00:00Z",
            decision(Some(Running), at("2026-12-07T19:00:00Z")),
        ),
        case(
            "after the window it is stopped, until the next one opens",
            monday_night,
            decision(Some(Stopped), at(tuesday_open)),
        ),
        case(
            "at the boundary itself the boundary holds",
            "2026-12-07T19:00:00Z",
            decision(Some(Stopped), at(tuesday_open)),
        ),
        case(
            "on a Saturday it is stopped until Monday",
            "2026-12-12T12:00:00Z",
            decision(Some(Stopped), at("2026-12-14T07:00:00Z")),
        ),
        case(
            "summer time: 08:00 in Berlin is 06:00 UTC after 29 March",
            "2026-03-30T06:30:00Z",
            decision(Some(Running), at("2026-03-30T18:00:00Z")),
        ),
        case(
            "summer time: not yet open at 05:30 UTC",
            "2026-03-30T05:30:00Z",
            decision(Some(Stopped), at("2026-03-30T06:00:00Z")),
        ),
        Case {
            schedule: Some(ActivationSchedule {
                time_zone: None,
                running: vec![RunningWindow {
                    start: "0 8 * * *".into(),
                    stop: "0 8 * * *".into(),
                }],
            }),
            ..case(
                "a start and a stop at the same instant: it runs (UTC by default)",
                "2026-12-07T09:00:00Z",
                decision(Some(Running), at("2026-12-08T08:00:00Z")),
            )
        },
        Case {
            annotation: Some("Running"),
            ..case(
                "an override seen for the first time lasts until the next boundary",
                monday_night,
                Decision {
                    recorded: Some(over(Running, tuesday_open)),
                    ..decision(Some(Running), at(tuesday_open))
                },
            )
        },
        Case {
            annotation: Some("Running"),
            recorded: Some(over(Running, "2026-12-07T21:00:00Z")),
            ..case(
                "a recorded override keeps its end, whatever the schedule's next boundary",
                monday_night,
                Decision {
                    recorded: Some(over(Running, "2026-12-07T21:00:00Z")),
                    ..decision(Some(Running), at("2026-12-07T21:00:00Z"))
                },
            )
        },
        Case {
            annotation: Some("Running"),
            recorded: Some(over(Running, "2026-12-07T19:00:00Z")),
            ..case(
                "an override past its end is over: the schedule says, and the annotation goes",
                monday_night,
                Decision {
                    recorded: Some(over(Running, "2026-12-07T19:00:00Z")),
                    clear_override: true,
                    ..decision(Some(Stopped), at(tuesday_open))
                },
            )
        },
        Case {
            annotation: Some("Stopped"),
            recorded: Some(over(Running, "2026-12-07T19:00:00Z")),
            ..case(
                "an override changed to the other value starts afresh",
                monday_night,
                Decision {
                    recorded: Some(over(Stopped, tuesday_open)),
                    ..decision(Some(Stopped), at(tuesday_open))
                },
            )
        },
        Case {
            annotation: Some("running"),
            ..case(
                "an annotation neither Running nor Stopped is reported, and the schedule says",
                monday_night,
                Decision {
                    invalid: Some(format!(
                        "annotation {OVERRIDE_ANNOTATION}: \"running\" is neither Running nor Stopped"
                    )),
                    ..decision(Some(Stopped), at(tuesday_open))
                },
            )
        },
        Case {
            schedule: Some(ActivationSchedule {
                time_zone: Some("Europe/Atlantis".into()),
                ..weekdays()
            }),
            ..case(
                "a time zone that is not known decides nothing",
                monday_night,
                Decision {
                    invalid: Some(
                        "activationSchedule.timeZone \"Europe/Atlantis\" is not an IANA time zone"
                            .into(),
                    ),
                    ..Decision::default()
                },
            )
        },
    ]
}

#[test]
fn decide_table() {
    for c in cases() {
        let spec = ActivationSpec {
            activation: c.activation,
            activation_schedule: c.schedule,
        };
        let got = decide(&Inputs {
            spec: &spec,
            annotation: c.annotation,
            recorded: c.recorded.as_ref(),
            now: c.now,
        });
        assert_eq!(got, c.want, "{}", c.name);
    }
}

#[test]
fn a_cron_that_cannot_be_read_decides_nothing() {
    let schedule = ActivationSchedule {
        time_zone: None,
        running: vec![RunningWindow {
            start: "0 8 * * 1-5".into(),
            stop: "at eight".into(),
        }],
    };
    let spec = ActivationSpec {
        activation: None,
        activation_schedule: Some(schedule),
    };
    let got = decide(&Inputs {
        spec: &spec,
        annotation: Some("Running"),
        recorded: None,
        now: "2026-12-07T09:00:00Z",
    });
    assert_eq!(got.wanted, None);
    let why = got.invalid.expect("reported");
    assert!(why.starts_with("activationSchedule.running[0].stop \"at eight\" is not a cron"));
}

#[test]
fn a_step_from_a_single_number_is_not_read_and_one_from_a_range_is() {
    let windows = |start: &str, stop: &str| ActivationSchedule {
        time_zone: None,
        running: vec![RunningWindow {
            start: start.into(),
            stop: stop.into(),
        }],
    };
    assert!(parse(&windows("0 0/4 * * * *", "0 2/4 * * * *")).is_err());
    let read = parse(&windows("0 */4 * * * *", "0 2-59/4 * * * *")).unwrap();
    let (state, next) = read.state(at("2026-12-06T08:13:00Z").unwrap());
    assert_eq!(
        (state, next),
        (Some(Activation::Running), at("2026-12-06T08:14:00Z")),
        "08:12 opened a window (12 is a multiple of 4); 08:14 closes it"
    );
}

#[test]
fn a_week_has_ten_boundaries() {
    let windows = parse(&weekdays()).unwrap();
    let from = at("2026-12-06T00:00:00Z").unwrap();
    let to = at("2026-12-13T00:00:00Z").unwrap();
    // Each next boundary from the one before, until past `to`.
    let mut boundaries = Vec::new();
    let mut at = from;
    while let (_, Some(next)) = windows.state(at)
        && next <= to
    {
        boundaries.push(next);
        at = next;
    }
    assert_eq!(boundaries.len(), 10);
}
