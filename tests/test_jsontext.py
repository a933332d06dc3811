"""A record's JSON text made from columns is the text the standard encoder gives for the
dicts the columns describe, whatever the columns hold."""
import json

import numpy as np
import pytest

from engine.jsontext import JSONText, Rows, encode


def _objects(choices: list, B: int, K: int) -> np.ndarray:
    """An object array ``[B, K]`` holding the ``choices`` in turn (lists and dicts as items)."""
    out = np.empty((B, K), object)
    for b in range(B):
        for k in range(K):
            out[b, k] = choices[(b + k) % len(choices)]
    return out


def _columns(B: int, K: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    cols = {
        "center": rng.random((B, K, 2)) * 10.0 ** rng.integers(-6, 6, (B, K, 1)),   # long, short and tiny floats
        "rgb": rng.integers(0, 256, (B, K, 3)), "group": rng.integers(0, 5, (B, K)).astype(np.int32),
        "radius": rng.random((B, K)).round(rng.integers(0, 6)), "flag": rng.random((B, K)) > 0.5,
        "shape": rng.choice(["circle", 'quo"te', "é", "back\\slash"], (B, K)),
        "colour": rng.choice(np.array([None, "red", "blue"], object), (B, K)),
        "mixed": rng.choice(np.array([1, "1", 1.0, True, None], object), (B, K)),
        "none": np.zeros((B, K, 0)), "arm_index": rng.integers(-1, 3, (B, K)),
        "nested": _objects([[1, 2], {"a": None}, "x", None, 2.5, ["y"]], B, K),     # unhashable values too
        "texts": rng.choice(np.array(["a", "b", None, 'q"'], object), (B, K)),
        "fixed": rng.choice(["north", "south"], (B, K)),                              # a numpy text column
    }
    cols["radius"][0, :2] = [np.nan, np.inf]          # not finite: written as json writes them
    cols["center"][-1, -1, 0] = -np.inf
    return cols


@pytest.mark.parametrize("seed", range(5))
def test_rows_are_the_text_of_the_dicts_they_describe(seed):
    B, K = 4, 6
    cols = _columns(B, K, seed)
    counts = np.array([0, 1, K, 3])
    rows = Rows(cols, counts)
    for b, n in enumerate(counts):
        dicts = [{k: v[b].tolist()[i] for k, v in cols.items()} for i in range(n)]
        assert rows.text(b) == json.dumps(dicts, sort_keys=True)
        assert isinstance(rows.text(b), JSONText)


def test_encode_writes_json_text_in_place_and_the_rest_as_json_does():
    cols = _columns(2, 3, 0)
    objects = Rows(cols, [2, 3]).text(1)
    meta = {"z": [1, 2.5], "objects": objects, "a": {"objects": [1]}, "text": "objects"}
    assert encode(meta) == json.dumps({**meta, "objects": json.loads(objects)}, sort_keys=True)
    assert json.loads(encode(meta))["objects"] == json.loads(objects)
    plain = {"b": 1, "a": [float("nan"), None, "x"]}
    assert encode(plain) == json.dumps(plain, sort_keys=True)
    assert encode({"s": "[]"}) == '{"s": "[]"}'                 # a plain str stays a string


def test_text_around_spliced_values_and_keys_of_other_types_are_written_as_json_writes_them():
    objects = JSONText('[{"a": 1}]')
    for meta in ({"objects": objects, "note": "\0procvis-json-objects\0", "z": {"objects": objects}},
                 {"objects": objects}, {"a": objects, "b": JSONText("2"), "c": JSONText("null")},
                 {10: objects, 9: "x", 2.5: None}):             # json orders these as numbers
        plain = {k: json.loads(v) if type(v) is JSONText else v for k, v in meta.items()}
        assert encode(meta) == json.dumps(plain, sort_keys=True)


def test_names_with_percent_signs_and_rows_without_values_are_written_as_json_writes_them():
    cols = {"100%": np.zeros((2, 3)), "%s": np.ones((2, 3), np.int64), "a%%b": np.zeros((2, 3, 0))}
    rows = Rows(cols, [3, 1])
    for b, n in enumerate((3, 1)):
        assert rows.text(b) == json.dumps([{k: v[b].tolist()[i] for k, v in cols.items()} for i in range(n)],
                                          sort_keys=True)
    empty = Rows({"x": np.zeros((2, 3, 0))}, [2, 0])
    assert empty.text(0) == '[{"x": []}, {"x": []}]' and empty.text(1) == "[]"
    assert Rows({}, [2]).text(0) == "[{}, {}]"


def test_columns_that_do_not_fit_the_counts_are_refused():
    with pytest.raises(ValueError, match="column 'x' of shape \\[2, 3\\] does not hold"):
        Rows({"x": np.zeros((2, 3))}, [4, 1])               # more rows than slots
    with pytest.raises(ValueError, match="does not hold"):
        Rows({"x": np.zeros(3)}, [1, 1, 1])
    with pytest.raises(TypeError, match="column names must be str, not 1"):
        Rows({1: np.zeros((1, 1))}, [1])
    with pytest.raises(TypeError):                           # as json refuses it
        Rows({"x": np.zeros((1, 1), np.longdouble)}, [1])


def test_numbers_at_the_edges_of_the_compiled_formats_are_written_as_json_writes_them():
    # the compiled writer formats short decimals and integers itself (kernels.json_rows); at
    # and past the edges of where its text is repr's, the value must still read as json writes it
    floats = [0.0, -0.0, 1e-4, -1e-4, 9.99999e-5, 1e-5, 0.1 + 0.2, 3.0, -2.5, 123456.789012, 0.000123456,
              99999999.999999, 999999999999999.0, 1e15, 1e16, 123456789.123456789, 2.0 ** -30, 5e-324,
              1.7976931348623157e308, 0.12345678901234, 1 / 3, 224.0, -0.00015]
    ints = [0, -1, 7, 10 ** 15 - 1, 10 ** 15, -10 ** 15, 2 ** 62, -2 ** 63, 2 ** 63 - 1]
    n = len(floats)
    with np.errstate(over="ignore"):
        f32 = np.array(floats, np.float32)                  # the largest becomes inf
    cols = {"f": np.array(floats)[None], "f32": f32[None], "i": np.array(ints + [1] * (n - len(ints)))[None],
            "u": np.array([2 ** 64 - 1, 2 ** 63] + [3] * (n - 2), np.uint64)[None]}
    text = Rows(cols, [n]).text(0)
    assert text == json.dumps([{k: v[0].tolist()[i] for k, v in cols.items()} for i in range(n)], sort_keys=True)


def test_rounded_columns_fit_the_compiled_decimal_format_and_it_is_their_repr():
    # the speed the writer exists for: records round their floats to a few decimals, and each
    # such value is written from its digits k, whose plain text must be repr's
    from kernels.json_rows import decimal_digits
    rng = np.random.default_rng(0)
    for digits in (3, 4, 5):
        values = np.round(rng.random(10_000) * 10.0 ** rng.integers(-3, 4, 10_000), digits)
        k, ok = decimal_digits(values, 6)
        assert ok[np.abs(values) >= 1e-4].all()
        assert [repr(v) for v in values[ok].tolist()] == \
            [f"{'-' if x < 0 else ''}{abs(x) // 10 ** 6}.{str(abs(x) % 10 ** 6).rjust(6, '0').rstrip('0') or '0'}"
             for x in k[ok].tolist()]


def test_the_row_writer_refuses_what_it_cannot_write_and_sizes_its_buffer_by_the_rows():
    from kernels.json_rows import write_rows
    one = dict(pieces=["{", "}"], decimals=np.array([-1]), table=[], bounds=np.array([[0, 1]]))
    with pytest.raises(ValueError, match="numbers must lie within"):
        write_rows(**one, numbers=np.array([[-2 ** 63]]), codes=np.array([[-1]]))
    with pytest.raises(ValueError, match="decimals within -1..15"):
        write_rows(**{**one, "decimals": np.array([25])}, numbers=np.array([[1]]), codes=np.array([[-1]]))
    with pytest.raises(ValueError, match="codes must be -1 or index the table of 0 texts"):
        write_rows(**one, numbers=np.array([[1]]), codes=np.array([[0]]))
    with pytest.raises(ValueError, match="bounds must be rows"):
        write_rows(**{**one, "bounds": np.array([[0, 2]])}, numbers=np.array([[1]]), codes=np.array([[-1]]))
    # one long text in one row: the other rows do not reserve its length
    long = "x" * 100_000
    cols = {"t": np.array([["a"] * 50] * 100, object), "f": np.zeros((100, 50))}
    cols["t"][3, 7] = long
    text, ends = write_rows(["{\"t\": ", "}"], np.zeros((1, 5000), np.int64), np.array([-1]),
                            np.where(cols["t"].reshape(1, -1) == long, 1, 0), ['"a"', f'"{long}"'],
                            np.array([[50 * b, 50 * b + 50] for b in range(100)]))
    assert text.base is not None and text.base.nbytes < 2 * (len(long) + 5000 * 16)
    rows = Rows(cols, np.full(100, 50))
    assert rows.text(3) == json.dumps([{"f": 0.0, "t": v} for v in cols["t"][3].tolist()], sort_keys=True)
