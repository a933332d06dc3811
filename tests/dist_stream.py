"""Run under torchrun: each rank streams its share through DataLoader workers; rank 0
checks that the shares are disjoint and together cover the bounded stream."""
import torch.distributed as dist
from torch.utils.data import DataLoader

from engine.streams import stream

COUNT = 29


def main():
    dist.init_process_group("gloo")
    ds = stream("shapes/*", seed=8, batch_size=2, size=24, count=COUNT)
    mine = [sid for b in DataLoader(ds, batch_size=None, num_workers=2) for sid in b["id"]]
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    if dist.get_rank() == 0:
        flat = [s for share in every for s in share]
        expected = [ds.item(i).id for i in range(COUNT)]
        assert all(every), "a rank got nothing"
        assert len(flat) == len(set(flat)), "shares overlap"
        assert sorted(flat) == sorted(expected), "shares do not cover the stream"
        print("COVERAGE OK", len(flat))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
