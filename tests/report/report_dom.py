#!/usr/bin/python3
"""What a `cuvilc report` page holds, checked against the build's JSON report.

    report_dom.py BUILD_REPORT.json PAGE.html

PAGE.html is the page as written or as a browser's DOM dump (chromium
--dump-dom). Prints one line per check and exits 1 if any fails:
  - the graph table has one row per node of the build (`cuvilc build
    --report`'s "nodes"), in execution order, each with its step and name;
  - the summary's total MACs are the build's;
  - every arena of the plan is drawn (one inline <svg> per arena) and
    every region of the target has its row;
  - the heat map rows, if any, name nodes of the graph (or the output
    copies);
  - the page has no <script>, no event-handler attribute and no external
    resource (it must read the same with JavaScript off and offline).
Also imported by check_report.py (the browser test).
"""

import html.parser
import json
import sys


class Page(html.parser.HTMLParser):
    """The rows, pictures and risky markup of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.graph_rows = []    # (step, node) of <tr data-step>
        self.profile_rows = []  # node of <tr data-profile-step>
        self.region_rows = []   # id of <tr id="region-...">
        self.svgs = 0
        self.scripts = 0
        self.handlers = []
        self.external = []
        self.total_macs = None
        self._in_macs = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-step" in a:
            self.graph_rows.append((int(a["data-step"]), a.get("data-node")))
        if tag == "tr" and "data-profile-step" in a:
            self.profile_rows.append(a.get("data-node"))
        if tag == "tr" and (a.get("id") or "").startswith("region-"):
            self.region_rows.append(a["id"][len("region-"):])
        if a.get("id") == "total-macs":
            self._in_macs = True
        if tag == "svg":
            self.svgs += 1
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append(f"{tag} {name}={value}")
        if tag == "link":
            self.external.append(f"link {a.get('href')}")

    def handle_data(self, data):
        if self._in_macs:
            self.total_macs = int(data.replace(",", ""))
            self._in_macs = False


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    return page


def check(build_report, page):
    """Lines saying what was found, and whether everything was."""
    nodes = [(n["step"], n["name"]) for n in build_report["nodes"]]
    arenas = build_report["arenas"]
    lines, ok = [], True

    def say(good, text):
        nonlocal ok
        ok = ok and good
        lines.append(("" if good else "FAILED: ") + text)

    rows = page.graph_rows
    say(rows == nodes, f"graph rows: {len(rows)} of {len(nodes)} nodes"
        + (", in order" if rows == nodes else
           f"; missing {sorted(set(nodes) - set(rows))[:5]},"
           f" extra {sorted(set(rows) - set(nodes))[:5]}"))
    say(page.total_macs == build_report["macs"],
        f"total MACs: {page.total_macs}, the build says {build_report['macs']}")
    say(page.svgs == len(arenas), f"arena pictures: {page.svgs} of {len(arenas)} arenas")
    regions = {a["region"] for a in arenas}
    say(regions <= set(page.region_rows),
        f"region rows: {len(page.region_rows)}, holding the {len(regions)} arena region(s)")
    names = {name for _, name in nodes} | {"(output copies)"}
    strangers = [n for n in page.profile_rows if n not in names]
    say(not strangers, f"profile rows: {len(page.profile_rows)}"
        + (f"; not in the graph: {strangers[:5]}" if strangers else ""))
    say(page.scripts == 0 and not page.handlers,
        f"scripts: {page.scripts}, event handlers: {len(page.handlers)}")
    say(not page.external, f"external resources: {len(page.external)}"
        + (f" {page.external[:3]}" if page.external else ""))
    return lines, ok


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        build_report = json.load(f)
    lines, ok = check(build_report, parse(sys.argv[2]))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
