"""The goals table of scripts/bench*.sh: print it, exit 1 if one is missed."""
import sys


def report(goals, title="### Goals"):
    """goals: (what, this run's figure as text, the limit as text, met)."""
    print()
    print(title)
    print()
    print("| goal | this run | limit | met |")
    print("|---|---:|---:|---|")
    for what, got, limit, ok in goals:
        print(f"| {what} | {got} | {limit} | {'yes' if ok else '**no**'} |")
    sys.exit(0 if all(g[3] for g in goals) else 1)
