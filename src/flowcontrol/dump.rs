//! `/debug/api_priority_and_fairness/dump_{priority_levels,queues,requests}`: kube's
//! comma-separated tables, one row per priority level, per queue, per waiting request, their
//! columns padded as Go's `tabwriter` (minimum width 8, padding 1) pads them.

use super::FlowControl;

/// Pads `rows` (cells separated by `,\t`) into aligned columns; a row's last cell is not
/// padded.
fn tabulate(rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(r.len().saturating_sub(1)) {
            let w = c.chars().count() + 1 + 1; // the cell, its comma, the padding
            if widths.len() <= i {
                widths.resize(i + 1, 0);
            }
            widths[i] = widths[i].max(w.max(8));
        }
    }
    let mut out = String::new();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i + 1 < r.len() {
                let cell = format!("{c},");
                out.push_str(&cell);
                let pad = widths[i].saturating_sub(cell.chars().count());
                out.extend(std::iter::repeat_n(' ', pad));
            } else {
                out.push_str(c);
            }
        }
        out.push('\n');
    }
    out
}

fn row(cells: &[&dyn ToString]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

fn headers(h: &[&str]) -> Vec<String> {
    h.iter().map(|s| s.to_string()).collect()
}

impl FlowControl {
    pub fn dump_priority_levels(&self) -> String {
        let cfg = self.config.load();
        let mut rows = vec![headers(&[
            "PriorityLevelName",
            "ActiveQueues",
            "IsIdle",
            "IsQuiescing",
            "WaitingRequests",
            "ExecutingRequests",
            "DispatchedRequests",
            "RejectedRequests",
            "TimedoutRequests",
            "CancelledRequests",
        ])];
        for (name, l) in &cfg.levels {
            let d = l.set.dump(false);
            rows.push(row(&[
                name,
                &d.active_queues,
                &d.idle,
                &false,
                &d.waiting,
                &d.executing,
                &d.totals.dispatched,
                &d.totals.rejected,
                &d.totals.timed_out,
                &d.totals.cancelled,
            ]));
        }
        tabulate(&rows)
    }

    pub fn dump_queues(&self) -> String {
        let cfg = self.config.load();
        let mut rows = vec![headers(&[
            "PriorityLevelName",
            "Index",
            "PendingRequests",
            "ExecutingRequests",
            "SeatsInUse",
            "NextDispatchR",
            "InitialSeatsSum",
            "MaxSeatsSum",
            "TotalWorkSum",
        ])];
        for (name, l) in &cfg.levels {
            for (i, q) in l.set.dump(false).queues.iter().enumerate() {
                rows.push(row(&[
                    name,
                    &i,
                    &q.waiting,
                    &q.executing,
                    &q.seats_in_use,
                    &format!("{:.8}ss", q.next_r),
                    &q.waiting_seats,
                    &q.waiting_seats,
                    &format!("{:.8}ss", q.waiting_seats as f64),
                ]));
            }
        }
        tabulate(&rows)
    }

    pub fn dump_requests(&self, details: bool) -> String {
        let cfg = self.config.load();
        let mut head = headers(&[
            "PriorityLevelName",
            "FlowSchemaName",
            "QueueIndex",
            "RequestIndexInQueue",
            "FlowDistingsher",
            "ArriveTime",
            "InitialSeats",
            "FinalSeats",
            "AdditionalLatency",
        ]);
        if details {
            head.extend(headers(&[
                "UserName",
                "Verb",
                "APIPath",
                "Namespace",
                "Name",
                "APIVersion",
                "Resource",
                "SubResource",
            ]));
        }
        let mut rows = vec![head];
        for (name, l) in &cfg.levels {
            for w in l.set.dump(true).waiters {
                let mut r = row(&[
                    name,
                    &w.facts.schema,
                    &w.queue,
                    &w.index,
                    &w.facts.distinguisher,
                    &w.arrived
                        .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
                    &w.work.initial_seats,
                    &w.work.final_seats,
                    &format!("{:?}", w.work.additional_latency),
                ]);
                if details {
                    let f = &w.facts;
                    r.extend(row(&[
                        &f.user,
                        &f.verb,
                        &f.path,
                        &f.namespace,
                        &f.name,
                        &f.api_version,
                        &f.resource,
                        &f.subresource,
                    ]));
                }
                rows.push(r);
            }
        }
        tabulate(&rows)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up_as_tabwriter_lines_them_up() {
        let t = super::tabulate(&[
            vec!["PriorityLevelName".into(), "Idle".into(), "X".into()],
            vec!["exempt".into(), "true".into(), "1".into()],
        ]);
        assert_eq!(
            t,
            "PriorityLevelName, Idle,   X\nexempt,            true,   1\n"
        );
    }
}
