"""Frames packed for the trip between processes (engine.parcel): every scene keeps every
column (vertex padding restored by the collation rule), merged groups draw the same pixels
on both renderers, and a packed batch is a fraction of the bytes."""
import pickle

import pytest
import torch

from engine.batch import SceneBatch, _by_table, premultiplied
from engine.parcel import pack, padded, padded_by_gather, unpack
from engine.rendering import render
from engine.scene import Scene
from engine.streams import stream
from kernels import ragged
from kernels.primitives import SPRITE, Primitives

FAMILIES = ["shapes/*", "elvis/*", "perceptv/*", "kiva/*", "bongard/classic/number/*", "jigsaw/*"]


def deferred(pattern: str, n: int = 12, size: int = 64):
    return next(iter(stream(pattern, seed=3, batch_size=n, size=size, defer=True)))["frames"]


def scenes_by_place(groups) -> dict:
    """``{(sample, panel): (SceneBatch, row)}``."""
    return {place: (batch, r) for _, batch, where in groups for r, place in enumerate(where)}


@pytest.mark.parametrize("pattern", FAMILIES)
def test_every_scene_keeps_every_column_after_packing(pattern):
    frames = deferred(pattern)
    before, after = scenes_by_place(frames.groups), scenes_by_place(unpack(pack(frames.groups)))
    assert before.keys() == after.keys()
    for place, (a, i) in before.items():
        b, j = after[place]
        N, V = a.primitives.geom.shape[1], a.primitives.verts.shape[2]
        for name, x, y in zip(Primitives._fields, a.primitives, b.primitives):
            got = y[j, :N, :V] if name == "verts" else y[j, :N]
            assert torch.equal(x[i], got), (place, name)
            if name == "verts" and y.shape[2] > V:     # past a slot's vertices: its last one, repeated
                for s, n in enumerate(a.primitives.nverts[i].tolist()):
                    tail = y[j, s, V:]
                    assert torch.equal(tail, (y[j, s, n - 1] if n else torch.zeros(2)).expand_as(tail))
        assert not b.primitives.valid[j, N:].any()
        assert torch.equal(a.background[i], b.background[j])
        if ((a.primitives.geom[i] == SPRITE) & a.primitives.valid[i]).any():     # then its atlas came along
            assert torch.equal(a.sprites, b.sprites) and torch.equal(a.sprite_hw, b.sprite_hw)


def test_groups_of_one_size_are_merged_and_draw_the_same_on_both_renderers():
    frames = deferred("elvis/*", n=700, size=32)         # a batch spanning 7 batch keys
    assert len(frames.groups) == 7
    merged = unpack(pack(frames.groups))
    assert len(merged) == 1
    alone = {}
    for hw, batch, where in frames.groups:
        for backend in ("numba", "torch"):
            for place, image in zip(where, render(batch, hw, backend=backend)):
                alone[place, backend] = image
    hw, batch, where = merged[0]
    for backend in ("numba", "torch"):
        for place, image in zip(where, render(batch, hw, backend=backend)):
            assert torch.equal(image, alone[place, backend]), (place, backend)


@pytest.mark.parametrize("pattern", ["elvis/*", "shapes/*", "perceptv/*", "bongard/classic/number/*", "kiva/*",
                                     "jigsaw/*"])
def test_pickled_frames_render_the_images_of_the_frames(pattern):
    frames = deferred(pattern)
    back = pickle.loads(pickle.dumps(frames))
    assert back._groups is None                       # travelled packed
    assert torch.equal(back.render("cpu"), frames.render("cpu"))
    assert torch.equal(pickle.loads(pickle.dumps(back)).render("cpu"), frames.render("cpu"))


def test_a_packed_elvis_batch_is_a_fraction_of_its_padded_bytes():
    frames = deferred("elvis/*", n=128, size=224)
    padded_bytes = sum(t.numel() * t.element_size() for _, b, _ in frames.groups
                       for t in (*b.primitives, b.background, b.sprites, b.sprite_hw))
    assert pack(frames.groups).buffer.numel() < padded_bytes / 3


@pytest.mark.parametrize("pad", [padded, padded_by_gather])      # the CPU loop; the GPU's gather
def test_padding_restores_each_slots_vertices_then_repeats_its_last(pad):
    verts = torch.tensor([[0., 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]])
    nverts = torch.tensor([[3, 0], [1, 2]])
    out = pad(verts, nverts, 4)
    assert out.shape == (2, 2, 4, 2)
    assert out[0, 0].tolist() == [[0, 1], [2, 3], [4, 5], [4, 5]]
    assert out[0, 1].tolist() == [[0, 0]] * 4
    assert out[1, 0].tolist() == [[6, 7]] * 4
    assert out[1, 1].tolist() == [[8, 9], [10, 11], [10, 11], [10, 11]]
    assert torch.equal(pad(torch.zeros(0, 2), torch.zeros(2, 3, dtype=torch.long), 5), torch.zeros(2, 3, 5, 2))


def test_the_gather_pads_an_elvis_batch_as_the_cpu_loop_does():
    frames = deferred("elvis/*", n=300, size=32)
    for hw, batch, where in unpack(pack(frames.groups)):
        p = batch.primitives
        flat = p.verts.reshape(-1, p.verts.shape[2], 2)
        own = torch.cat([flat[s, :n] for s, n in enumerate(p.nverts.reshape(-1).tolist())])
        assert torch.equal(padded_by_gather(own, p.nverts, p.verts.shape[2]), p.verts)


def test_wrong_vertex_counts_are_refused_before_the_loops_touch_memory():
    verts = torch.zeros(1, 2, 3, 2)
    for bad in ([[2, 4]], [[-1, 2]], [[1]]):                       # over V, negative, one count short
        with pytest.raises(ValueError, match="nverts|counts"):
            ragged.unpadded(verts, torch.tensor(bad))
    for bad in ([[5, -4]], [[2, 2]]):                              # a negative count; more than the rows given
        with pytest.raises(ValueError, match="counts|hold"):
            ragged.padded(torch.zeros(1, 2), torch.tensor(bad), 3)
    assert ragged.unpadded(torch.zeros(2, 0, 2), torch.zeros(2, dtype=torch.long)).shape == (0, 2)



def reference_atlas(images) -> torch.Tensor:
    """The float atlas built image by image, as collation always built it: ``k / 255``, an
    alpha of 1 for RGB, colours times alpha, zero outside each image."""
    h, w = max(i.shape[1] for i in images), max(i.shape[2] for i in images)
    out = torch.zeros(len(images), 4, h, w)
    for k, img in enumerate(images):
        t = torch.as_tensor(img)
        t = t.float() / 255.0 if not t.is_floating_point() else t.float()
        if t.shape[0] == 3:
            t = torch.cat([t, torch.ones_like(t[:1])])
        t = t.clamp(0, 1)
        out[k, :, :t.shape[1], :t.shape[2]] = torch.cat([t[:3] * t[3:], t[3:]])
    return out


def test_8bit_atlases_give_the_floats_of_the_image_by_image_rule_for_every_value_and_alpha():
    grid = torch.stack(torch.meshgrid(torch.arange(256), torch.arange(256), indexing="ij")).to(torch.uint8)
    rgba8 = torch.stack([grid[0], grid[1], 255 - grid[0], grid[1]])[None]        # every colour value at every alpha
    assert torch.equal(premultiplied(rgba8), reference_atlas([rgba8[0]]))
    assert torch.equal(_by_table(rgba8), rgba8.float() / 255.0)                  # what a GPU reads: the CPU's bits
    with pytest.raises(ValueError, match=r"\[S,4,h,w\] uint8"):
        premultiplied(rgba8.float())


def test_collation_keeps_the_8bit_sprites_and_their_floats_match_the_reference():
    g = torch.Generator().manual_seed(0)
    images = [torch.randint(0, 256, (4, 9, 5), generator=g, dtype=torch.uint8),
              torch.randint(0, 256, (3, 4, 12), generator=g, dtype=torch.uint8).numpy()]
    scenes = [Scene().sprite(images[0], (0.5, 0.5), (0.4, 0.4)),
              Scene().sprite(images[1], (0.3, 0.3), (0.2, 0.2)).sprite(images[0], (0.7, 0.7), (0.2, 0.2))]
    batch = SceneBatch.from_scenes(scenes)
    assert batch.sprites8.dtype == torch.uint8 and batch.sprites8.shape == (2, 4, 9, 12)
    assert torch.equal(batch.sprites, reference_atlas(images))
    assert torch.equal(premultiplied(batch.sprites8), batch.sprites)
    assert batch.sprite_hw.tolist() == [[9, 5], [4, 12]]
    floats = images + [torch.rand(4, 6, 6, generator=g)]                          # one float image: no 8-bit atlas
    mixed = SceneBatch.from_scenes(scenes + [Scene().sprite(floats[2], (0.5, 0.5), (0.3, 0.3))])
    assert mixed.sprites8 is None and torch.equal(mixed.sprites, reference_atlas(floats))


def test_a_batchs_panel_groups_share_one_atlas_and_it_travels_once_in_8_bits():
    frames = deferred("kiva/*", n=8, size=96)                  # a trial's large and small panels: the same objects
    atlases = {id(b.sprites) for _, b, _ in frames.groups}
    assert len(frames.groups) == 2 and len(atlases) == 1
    batch = frames.groups[0][1]
    sent = len(pickle.dumps(frames))
    assert batch.sprites8.numel() <= sent < batch.sprites8.numel() + batch.sprites.numel() * 4 / 8
    back = pickle.loads(pickle.dumps(frames)).groups
    assert len({id(b.sprites) for _, b, _ in back}) == 1
    assert torch.equal(back[0][1].sprites, batch.sprites)


def test_a_deferred_batch_makes_no_float_atlas_until_it_is_drawn_here():
    # a worker collates and packs for a GPU or another process: the float atlas (4x the bytes
    # of its 8-bit source) is never made there; drawn here, it is made once for all groups
    # and slices, equals premultiplying the source, and is not what a pickle carries
    frames = deferred("kiva/*", n=8, size=96)
    assert len({id(b.atlas) for _, b, _ in frames.groups}) == 1
    batch = frames.groups[0][1]
    frames._packed()
    pickle.dumps(frames)
    assert batch.atlas.made is None
    images = frames.render("cpu")
    made = batch.atlas.made
    assert made is not None and torch.equal(made, premultiplied(batch.sprites8))
    assert batch.slice(0, 1).sprites is made and frames.groups[1][1].sprites is made
    assert torch.equal(images, next(iter(stream("kiva/*", seed=3, batch_size=8, size=96)))["images"])
    sent = pickle.dumps(batch)
    assert len(sent) < 2 * made.numel() and torch.equal(pickle.loads(sent).sprites, made)    # floats: 4 bytes each
