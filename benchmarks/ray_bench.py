"""``procvis generate --ray`` on a local two-node Ray cluster (a head and a worker node, one
CPU each, separate ``ray start`` processes on 127.0.0.1) against ``--workers 2`` (a local
process pool) in the same run: the same pattern, count and size, samples and images per
second end to end (each run from a cold start of its workers; the cluster itself is up
before, as a shared cluster is), and whether the files are identical. From these numbers,
the scaling model over nodes (see :func:`to_markdown`). Run: ``procvis bench ray``.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import outputs, ray_jobs

from .results_file import publish, run_meta

PATTERN, SIZE, SHARD = "shapes/*", 224, 32
AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """A Ray head and ``nodes - 1`` worker nodes of ``cpus`` CPUs each on 127.0.0.1, each a
    ``ray start --block`` process (stopping it ends its raylet and workers), with a token of
    its own; ``env``: what a driver needs to join; :meth:`stop` ends it all."""

    def __init__(self, nodes: int = 2, cpus: int = 1):
        self.tmp = Path(tempfile.mkdtemp(prefix="pv-ray-", dir="/tmp"))      # short: Ray's socket paths
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
        self.address = f"127.0.0.1:{_free_port()}"
        self.cpus, self.procs = cpus, []
        try:
            self._start("head", ["--head", f"--port={self.address.split(':')[1]}", f"--temp-dir={self.tmp}",
                                 "--include-dashboard=false"])
            for k in range(nodes - 1):
                self._start(f"node{k}", [f"--address={self.address}"])
        except BaseException:
            self.stop()
            raise

    def _start(self, name: str, args: list[str]) -> None:
        """Start one node and wait until it is up (``RuntimeError`` with its log otherwise)."""
        log, ray = self.tmp / f"{name}.log", str(Path(sys.executable).parent / "ray")
        with open(log, "w") as f:
            proc = subprocess.Popen([ray, "start", "--block", f"--num-cpus={self.cpus}", "--node-ip-address=127.0.0.1",
                                     "--disable-usage-stats", *args], stdout=f, stderr=subprocess.STDOUT,
                                    env=self.env, start_new_session=True, cwd=self.tmp)
        self.procs.append(proc)
        deadline = time.time() + 90
        while "block forever" not in log.read_text():
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"ray start {name} failed:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def task_pids(self, title: str) -> list[int]:
        """Pids of this cluster's worker processes now running a task titled ``title``."""
        import psutil

        mine, out = {p.pid for p in self.procs}, []
        for p in psutil.process_iter(["pid", "cmdline"]):
            with contextlib.suppress(psutil.Error):
                if (p.info["cmdline"] or [""])[0].startswith(f"ray::{title}") and mine & {q.pid for q in p.parents()}:
                    out.append(p.pid)
        return out

    def stop(self) -> None:
        """End the cluster: each ``ray start --block`` (the nodes, then the head) ends its own
        processes when told to; any descendant still there after that is killed, by pid."""
        import psutil

        family = []
        for proc in self.procs:
            with contextlib.suppress(psutil.Error):
                family += psutil.Process(proc.pid).children(recursive=True)
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for p in family:
            with contextlib.suppress(psutil.Error):
                p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def auth_from_environment() -> None:
    """Make this process read ``$RAY_AUTH_MODE`` and ``$RAY_AUTH_TOKEN`` again (Ray reads them
    when it is imported, and refreshes them the same way when it turns token mode on)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


@contextlib.contextmanager
def joined(cluster: LocalCluster):
    """Within: this process holds the cluster's token (restored on the way out)."""
    saved = {k: os.environ.get(k) for k in AUTH}
    os.environ.update({k: cluster.env[k] for k in AUTH})
    auth_from_environment()
    try:
        yield cluster
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        auth_from_environment()


def _on_ray(pattern: str, out: str, address: str, shared: bool | None = None, **kwargs) -> dict:
    """``engine.ray_jobs.generate``; until ``outputs.generate`` takes an ``executor``, the
    local runner is replaced by the executor's for the call (the same calls)."""
    import inspect

    if "executor" in inspect.signature(outputs.generate).parameters:
        return ray_jobs.generate(pattern, out, address=address, shared=shared, **kwargs)
    executor, local = ray_jobs.RayExecutor(address, shared=shared), outputs._run_jobs
    outputs._run_jobs = lambda jobs, workers, done: executor.run_jobs(jobs, workers, done)
    try:
        return outputs.generate(pattern, out, **kwargs)
    finally:
        outputs._run_jobs = local


def _images(out: Path) -> int:
    """Panels (PNG images) in the Parquet dataset in ``out``."""
    import pyarrow.parquet as pq

    return sum(sum(pq.read_table(f, columns=["num_panels"]).column(0).to_pylist()) for f in out.rglob("*.parquet"))


def _timed(fn) -> float:
    """Seconds ``fn()`` takes."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(quick: bool = False) -> dict:
    """Both runs on the same settings; returns their times, rates and what decides scaling."""
    count = 8 if quick else 300
    tmp = Path(tempfile.mkdtemp(prefix="procvis-ray-bench-"))
    kw = dict(seed=0, count=count, size=SIZE, shard_size=SHARD, progress=False)
    try:
        outputs.generate(PATTERN, str(tmp / "warm"), **{**kw, "count": 1})          # kernels compiled on disk
        pool_s = _timed(lambda: outputs.generate(PATTERN, str(tmp / "pool"), workers=2, **kw))
        cluster = LocalCluster(nodes=2, cpus=1)
        try:
            with joined(cluster):
                ray_s = _timed(lambda: _on_ray(PATTERN, str(tmp / "ray"), cluster.address, **kw))
                warm_s, sent_s = _warm_run(cluster, tmp, kw)
        finally:
            cluster.stop()
        m = outputs.load_manifest(str(tmp / "pool"))
        same = m["files"] == outputs.load_manifest(str(tmp / "ray"))["files"]
        images, samples = _images(tmp / "pool"), m["total"]
        return {"pattern": PATTERN, "size": SIZE, "count": count, "samples": samples, "images": images,
                "shards": len(m["files"]), "bytes": sum(m["sizes"].values()), "pool_s": pool_s, "ray_s": ray_s,
                "ray_warm_s": warm_s, "ray_sent_s": sent_s, "identical": same, "meta": run_meta()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _warm_run(cluster: LocalCluster, tmp: Path, kw: dict) -> tuple[float, float]:
    """Seconds of ``--ray`` runs in one driver session whose workers are already up (what a
    run costs on a long-lived cluster once workers are warm): nodes writing the shards into
    the folder, then every shard sent back to the driver (``shared=False``)."""
    import ray

    ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
    try:
        _on_ray(PATTERN, str(tmp / "w1"), cluster.address, **{**kw, "seed": 1})
        direct = _timed(lambda: _on_ray(PATTERN, str(tmp / "w2"), cluster.address, **{**kw, "seed": 2}))
        sent = _timed(lambda: _on_ray(PATTERN, str(tmp / "w3"), cluster.address, shared=False, **{**kw, "seed": 3}))
        return direct, sent
    finally:
        ray.shutdown()


def to_markdown(r: dict) -> str:
    """The results table and the scaling model, in markdown."""
    rows = [("`--workers 2` (local process pool, started by the run)", r["pool_s"]),
            ("`--ray` (2 nodes x 1 CPU), workers started by the run", r["ray_s"]),
            ("`--ray`, workers already up", r["ray_warm_s"]),
            ("`--ray`, workers up, every shard sent back to the driver", r["ray_sent_s"])]
    lines = [f"`procvis generate '{r['pattern']}' --count {r['count']} --size {r['size']} --shard-size {SHARD}`: "
             f"{r['samples']} samples, {r['images']} images, {r['shards']} shards, {r['bytes'] / 1e6:.1f} MB; "
             f"files identical between the runs: {'yes' if r['identical'] else 'NO'}.", "",
             "| run | seconds | samples/s | images/s |", "|---|---|---|---|"]
    for name, s in rows:
        lines.append(f"| {name} | {s:.1f} | {r['samples'] / s:,.1f} | {r['images'] / s:,.1f} |")
    per_cpu = r["samples"] / r["ray_warm_s"] / 2
    per_sample = r["bytes"] / r["samples"]
    lines += ["", "Scaling model (one machine here, so the model rather than a measurement): shards are independent "
              "tasks, so with N nodes of c CPUs the rate is about min(N c r, B / s, D) after a start-up of a few "
              "seconds per worker (importing torch and numba), where r is the rate of one CPU (here "
              f"{per_cpu:,.1f} samples/s for these tasks at {r['size']} px), s the bytes per sample (here "
              f"{per_sample / 1e3:,.1f} KB), "
              "B the write bandwidth of the shared file system the nodes write to, and D the rate at which the driver "
              "installs shards sent back by nodes that do not see the output folder (one process writing: hundreds "
              "of MB/s, so it binds only without a shared file system). The driver keeps two tasks per cluster CPU "
              "in flight and its own work per shard (a journal line, a progress tick) is well under a millisecond, "
              "so it is not the limit at hundreds of CPUs; a run needs at least N c shards to keep every CPU busy "
              "(count x tasks / shard size).",
              "", "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    """Run the benchmark, print it and, with ``out``, write it into that results file."""
    return publish(to_markdown(run(quick)), out, "ray-bench", "Generation on a Ray cluster (`procvis bench ray`)")
