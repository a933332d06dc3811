"""The judge's vocabulary: general English words of the Bongard domain, mapped to meaning atoms.

Each table maps a meaning to the words and phrases (base forms, space-separated words) that
state it. :data:`PHRASES` joins them into one lookup: a tuple of words -> a list of atoms,
which :mod:`scenes.bongard.meaning` assembles into claims. Atoms:

* ``("ent", cls, word)``: a noun of class ``cls`` (``GENERIC``, ``FRAME`` and ``PLACE`` classes
  name no kind);
* ``("attr", dim, value, pol)``: an attribute claim (binary dimensions store one canonical
  value; the opposite word is the same value with ``pol`` False);
* ``("neg",)`` / ``("postneg",)``: negation before / after what it negates;
* ``("num", n[, weak])``, ``("vague",)``: a number (``weak``: no count by itself), a vague
  quantity (few, many);
* ``("plain",)``: "plain", "ordinary": without the special feature (a junction without a
  roundabout);
* ``("rel", name, swap, pol[, "weak"])``: a relation; ``swap`` reverses subject and object;
  a weak one ("in") holds only between two named things;
* ``("cmp", same)``, ``("aspect", a)``: same/different and what is compared;
* ``("absent", domain)``: "empty", "clear": absence of what the sentence's domain (roads: vehicles;
  sky: clouds; figures: fill) contains, ``domain`` where the sentence names none;
* ``("count_of",)``: "the number of": a number at the end counts;
* ``("layout",)``: "arranged in": the next noun is how things are placed, not a kind;
* ``("ctx",)``: "among": the rest of the clause only gives context;
* ``("sides", word)``: after a number, a polygon with that many sides;
* ``("other",)``: "other", "opposite": the complement of the other side;
* ``("sep",)``, ``("conj",)``: clause boundaries and coordination.
"""
from __future__ import annotations

GENERIC = "figure"
FRAME = "frame"
PLACE = "mainland"       # a place named only as what land joins: no claim of its own
# parts and spaces of a figure, not figures: what their attributes say is not said of the figure
PARTS = ("gap",)
# grounds things stand on or in: an attribute of one is not an attribute of a figure
GROUNDS = ("road", "field", "land", "water", "sky", "junction", "roundabout", "row")

NOUNS = {
    GENERIC: "figure shape object item thing sign symbol character element form mark line drawing glyph boundary "
             "contour perimeter "
             "elongated figure",
    FRAME: "image picture panel frame scene view photo canvas collage example centre center middle half "
           "box of the panel",
    "circle": "circle round circular ring disc disk cylinder cylindrical sphere ball",
    "oval": "oval ellipse elliptical egg",
    "triangle": "triangle triangular",
    "quadrilateral": "quadrilateral quadrangle tetragon trapezoid trapezium parallelogram",
    "square": "square",
    "rectangle": "rectangle rectangular oblong box boxy",
    "rhombus": "rhombus rhombi rhomb diamond",
    "pentagon": "pentagon pentagonal",
    "hexagon": "hexagon hexagonal",
    "octagon": "octagon octagonal",
    "polygon": "polygon polygonal",
    "star": "star",
    "dot": "dot point spot speck",
    "letter": "letter alphabet alphabetic alphabetical",
    "digit": "digit numeral number numeric",
    "vowel": "vowel",
    "building": "building house home warehouse hut cottage dwelling residence barn shed structure",
    "roof": "roof rooftop",
    "tree": "tree wood woodland forest grove bush shrub orchard vegetation greenery foliage plant",
    "vehicle": "vehicle car automobile truck lorry bus van traffic drive driving driven driver",
    "word": "word",
    "texture": "pattern texture",
    "boat": "boat ship watercraft vessel yacht ferry canoe sailboat",
    "plane": "plane airplane aeroplane aircraft jet airliner",
    "cloud": "cloud cloudy overcast",
    "road": "road street highway motorway avenue lane",
    "junction": "junction intersection crossing crossroad crossroads cross",
    "roundabout": "roundabout rotary traffic circle",
    "island": "island isle islet",
    "land": "land landmass land mass ground",
    "water": "water sea ocean lake",
    PLACE: "mainland shore coast coastline",
    "sky": "sky weather air",
    "row": "row furrow crop row crop line field line plough line plow line stripe striped stripy hatching hatched",
    "field": "field farmland",
}

# a kind implies its more general kinds (and the edge type of the outline)
IMPLIES = {
    "square": ("quadrilateral",), "rectangle": ("quadrilateral",), "rhombus": ("quadrilateral",),
    "quadrilateral": ("polygon",), "triangle": ("polygon",), "pentagon": ("polygon",), "hexagon": ("polygon",),
    "octagon": ("polygon",), "polygon": ("edges:straight",), "circle": ("edges:curved",),
    "oval": ("edges:curved",), "boat": ("vehicle",), "plane": ("vehicle",), "vowel": ("letter",),
    "roundabout": ("junction",), "island": ("land",),
}

# a thing enclosed by another is a kind of its own: land enclosed by water is an island
ENCLOSED = {("land", "water"): "island", ("island", "water"): "island"}

SIDES = {3: "triangle", 4: "quadrilateral", 5: "pentagon", 6: "hexagon", 8: "octagon"}

# noun domains for "empty"/"clear": what is absent
ROAD_DOMAIN = {"road", "junction", "roundabout", "vehicle"}
SKY_DOMAIN = {"sky", "cloud"}

ATTRS = {  # (dim, value, pol): words
    ("size", "large", True): "large big huge giant enormous massive bigger larger biggest largest fill fills "
                             "filling take up much take up most take up a lot occupy much occupy most occupy a lot "
                             "cover much cover most",
    ("size", "large", False): "small tiny little smaller smallest miniature minute compact",
    ("vpos", "upper", True): "upper top high higher highest uppermost topmost",
    ("vpos", "upper", False): "lower bottom low lowest bottommost",
    ("hpos", "left", True): "left leftmost left hand left side left half left lane keep left",
    ("hpos", "left", False): "right rightmost right hand right side right half right lane keep right",
    ("orient", "horizontal", True): "horizontal horizontally level flat lying sideways left to right "
                                    "right to left east west east to west west to east side to side across wide "
                                    "wider",
    ("orient", "horizontal", False): "vertical vertically upright standing erect up and down top to bottom "
                                     "bottom to top north south north to south south to north tall taller",
    ("facing", "left", True): "face left facing left point left pointing left look left looking left turned left",
    ("facing", "left", False): "face right facing right point right pointing right look right looking right "
                               "turned right",
    ("edges", "curved", True): "curved curve curvy curvilinear rounded wavy arc",
    ("edges", "curved", False): "straight angular angled pointy pointed sharp corner cornered segment "
                                "line segment",
    ("closed", "closed", True): "closed close loop unbroken continuous enclosed join up close up meet itself "
                                "end where it start connect back join back loop back return to itself",
    ("closed", "closed", False): "open unclosed gap end endpoint free end loose end",
    ("convex", "convex", True): "convex bulging bulge outward",
    ("convex", "convex", False): "concave dent dented notch notched indentation indent inward",
    ("filled", "filled", True): "filled solid shaded full coloured in colored in filled in",
    ("has", "cloud", False): "cloudless cloud free sunny",
    ("filled", "filled", False): "hollow unfilled outlined",
    ("parity", "even", True): "even pair paired in pair divisible by two divisible by 2 multiple of two",
    ("parity", "even", False): "odd uneven unpaired leftover left over odd one out",
    ("has", "vowel", False): "consonant",
    ("has", "island", True): "surrounded by water water on all side on all side on every side all around closed off "
                             "cut off isolated",
    ("has", "island", False): "joined connected connect join attached linked touch reach jut jut out protrude "
                              "extend from stick out",
}

COLOURS = "red green blue yellow grey gray brown white black orange purple pink"

SAME = "same identical alike uniform uniformly matching match equal consistent homogeneous similar copy repeated " \
       "share equally equal in"
DIFFERENT = "different differ difference differently varied vary varying various mixed mismatched unlike " \
            "distinct diverse unequal assorted heterogeneous mix mixture unique"

ASPECTS = {
    "size": "size sized scale dimension",
    "colour": "colour color coloured colored hue shade",
    "kind": "kind type sort category class variety",
    "orientation": "orientation oriented direction",
    "scene": "place position location spot",
    "spacing": "distance spacing spaced apart interval separation",
}

RELATIONS = {  # (name, swap, pol): words
    ("above", False, True): "above over on top of atop higher than north of on top",
    ("above", True, True): "below under beneath underneath lower than south of",
    ("left", False, True): "left of to the left of west of",
    ("left", True, True): "right of to the right of east of",
    ("inside", False, True): "inside within inside of enclosed by enclosed in enclosed within surrounded by "
                             "contained in contained within interior of",
    ("inside", False, False): "outside out of outside of beyond exterior of",
    ("near", False, True): "next to beside near adjacent to close to",
    ("part", False, True): "start with begin with end with starting with beginning with ending with",
    ("inside", True, True): "enclose encloses contain contains surround surrounds",
}

NEGATORS = "no not none never without lack lacks lacking lacked non nor neither nothing zero free of absence of " \
           "empty of devoid of clear of other than"
THROUGH = "none of neither of not one of not any of"     # the negation is for the predicate, not the noun
POSTNEGATORS = "absent missing gone"
ABSENT = {"empty": "figure", "bare": "figure", "clear": "sky", "deserted": "road", "vacant": "road"}
NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
NUMBER_PHRASES = {"only one": 1, "exactly one": 1, "just one": 1, "single": 1, "lone": 1, "sole": 1, "a single": 1,
                  "pair of": 2, "a pair of": 2, "couple of": 2,
                  "a couple of": 2, "trio of": 3, "dozen": 12, "half a dozen": 6}
VAGUE = "few many several multiple numerous lot lots some most small in number large in number great in number " \
        "few in number large number of small number of great number of"
LAYOUT = "arranged in arranged as arranged into laid out in grouped in grouped into form a form an forming a forming an"
CONTEXT = "among amongst than it is than they are"        # the rest of the clause is context
PLAIN = "plain ordinary simple regular normal standard conventional"
OTHER = "other else opposite reverse contrary remaining rest"
SIDE_NOUNS = "sided side corner cornered edge angle vertex vertices"
SEPARATORS = ", ; but while whereas although though"
CONJ = "or nor and"
FILLERS = "kind of sort of"
TEXTURES = {"stripe", "striped", "stripy", "hatching", "hatched", "pattern", "texture"}
VERBAL = {"drive", "driving", "driven", "driver"}       # nouns from verbs: they name the thing, never deny it
COUNT_OF = "number of count of amount of"

# attributes bound to the noun they modify or are predicated of (Claim.of)
BOUND_DIMS = {"size", "colour", "filled", "edges", "closed", "convex", "facing"}
# words that end an attributive phrase: an adjective before them modifies no noun after them
LINKS = {"on", "at", "by", "in", "to", "from", "with", "near", "for", "of", "as", "than", "into", "onto", "over",
         "under", "around", "is", "are", "be", "was", "were", "has", "have", "had", "the", "a", "an", "its", "their",
         "this", "that", "these", "those", "which", "who"}
# words that introduce the other side of a comparison ("the same colour as the road")
COMPARED = {"as", "from", "to", "than", "with"}
# verbs of facing: a left/right after them is a direction the thing faces, not where it is
FACING_VERBS = "point pointing pointed face facing faced look looking aim aiming aimed turn turning turned head heading"


def _special(add, each) -> None:
    """Phrases whose words alone mean something else, added last (they override)."""
    add("left without", ("neg",))
    for w in ("equal sized", "same sized", "equally sized"):
        add(w, ("cmp", True), ("aspect", "size"))
    for w in ("differently sized", "different sized"):
        add(w, ("cmp", False), ("aspect", "size"))
    for w in ("multicoloured", "multicolored", "multicolour", "multicolor", "varicoloured", "varicolored"):
        add(w, ("cmp", False), ("aspect", "colour"))
    for w in ("crossroad", "crossroads"):       # a plain crossing of roads
        add(w, ("ent", "junction", w), ("plain",))
    each(PLAIN, ("plain",))
    add("in", ("rel", "inside", False, True, "weak"))
    add("one out", ("attr", "parity", "even", False))
    add("traffic circle", ("ent", "roundabout", "traffic circle"))
    add("without a pair", ("attr", "parity", "even", False))
    add("curve", ("ent", GENERIC, "curve"), ("attr", "edges", "curved", True))
    add("straight line", ("ent", GENERIC, "line"), ("attr", "edges", "curved", False))
    add("long axis", ("ent", GENERIC, "long axis"))
    add("gap", ("attr", "closed", "closed", False), ("ent", "gap", "gap"))
    for v in FACING_VERBS.split():
        for p in ("to", "to the", "towards", "towards the", "toward", "toward the"):
            add(f"{v} {p}", ("facing",))


def _atoms() -> dict[tuple[str, ...], list[tuple]]:
    """The phrase table: word tuple -> atoms (later tables override earlier ones)."""
    table: dict[tuple[str, ...], list[tuple]] = {}

    def add(words: str, *atoms, sep=" "):
        for w in (words.split(",") if sep == "," else [words]):
            table[tuple(w.split())] = list(atoms)

    def each(text: str, *atoms):
        for w in text.split():
            add(w, *atoms)

    def phrases(text: str, *atoms):
        """Single words, plus the multi-word phrases listed in ``text`` (greedy split below)."""
        for p in _split_phrases(text):
            add(p, *atoms)

    for cls, text in NOUNS.items():
        for p in _split_phrases(text):
            add(p, ("ent", cls, p))
    for (dim, value, pol), text in ATTRS.items():
        phrases(text, ("attr", dim, value, pol))
    for c in COLOURS.split():
        add(c, ("attr", "colour", "grey" if c == "gray" else c, True))
    add("black", ("attr", "colour", "black", True), ("attr", "filled", "filled", True))
    add("outline", ("ent", GENERIC, "outline"), ("attr", "filled", "filled", False))
    add("warehouse", ("ent", "building", "warehouse"), ("attr", "size", "large", True))
    # a negation before these denies the attribute ("not a consonant"), so it comes first
    add("consonant", ("attr", "has", "vowel", False), ("ent", "letter", "consonant"))
    add("peninsula", ("attr", "has", "island", False), ("ent", "land", "peninsula"))
    for w in ("white inside", "no fill", "empty inside", "white interior"):
        add(w, ("attr", "filled", "filled", False))
    phrases(SAME, ("cmp", True))
    phrases(DIFFERENT, ("cmp", False))
    for aspect, text in ASPECTS.items():
        each(text, ("aspect", aspect))
    for (name, swap, pol), text in RELATIONS.items():
        phrases(text, ("rel", name, swap, pol))
    phrases(NEGATORS, ("neg",))
    phrases(THROUGH, ("neg", "through"))
    phrases(LAYOUT, ("layout",))
    phrases(COUNT_OF, ("count_of",))
    phrases(CONTEXT, ("ctx",))
    for w in ("solid black", "filled black", "filled in black"):
        add(w, ("attr", "filled", "filled", True), ("attr", "colour", "black", True))
    each(POSTNEGATORS, ("postneg",))
    for w, domain in ABSENT.items():
        add(w, ("absent", domain))
    for w, n in NUMBERS.items():
        add(w, ("num", n, n == 1))      # a bare "one" is mostly a quantifier ("one figure is filled"), not a count
    for w, n in NUMBER_PHRASES.items():
        add(w, ("num", n))
    phrases(VAGUE, ("vague",))
    each(OTHER, ("other",))
    for w in SIDE_NOUNS.split():
        add(w, ("sides", w))
    each(SEPARATORS, ("sep",))
    each(CONJ, ("conj",))
    phrases(FILLERS)
    _special(add, each)
    return table


# multi-word phrases known to the tables: their words are read together
MULTI = ("elongated figure", "box of the panel", "traffic circle", "land mass", "left hand", "left side", "left half",
         "left lane", "keep left", "right hand", "right side", "right half", "right lane", "keep right",
         "left to right", "east west", "side to side", "up and down", "top to bottom", "north south", "free end",
         "loose end", "coloured in", "colored in", "filled in", "in pair", "left over", "odd one out",
         "surrounded by water", "water on all side", "on all side", "closed off", "cut off", "equal sized",
         "same sized", "on top of", "higher than", "north of", "on top", "lower than", "south of", "left of",
         "to the left of", "west of", "right of", "to the right of", "east of", "inside of", "enclosed by",
         "enclosed in", "enclosed within", "surrounded by", "contained in", "contained within", "out of",
         "outside of", "free of", "absence of", "number of", "count of", "amount of",
         "kind of", "sort of", "only one", "exactly one", "just one", "a single", "pair of", "a pair of",
         "couple of", "a couple of", "trio of", "half a dozen", "on every side", "all around", "divisible by two",
         "divisible by 2", "multiple of two", "take up much", "take up most", "take up a lot", "occupy much",
         "occupy most", "occupy a lot", "cover much", "cover most", "right to left", "east to west", "west to east",
         "bottom to top", "north to south", "south to north", "than it is", "than they are", "face left",
         "facing left", "point left", "pointing left", "look left", "looking left", "turned left", "face right",
         "facing right", "point right", "pointing right", "look right", "looking right", "turned right",
         "line segment", "join up", "close up", "meet itself", "end where it start", "jut out", "extend from",
         "stick out", "equal in", "interior of", "exterior of", "next to", "adjacent to", "close to",
         "start with", "begin with", "end with", "starting with", "beginning with", "ending with", "empty of",
         "devoid of", "clear of", "other than", "none of", "neither of", "not one of", "not any of",
         "small in number", "large in number", "great in number", "few in number", "large number of",
         "small number of", "great number of", "arranged in", "arranged as", "arranged into", "laid out in",
         "grouped in", "grouped into", "crop row", "crop line", "field line", "plough line", "plow line",
         "cloud free", "connect back", "join back", "loop back", "return to itself", "form a", "form an", "forming a",
         "forming an")


def _split_phrases(text: str) -> list[str]:
    """``text`` split into words, with the known multi-word phrases kept whole."""
    out, words, i = [], text.split(), 0
    while i < len(words):
        for n in (5, 4, 3, 2):
            p = " ".join(words[i:i + n])
            if len(words[i:i + n]) == n and p in MULTI:
                out.append(p)
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


PHRASES = _atoms()
VOCAB = {w for key in PHRASES for w in key}
LONGEST = max(len(k) for k in PHRASES)
