"""Percept-V: the domain list, prompts and sizes; gold answers re-derived from the pixels
(connected components, colour masks, cell coverage) wherever counting or colours can."""
import math
import signal
import time
from collections import Counter

import numpy as np
import pytest

from engine.registry import get_task, list_tasks
from engine.rendering import render
from engine.replies import is_correct
from scenes.perceptv import DOMAINS, make, size_instance
from scenes.perceptv.common import PALETTE
from scenes.perceptv.prompts import PROMPTS, SUFFIX
from tests.pixels import colour_mask, components

PX = 384


def _img(s, k=0, size=PX):
    """Panel ``k`` rendered as the harness renders it (its own extent at a ``size`` side)."""
    return render([s.panels[k]], s.panel_hw(k, (size, size)))[0].numpy().astype(np.int16)


def test_thirty_domains_with_the_papers_answer_types():
    assert len(list_tasks("perceptv/*")) == 30 == len(DOMAINS)
    counts = {}
    for d in DOMAINS.values():
        counts[d.answer_type] = counts.get(d.answer_type, 0) + 1
    assert counts == {"single": 11, "fixed": 6, "list": 8, "set": 5}


def test_prompts_are_the_benchmarks_and_state_the_output_format():
    for name in DOMAINS:
        s = get_task(f"perceptv/{name}").sample(0, 0)
        assert s.question == PROMPTS[name] + SUFFIX
        if name not in ("list_colours", "list_shapes"):      # their prompts name no label
            assert all(k in s.question for k in DOMAINS[name].form.keys)


def test_default_dataset_is_20_sizes_by_10_instances():
    pairs = [size_instance(i) for i in range(200)]
    assert sorted(set(p[0] for p in pairs)) == list(range(1, 21))
    assert all(sum(1 for p in pairs if p[0] == n) == 10 for n in range(1, 21))
    assert size_instance(200) == (1, 10)          # streams go on with new instances
    s = get_task("perceptv/counting_circles").sample(0, 57)
    assert s.meta["size"] == 6 and s.answer == "6"


def test_sizes_beyond_20_where_allowed_and_a_clear_error_elsewhere():
    assert make("counting_circles", 45).answer == "45"
    assert len(make("maze_solving", 49).answer) >= 2
    with pytest.raises(ValueError, match=r"size=50 is out of range for perceptv/maze_solving: 1\.\.49"):
        make("maze_solving", 50)
    with pytest.raises(ValueError, match="size=0"):
        make("counting_circles", 0)
    with pytest.raises(ValueError, match="unknown Percept-V domain 'nope'"):
        make("nope", 3)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_every_domain_generates_at_its_largest_size(name):
    # the reference's redraw-until-clear sampling stalls near a full range (sort_circles from
    # 27, sort_lines from 30); every allowed size must draw, the next one must be refused
    top = DOMAINS[name].max_size

    def stalled(*_):
        raise TimeoutError(f"perceptv/{name} at size {top} took over 30 s")

    previous = signal.signal(signal.SIGALRM, stalled)
    signal.alarm(30)
    try:
        for instance in range(2):
            s = make(name, top, instance=instance)
            assert s.meta["size"] == top
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if name in ("sort_circles", "sort_lines"):
        values = s.meta["radii" if name == "sort_circles" else "lengths"]
        gap = np.diff(np.sort(values)).min()
        assert len(values) == top and gap >= (0.05 if name == "sort_circles" else 18) - 1e-4, gap
    with pytest.raises(ValueError, match=f"size={top + 1} is out of range for perceptv/{name}: 1\\.\\.{top}"):
        make(name, top + 1)


@pytest.mark.parametrize("reply, value", [
    ("COUNT:7", "7"), ("count: 7", "7"), ("I see seven... COUNT:7", "7"), ("There are 7 circles.\nCOUNT: 7", "7"),
    ("", None), ("no idea", None)])
def test_count_replies(reply, value):
    s = get_task("perceptv/counting_circles").sample(0, 60)
    p = get_task("perceptv/counting_circles").reader(reply, s)
    assert p.value == value and p.strict == (reply in ("COUNT:7", "count: 7"))   # case and spaces are free


def test_list_set_and_fixed_replies():
    t = get_task("perceptv/comparing_size")
    s = t.sample(0, 25)
    assert t.reader("ANSWER: blue green", s).value == "[blue, green]"
    assert t.reader("Reasoning...\nANSWER: Blue, Green", s).value == "[blue, green]"
    t = get_task("perceptv/locate_circles_colour")
    s = t.sample(0, 25)
    assert t.reader("(3,4) (1,2)", s).value == "[(1 2), (3 4)]"
    t = get_task("perceptv/circle_location")
    s = t.sample(0, 25)
    assert t.reader("QUADRANT: 2 COUNT: 3", s).value == "2 3"
    assert t.reader("QUADRANT: 2", s).format_error
    t = get_task("perceptv/cross_and_knots")
    s = next(x for x in t.samples(0, range(0, 200, 10)) if len(x.meta["accepted"]) > 1)
    assert t.reader(s.meta["accepted"][-1], s).value == s.answer_text      # any safe cell is right
    assert t.reader("None", s).value == "None"


def _read(domain: str, reply: str, index: int = 25):
    task = get_task(f"perceptv/{domain}")
    return task.reader(reply, task.sample(0, index)).value


# replies written the way the prompts ask (and the way models write them) -> what they state;
# None: a format error
PROMPT_REPLIES = [
    ("list_colours", "blue, gray", "[blue, gray]"), ("list_colours", "[gray, blue]", "[blue, gray]"),
    ("list_colours", "Colors: blue, gray", "[blue, gray]"), ("list_colours", "**COLOURS:** gray and blue.", "[blue, gray]"),
    ("list_colours", "- blue\n- gray\n- red", "[blue, gray, red]"), ("list_shapes", "{circle, pentagon}", "[circle, pentagon]"),
    ("list_shapes", "The shapes are:\ncircle; pentagon", "[circle, pentagon]"),
    ("counting_circles", "COUNT: 7\n(I made 2 passes over the 6x6 layout.)", "7"),
    ("counting_circles", "COUNT: 7 (2 passes over the 6x6 layout)", "7"),
    ("counting_circles", "COUNT: 3... wait, no. Actually COUNT: 4", "4"), ("counting_circles", "COUNT=5", "5"),
    ("counting_circles", "I count 4 circles.\n\n**Final answer:** 5", "5"), ("counting_circles", "\\boxed{6}", "6"),
    ("counting_circles", "COUNT:\n8", "8"), ("counting_circles", "COUNT: seven", "7"),
    ("counting_circles", "I cannot determine this from the image. I can only see 2 in the bottom", None),
    ("counting_circles", "COUNT: 1 or COUNT: 2?", None), ("counting_circles", "COUNT: 3 or 4", None),
    ("counting_circles", "COUNT: " + "7" * 5000, None), ("counting_circles", "7" * 10_000, None),
    ("inside_circles", "ANSWER: Yes\nNo other circle contains the dot.", "yes"),
    ("inside_circles", "Answer: **No**, the dot is outside.", "no"), ("inside_circles", "Probably yes.", None),
    ("circle_right_triangle", "Row 2 has a triangle then a circle.\nYES", "yes"),
    ("sort_circles", "**3 1 2**", "[3, 1, 2]"), ("sort_circles", "Answer: 3 1 2", "[3, 1, 2]"),
    ("sort_circles", "I cannot determine the order.", None), ("sort_lines", "3 1 2.", "[3, 1, 2]"),
    ("maze_solving", "S → 2 → E", "[S, 2, E]"), ("maze_solving", "S, 2, 3, E", "[S, 2, 3, E]"),
    ("maze_solving", "I cannot determine the path.", None),
    ("identifying_shapes", "ANSWER: Triangle Square Triangle", "[triangle, square, triangle]"),
    ("layered_colours", "COLOURS: light blue", "[light, blue]"),
    ("circle_location", "**QUADRANT:** 1 **COUNT:** 3", "1 3"), ("circle_location", "QUADRANT: 1\nCOUNT: 3", "1 3"),
    ("circle_location", "QUADRANT=1 COUNT=3", "1 3"), ("circle_location", "QUADRANT: 1 COUNT: 2, no, COUNT: 3", "1 3"),
    ("circle_location", "QUADRANT: 2", None),
    ("locate_circles_colour", "(3,4) (1,2)", "[(1 2), (3 4)]"), ("locate_circles_colour", "[(3, 4), (1, 2)]", "[(1 2), (3 4)]"),
    ("locate_circles_colour", "(3,4) or (1,2)?", None),
    ("cross_and_knots", "None.", "None"), ("cross_and_knots", "The safe cell is below.\n(9,9)", "(9,9)"),
]


@pytest.mark.parametrize("domain, reply, value", PROMPT_REPLIES)
def test_replies_are_read_the_way_the_prompt_asks(domain, reply, value):
    assert _read(domain, reply) == value


def test_an_item_outside_the_vocabulary_makes_the_answer_wrong():
    task = get_task("perceptv/colours_present")
    s = task.sample(0, 25)
    gold = s.reply_text
    assert task.reader(gold, s).value == s.answer_text
    p = task.reader(gold + ", maybe", s)
    assert p.value is not None and not is_correct(p, s.answer_text, s.answer_type)


def test_reading_is_bounded_in_time():
    task = get_task("perceptv/comparing_size")
    s = task.sample(0, 25)
    huge = ("ANSWER: " + "blue " * 200_000 + "\n") + "word (" * 100_000 + "1" * 100_000
    start = time.perf_counter()
    task.reader(huge, s)
    assert time.perf_counter() - start < 5.0


def _count(img, rgb, tol=0):
    m = np.all(np.abs(img - np.array(rgb)[:, None, None]) <= tol, axis=0)
    return len([c for c in components(m) if len(c) >= 6])


def _check(name, s):
    n = s.meta["size"]
    if name == "counting_circles":
        assert _count(_img(s), (0, 0, 0), 60) == n
    elif name == "count_coloured_circles":
        assert _count(_img(s), (255, 0, 0), 60) == int(s.answer)
    elif name in ("change_colour", "vanishing_objects", "mirror_image", "water_image"):
        a, b = _img(s, 0), _img(s, 1)
        diff = len([c for c in components(np.abs(a - b).max(0) > 80) if len(c) >= 4])
        assert diff == (2 * int(s.answer) if name in ("mirror_image", "water_image") else int(s.answer))
    elif name == "counting_locations":
        img = _img(s)
        ink = np.any(np.abs(img - 255) > 60, axis=0)
        H = ink.shape[0]
        ink[int(0.46 * H):int(0.54 * H)] = False               # the bar across the middle
        ys = [c[:, 0].mean() / H for c in components(ink) if len(c) >= 6]
        assert f"{sum(y < 0.5 for y in ys)} {sum(y > 0.5 for y in ys)}" == s.answer
    elif name == "circle_boxes":
        img = _img(s)
        xs = [c[:, 1].mean() / PX for c in components(colour_mask(img, (255, 0, 0))) if len(c) >= 6]
        left, right = sum(x < 0.5 for x in xs), sum(x > 0.5 for x in xs)
        assert str(max(left, right) - n) == s.answer
    elif name == "circle_location":
        img = _img(s)
        counts = [0] * 4
        for c in components(np.all(img < 60, axis=0)):
            if len(c) >= 40:                        # circles, not the thin axes
                y, x = c[:, 0].mean() / img.shape[1], c[:, 1].mean() / img.shape[2]
                counts[(0 if y < 0.5 else 3) if x > 0.5 else (1 if y < 0.5 else 2)] += 1
        assert f"{int(np.argmax(counts)) + 1} {max(counts)}" == s.answer
    elif name in ("locate_circles_colour", "locate_circles_shape"):
        img = _img(s)
        green = colour_mask(img, (0, 128, 0))
        x0, cell = 0.06 * PX, 0.92 / 6 * PX
        found = []
        for r in range(6):
            for c in range(6):
                patch = green[int(x0 + r * cell):int(x0 + (r + 1) * cell), int(x0 + c * cell):int(x0 + (c + 1) * cell)]
                share = patch.mean()
                if 0.45 < share < 0.62:            # a disc of radius 0.42 cell covers 0.55 of it
                    found.append(f"({r + 1} {c + 1})")
        assert sorted(found) == s.answer
    elif name == "colours_present":
        img = _img(s)[:, :PX]                       # the square scene, above the legend
        present = []
        for cname, rgb in PALETTE.items():
            m = colour_mask(img, rgb)
            inner = m[1:-1, 1:-1] & m[:-2, 1:-1] & m[2:, 1:-1] & m[1:-1, :-2] & m[1:-1, 2:]
            present.append("yes" if inner.sum() >= 10 else "no")
        assert " ".join(present) == s.answer
    elif name == "layered_colours":
        img = _img(s)
        cy, cx = int(0.5 * PX), int(0.5 * PX)
        seq = []
        for x in range(cx, int(0.98 * PX)):
            rgb = tuple(int(v) for v in img[:, cy, x])
            name_ = next((k for k, v in PALETTE.items() if v == rgb), None)
            if name_ and (not seq or seq[-1] != name_):
                seq.append(name_)
        seq = [c for c in seq if c in s.answer or c != "black"]   # the black outlines between layers
        assert seq == s.answer
    elif name == "sort_lines":
        img = _img(s)
        lengths = []
        for i in range(n):
            x = int(round((i + 1) / (n + 1) * PX))
            col = img[:, :, max(0, x - 1):x + 2]
            ink = np.any(np.abs(col - 255) > 40, axis=0).any(1)
            rows = np.nonzero(ink[: int(0.995 * PX)])[0]
            lengths.append(int(0.99 * PX) - rows[rows > rows.min() + 0].min() if len(rows) else 0)
        assert [str(i + 1) for i in np.argsort(lengths, kind="stable")] == s.answer
    elif name == "comparing_size":
        img = _img(s)
        blue, green = colour_mask(img, (0, 0, 255)), colour_mask(img, (0, 128, 0))
        h = img.shape[1] / (n + 1)                 # n rows of a panel n + 1 rows tall
        got = []
        for i in range(n):
            band = slice(int(h * (i + 0.5)), int(h * (i + 1.5)))
            got.append("blue" if blue[band].sum() > green[band].sum() else "green")
        assert got == s.answer
    elif name == "sort_circles":
        img = _img(s)
        # each disc is a run of columns holding black (its white label lies inside it)
        dark = np.all(img < 100, axis=0).any(0).astype(int)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], dark, [0]])))
        widths = list(edges[1::2] - edges[::2])
        assert len(widths) == n
        assert np.diff(sorted(widths)).min(initial=99) >= 2          # every radius gap is 1 px or more
        assert [str(i + 1) for i in np.argsort(widths, kind="stable")] == s.answer
    elif name == "circle_right_triangle":
        img = _img(s)
        x0, cell = 0.08 * PX, 0.14 * PX
        kind = {}
        for r in range(6):
            for c in range(6):
                patch = img[:, int(x0 + r * cell) + 3:int(x0 + (r + 1) * cell) - 3,
                            int(x0 + c * cell) + 3:int(x0 + (c + 1) * cell) - 3]
                kind[(r, c)] = ("circle" if colour_mask(patch, (31, 119, 180)).sum() > 20 else
                                "triangle" if colour_mask(patch, (214, 39, 40)).sum() > 20 else None)
        yes = any(kind[(r, c)] == "triangle" and kind[(r, c + 1)] == "circle" for r in range(6) for c in range(5))
        assert ("yes" if yes else "no") == s.answer


PIXEL_DOMAINS = ["counting_circles", "count_coloured_circles", "change_colour", "vanishing_objects", "mirror_image",
                 "water_image", "counting_locations", "circle_boxes", "circle_location", "locate_circles_colour",
                 "locate_circles_shape", "colours_present", "layered_colours", "sort_lines", "comparing_size",
                 "circle_right_triangle", "sort_circles"]


@pytest.mark.parametrize("name", PIXEL_DOMAINS)
def test_gold_answers_re_derived_from_pixels(name):
    task = get_task(f"perceptv/{name}")
    for index in (0, 43, 95, 137, 199):            # sizes 1, 5, 10, 14, 20
        _check(name, task.sample(3, index))


@pytest.mark.slow
@pytest.mark.parametrize("name", PIXEL_DOMAINS)
def test_gold_answers_re_derived_from_pixels_at_every_size(name):
    task = get_task(f"perceptv/{name}")
    for seed in (0, 1):
        for index in range(0, 200, 3):
            _check(name, task.sample(seed, index))


def test_fixed_variants_remove_the_reference_shortcuts():
    assert list_tasks("perceptv_fixed/*") == ["perceptv_fixed/circle_right_triangle",
                                               "perceptv_fixed/counting_locations", "perceptv_fixed/inside_circles",
                                               "perceptv_fixed/maze_solving"]
    for name in ("circle_right_triangle", "inside_circles"):
        faithful = Counter(s.answer for s in get_task(f"perceptv/{name}").samples(0, range(200)))
        fixed = Counter(s.answer for s in get_task(f"perceptv_fixed/{name}").samples(0, range(200)))
        assert faithful["yes"] > 120 and fixed == {"yes": 100, "no": 100}
    task = get_task("perceptv_fixed/counting_locations")
    samples = task.samples(0, range(0, 200, 7))
    assert len({s.answer for s in samples}) > 10
    for s in samples:
        above, below = map(int, s.answer.split())
        assert above + below == 2 * s.meta["size"]
        _check("counting_locations", s)
    for s in get_task("perceptv_fixed/circle_right_triangle").samples(1, range(0, 200, 9)):
        _check("circle_right_triangle", s)
    with pytest.raises(ValueError, match="no fixed variant; domains with one: circle_right_triangle"):
        make("counting_circles", 3, fixed=True)


def _dug_order(path) -> bool:
    return path[1:-1] == [str(k) for k in range(2, len(path))]


def test_fixed_maze_paths_do_not_follow_from_the_size():
    # the reference numbers cells in the order the maze was dug: the path to E is S, 2, ..., n-1, E
    indices = range(30, 200)                          # sizes 4..20: paths with numbers on them
    faithful = get_task("perceptv/maze_solving").samples(0, indices)
    fixed = get_task("perceptv_fixed/maze_solving").samples(0, indices)
    assert sum(_dug_order(s.answer) for s in faithful) > 0.9 * len(indices)
    assert sum(_dug_order(s.answer) for s in fixed) == 0
    firsts = Counter(s.answer[1] for s in fixed if len(s.answer) > 2)
    assert len(firsts) > 25 and max(firsts.values()) < 0.1 * len(indices)     # the first step is any number


SIZE_BANDS = ((1, 5), (6, 10), (11, 15), (16, 20))


def _band(lo: int, hi: int, count: int) -> list[int]:
    """``count`` indices whose problem sizes lie in ``lo..hi``, every size alike."""
    per_block = [(size - 1) * 10 + j for size in range(lo, hi + 1) for j in range(10)]
    return [200 * (k // len(per_block)) + per_block[k % len(per_block)] for k in range(count)]


def _layout(domain: str, img: np.ndarray) -> np.ndarray:
    """The shortcut the reference leaves, read from pixels: where the triangles sit (their
    ink per column and per row), or where the red dot sits."""
    if domain == "circle_right_triangle":
        red = colour_mask(img, (214, 39, 40))
        return np.array([c.mean() for c in np.array_split(red, 12, axis=1)]
                        + [r.mean() for r in np.array_split(red, 12, axis=0)])
    ys, xs = np.nonzero(colour_mask(img, (255, 0, 0)))
    return np.array([xs.mean(), ys.mean()]) / img.shape[-1]


@pytest.mark.slow
@pytest.mark.parametrize("domain", ["circle_right_triangle", "inside_circles"])
def test_fixed_variants_leave_no_layout_shortcut_in_any_size_band(domain):
    from engine.outputs import render_samples
    from evals.audit.features import sample_features
    from evals.audit.probe import probe
    from evals.audit.run import blind

    task = get_task(f"perceptv_fixed/{domain}")
    for lo, hi in SIZE_BANDS:
        samples = task.samples(0, _band(lo, hi, 1600))
        images = render_samples(samples, 224)
        y = np.array([s.answer_text for s in samples])
        nuisance = blind(task, np.stack([sample_features(s, im) for s, im in zip(samples, images)]))
        layout = np.stack([_layout(domain, im[0].numpy()) for im in images])
        order = np.random.default_rng(0).permutation(len(samples))
        train, test = order[:800], order[800:]
        p = probe(nuisance[train], y[train], nuisance[test], y[test])
        assert p["high"] <= 0.60, f"{domain} sizes {lo}-{hi}: nuisance probe {p['accuracy']:.2f} (bound {p['high']:.2f})"
        # Where the shapes sit follows partly from the rule itself: a lone triangle and circle
        # side by side (sizes 1-5) say the answer by which edge column the triangle may take,
        # and in a full grid (sizes 16-20) a NO row is sorted, circles then triangles, so the
        # closest YES differs by one swap (57% there; the old fixed variant: 98%, and 76% at 11-15).
        p = probe(layout[train], y[train], layout[test], y[test])
        limit = 0.60 if domain == "inside_circles" or 6 <= lo <= 11 else 0.65
        assert p["high"] <= limit, f"{domain} sizes {lo}-{hi}: layout probe {p['accuracy']:.2f} (bound {p['high']:.2f})"


def test_the_fixed_dot_position_says_nothing_of_the_answer():
    # the old fixed variant moved the dot until the answer came out right: No dots ended up
    # near the edges (a probe on the position and distance from the centre read 71%)
    from engine.outputs import render_samples
    from evals.audit.probe import probe

    samples = get_task("perceptv_fixed/inside_circles").samples(0, range(1200))
    xy = np.stack([_layout("inside_circles", im[0].numpy()) for im in render_samples(samples, 96)])
    X = np.hstack([xy, np.abs(xy - 0.5), np.hypot(*(xy - 0.5).T)[:, None]])
    y = np.array([s.answer_text for s in samples])
    order = np.random.default_rng(0).permutation(len(y))
    p = probe(X[order[:600]], y[order[:600]], X[order[600:]], y[order[600:]])
    assert p["high"] < 0.6, p


def _ring_crossings(img, size) -> int:
    """Edges entering the nodes, read from pixels: line-coloured runs on a circle just outside
    each node (found as a blue component)."""
    nodes = [c for c in components(colour_mask(img, (173, 216, 230))) if len(c) > 20]
    grey = np.abs(img.astype(int) - 128).max(0) < 60                 # the line, anti-aliased edges included
    total = 0
    for pix in nodes:
        cy, cx = pix.mean(0)
        r = math.sqrt(len(pix) / math.pi) + 3
        ang = np.linspace(0, 2 * math.pi, 720, endpoint=False)
        ys = np.clip(np.round(cy + r * np.sin(ang)).astype(int), 0, size - 1)
        xs = np.clip(np.round(cx + r * np.cos(ang)).astype(int), 0, size - 1)
        on = grey[ys, xs]
        total += int((on & ~np.roll(on, 1)).sum())
    return total


@pytest.mark.parametrize("n", [4, 8, 12, 16, 20, 25])
def test_graph_edges_never_pass_under_a_node(n):
    # from pixels: every edge enters the rings around its two nodes once; an edge passing
    # under a third node would enter that one's ring twice more (and read as two edges)
    for inst in range(4):
        s = make("graph_counting", n, instance=inst)
        img = render([s.panels[0]], 512)[0].numpy()
        m = int(s.answer.split()[1])
        assert _ring_crossings(img, 512) == 2 * m, (n, inst)


def _legible(name: str, sizes, instances: int) -> list[str]:
    """Where ``name`` falls short at the native side: text under 7 px, objects under 4 px,
    hidden objects (the audit's measures, from pixels)."""
    from engine.outputs import render_samples
    from evals.audit.legibility import MIN_EXTENT, MIN_TEXT, sample_legibility
    from scenes.perceptv.common import NATIVE

    bad = []
    for n in sizes:
        samples = [make(name, n, instance=i) for i in range(instances)]
        for s, images in zip(samples, render_samples(samples, NATIVE)):
            r = sample_legibility(s, images, (NATIVE, NATIVE))
            if (r["min_text"] or 99) < MIN_TEXT or (r["min_extent"] or 99) < MIN_EXTENT or r["hidden"]:
                bad.append(f"size {n}: {r}")
    return bad


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_every_domain_is_legible_at_its_native_size(name):
    assert not _legible(name, (1, 10, 20), 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_every_domain_is_legible_at_every_size(name):
    assert not _legible(name, range(1, 21), 2)


def test_panels_keep_the_reference_aspect_and_grow_with_n():
    def hw(name, n):
        return make(name, n).panel_hw(0, (512, 512))

    assert hw("change_colour", 5) == (341, 512) and hw("counting_circles", 5) == (307, 512)
    assert hw("colours_present", 5) == (683, 512) and hw("grid_path", 5) == (512, 512)
    assert hw("comparing_size", 1) == (256, 128) and hw("comparing_size", 20) == (2688, 128)
    assert hw("sort_circles", 20)[1] > 10 * hw("sort_circles", 1)[1]
    s = make("match_shadow", 7)
    assert len(s.panel_extents) == 2 and s.panel_hw(0, (512, 512)) == s.panel_hw(1, (512, 512)) == (1024, 128)


def test_a_long_strip_renders_at_twice_the_native_side():
    # a 20-circle strip at --size 1024 is 9,339 px wide: past the old 8,192 px limit
    from engine.outputs import render_samples

    s = make("sort_circles", 20)
    (image,) = render_samples([s], 1024)[0]
    assert image.shape[1:] == s.panel_hw(0, (1024, 1024)) and image.shape[2] > 8192


def _spring_one_edge_at_a_time(rng, n, edges, steps=120):
    """The graph layout as first written: each edge's pull added in a Python loop."""
    p = rng.uniform(0.2, 0.8, (n, 2))
    for t in range(steps):
        d = p[:, None] - p[None]
        dist = np.hypot(d[..., 0], d[..., 1]) + np.eye(n) + 1e-6
        force = (d / dist[..., None] ** 3 * 0.002).sum(1)
        for i, j in edges:
            v = p[j] - p[i]
            force[i] += v * 0.5
            force[j] -= v * 0.5
        p = np.clip(p + force * (1 - t / steps) * 0.5, 0.0, 1.0)
    lo, hi = p.min(0), p.max(0)
    return 0.08 + (p - lo) / np.maximum(hi - lo, 1e-6) * 0.84


def test_graph_layout_adds_edge_pulls_in_the_order_of_one_edge_at_a_time():
    """graph_counting's layout adds all edge pulls at once; the positions are bit for bit those
    of adding them edge by edge (nodes shared by several edges, repeated edges, no edges)."""
    from scenes.perceptv.counting import _spring

    for seed in range(60):
        r = np.random.default_rng(seed)
        n = int(r.integers(1, 26))
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        m = 0 if n == 1 else int(r.integers(0, min(len(pairs), n + 5) + 1))
        edges = [pairs[int(k)] for k in r.choice(len(pairs), m, replace=False)] if m else []
        edges += edges[:2] if seed % 3 == 0 else []
        want = _spring_one_edge_at_a_time(np.random.default_rng(seed + 99), n, edges, steps=40)
        got = _spring(np.random.default_rng(seed + 99), n, edges, steps=40)
        assert np.array_equal(got, want), (seed, n, edges)
