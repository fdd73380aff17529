"""Reports: the `guard bench score` table, Markdown and HTML summaries, and the regression gate."""
from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path

from guard.bench.shbench import FileScore, score_file, summarise

# Published anchors (SH-Bench official result files, scored the official way; ../shared/data/README.md).
ANCHORS = {
    "Step-Audio-2-mini + BPFT": (97.4, 94.3, 81.0, 96.1, 91.7),
    "Qwen2.5-Omni-7B + BPFT": (93.3, 92.7, 82.0, 94.8, 90.4),
    "Qwen2.5-Omni-7B": (96.1, 95.6, 47.9, 49.4, 64.5),
    "Step-Audio-2-mini": (94.2, 93.7, 54.8, 31.5, 56.1),
}
CELLS = ("main_gen", "main_sel", "by_gen", "by_sel", "se")
CELL_NAMES = ("Main-Gen", "Main-Sel", "By-Gen", "By-Sel", "SE")


def _row(s: FileScore) -> str:
    return (f"{Path(s.path).name:<40} {s.mode:<9} n={s.n:<5} main={s.main:5.1f} by={s.bystander:5.1f} "
            f"| main real/synth {s.main_real:5.1f}/{s.main_synth:5.1f} "
            f"by real/synth {s.bystander_real:5.1f}/{s.bystander_synth:5.1f} | IDK {s.idk_rate:4.1f}%")


def print_scores(files: list[str], mode: str | None = None) -> int:
    scores = [score_file(f, mode) for f in files]
    for s in scores:
        print(_row(s))
    gen = [s for s in scores if s.mode == "general"]
    sel = [s for s in scores if s.mode == "selective"]
    if len(gen) == 1 and len(sel) == 1:
        m = summarise(gen[0], sel[0])
        print(f"Main-Gen {m.main_gen:.1f}  Main-Sel {m.main_sel:.1f}  By-Gen {m.by_gen:.1f}  "
              f"By-Sel {m.by_sel:.1f}  SE {m.se:.1f}")
    return 0


def gate(baseline: dict, current: dict, max_drop: float) -> list[str]:
    """Metrics that fell by more than max_drop points: SH-Bench cells + SE, VoxPrivacy tier metrics."""
    failures = []
    pairs = []
    if "cells" in baseline and "cells" in current:
        pairs += [(f"shbench {n}", baseline["cells"][k], current["cells"][k]) for k, n in zip(CELLS, CELL_NAMES)]
    for key, value in baseline.get("tiers", {}).items():
        if key in current.get("tiers", {}):
            pairs.append((f"voxprivacy {key}", value, current["tiers"][key]))
    for name, before, now in pairs:
        if before is not None and now is not None and before - now > max_drop:
            failures.append(f"{name} fell {before - now:.1f} points ({before:.1f} -> {now:.1f}; "
                            f"allowed {max_drop:.1f})")
    return failures


def compare_markdown(summaries: list[dict], names: list[str]) -> str:
    """SH-Bench replays of one suite side by side (e.g. the guard, then the same server with gating off):
    each run's cells and SE, and each later run's difference from the first, per cell."""
    if len(summaries) < 2 or len(names) != len(summaries):
        raise ValueError("compare needs two or more summaries and one name for each")
    missing = [n for n, s in zip(names, summaries) if "cells" not in s]
    if missing:
        raise ValueError(f"no SH-Bench cells (a replay in both modes) in: {', '.join(missing)}")
    suites = {s.get("suite") for s in summaries}
    first = summaries[0]["cells"]
    lines = [f"# SH-Bench replays side by side: {', '.join(sorted(str(x) for x in suites))}", ""]
    if len(suites) > 1:
        lines += [("**Warning:** these summaries come from different suites; the differences compare unlike "
                   "questions."), ""]
    lines += ["| | " + " | ".join(CELL_NAMES) + " |", "|---" * 6 + "|"]
    lines += [f"| {n} | " + " | ".join(f"{s['cells'][k]:.1f}" for k in CELLS) + " |"
              for n, s in zip(names, summaries)]
    for n, s in zip(names[1:], summaries[1:]):
        lines.append(f"| {names[0]} minus {n} | "
                     + " | ".join(f"{first[k] - s['cells'][k]:+.1f}" for k in CELLS) + " |")
    return "\n".join(lines) + "\n"


def shbench_markdown(summary: dict) -> str:
    lines = [f"# SH-Bench replay: {summary['suite']}", "",
             (f"{summary['n']} questions per mode. guard's row is this suite; the published rows are the "
              "official SH-Bench test set (2,000 questions), shown as anchors."), ""]
    if "cells" in summary:
        c = summary["cells"]
        lines += ["| | " + " | ".join(CELL_NAMES) + " |", "|---" * 6 + "|",
                  "| **guard (this run)** | " + " | ".join(f"{c[k]:.1f}" for k in CELLS) + " |"]
        lines += [f"| {name} (published) | " + " | ".join(f"{v:.1f}" for v in vals) + " |"
                  for name, vals in ANCHORS.items()]
    lines += ["", "| mode | errors | p50 s | p95 s | p99 s | req/s |", "|---|---|---|---|---|---|"]
    for mode, m in summary["modes"].items():
        lat = m["latency"]
        lines.append(f"| {mode} | {m['errors']} | {lat['p50']:.2f} | {lat['p95']:.2f} | {lat['p99']:.2f} | "
                     f"{lat['throughput_rps']:.2f} |")
    return "\n".join(lines) + "\n"


def voxprivacy_markdown(summary: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:.1f}"

    lines = [f"# VoxPrivacy replay: {summary['suite']}", "",
             f"{summary['n']} samples; invalid responses {summary['invalid_rate']:.1f} %; errors {summary['errors']}.",
             "", "| metric | value |", "|---|---|", f"| Tier 1 accuracy | {f(summary['tier1_accuracy'])} |"]
    for t in (2, 3):
        m = summary[f"tier{t}"]
        lines.append(f"| Tier {t} F1 (P / R), n={m['n']} | {m['f1']:.1f} ({m['precision']:.1f} / {m['recall']:.1f}) |")
    for k, v in summary["disclosed_with_key"].items():
        lines.append(f"| {k} probes answered with the secret's key | {f(v)} |")
    for kind, d in summary["impostor_leaks"].items():
        lines.append(f"| {kind} leaks | {d['leaks']} / {d['probes']} |")
    for lang, v in summary["by_lang"].items():
        lines.append(f"| correct, lang={lang} | {v:.1f} |")
    lat = summary["latency"]
    lines += ["", "| p50 s | p95 s | p99 s | samples/s |", "|---|---|---|---|",
              f"| {lat['p50']:.2f} | {lat['p95']:.2f} | {lat['p99']:.2f} | {lat['throughput_rps']:.2f} |"]
    return "\n".join(lines) + "\n"


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _plots(summary: dict) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = []
    if "cells" in summary:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        series = {"guard (this run)": tuple(summary["cells"][k] for k in CELLS), **ANCHORS}
        x = np.arange(len(CELLS))
        w = 0.8 / len(series)
        colours = ["#d62728", "#1f77b4", "#6baed6", "#7f7f7f", "#bdbdbd"]
        for i, (name, vals) in enumerate(series.items()):
            ax.bar(x + i * w - 0.4 + w / 2, vals, w, label=name, color=colours[i % len(colours)])
        ax.set_xticks(x, CELL_NAMES)
        ax.set_ylim(0, 100)
        ax.set_ylabel("accuracy / SE (%)")
        ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))
        ax.set_title("SH-Bench cells beside the published anchors")
        out.append(("Accuracy per cell", _png(fig)))
        plt.close(fig)
    if "tiers" in summary and "cells" not in summary:
        fig, ax = plt.subplots(figsize=(8, 3.2))
        ours = [summary["tiers"]["tier1_accuracy"] or 0, summary["tiers"]["tier2_f1"], summary["tiers"]["tier3_f1"]]
        x = np.arange(3)
        ax.bar(x - 0.27, ours, 0.27, label="guard (this run)", color="#d62728")
        ax.bar(x[1:], [76, 67], 0.27, label="best closed model (published)", color="#7f7f7f")
        ax.bar(x[1:] + 0.27, [83, 78], 0.27, label="fine-tuned model (published)", color="#1f77b4")
        ax.set_xticks(x, ["Tier 1 accuracy", "Tier 2 F1", "Tier 3 F1"])
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title("VoxPrivacy tiers beside the published anchors")
        out.append(("Tier metrics", _png(fig)))
        plt.close(fig)
    stages = {}
    for mode, m in (summary.get("modes") or {"probe": summary}).items():
        if "latency" not in m:
            continue
        for k, v in m["latency"]["stage_mean_seconds"].items():
            stages.setdefault(k, {})[mode] = v
    if stages:
        fig, ax = plt.subplots(figsize=(8, 3.2))
        names = [s for s in ("decode", "vad", "diarize", "verify", "policy", "backend", "total") if s in stages]
        modes = sorted({m for v in stages.values() for m in v})
        x = np.arange(len(names))
        for i, mode in enumerate(modes):
            ax.bar(x + i * 0.4 - 0.2, [stages[n].get(mode, 0) * 1000 for n in names], 0.4, label=mode)
        ax.set_xticks(x, names)
        ax.set_yscale("log")
        ax.set_ylabel("mean ms per request")
        ax.legend()
        ax.set_title("Latency per stage")
        out.append(("Latency per stage", _png(fig)))
        plt.close(fig)
    return out


def write_html(path: Path, title: str, markdown_tables: str, summary: dict, extra_plots=()) -> None:
    figures = "".join(f"<h2>{html.escape(t)}</h2><img alt='{html.escape(t)}' src='{src}'>"
                      for t, src in [*_plots(summary), *extra_plots])
    body = _md_tables_to_html(markdown_tables)
    path.write_text(f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}img{{max-width:100%}}</style></head>
<body><h1>{html.escape(title)}</h1>{body}{figures}
<details><summary>summary.json</summary><pre>{html.escape(json.dumps(summary, indent=2))}</pre></details>
</body></html>""")


def _md_tables_to_html(md: str) -> str:
    out, table = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            if not set(line.replace("|", "").strip()) <= {"-"}:
                table.append([c.strip().replace("**", "") for c in line.strip("|").split("|")])
            continue
        if table:
            head, *rows = table
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>" +
                       "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</table>")
            table = []
        if line.startswith("# "):
            continue
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    return "\n".join(out)
