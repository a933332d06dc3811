"""The ELVIS task grid: 20 categories and the factors that enumerate their 3,388 tasks.

A task is a category plus factors: the relevant property set ``R`` (the rule), the
irrelevant set ``I`` (one value per image, so not part of the rule), the group count ``G``,
the quantity class ``Q`` and, for ``red_triangle`` only, the qualifier (``all``/``exist``).
For a category with property list ``F`` every non-empty ``R`` strictly inside ``F`` is
paired with every non-empty ``I`` inside ``F - R``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

PRINCIPLES = ("proximity", "similarity", "closure", "continuity", "symmetry")
QUANTITIES = ("s", "m", "l", "xl")


@dataclass(frozen=True)
class Category:
    """One ELVIS category: its principle, property list, group counts and quantity classes,
    and the fixed values its relevant properties take in positives."""

    principle: str
    name: str
    props: tuple[str, ...]
    groups: tuple[int, ...]
    quantities: tuple[str, ...]
    values: dict                      # property -> allowed values when relevant
    qualifiers: tuple[str, ...] = ("",)
    description: str = ""


def _c(principle, name, props, groups, quantities, values, description, qualifiers=("",)) -> Category:
    return Category(principle, name, tuple(props.split(",")), tuple(groups), tuple(quantities.split(",")) if quantities else ("",),
                    values, tuple(qualifiers), description)


CATEGORIES: dict[str, Category] = {c.name: c for c in [
    _c("proximity", "red_triangle", "shape,color,size", range(2, 5), "s,m,l,xl",
       {"shape": ["triangle"], "color": ["red"], "size": ["large"]},
       "groups of nearby objects; a group's first object carries the rule", qualifiers=("all", "exist")),
    _c("proximity", "grid", "shape,color,size", [4], "s,m,l,xl",
       {"shape": ["square"], "color": ["blue"], "size": ["small"]},
       "a grid with one interior row and one interior column left empty, making four blocks"),
    _c("proximity", "fixed_props", "shape,color,size", range(2, 5), "s,m,l",
       {"shape": ["circle", "star"], "color": ["orange", "purple"], "size": ["medium"]},
       "groups of nearby objects sharing two shapes and two colours"),
    _c("proximity", "circle_features", "shape,color,size", range(2, 5), "s,m,l,xl",
       {"shape": ["circle"], "color": ["yellow"], "size": ["small"]},
       "groups on a ring over a large background disc"),
    _c("similarity", "fixed_number", "shape,color,size,count", range(2, 4), "s,m",
       {"shape": ["circle"], "color": ["gold", "blue", "red", "green"], "size": ["medium"], "count": None},
       "scattered objects whose colour makes the groups"),
    _c("similarity", "pacman", "color,size,count", range(2, 4), "s,m,l",
       {"color": ["red", "blue", "green"], "size": ["large"], "count": None},
       "pac-men whose mouth direction makes the groups"),
    _c("similarity", "palette", "shape,color,size,count", range(2, 5), "s,m,l,xl",
       {"shape": ["square"], "color": ["red", "orange", "green", "blue"], "size": ["small"], "count": None},
       "angular sectors of a ring, one colour per sector"),
    _c("closure", "feature_triangle", "color,size", range(1, 6), "",
       {"color": ["red", "blue"], "size": ["large"]},
       "illusory triangles induced by three pac-men"),
    _c("closure", "feature_square", "color,size", range(1, 6), "",
       {"color": ["red", "blue"], "size": ["medium"]},
       "illusory squares induced by four pac-men"),
    _c("closure", "feature_circle", "color,size,shape", range(1, 5), "",
       {"color": ["purple"], "size": ["large"], "shape": ["square"]},
       "an illusory circle cut out of four shapes at the corners of a square"),
    _c("closure", "big_triangle", "shape,color,size", range(1, 5), "s,m,l",
       {"shape": ["circle"], "color": ["yellowgreen"], "size": ["medium"]},
       "small objects along the outline of a large triangle"),
    _c("closure", "big_square", "shape,color,size", range(1, 5), "s,m,l,xl",
       {"shape": ["triangle"], "color": ["teal"], "size": ["small"]},
       "small objects along the outline of a large square"),
    _c("closure", "big_circle", "shape,color,size", range(1, 5), "s,m,l,xl",
       {"shape": ["star"], "color": ["crimson"], "size": ["medium"]},
       "small objects along the outline of a large circle"),
    _c("continuity", "one_split_n", "shape,color,size", range(2, 5), "s,m,l,xl",
       {"shape": ["circle"], "color": ["navy"], "size": ["small"]},
       "one line of objects that forks into several branches"),
    _c("continuity", "intersected_splines", "shape,color,size", range(2, 5), "m,l,xl",
       {"shape": ["square"], "color": ["yellow", "green"], "size": ["medium"]},
       "smooth curves of evenly spaced objects crossing at the centre"),
    _c("continuity", "non_intersected_splines", "shape,color,size", range(1, 4), "s,m,l",
       {"shape": ["diamond"], "color": ["magenta"], "size": ["small"]},
       "smooth curves of evenly spaced objects that never touch"),
    _c("continuity", "overlap_splines", "shape,color,size", range(2, 4), "m,l,xl",
       {"shape": ["circle"], "color": ["brown"], "size": ["medium"]},
       "crossing curves, one of them repeated with a small offset"),
    _c("symmetry", "axis_symmetry_with_bkg", "shape,color,size,axis", [2], "s,m,l,xl",
       {"shape": ["heart"], "color": ["red"], "size": ["large"], "axis": [90]},
       "mirror pairs across an axis through a central disc"),
    _c("symmetry", "axis_symmetry", "shape,color,size,axis", [2], "s,m,l,xl",
       {"shape": ["triangle"], "color": ["blue"], "size": ["medium"], "axis": [90]},
       "mirror pairs across an axis"),
    _c("symmetry", "radial_symmetry", "shape,color,size,axis", range(2, 7), "s,m",
       {"shape": ["star"], "color": ["green"], "size": ["small"], "axis": [90]},
       "arms at equal angles around the centre"),
]}


def relevant_irrelevant(props) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every ``(R, I)``: ``R`` non-empty and not all of ``props``, ``I`` non-empty inside the rest.
    Sizes: 2 pairs for 2 properties, 12 for 3, 50 for 4."""
    props = tuple(props)
    out = []
    for k in range(1, len(props)):
        for rel in itertools.combinations(props, k):
            rest = [p for p in props if p not in rel]
            for j in range(1, len(rest) + 1):
                for irr in itertools.combinations(rest, j):
                    out.append((rel, irr))
    return out


@dataclass(frozen=True)
class Factors:
    """One task's factors."""

    category: str
    rel: tuple[str, ...]
    irr: tuple[str, ...]
    groups: int
    quantity: str
    qualifier: str

    @property
    def principle(self) -> str:
        return CATEGORIES[self.category].principle

    @property
    def task_id(self) -> str:
        tail = f"rel-{'+'.join(self.rel)}_irr-{'+'.join(self.irr)}_g{self.groups}"
        tail += f"_q{self.quantity}" if self.quantity else ""
        tail += f"_{self.qualifier}" if self.qualifier else ""
        return f"elvis/{self.principle}/{self.category}/{tail}"

    def mode(self, prop: str) -> str:
        """``relevant``, ``irrelevant`` or ``random`` (each object draws its own value)."""
        return "relevant" if prop in self.rel else "irrelevant" if prop in self.irr else "random"


def enumerate_factors(category: str) -> list[Factors]:
    """Every task of ``category``, in a fixed order."""
    c = CATEGORIES[category]
    return [Factors(category, rel, irr, g, q, qual)
            for rel, irr in relevant_irrelevant(c.props)
            for g in c.groups for q in c.quantities for qual in c.qualifiers]
