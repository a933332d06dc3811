"""The Hub layout of ``procvis generate --format hf``: configs, splits, shards and the card.

* **Configs**: one per task root (``elvis``, ``perceptv``, ``perceptv_fixed``, ``kiva``,
  ``kiva_adults``, ``kiva_compositional``, ``bongard``, ``jigsaw``, ``shapes``): a family's
  benchmark, with KiVA's and Percept-V's variants apart because they are scored apart. Not
  one per task: ELVIS alone has 3,388 tasks, and thousands of configs would make the card's
  header and the viewer's list of configs unusable (and cost one file per task again); the
  ``task`` column selects a task instead.
* **Splits**: the papers' own. ELVIS: ``train`` (the first ``2N`` samples of a task, ``N``
  per class, ``N = count // 4``: the images a model learns the rule from) and ``test`` (the
  rest). Percept-V: ``test``, its rows filed by problem size, so that the config
  ``<root>_by_size`` offers one split per size (``size_01`` ...), and a ``problem_size``
  column. Every other benchmark is evaluation-only: ``test``.
* **Shards**: ``data/<config>/<split>[-size_NN]-NNNNN.parquet``, each holding consecutive rows
  of its split (tasks in the run's order, then sample index): as many rows as fit the byte
  target (256 MiB unless told; a row's size is measured on a few rendered samples of the
  config), so a small run writes one file per config and split.
  Row groups hold ``shard_size`` rows (100 by default, as the ``datasets`` library writes
  image data), which the Hub viewer reads one at a time.

Nothing here renders or writes: :mod:`engine.outputs` does, from this plan.
"""
from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field

SHARD_BYTES = 256 * 2 ** 20          # target bytes per Parquet shard
ESTIMATE_TASKS = 8                   # tasks of a config whose first sample sizes its shards
ROW_OVERHEAD = 512                   # bytes of a row beside its PNGs (text columns, metadata)
PERCEPTV_INSTANCES, PERCEPTV_SIZES = 10, 20

BASE_FEATURES = {
    "id": "string", "task": "string", "seed": "int64", "index": "int64", "question": "string",
    "answer": "string", "answer_type": "string", "options": "string", "num_panels": "int64", "meta": "string",
}

# The benchmarks' papers, as the card cites them (BibTeX type, key and fields). The seeds give
# no title or authors for the remote-sensing Bongard preprint: its entry says what they give.
PAPERS = {
    "elvis": ("article", "sha_gestalt_vision", {
        "title": "Gestalt Vision: A Dataset for Evaluating Gestalt Principles in Visual Perception",
        "author": "Sha, Jingyuan and Kersting, Kristian and Dhami, Devendra Singh",
        "note": "Extended journal version of the ELVIS benchmark (Sha et al., 2025)", "year": "2025"}),
    "perceptv": ("misc", "perceptv", {
        "title": "The Percept-V Challenge: Can Multimodal {LLMs} Crack Simple Perception Problems?",
        "author": "Anonymous", "note": "ACL submission"}),
    "kiva": ("inproceedings", "yiu2025kiva", {
        "title": "{KiVA}: Kid-inspired Visual Analogies for Testing Large Multimodal Models",
        "author": "Yiu, Eunice and Qraitem, Maan and Majhi, Anisa Noor and Wong, Charlie and Bai, Yutong and "
                  "Ginosar, Shiry and Gopnik, Alison and Saenko, Kate",
        "booktitle": "International Conference on Learning Representations ({ICLR})", "year": "2025"}),
    "bongard": ("book", "bongard1970pattern", {
        "title": "Pattern Recognition", "author": "Bongard, Mikhail M.", "publisher": "Spartan Books",
        "year": "1970"}),
    "bongard_rs": ("misc", "remote_sensing_bongard", {
        "howpublished": "MDPI Preprints",
        "note": "The Remote Sensing Bongard Benchmark (its Section 3.1) and its prompting strategies; submitted "
                "18 June 2026, posted 22 June 2026", "year": "2026"}),
    "jigsaw": ("article", "lyu2025jigsaw", {
        "title": "Jigsaw-Puzzles: From Seeing to Understanding to Reasoning in Vision-Language Models",
        "author": "Lyu, Zesen and Zhang, Dandan and Ye, Wei and Li, Fangdi and Jiang, Zhihang and Yang, Yao",
        "journal": "arXiv preprint", "year": "2025"}),
}


def bibtex(key: str) -> str:
    """The BibTeX entry of paper ``key`` of :data:`PAPERS`."""
    kind, name, fields = PAPERS[key]
    width = max(map(len, fields))
    return f"@{kind}{{{name},\n" + ",\n".join(f"  {k.ljust(width)} = {{{v}}}" for k, v in fields.items()) + "\n}"


@dataclass(frozen=True)
class Root:
    """What the card says of a task root: ``pretty`` name, ``about`` (what a row is), the
    ``papers`` it follows (keys of :data:`PAPERS`), ``splits``: ``"elvis"``,
    ``"sizes"`` or ``"test"``, and its Hub ``tags``."""

    pretty: str
    about: str
    papers: tuple
    splits: str = "test"
    tags: tuple = ()


ROOTS = {
    "elvis": Root("ELVIS (Gestalt Vision)", "one image of a positive/negative Gestalt rule task; `meta.label` is "
                  "1 for a positive", ("elvis",), "elvis", ("gestalt", "rule-induction")),
    "perceptv": Root("Percept-V", "one perception problem of a domain at a problem size (`problem_size`, 1..20 "
                     "in the paper) with a strict answer format", ("perceptv",), "sizes", ("perception", "counting")),
    "perceptv_fixed": Root("Percept-V (shortcuts removed)", "as `perceptv`, for the domains whose reference "
                           "generator leaves a shortcut, with the shortcut removed", ("perceptv",), "sizes",
                           ("perception",)),
    "kiva": Root("KiVA", "one visual analogy trial (train pair, test input, three options), kids' version",
                 ("kiva",), tags=("visual-analogy",)),
    "kiva_adults": Root("KiVA (adults)", "one visual analogy trial, adults' version", ("kiva",),
                        tags=("visual-analogy",)),
    "kiva_compositional": Root("KiVA (compositional)", "one visual analogy trial with two transformations at once",
                               ("kiva",), tags=("visual-analogy",)),
    "bongard": Root("Bongard problems", "one Bongard problem: six left and six right images (and a collage), the "
                    "rule to find", ("bongard", "bongard_rs"), tags=("bongard", "concept-learning")),
    "jigsaw": Root("Jigsaw-Puzzles", "one puzzle on a photograph (missing piece, localization, connection, anomaly "
                   "or order)", ("jigsaw",), tags=("spatial-reasoning",)),
    "shapes": Root("procvis shapes (demonstration)", "one small demonstration question about drawn shapes", (),
                   tags=("demonstration",)),
}
DEFAULT_ROOT = Root("procvis tasks", "one sample of a task", ())


def root_of(task: str) -> str:
    """The task's root: its config name."""
    return task.split("/", 1)[0]


def root_info(root: str) -> Root:
    """What the card says of ``root`` (a plain description for a root it does not know)."""
    return ROOTS.get(root, DEFAULT_ROOT)


def features(config: str) -> dict:
    """``{column: dtype}`` of a config's rows, ``images`` (a list of images) last."""
    extra = {"problem_size": "int64"} if root_info(config).splits == "sizes" else {}
    return {**BASE_FEATURES, **extra, "images": "image list"}


class Blocks:
    """The sample indices below ``count`` whose block ``index // width`` is ``slot`` modulo
    ``period`` (Percept-V's problem size ``slot + 1``), as a sequence: ``len`` and ``[j]``."""

    def __init__(self, count: int, width: int, period: int, slot: int):
        self.width, self.period, self.slot = width, period, slot
        cycle = width * period
        self.n = count // cycle * width + min(width, max(0, count % cycle - slot * width))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, j: int) -> int:
        b, o = divmod(j, self.width)
        return b * self.width * self.period + self.slot * self.width + o

    def find(self, index: int) -> int | None:
        """The position of ``index`` in the sequence (None when it is not in it)."""
        b, r = divmod(index, self.width * self.period)
        slot, o = divmod(r, self.width)
        j = b * self.width + o
        return j if slot == self.slot and 0 <= j < self.n else None


def _selectors(root: str, count: int) -> list[tuple[str, str | None, object]]:
    """``(split, part or None, indices)`` of every non-empty split of a task under ``root``."""
    kind = root_info(root).splits
    if kind == "elvis":
        n = count // 4
        out = [("train", None, range(0, 2 * n)), ("test", None, range(2 * n, count))]
    elif kind == "sizes":
        out = [("test", f"size_{s + 1:02d}", Blocks(count, PERCEPTV_INSTANCES, PERCEPTV_SIZES, s))
               for s in range(PERCEPTV_SIZES)]
    else:
        out = [("test", None, range(count))]
    return [(split, part, sel) for split, part, sel in out if len(sel)]


@dataclass
class Part:
    """The rows of one config, split and part (``part``: a Percept-V size, or None) in file
    order: ``members`` ``(task, indices)`` one after the other. ``rows_per_shard``: set by
    the writer from the byte target."""

    config: str
    split: str
    part: str | None
    members: list = field(default_factory=list)
    rows_per_shard: int = 1
    _starts: list | None = field(default=None, repr=False, compare=False)

    @property
    def stem(self) -> str:
        """The start of its file names: ``<split>`` or ``<split>-<part>``."""
        return self.split if self.part is None else f"{self.split}-{self.part}"

    @property
    def total(self) -> int:
        """Its number of rows."""
        return sum(len(sel) for _, sel in self.members)

    def shard_count(self) -> int:
        """Its number of shards."""
        return -(-self.total // self.rows_per_shard)

    def shard_file(self, k: int) -> str:
        """The relative path of shard ``k``."""
        return f"data/{self.config}/{self.stem}-{k:05d}.parquet"

    def segments(self, lo: int, hi: int) -> list[tuple[str, list[int]]]:
        """``(task, sample indices)`` of rows ``lo .. hi-1``, task by task."""
        if self._starts is None or len(self._starts) != len(self.members) + 1:
            self._starts = [0]
            for _, sel in self.members:
                self._starts.append(self._starts[-1] + len(sel))
        starts, out = self._starts, []
        m = bisect.bisect_right(starts, lo) - 1
        while lo < hi and m < len(self.members):
            task, sel = self.members[m]
            end = min(hi, starts[m + 1])
            out.append((task, [sel[j - starts[m]] for j in range(lo, end)]))
            lo, m = end, m + 1
        return out

    def position(self, task: str, index: int) -> int | None:
        """The row of sample ``index`` of ``task`` in this part (None when it is not here)."""
        self.segments(0, 0)                              # the members' first rows
        for m, (t, sel) in enumerate(self.members):
            if t != task:
                continue
            if isinstance(sel, range):
                j = index - sel.start if index in sel else None
            else:
                j = sel.find(index)
            if j is not None:
                return self._starts[m] + j
        return None

    def shard_rows(self, k: int) -> tuple[int, int]:
        """``(first row, end row)`` of shard ``k``."""
        return k * self.rows_per_shard, min(self.total, (k + 1) * self.rows_per_shard)


def plan(tasks: list[str], count: int) -> list[Part]:
    """The parts of a run of ``count`` samples of each of ``tasks``: configs in the order
    their tasks first come, then splits (``train`` before ``test``) and parts."""
    parts: dict[tuple, Part] = {}
    order = {"train": 0, "test": 1}
    for task in tasks:
        root = root_of(task)
        for split, part, sel in _selectors(root, count):
            parts.setdefault((root, split, part), Part(root, split, part)).members.append((task, sel))
    configs = list(dict.fromkeys(root_of(t) for t in tasks))
    return sorted(parts.values(), key=lambda p: (configs.index(p.config), order.get(p.split, 2), p.part or ""))


def rows_per_shard(png_bytes: float, target: int) -> int:
    """Rows per shard for rows of about ``png_bytes`` bytes of images under ``target`` bytes."""
    return max(1, int(target // (png_bytes + ROW_OVERHEAD)))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` rows."""
    names = ["n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "1B<n<10B",
             "10B<n<100B", "100B<n<1T"]
    for power, name in enumerate(names, start=3):
        if n < 10 ** power:
            return name
    return "n>1T"


# ---------------------------------------------------------------- the dataset card

def _q(text: str) -> str:
    """``text`` as a YAML scalar (JSON strings are YAML)."""
    return json.dumps(text)


def _config_yaml(config: str, parts: list[Part], default: bool) -> list[str]:
    """The ``configs`` entries of one config (and of its by-size twin for Percept-V)."""
    out = [f"- config_name: {config}"] + (["  default: true"] if default else []) + ["  data_files:"]
    for split in dict.fromkeys(p.split for p in parts):
        out += [f"  - split: {split}", f"    path: {_q(f'data/{config}/{split}-*.parquet')}"]
    if root_info(config).splits == "sizes":
        out += [f"- config_name: {config}_by_size", "  data_files:"]
        for p in parts:
            out += [f"  - split: {p.part}", f"    path: {_q(f'data/{config}/{p.stem}-*.parquet')}"]
    return out


def _features_yaml(name: str, config: str) -> list[str]:
    """The ``dataset_info`` entry of config ``name`` holding rows of root ``config``: its
    declared columns."""
    out = [f"- config_name: {name}", "  features:"]
    for col, dtype in features(config).items():
        out += [f"  - name: {col}", "    list: image" if dtype == "image list" else f"    dtype: {dtype}"]
    return out


def card_header(parts: list[Part], license_id: str) -> str:
    """The card's YAML header: license, task categories, tags, size, pretty name, the
    declared columns of every config and the ``configs`` (data files per split)."""
    configs = list(dict.fromkeys(p.config for p in parts))
    tags = ["procedural-generation", "synthetic", "visual-reasoning", "benchmark", "procvis"]
    tags += [t for c in configs for t in root_info(c).tags]
    categories = ["visual-question-answering", "image-text-to-text"] + \
        (["image-classification"] if "elvis" in configs else [])
    lines = ["---", f"license: {license_id}", "language:", "- en", "task_categories:"]
    lines += [f"- {c}" for c in categories] + ["tags:"] + [f"- {t}" for t in dict.fromkeys(tags)]
    lines += ["size_categories:", f"- {size_category(sum(p.total for p in parts))}",
              f"pretty_name: {_q('procvis: ' + ', '.join(root_info(c).pretty for c in configs))}", "dataset_info:"]
    for c in configs:
        lines += _features_yaml(c, c)
        if root_info(c).splits == "sizes":
            lines += _features_yaml(f"{c}_by_size", c)
    lines.append("configs:")
    for c in configs:
        lines += _config_yaml(c, [p for p in parts if p.config == c], default=len(configs) == 1)
    return "\n".join(lines) + "\n---\n"


def card_body(parts: list[Part], command: str, version: str, seed: int, license_note: str) -> str:
    """The card's text: what each config holds, how to load it, how it was generated, the
    columns, the license and the papers to cite."""
    configs = list(dict.fromkeys(p.config for p in parts))
    out = ["# procvis benchmark data", "",
           "Procedurally generated samples of visual-cognition benchmarks, written by "
           f"[procvis](https://pypi.org/project/procvis/) {version}. Every sample is decided by its task, the seed "
           f"({seed}) and its index: the command below writes these files again, byte for byte.", "",
           "```", command, "```", "", "## Configs and splits", "",
           "| config | benchmark | a row is | splits (rows) |", "|---|---|---|---|"]
    for c in configs:
        mine = [p for p in parts if p.config == c]
        splits = {}
        for p in mine:
            splits[p.split] = splits.get(p.split, 0) + p.total
        info = root_info(c)
        out.append(f"| `{c}` | {info.pretty} | {info.about} | "
                   + ", ".join(f"`{s}` ({n})" for s, n in splits.items()) + " |")
    notes = ["Load one with `datasets.load_dataset(\"<this folder or repo>\", CONFIG, split=SPLIT)`; the `task` "
             "column tells the tasks of a config apart."]
    if any(root_info(c).splits == "elvis" for c in configs):
        notes.append("ELVIS's `train` split holds the images a model learns each task's rule from (indices below "
                     "`2 * (count // 4)`: the first `count // 4` images of each class, even indices positive and "
                     "odd ones negative) and `test` the rest, the images it classifies; with fewer than 4 images per task "
                     "there is no `train` split.")
    if any(root_info(c).splits == "sizes" for c in configs):
        notes.append("Percept-V's configs have one `test` split and, as `<config>_by_size`, one split per problem "
                     "size (`size_01` ...); the `problem_size` column holds it too.")
    out += ["", " ".join(notes), "", "## Columns", "",
            "`images` (one per panel), `question`, `answer` (canonical text), `answer_type` (`single`, `fixed`, "
            "`list` or `set`), `options` (JSON: the answer space of a `fixed` answer), `meta` (JSON: the task's own "
            "fields and how the sample is shown), `id` (`task:seed:index`), `task`, `seed`, `index`, `num_panels`.",
            "", "## License", "", license_note, "", "## Citation", "",
            "Cite the paper of each benchmark you use (procvis re-implements its generator):", ""]
    keys = list(dict.fromkeys(k for c in configs for k in root_info(c).papers))
    if keys:
        out += ["```bibtex", "\n\n".join(bibtex(k) for k in keys), "```", ""]
    return "\n".join(out)


__all__ = ["Part", "Root", "ROOTS", "PAPERS", "bibtex", "plan", "features", "rows_per_shard", "card_header", "card_body",
           "root_of", "root_info", "SHARD_BYTES"]
