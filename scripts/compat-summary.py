#!/usr/bin/env python3
"""Summarizes the reports of scripts/compat-study.sh.

    python3 scripts/compat-summary.py [--markdown] SAMPLE.tsv REPORTS_DIR

A server counts as checked when its report has a host matrix with at least one verdict that
is not "unknown" (it started and listed its tools); every other one is listed with the reason
it gave (its exit code, and the error or the failed step of mcpi's checklist).
"""
import collections
import json
import os
import re
import sys

VERDICTS = ["accepted", "rejected", "needs rewrite", "unknown"]
EXIT_NAMES = {
    "0": "ok", "1": "errors found", "3": "could not reach", "4": "protocol broken before the checks",
    "5": "timed out before the checks", "6": "authorization refused", "9": "the server's environment failed",
    "124": "killed by the study's timeout", "install-failed": "npm install failed", "no-bin": "package has no bin",
}


# host rules whose effect is not a rejection (docs/check.md, "Hosts"): a row lists them
# beside the rule that rejected it, and they are counted apart
NOT_REJECTING = {
    "vscode/name-charset": "warns", "vscode/name-length": "cuts", "vscode/description": "warns",
    "cursor/max-tools": "warns", "claude-code/name-64": "warns", "claude-code/result-size": "cuts",
}


def slug(pkg):
    return pkg.lstrip("@").replace("/", "__")


def read_sample(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            pkg, version, downloads, command, env, note = line.rstrip("\n").split("\t")
            rows.append({"pkg": pkg, "version": version, "downloads": int(downloads), "note": note})
    return rows


def one_line(s, n=160):
    s = re.sub(r"\s+", " ", s or "").strip()
    return s if len(s) <= n else s[: n - 1] + "…"


def why_not(report, stderr):
    """The reason a server that listed no tools gave, in one line."""
    if report:
        conn = report.get("connection") or {}
        for step in conn.get("steps") or []:
            if step.get("status") in ("fail", "failed", "FAIL"):
                return one_line("%s: %s" % (step.get("name", ""), step.get("detail", "")))
        env = report.get("environment") or conn.get("environment")
        if env:
            return one_line(json.dumps(env) if not isinstance(env, str) else env)
        if report.get("error"):
            return one_line(str(report["error"]))
        for f in report.get("findings") or []:
            if f.get("severity") == "error":
                return one_line("%s: %s" % (f.get("rule"), f.get("message")))
    lines = [l for l in (stderr or "").splitlines() if l.strip()]
    return one_line(lines[-1] if lines else "no output")


def tools_of(trace):
    """The tools a server listed, by name, from the tools/list answers in its trace."""
    tools = {}
    for line in (trace or "").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        msg = ev.get("msg")
        if msg is None and isinstance(ev.get("data"), str):
            try:
                msg = json.loads(ev["data"])
            except ValueError:
                msg = None
        result = (msg or {}).get("result") if isinstance(msg, dict) else None
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            for t in result["tools"]:
                if isinstance(t, dict) and isinstance(t.get("name"), str):
                    tools.setdefault(t["name"], t)
    return tools


def load(sample, reports):
    out = []
    for row in sample:
        base = os.path.join(reports, slug(row["pkg"]))
        def read(ext):
            try:
                with open(base + ext) as f:
                    return f.read()
            except OSError:
                return None
        code = (read(".exit") or "").strip() or None
        text = read(".json")
        report = None
        if text:
            try:
                report = json.loads(text)
            except ValueError:
                report = None
        hosts = (report or {}).get("hosts") or []
        checked = any(h.get("verdict") != "unknown" for h in hosts)
        out.append(dict(row, code=code, report=report, stderr=read(".stderr"), checked=checked, hosts=hosts,
                        tools=tools_of(read(".trace.jsonl"))))
    return out


def pct(k, n):
    return "%d (%.0f%%)" % (k, 100.0 * k / n) if n else "0"


def main():
    args = sys.argv[1:]
    markdown = "--markdown" in args
    args = [a for a in args if a != "--markdown"]
    if len(args) != 2:
        sys.exit(__doc__)
    sample = read_sample(args[0])
    servers = load(sample, args[1])
    ran = [s for s in servers if s["code"] is not None]
    checked = [s for s in ran if s["checked"]]
    failed = [s for s in ran if not s["checked"]]
    n = len(checked)

    host_ids, names, opt_in = [], {}, {}
    for s in checked:
        for h in s["hosts"]:
            if h["host"] not in names:
                host_ids.append(h["host"])
                names[h["host"]] = h["name"]
                opt_in[h["host"]] = bool(h.get("optIn"))
    counts = {h: collections.Counter() for h in host_ids}
    rules = {h: collections.Counter() for h in host_ids}
    for s in checked:
        for h in s["hosts"]:
            counts[h["host"]][h["verdict"]] += 1
            if h["verdict"] in ("rejected", "needs rewrite"):
                for r in h.get("rules") or []:
                    rules[h["host"]][r] += 1

    p = print
    p("sample: %d servers; run: %d; started and listed their tools: %d; did not: %d" % (len(servers), len(ran), n, len(failed)))
    p()
    if markdown:
        p("| host | accepted | rejected | needs rewrite | unknown | n |")
        p("|---|---|---|---|---|---|")
        for h in host_ids:
            c = counts[h]
            p("| %s%s | %s |" % (names[h], " (opt-in)" if opt_in[h] else "",
                                 " | ".join(pct(c[v], n) for v in VERDICTS) + " | %d" % n))
        p()
        p("| host | rule | servers |")
        p("|---|---|---|")
        for h in host_ids:
            for r, k in rules[h].most_common():
                p("| %s | `%s`%s | %d |" % (names[h], r, " (%s only)" % NOT_REJECTING[r] if r in NOT_REJECTING else "", k))
        p()
        p("| package | version | tools | " + " | ".join(host_ids) + " |")
        p("|---|---|---|" + "---|" * len(host_ids))
        short = {"accepted": "ok", "rejected": "**rejected**", "needs rewrite": "rewrite", "unknown": "?"}
        for s in checked:
            v = {h["host"]: h["verdict"] for h in s["hosts"]}
            p("| `%s` | %s | %d | %s |" % (s["pkg"], s["version"], len(s["tools"]), " | ".join(short.get(v.get(h), "?") for h in host_ids)))
        p()
        p("| package | exit | why |")
        p("|---|---|---|")
        for s in failed:
            p("| `%s` %s | %s (%s) | %s |" % (s["pkg"], s["version"], s["code"], EXIT_NAMES.get(s["code"], "?"),
                                            why_not(s["report"], s["stderr"]).replace("|", "\\|")))
        return
    p("%-45s %14s %14s %14s %14s" % ("host (n=%d)" % n, *VERDICTS))
    for h in host_ids:
        c = counts[h]
        p("%-45s %14s %14s %14s %14s" % (names[h] + (" *" if opt_in[h] else ""), *(pct(c[v], n) for v in VERDICTS)))
    p("(* a mode a client opts into)")
    p()
    for h in host_ids:
        if rules[h]:
            p("%s: %s" % (names[h], ", ".join("%s%s %d" % (r, " (%s only)" % NOT_REJECTING[r] if r in NOT_REJECTING else "", k)
                                              for r, k in rules[h].most_common())))
    p()
    p("did not start and list their tools without a network (%d):" % len(failed))
    for s in failed:
        p("  %-45s exit %-4s %s" % (s["pkg"], s["code"], why_not(s["report"], s["stderr"])))


if __name__ == "__main__":
    main()
