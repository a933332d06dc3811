"""Run under torchrun: each rank streams its share through DataLoader workers; rank 0
checks that every rank got the same number of batches, that the shares together cover the
bounded stream (only the wrapped-around batches repeat), and that ``split=False`` reads the
whole stream on every rank."""
import torch.distributed as dist
from torch.utils.data import DataLoader

from engine.streams import stream

COUNT = 29          # 15 batches of 2 over 2 ranks: 8 each, the last one wrapping to batch 0


def _gather(value) -> list:
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, value)
    return every


def main():
    dist.init_process_group("gloo")
    ds = stream("shapes/*", seed=8, batch_size=2, size=24, count=COUNT)
    batches = [b["id"] for b in DataLoader(ds, batch_size=None, num_workers=2)]
    every = _gather(batches)
    whole = [b["id"] for b in DataLoader(stream("shapes/*", seed=8, batch_size=2, size=24, count=COUNT, split=False),
                                          batch_size=None, num_workers=2)]
    unsplit = _gather(whole)
    if dist.get_rank() == 0:
        expected = [ds.item(i).id for i in range(COUNT)]
        flat = [s for share in every for b in share for s in b]
        assert len({len(share) for share in every}) == 1, "ranks got different numbers of batches"
        assert sorted(set(flat)) == sorted(expected), "shares do not cover the stream"
        assert len(flat) == COUNT + 2 and flat.count(expected[0]) == 2, "only batch 0 wraps around"
        print("COVERAGE OK", len(set(flat)), "batches", *[len(share) for share in every])
        assert all([s for b in w for s in b] == expected for w in unsplit), "split=False skipped samples"
        print("UNSPLIT OK", *[sum(map(len, w)) for w in unsplit])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
