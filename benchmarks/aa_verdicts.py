"""The A/A plug-in's verdicts (benchmarks/aa_plugin.py), one line each: twin-b against twin-a, and
twin-slow against twin-a, size by size, with the verdict, the ratio and, where a point's machine
state flagged it, N.   python3 benchmarks/aa_verdicts.py RESULTS.json"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sys
from workbench.results import files as result_files
from workbench.core import verdicts
f,_=result_files.load(sys.argv[1])
ok=f[f.status=="ok"]
out=[];slow=[]
for s,g in ok.groupby("size"):
    r={b:row for b,row in zip(g.backend,g.to_dict("records"))}
    ab=verdicts.compare_rows(r["twin-b"],r["twin-a"])
    out.append(f"{s}:{ab.verdict[:4]}{ab.ratio:.2f}{'N' if r['twin-a']['noisy'] or r['twin-b']['noisy'] else ''}")
    if "twin-slow" in r:
        sa=verdicts.compare_rows(r["twin-slow"],r["twin-a"])
        slow.append(f"{s}:{sa.verdict[:4]}{sa.ratio:.2f}@{r['twin-a']['total_median_s']*1e3:.2g}ms")
print("A/A ", " ".join(out)); print("slow", " ".join(slow))
