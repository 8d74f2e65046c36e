#!/usr/bin/env python3
"""Rewrite "spec §N" citations (the project's worked-out paper spec, which is not in the
repository) as the paper's own sections and equations: A. Müller, "Dynamics of Parallel
Manipulators with Hybrid Complex Limbs — Modular Modeling and Parallel Computing" (2024).

    python .ci/spec_citations.py [--check]

Rewrites every .py, .md, .toml and .ipynb file of the repository in place (``--check`` only lists
what it would change and fails if anything is left); tests/test_docs.py checks that no "spec §"
remains. A citation followed by the paper's own ("spec §8; paper §4–5, eq. 85–98") is dropped.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: spec section -> the paper's sections / equations it works out (from the spec's headings).
PAPER = {
    "0": "Sec. 1", "1": "App. A–C, eq. 145–175", "1.1": "App. A, eq. 145", "1.2": "App. A, eq. 152",
    "1.3": "App. B, eq. 167", "1.4": "App. A, eq. 148–151, 155", "1.5": "App. A–B, eq. 157, 166, 168",
    "1.6": "App. A, eq. 146–147", "1.7": "eq. 7 and App. A", "1.8": "App. C",
    "2": "Sec. 2, 3.1", "2.1": "Sec. 2", "2.2": "Sec. 3.1", "2.3": "Sec. 2, Ex. 1–3",
    "2.3.1": "Ex. 1, 4, 7, 8; Sec. 9", "2.3.2": "Ex. 2, 5", "2.3.3": "Ex. 3, 6, 9, 11; eq. 55–57",
    "3": "Sec. 3.2, App. A", "3.1": "eq. 1, 2, 146, 147", "3.2": "eq. 3, 4, 153–156", "3.3": "eq. 158–161",
    "3.4": "eq. 162–165",
    "4": "Sec. 3.3", "4.1": "Sec. 3.3, eq. 12–14", "4.2": "eq. 15", "4.3": "eq. 16, 22, 28, 32",
    "4.4": "eq. 33, 37, 41", "4.5": "Sec. 3.3, eq. 42 ff.", "4.6": "eq. 43–47", "4.7": "Sec. 3.3, Ex. 7–9",
    "5": "Sec. 3.4", "5.1": "Sec. 3.4", "5.2": "Sec. 3.4",
    "6": "Sec. 3.5–3.7, eq. 75–84", "7": "Sec. 3.6, eq. 82–83, 85", "7.1": "eq. 82", "7.2": "eq. 83, 85",
    "8": "Sec. 4–5, eq. 85–98", "8.1": "Sec. 4", "8.2": "Sec. 4.1, eq. 85–89", "8.3": "Sec. 4.2, eq. 90–93",
    "8.4": "Sec. 4.3, eq. 94", "8.5": "Sec. 4.4, eq. 95–96", "8.6": "Sec. 5, eq. 97–98",
    "9": "Sec. 6", "9.1": "Sec. 6.1, eq. 99", "9.2": "Sec. 6.2, eq. 100–101, App. B",
    "9.3": "Sec. 6.3, eq. 102–103", "9.4": "Sec. 6.4, eq. 104–106", "9.5": "Sec. 6.5, eq. 107–113",
    "9.6": "Sec. 6.6, eq. 114–120", "10": "Sec. 7, eq. 121–126",
    "11": "Sec. 8", "11.1": "Sec. 8.1", "11.2": "Sec. 8.2, eq. 137–140, 144", "11.3": "Sec. 8.3",
    "12": "Sec. 9", "12.1": "Sec. 9.1", "12.2": "Sec. 9.1, eq. 148", "12.3": "Sec. 9.1", "12.4": "Sec. 9.1",
    "12.5": "eq. 141–142", "12.6": "Sec. 9.2, eq. 143", "12.7": "Sec. 9.3", "12.8": "Sec. 9.4, Table 1",
    "12.9": "Sec. 9", "12.10": "Sec. 9", "13": "Sec. 9 and Ex. 3", "14": "the paper's printed equations",
    "14.1": "Sec. 2 (labelling)", "14.2": "Sec. 3–4", "14.3": "Sec. 6–8", "14.4": "Sec. 9.1", "14.5": "Sec. 9",
    "15": "Sec. 9", "16": "Sec. 8.3",
}
#: the spec's list of the paper's typos (§14), item -> where the paper prints what is corrected
ITEMS = {"12": "eq. 28, exact form eq. 22", "13": "eq. 37, corrected", "14": "Sec. 3.3, 3 − δ^rot rows",
         "19": "eq. 14 and 47, Ġ not printed", "29": "eq. 140, second line", "20": "eq. 84, a predictor only",
         "22": "eq. 88, general form", "28": "eq. 113, corrected", "30": "eq. 132–136, corrected"}

SEC = r"§?\d+(?:\.\d+)*"
ONE = rf"{SEC}(?:\s*[–-]\s*{SEC})?"
CITATION = re.compile(rf"spec (§{ONE}(?:,\s*{ONE}(?=[,;)\s]))*)(?:\s+item\s+(\d+))?([;,]\s*(?=paper))?")


def _paper(sections: str, item: str | None) -> str:
    if item is not None and item in ITEMS:
        return f"paper {ITEMS[item]}"
    parts = []
    for one in re.split(r",\s*", sections):
        ends = [e.strip().lstrip("§") for e in re.split(r"[–-]", one)]
        for e in ends:
            key = e
            while key not in PAPER and "." in key:
                key = key.rsplit(".", 1)[0]
            text = PAPER.get(key, f"Sec. {e}")
            if text not in parts:
                parts.append(text)
    return "paper " + "; ".join(parts)


def rewrite(text: str) -> str:
    def sub(m):
        if m.group(3):   # the paper's own citation follows: drop the spec's
            return ""
        return _paper(m.group(1), m.group(2))

    return CITATION.sub(sub, text)


def files():
    for pattern in ("*.py", "*.md", "*.toml", "*.ipynb"):
        for p in ROOT.rglob(pattern):
            if not any(part.startswith(".") and part != ".ci" for part in p.relative_to(ROOT).parts) \
                    and "__pycache__" not in p.parts and p.name not in ("spec_citations.py", "test_docs.py"):
                yield p


def main(argv) -> int:
    check = "--check" in argv
    left = 0
    for p in sorted(set(files())):
        text = p.read_text()
        if not CITATION.search(text):
            continue
        if check:
            for n, line in enumerate(text.splitlines(), 1):
                if CITATION.search(line):
                    print(f"{p.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
                    left += 1
        else:
            new = rewrite(text)
            p.write_text(new)
            left += len(CITATION.findall(new))
    if left:
        print(f"{left} 'spec §' citations {'found' if check else 'left'}")
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
