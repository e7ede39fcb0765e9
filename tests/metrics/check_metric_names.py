#!/usr/bin/env python3
"""check_metric_names.py SCRAPE RULES RULES_TEST DASHBOARD

That the alert rules, their promtool tests and the Grafana dashboard name
only what gpuctld exports. SCRAPE is a real /metrics page. Checked:
  - every metric in each rule's expr and each dashboard query (panel targets
    and template variables) is in the scrape (or is `up`, which Prometheus
    makes), and every label they match or group by is one the agent gives
    that metric, or a target label Prometheus adds (instance, job);
  - every input series of the rules test has a scraped metric's name and
    exactly its label names, plus instance (and job where the agent sets
    none);
  - every alert in RULES is tested firing (exp_labels) and not (exp_alerts: []).
Prints each problem and exits 1 if there is one. Standard library only (no
YAML module on a bare Debian): RULES keeps each expr on one line or in a
block scalar, which is all this reads.
"""
import json
import re
import sys

TARGET_LABELS = {"instance", "job"}
PROMETHEUS_MADE = {"up": set()}  # series Prometheus writes itself, with no agent labels
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "offset", "inf", "nan", "atan2"}
IDENT = r"[A-Za-z_:][A-Za-z0-9_:]*"


def parse_scrape(path):
    """{metric: set of label names} from Prometheus' text format."""
    families = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"(" + IDENT + r")(\{(.*)\})?\s", line)
        if not m:
            raise SystemExit(f"cannot read scrape line: {line!r}")
        labels = set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', m.group(3) or ""))
        families.setdefault(m.group(1), set()).update(labels)
    return families


class Problems(list):
    def add(self, where, what):
        self.append(f"{where}: {what}")


def known_labels(families, metric):
    if metric in PROMETHEUS_MADE:
        return PROMETHEUS_MADE[metric] | TARGET_LABELS
    return families.get(metric, set()) | TARGET_LABELS


def check_promql(expr, where, families, problems):
    """The metrics and label names an expression uses, checked against the scrape."""
    e = re.sub(r"\$\{[^}]*\}|\$" + IDENT, "X", expr)  # Grafana variables ($instance, ${x}, $__rate_interval)
    e = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|`[^`]*`', '""', e)  # string literals
    all_labels = set().union(*families.values()) | TARGET_LABELS
    # label_values(METRIC{...}, LABEL) in a Grafana template query.
    for m in re.finditer(r"label_values\(\s*(" + IDENT + r")?\s*(\{[^}]*\})?\s*,\s*(" + IDENT + r")\s*\)", e):
        metric, label = m.group(1), m.group(3)
        if metric and label not in known_labels(families, metric):
            problems.add(where, f"label_values: {metric} has no label {label}")
        e = e.replace(m.group(0), f"label_values({metric or ''}{m.group(2) or ''})")
    used = []
    # Selectors: NAME{matchers} or {matchers}.
    for m in re.finditer(r"(" + IDENT + r")?\s*\{([^}]*)\}", e):
        metric = m.group(1) if m.group(1) not in KEYWORDS else None
        for label in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(2)):
            if label == "__name__":
                continue
            if metric and label not in known_labels(families, metric):
                problems.add(where, f"{metric} has no label {label} (the agent gives it {sorted(families.get(metric, []))})")
            elif not metric and label not in all_labels:
                problems.add(where, f"no metric has a label {label}")
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)  # ranges and subqueries
    # Grouping: by (...), without (...), on (...), ignoring (...), group_left (...).
    for m in re.finditer(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", e):
        for label in re.findall(IDENT, m.group(2)):
            if label not in all_labels:
                problems.add(where, f"{m.group(1)} ({label}): no metric has a label {label}")
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\boffset\s+-?[0-9a-z]+", " ", e)
    e = re.sub(r"(?<![A-Za-z0-9_:.])[0-9][0-9A-Za-z_.+-]*", " ", e)  # numbers, durations
    for m in re.finditer(r"(" + IDENT + r")(\s*\()?", e):
        name, call = m.group(1), m.group(2)
        if call or name.lower() in KEYWORDS or name == "X":
            continue
        used.append(name)
        if name not in families and name not in PROMETHEUS_MADE:
            near = [f for f in families if f.startswith(name.rsplit("_", 1)[0])][:5]
            problems.add(where, f"{name} is not in the scrape" + (f" (near: {', '.join(near)})" if near else ""))
    if not used:
        problems.add(where, f"no metric found in {expr!r}")
    return used


def rule_exprs(path):
    """[(alert name, expr)] from a rules file, exprs on one line or in a block scalar."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out, alert, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if m := re.match(r"\s*-?\s*(alert|record):\s*(\S+)", line):
            alert = m.group(2)
        if m := re.match(r"(\s*)expr:\s*(.*)$", line):
            indent, value = len(m.group(1)), m.group(2).strip()
            if value[:1] in ("|", ">"):
                block = []
                while i + 1 < len(lines) and (not lines[i + 1].strip() or
                                              len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent):
                    i += 1
                    block.append(lines[i].strip())
                value = " ".join(block)
            elif value[:1] in ("'", '"') and value[-1:] == value[:1]:
                value = value[1:-1].replace("''", "'") if value[0] == "'" else json.loads(value)
            out.append((alert, value))
        i += 1
    return out


def check_rules_test(path, families, alerts, problems):
    text = open(path, encoding="utf-8").read()
    series = re.findall(r"series:\s*'([^']*)'|series:\s*\"((?:\\.|[^\"\\])*)\"", text)
    if not series:
        problems.add(path, "no input series")
    for single, double in series:
        s = single or double.replace('\\"', '"')
        m = re.fullmatch(r"(" + IDENT + r")(\{(.*)\})?", s.strip())
        if not m:
            problems.add(path, f"cannot read series {s!r}")
            continue
        metric, labels = m.group(1), set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"', m.group(3) or ""))
        if metric in PROMETHEUS_MADE:
            want = PROMETHEUS_MADE[metric] | TARGET_LABELS
        elif metric not in families:
            problems.add(path, f"series {s}: {metric} is not in the scrape")
            continue
        else:
            want = families[metric] | TARGET_LABELS  # honor_labels: the agent's job wins over the target's
        if labels != want:
            problems.add(path, f"series {s}: labels {sorted(labels)}, but a scrape stored gives {sorted(want)}")
    tested = {}
    for m in re.finditer(r"alertname:\s*(\S+)\s*\n\s*exp_alerts:\s*(\[\])?", text):
        tested.setdefault(m.group(1), set()).add("quiet" if m.group(2) else "firing")
    for alert in alerts:
        for how in ("firing", "quiet"):
            if how not in tested.get(alert, set()):
                problems.add(path, f"{alert} is never tested {'firing' if how == 'firing' else 'not firing'}")
    for alert in tested:
        if alert not in alerts:
            problems.add(path, f"tests {alert}, which the rules do not have")


def dashboard_queries(node, where="dashboard"):
    """[(where, query)]: every target expr and template query in a Grafana dashboard."""
    out = []
    if isinstance(node, dict):
        title = node.get("title") or node.get("name") or where
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                out.append((f"{title}", value))
            elif key in ("query", "definition") and isinstance(value, str) and "(" in value:
                out.append((f"variable {title}", value))
            else:
                out.extend(dashboard_queries(value, title))
    elif isinstance(node, list):
        for item in node:
            out.extend(dashboard_queries(item, where))
    return out


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    scrape, rules, rules_test, dashboard = sys.argv[1:]
    families = parse_scrape(scrape)
    problems = Problems()
    exprs = rule_exprs(rules)
    if not exprs:
        problems.add(rules, "no expr found")
    names = set()
    for alert, expr in exprs:
        names.update(check_promql(expr, f"{rules}: {alert}", families, problems))
    alerts = [a for a, _ in exprs]
    check_rules_test(rules_test, families, alerts, problems)
    queries = dashboard_queries(json.load(open(dashboard, encoding="utf-8")))
    if not queries:
        problems.add(dashboard, "no queries found")
    for where, query in queries:
        names.update(check_promql(query, f"{dashboard}: {where}", families, problems))
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(exprs)} rules, {len(queries)} dashboard queries: {len(names)} metrics, all in the scrape "
          f"({', '.join(sorted(names))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
