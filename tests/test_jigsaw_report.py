"""The Jigsaw report follows the paper's table: seven scored columns and their mean, the
chance and p<0.05 rows computed by the code (Table 2's rows at 1,100 items per column:
overall 30.21 and 32.56), the human row, order generation outside the overall."""
from engine.registry import get_family
from scenes.jigsaw.report import COLUMNS, OPEN, table


def _rows(n: int, right: dict[str, int], model="m") -> list[dict]:
    out = []
    for _, tid in COLUMNS + (("OG", OPEN),):
        k = right.get(tid, 0)
        out += [{"task": tid, "correct": i < k, "format_error": False, "model": model, "protocol": "direct"}
                for i in range(n)]
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def test_the_reference_rows_reproduce_table_2_at_1100_items():
    lines = table(_rows(1100, {}))
    head, human, rnd, crit = (_cells(lines[k]) for k in (0, 2, 3, 4))
    assert head[2:] == ["MP easy", "MP hard", "PL easy", "PL hard", "CV", "AD", "OR", "Overall", "OG (open)"]
    assert rnd[2:10] == ["25.00", "25.00", "50.00", "25.00", "33.33", "28.13", "25.00", "30.21"]
    assert crit[2:10] == ["27.30", "27.30", "52.50", "27.30", "35.70", "30.50", "27.30", "32.56"]
    assert human[2:10] == ["99.55", "100.00", "95.45", "91.36", "93.18", "97.27", "97.73", "96.36"]


def test_a_model_row_averages_the_seven_columns_and_keeps_order_generation_apart():
    right = {tid: 550 for _, tid in COLUMNS}
    right["jigsaw/connection"] = 1100
    right[OPEN] = 110
    row = _cells(table(_rows(1100, right))[5])
    assert row[0] == "`m`" and row[2:6] + row[7:9] == ["50.00"] * 6 and row[6] == "100.00"
    assert row[9] == f"{(6 * 50 + 100) / 7:.2f}" and row[10] == "10.00"


def test_few_items_never_print_a_threshold_above_100_percent_and_missing_columns_give_no_overall():
    rows = [r for r in _rows(2, {}) if r["task"] != "jigsaw/anomaly"]
    lines = table(rows)
    crit, model = _cells(lines[4]), _cells(lines[5])
    assert crit[4] == "—"                                  # PL easy at n=2: even 2 of 2 is not significant
    assert all(c == "—" or float(c) <= 100 for c in crit[2:10])
    assert model[7] == "—" and model[9] == "—"             # no anomaly items: no overall


def test_the_family_registers_the_report():
    text = get_family("jigsaw").reporter(_rows(4, {}), None, "run")
    assert text.startswith("## Jigsaw-Puzzles") and "Overall" in text


def test_the_summary_family_row_is_the_papers_overall():
    from evals.harness import summarise, to_markdown

    text = to_markdown(summarise(_rows(1100, {})), "m", "jigsaw/*", 1100, 0)
    row = next(_cells(line) for line in text.splitlines() if line.startswith("| jigsaw |"))
    assert row[1] == "7 (+1 outside the overall)" and row[3] == "30.21"
